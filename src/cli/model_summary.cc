#include "cli/model_summary.h"

#include <fmt/format.h>

namespace qtune::cli {
namespace {

TensorSummary Describe(const ir::Value* value) {
  TensorSummary t;
  t.name = value->name();
  t.dtype = std::string(DataTypeName(value->dtype()));
  t.shape = value->type().shape ? value->type().shape->ToString() : "unknown";
  return t;
}

void CountTensor(const Tensor& tensor, ModelSummary& summary) {
  summary.num_parameters += tensor.num_elements();
  summary.parameter_bytes += static_cast<int64_t>(tensor.byte_size());
  summary.num_constant_tensors += 1;
}

std::string HumanBytes(int64_t bytes) {
  if (bytes >= (int64_t{1} << 20)) return fmt::format("{:.1f} MiB", bytes / 1048576.0);
  if (bytes >= 1024) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  return fmt::format("{} B", bytes);
}

nlohmann::json TensorsToJson(const std::vector<TensorSummary>& tensors) {
  nlohmann::json out = nlohmann::json::array();
  for (const TensorSummary& t : tensors) {
    out.push_back({{"name", t.name}, {"dtype", t.dtype}, {"shape", t.shape}});
  }
  return out;
}

}  // namespace

ModelSummary SummarizeModel(const ir::Graph& graph, const std::string& path) {
  ModelSummary s;
  s.path = path;
  s.ir_version = graph.info().ir_version;
  s.producer = graph.info().producer_name;
  if (!graph.info().producer_version.empty()) s.producer += " " + graph.info().producer_version;
  for (const auto& [domain, version] : graph.info().opset_imports) {
    s.opsets[domain.empty() ? "ai.onnx" : domain] = version;
  }
  for (const ir::Value* v : graph.inputs()) s.inputs.push_back(Describe(v));
  for (const ir::Value* v : graph.outputs()) s.outputs.push_back(Describe(v));
  for (const ir::Value* v : graph.initializers()) CountTensor(v->initializer(), s);
  for (const ir::Node* n : graph.nodes()) {
    bool default_domain = n->domain().empty() || n->domain() == "ai.onnx";
    s.op_histogram[default_domain ? n->op_type() : n->domain() + "::" + n->op_type()] += 1;
    if (default_domain && n->op_type() == "Constant") {
      const ir::Attribute* value = n->FindAttribute("value");
      if (value != nullptr && value->type == ir::AttributeType::kTensor && value->t.is_valid()) {
        CountTensor(value->t, s);
      }
    }
  }
  s.num_nodes = static_cast<int64_t>(graph.num_nodes());
  return s;
}

nlohmann::json SummaryToJson(const ModelSummary& s) {
  return {
      {"path", s.path},
      {"ir_version", s.ir_version},
      {"producer", s.producer},
      {"opsets", s.opsets},
      {"inputs", TensorsToJson(s.inputs)},
      {"outputs", TensorsToJson(s.outputs)},
      {"num_nodes", s.num_nodes},
      {"op_histogram", s.op_histogram},
      {"num_parameters", s.num_parameters},
      {"parameter_bytes", s.parameter_bytes},
      {"num_constant_tensors", s.num_constant_tensors},
  };
}

std::string SummaryToText(const ModelSummary& s) {
  std::string out = fmt::format("model      {}\n", s.path);
  out += fmt::format("ir_version {}   producer {}\n", s.ir_version,
                     s.producer.empty() ? "-" : s.producer);
  out += "opsets    ";
  for (const auto& [domain, version] : s.opsets) out += fmt::format(" {} {}", domain, version);
  out += "\n\ninputs\n";
  for (const TensorSummary& t : s.inputs) {
    out += fmt::format("  {:<28} {:<10} {}\n", t.name, t.dtype, t.shape);
  }
  out += "outputs\n";
  for (const TensorSummary& t : s.outputs) {
    out += fmt::format("  {:<28} {:<10} {}\n", t.name, t.dtype, t.shape);
  }
  out += fmt::format("\nparameters {} in {} constant tensors ({})\n", s.num_parameters,
                     s.num_constant_tensors, HumanBytes(s.parameter_bytes));
  out += fmt::format("\nops ({} nodes)\n", s.num_nodes);
  std::vector<std::pair<std::string, int64_t>> ops(s.op_histogram.begin(), s.op_histogram.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [op, count] : ops) out += fmt::format("  {:<28} {}\n", op, count);
  return out;
}

}  // namespace qtune::cli
