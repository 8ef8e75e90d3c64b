// qtune eval FP32_MODEL QUANT_MODEL --data DATA... [--preprocess SPEC] [--labels Y.npy]
//   [--batch N] [--json]
//   Top-1 agreement between the two models, accuracy against labels, per-output SQNR, and
//   the tensors with the worst SQNR (activations of the same name in both models; the QDQ
//   model's "X_dequantized" outputs are compared with the float "X"). DATA as for
//   `qtune quantize --calib` (quant/calibration_data.h): NAME=FILE.npy per input, FILE.npy,
//   FILE.npz or an image folder.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/commands.h"
#include "cli/eval.h"
#include "cli/exit_codes.h"
#include "cli/global_flags.h"
#include "core/json_limits.h"
#include "core/npy.h"
#include "core/progress.h"
#include "core/shape.h"
#include "ir/onnx_io.h"
#include "quant/calibration_data.h"
#include "quant/export_qdq.h"
#include "runtime/session.h"

namespace qtune::cli {
namespace {

// Signal and noise energy of one compared tensor, accumulated over batches.
struct Energy {
  double signal = 0;
  double noise = 0;
  void Add(const Tensor& ref, const Tensor& test) {
    auto a = ref.span<float>();
    auto b = test.span<float>();
    for (size_t i = 0; i < a.size(); ++i) {
      double d = static_cast<double>(a[i]) - b[i];
      signal += static_cast<double>(a[i]) * a[i];
      noise += d * d;
    }
  }
  // 10 log10(signal / noise); +inf when equal.
  double SqnrDb() const {
    if (noise == 0) return INFINITY;
    return 10.0 * std::log10(std::max(signal, 1e-30) / noise);
  }
};

nlohmann::json DbJson(double db) {
  return std::isinf(db) ? nlohmann::json("inf") : nlohmann::json(db);
}

// float32 view of a float32 or float16 tensor; invalid otherwise.
Tensor AsFloat(const Tensor& t) {
  if (t.dtype() == DataType::kFloat32) return t;
  return Tensor();
}

// Top-1 is meaningful for class scores: float32 [N, C] with C >= 2. A probability map or a
// regression output is compared by SQNR only.
bool IsClassScores(const Tensor& t) {
  return t.dtype() == DataType::kFloat32 && t.rank() == 2 && t.size(1) >= 2;
}

std::vector<int64_t> ArgmaxRows(const Tensor& t) {
  std::vector<int64_t> out;
  if (t.dtype() != DataType::kFloat32 || t.rank() < 1 || t.num_elements() == 0) return out;
  int64_t n = t.size(0), c = t.num_elements() / n;
  const float* p = t.data<float>();
  for (int64_t i = 0; i < n; ++i)
    out.push_back(std::max_element(p + i * c, p + (i + 1) * c) - (p + i * c));
  return out;
}

StatusOr<std::vector<int64_t>> ReadLabels(const std::string& path, int64_t n) {
  ASSIGN_OR_RETURN(Tensor t, ReadNpy(path));
  if (t.num_elements() != n) {
    return InvalidArgumentError(path + ": " + std::to_string(t.num_elements()) + " labels for " +
                                std::to_string(n) + " samples");
  }
  std::vector<int64_t> out;
  if (t.dtype() == DataType::kInt64) {
    for (int64_t v : t.span<int64_t>()) out.push_back(v);
  } else if (t.dtype() == DataType::kInt32) {
    for (int32_t v : t.span<int32_t>()) out.push_back(v);
  } else {
    return InvalidArgumentError(path + ": labels must be int64 or int32, not " +
                                std::string(DataTypeName(t.dtype())));
  }
  return out;
}

// The values that depend on a graph input: everything but weights and what is computed
// from constants alone (Constant nodes, weight DequantizeLinear).
std::set<std::string> DataDependentValues(const ir::Graph& graph) {
  std::set<std::string> out;
  for (const ir::Value* input : graph.inputs()) out.insert(input->name());
  auto order = graph.TopologicalOrder();
  if (!order.ok()) return out;
  for (const ir::Node* node : *order) {
    bool depends = false;
    for (const ir::Value* v : node->inputs()) depends = depends || (v && out.count(v->name()));
    for (const ir::Value* v : node->implicit_inputs()) depends = depends || out.count(v->name());
    if (!depends) continue;
    for (const ir::Value* v : node->outputs()) {
      if (v != nullptr) out.insert(v->name());
    }
  }
  return out;
}

Status CheckSameInputs(const ir::Graph& fp32, const ir::Graph& quant) {
  std::set<std::string> a, b;
  for (const ir::Value* v : fp32.inputs()) a.insert(v->name());
  for (const ir::Value* v : quant.inputs()) b.insert(v->name());
  if (a == b) return Status::Ok();
  return InvalidArgumentError(
      fmt::format("the models' inputs differ: {} and {}", fmt::join(a, ", "), fmt::join(b, ", ")));
}

struct LayerResult {
  std::string tensor;    // the float tensor name
  std::string compared;  // the quantized model's tensor
  std::string node, op;
  double sqnr_db = 0;
};

// Compares every activation of the fp32 model with the tensor of the same name (or its
// "_dequantized" version) in the quantized model on one batch. Weights are left out: the
// quantized model's are BN-folded, the float model's are not.
StatusOr<std::vector<LayerResult>> CompareLayers(const ir::Graph& fp32, const ir::Graph& quant,
                                                 const runtime::NamedTensors& inputs, int threads) {
  auto fp = fp32.Clone();
  auto q = quant.Clone();
  const std::set<std::string> fp_data = DataDependentValues(*fp), q_data = DataDependentValues(*q);
  std::map<std::string, std::string> pairs;  // quant tensor -> fp32 tensor
  for (const ir::Node* node : q->nodes()) {
    for (const ir::Value* v : node->outputs()) {
      if (v == nullptr) continue;
      std::string name = v->name();
      auto back = quant::FloatNameOfDequantized(name);
      std::string float_name = back.has_value() ? *back : name;
      const ir::Value* f = fp->FindValue(float_name);
      if (f == nullptr || f->producer() == nullptr) continue;
      if (!fp_data.count(float_name) || !q_data.count(name)) continue;
      if (v->dtype() != DataType::kFloat32 && v->dtype() != DataType::kUndefined) continue;
      pairs[name] = float_name;
    }
  }
  for (const auto& [qname, fname] : pairs) {
    ir::Value* qv = q->FindValue(qname);
    ir::Value* fv = fp->FindValue(fname);
    if (!qv->is_graph_output()) RETURN_IF_ERROR(q->AddOutput(qv));
    if (!fv->is_graph_output()) RETURN_IF_ERROR(fp->AddOutput(fv));
  }
  runtime::SessionOptions so;
  so.threads = threads;
  ASSIGN_OR_RETURN(auto fs, runtime::Session::Create(*fp, so));
  ASSIGN_OR_RETURN(auto qs, runtime::Session::Create(*q, so));
  ASSIGN_OR_RETURN(auto fout, fs->Run(inputs));
  ASSIGN_OR_RETURN(auto qout, qs->Run(inputs));
  std::map<std::string, Tensor> fmap(fout.begin(), fout.end()), qmap(qout.begin(), qout.end());
  std::vector<LayerResult> out;
  for (const auto& [qname, fname] : pairs) {
    Tensor a = AsFloat(fmap[fname]), b = AsFloat(qmap[qname]);
    if (!a.is_valid() || !b.is_valid() || a.num_elements() != b.num_elements()) continue;
    Energy e;
    e.Add(a, b);
    const ir::Node* producer = fp32.FindValue(fname)->producer();
    out.push_back({fname, qname, producer->name(), producer->op_type(), e.SqnrDb()});
  }
  std::sort(out.begin(), out.end(),
            [](const LayerResult& l, const LayerResult& r) { return l.sqnr_db < r.sqnr_db; });
  return out;
}

}  // namespace

Status Evaluate(const EvalOptions& o, nlohmann::json& report) {
  ASSIGN_OR_RETURN(auto fp32, ir::LoadModel(o.fp32_path));
  ASSIGN_OR_RETURN(auto quant, ir::LoadModel(o.quant_path));
  RETURN_IF_ERROR(CheckSameInputs(*fp32, *quant));
  ASSIGN_OR_RETURN(auto data, quant::OpenCalibrationData(o.data, o.preprocess, *fp32));
  const int64_t n = data->num_samples();
  if (n <= 0) return InvalidArgumentError(data->Describe() + " holds no samples");
  std::vector<int64_t> labels;
  if (!o.labels_path.empty()) {
    ASSIGN_OR_RETURN(labels, ReadLabels(o.labels_path, n));
  }

  runtime::SessionOptions so;
  so.threads = o.threads;
  ASSIGN_OR_RETURN(auto fs, runtime::Session::Create(*fp32, so));
  ASSIGN_OR_RETURN(auto qs, runtime::Session::Create(*quant, so));
  std::vector<Energy> energy;
  std::vector<std::string> output_names;
  int64_t agree = 0, correct_fp = 0, correct_q = 0, counted = 0;
  bool class_scores = true;
  std::string first_output_shape;
  // Steps: both models on every batch, then the per-tensor comparison (both models again).
  const int64_t num_batches = (n + o.batch - 1) / o.batch;
  std::unique_ptr<ProgressBar> progress;
  if (o.show_progress) progress = std::make_unique<ProgressBar>("eval", 2 * num_batches + 1);
  for (int64_t first = 0; first < n; first += o.batch) {
    int64_t count = std::min(o.batch, n - first);
    ASSIGN_OR_RETURN(auto batch, data->Batch(first, count));
    runtime::NamedTensors x(batch.begin(), batch.end());
    auto fout = fs->Run(x);
    if (!fout.ok())
      return fout.status().WithContext(o.fp32_path + ", samples " + std::to_string(first));
    if (progress) progress->Advance();
    auto qout = qs->Run(x);
    if (!qout.ok())
      return qout.status().WithContext(o.quant_path + ", samples " + std::to_string(first));
    if (progress) progress->Advance();
    if (fout->size() != qout->size()) {
      return InvalidArgumentError("the models have different numbers of outputs");
    }
    energy.resize(fout->size());
    output_names.clear();
    for (size_t i = 0; i < fout->size(); ++i) {
      output_names.push_back((*fout)[i].first);
      Tensor a = AsFloat((*fout)[i].second), b = AsFloat((*qout)[i].second);
      if (a.is_valid() && b.is_valid() && a.num_elements() == b.num_elements()) energy[i].Add(a, b);
    }
    const Tensor& first_output = (*fout)[0].second;
    first_output_shape = "[" + SizesToString(first_output.sizes()) + "]";
    class_scores = class_scores && IsClassScores(first_output);
    if (!class_scores) continue;
    auto top_f = ArgmaxRows(first_output), top_q = ArgmaxRows((*qout)[0].second);
    for (size_t i = 0; i < top_f.size() && i < top_q.size(); ++i) {
      agree += top_f[i] == top_q[i];
      if (!labels.empty()) {
        correct_fp += top_f[i] == labels[first + i];
        correct_q += top_q[i] == labels[first + i];
      }
      ++counted;
    }
  }
  if (!class_scores && !labels.empty()) {
    return InvalidArgumentError("--labels needs class scores ([N, C]) as the first output, but '" +
                                output_names[0] + "' is " + first_output_shape);
  }
  report["samples"] = n;
  if (class_scores) {
    report["top1_agreement"] = counted ? static_cast<double>(agree) / counted : 0.0;
  } else {
    // Not class scores (a probability map, a regression): top-1 would mean nothing.
    report["top1_agreement"] = nullptr;
    report["top1_skipped"] = "output '" + output_names[0] + "' " + first_output_shape +
                             " is not class scores [N, C]; compare it by SQNR";
  }
  if (!labels.empty() && counted) {
    report["accuracy_fp32"] = static_cast<double>(correct_fp) / counted;
    report["accuracy_quantized"] = static_cast<double>(correct_q) / counted;
  }
  report["outputs"] = nlohmann::json::array();
  for (size_t i = 0; i < energy.size(); ++i) {
    report["outputs"].push_back(
        {{"name", output_names[i]}, {"sqnr_db", DbJson(energy[i].SqnrDb())}});
  }
  const int64_t probe_samples = std::min(o.layer_samples, n);
  ASSIGN_OR_RETURN(auto probe, data->Batch(0, probe_samples));
  ASSIGN_OR_RETURN(
      auto layers,
      CompareLayers(*fp32, *quant, runtime::NamedTensors(probe.begin(), probe.end()), o.threads));
  if (progress) {
    progress->Advance();
    progress->Finish();
  }
  report["layer_samples"] = probe_samples;
  report["worst_layers"] = nlohmann::json::array();
  for (size_t i = 0; i < layers.size() && static_cast<int>(i) < o.worst; ++i) {
    report["worst_layers"].push_back({{"tensor", layers[i].tensor},
                                      {"compared_with", layers[i].compared},
                                      {"node", layers[i].node},
                                      {"op", layers[i].op},
                                      {"sqnr_db", DbJson(layers[i].sqnr_db)}});
  }
  return Status::Ok();
}

namespace {

std::string Db(const nlohmann::json& v) {
  if (v.is_string()) return "inf";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f", v.get<double>());
  return buf;
}

void PrintText(const nlohmann::json& r) {
  std::printf("samples            %lld\n", static_cast<long long>(r["samples"].get<int64_t>()));
  if (r["top1_agreement"].is_null()) {
    std::printf("top-1 agreement    - (%s)\n", r["top1_skipped"].get<std::string>().c_str());
  } else {
    std::printf("top-1 agreement    %.4f\n", r["top1_agreement"].get<double>());
  }
  if (r.contains("accuracy_fp32")) {
    double f = r["accuracy_fp32"].get<double>(), q = r["accuracy_quantized"].get<double>();
    std::printf("accuracy fp32      %.4f\naccuracy quantized %.4f  (%+.2f points)\n", f, q,
                100.0 * (q - f));
  }
  for (const auto& o : r["outputs"]) {
    std::printf("output %-20s SQNR %s dB\n", o["name"].get<std::string>().c_str(),
                Db(o["sqnr_db"]).c_str());
  }
  std::printf("worst tensors by SQNR (first %lld samples):\n",
              static_cast<long long>(r["layer_samples"].get<int64_t>()));
  for (const auto& l : r["worst_layers"]) {
    std::printf("  %8s dB  %-40s %-18s %s\n", Db(l["sqnr_db"]).c_str(),
                l["tensor"].get<std::string>().c_str(), l["op"].get<std::string>().c_str(),
                l["compared_with"] != l["tensor"] ? "(quantized input)" : "");
  }
}

}  // namespace

void AddEvalCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<EvalOptions>();
  CLI::App* cmd =
      app.add_subcommand("eval", "Compare a quantized model with its float original on data");
  cmd->add_option("fp32_model", o->fp32_path, "Float ONNX model")->required();
  cmd->add_option("quant_model", o->quant_path, "Quantized (QDQ) ONNX model")->required();
  cmd->add_option("--data", o->data,
                  "Samples: NAME=FILE.npy (per input), FILE.npy, FILE.npz or an image folder "
                  "(as quantize --calib)")
      ->required();
  cmd->add_option("--preprocess", o->preprocess,
                  "Image preprocessing for an image folder (docs/calibration.md)");
  cmd->add_option("--labels", o->labels_path, "int64 labels, one per sample (.npy)");
  cmd->add_option("--batch", o->batch, "Samples per run")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  cmd->add_option("--layer-samples", o->layer_samples, "Samples for the per-tensor comparison")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  cmd->add_option("--worst", o->worst, "How many worst tensors to list")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "Intra-op threads (default: all cores)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print the report as JSON");
  cmd->callback([o, exit_code] {
    o->show_progress = !o->json;
    nlohmann::json report;
    Status s = Evaluate(*o, report);
    if (!s.ok()) {
      *exit_code = ReportAndExitCode(s);
      return;
    }
    if (o->json) {
      std::printf("%s\n", DumpJson(report, 2).c_str());
    } else {
      PrintText(report);
    }
    *exit_code = kExitOk;
  });
}

}  // namespace qtune::cli
