// A model's outline for `qtune inspect`: inputs, outputs, opsets, op histogram, parameters.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace qtune::cli {

struct TensorSummary {
  std::string name;
  std::string dtype;
  std::string shape;  // "[N,3,224,224]", "unknown" when the rank is unknown
};

struct ModelSummary {
  std::string path;
  int64_t ir_version = 0;
  std::string producer;
  std::map<std::string, int64_t> opsets;  // "ai.onnx" for the default domain
  std::vector<TensorSummary> inputs;
  std::vector<TensorSummary> outputs;
  std::map<std::string, int64_t> op_histogram;  // "domain::Op" for custom domains
  int64_t num_nodes = 0;
  // Constant tensors: initializers plus tensors held by Constant nodes.
  int64_t num_parameters = 0;
  int64_t parameter_bytes = 0;
  int64_t num_constant_tensors = 0;
};

ModelSummary SummarizeModel(const ir::Graph& graph, const std::string& path);
nlohmann::json SummaryToJson(const ModelSummary& summary);
std::string SummaryToText(const ModelSummary& summary);

}  // namespace qtune::cli
