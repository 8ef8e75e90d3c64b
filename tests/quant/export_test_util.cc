#include "export_test_util.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <random>

#include "core/npy.h"
#include "core/shape.h"
#include "ir/onnx_io.h"
#include "passes/pipeline.h"
#include "quant/calibrate.h"
#include "quant/calibration_data.h"
#include "runtime/reference/registry.h"
#include "runtime/session.h"
#include "util/ort_peer.h"

namespace qtune::quant::testing {

std::string FmnistModelPath() {
  return std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx";
}
std::string FmnistCalibPath() { return std::string(QTUNE_MODELS_DIR) + "/fmnist/calib_512.npy"; }
std::string FmnistTestPath() { return std::string(QTUNE_MODELS_DIR) + "/fmnist/test_2000.npy"; }
std::string FmnistLabelsPath() {
  return std::string(QTUNE_MODELS_DIR) + "/fmnist/test_2000_labels.npy";
}

std::unique_ptr<ir::Graph> LoadCleanFmnist() {
  auto graph = ir::LoadModel(FmnistModelPath());
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  if (!graph.ok()) return nullptr;
  passes::PassOptions options;
  options.evaluator = [](const ir::Node& node, std::span<const Tensor> inputs, int64_t opset) {
    return runtime::EvaluateNode(node, inputs, opset);
  };
  auto report = passes::RunPipeline(**graph, options);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  return std::move(graph).value();
}

Tensor Rows(const Tensor& t, int64_t first, int64_t count) {
  std::vector<int64_t> sizes = t.sizes();
  int64_t row = t.num_elements() / sizes[0];
  sizes[0] = count;
  Tensor out = *Tensor::Allocate(t.dtype(), sizes);
  size_t bytes = static_cast<size_t>(row) * DataTypeSize(t.dtype());
  std::memcpy(out.raw_data(), static_cast<const std::byte*>(t.raw_data()) + first * bytes,
              bytes * count);
  return out;
}

StatusOr<Tensor> RunQtune(const ir::Graph& graph, const std::string& input, const Tensor& x,
                          int threads) {
  runtime::SessionOptions options;
  options.threads = threads;
  ASSIGN_OR_RETURN(auto session, runtime::Session::Create(graph, options));
  ASSIGN_OR_RETURN(auto outputs, session->Run({{input, x}}));
  return outputs.at(0).second;
}

StatusOr<Tensor> RunOrtOn(const ir::Graph& graph, const std::string& tag, const std::string& input,
                          const Tensor& x) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("qtune_export_" + tag + "_" + std::to_string(getpid()) + ".onnx"))
                         .string();
  RETURN_IF_ERROR(ir::SaveModel(graph, path));
  auto outputs = qtune::testing::RunOrt(path, {{input, x}}, {graph.outputs()[0]->name()});
  std::filesystem::remove(path);
  if (!outputs.ok()) return outputs.status();
  return outputs->at(0).second;
}

std::vector<int64_t> Top1(const Tensor& logits) {
  std::vector<int64_t> out;
  int64_t n = logits.size(0), c = logits.size(1);
  const float* p = logits.data<float>();
  for (int64_t i = 0; i < n; ++i)
    out.push_back(std::max_element(p + i * c, p + (i + 1) * c) - (p + i * c));
  return out;
}

double Agreement(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  if (a.size() != b.size() || a.empty()) return 0.0;
  size_t same = 0;
  for (size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
  return static_cast<double>(same) / static_cast<double>(a.size());
}

std::vector<int64_t> Labels(const Tensor& labels) {
  auto s = labels.span<int64_t>();
  return {s.begin(), s.end()};
}

QuantPlan HandMadePlan(const ir::Graph& graph, QuantFormat format, int64_t calib_samples) {
  QuantPlan plan;
  std::map<std::string, CalibrationRequest> requests;
  for (const ir::Node* node : graph.nodes()) {
    if (node->op_type() != "Conv" && node->op_type() != "Gemm") continue;
    QuantSite act;
    act.value = node->input(0)->name();
    act.consumers = {{node->name(), 0}};
    act.config.format = format;
    act.role = node->op_type() + " input";
    plan.sites.push_back(act);
    requests[act.value] = CalibrationRequest{act.config.calibrator, format};
    QuantSite weight;
    weight.kind = QuantSite::Kind::kWeight;
    weight.value = node->input(1)->name();
    weight.consumers = {{node->name(), 1}};
    weight.config.format = format;
    bool trans_b = node->op_type() == "Gemm" && node->GetInt("transB", 0) != 0;
    weight.config.axis = node->op_type() == "Conv" || trans_b ? 0 : 1;
    weight.role = node->op_type() + " weight";
    plan.sites.push_back(weight);
    plan.quantized_nodes.push_back(node->name());
  }
  auto source = OpenCalibrationData({FmnistCalibPath()}, "", graph);
  EXPECT_TRUE(source.ok()) << source.status().ToString();
  if (!source.ok()) return plan;
  CalibrateOptions options;
  options.max_samples = calib_samples;
  options.show_progress = false;
  auto ranges = CalibrateActivations(graph, requests, **source, options);
  EXPECT_TRUE(ranges.ok()) << ranges.status().ToString();
  if (!ranges.ok()) return plan;
  for (QuantSite& site : plan.sites) {
    if (site.kind == QuantSite::Kind::kActivation) site.range = ranges->at(site.value);
  }
  return plan;
}

int CountOps(const ir::Graph& graph, const std::string& op_type) {
  int n = 0;
  for (const ir::Node* node : graph.nodes()) n += node->op_type() == op_type;
  return n;
}

StatusOr<QuantizeModelResult> QuantizeOn(const ir::Graph& model, const Tensor& calib,
                                         const std::string& tag) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("qtune_" + tag + "_calib_" + std::to_string(getpid()) + ".npy");
  RETURN_IF_ERROR(WriteNpy(path.string(), calib));
  QuantizeModelOptions options;
  options.calib_specs = {path.string()};
  options.show_progress = false;
  auto result = QuantizeModel(model, options);
  std::filesystem::remove(path);
  return result;
}

}  // namespace qtune::quant::testing
