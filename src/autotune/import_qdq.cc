#include "autotune/import_qdq.h"

#include <algorithm>
#include <set>

#include "ir/onnx_io.h"

namespace qtune::autotune {

StatusOr<PatternSeeds> ImportQdqSeeds(const std::string& path,
                                      const std::vector<PatternInfo>& patterns) {
  ASSIGN_OR_RETURN(auto graph, ir::LoadModel(path));
  std::set<std::pair<std::string, int>> quantized;  // (reader node, input)
  for (const ir::Node* node : graph->nodes()) {
    for (size_t i = 0; i < node->num_inputs(); ++i) {
      const ir::Value* in = node->input(i);
      const ir::Node* dq = in != nullptr ? in->producer() : nullptr;
      if (dq == nullptr || dq->op_type() != "DequantizeLinear") continue;
      const ir::Node* q = dq->input(0) != nullptr ? dq->input(0)->producer() : nullptr;
      if (q != nullptr && q->op_type() == "QuantizeLinear") {
        quantized.emplace(node->name(), static_cast<int>(i));
      }
    }
  }
  if (quantized.empty()) {
    return InvalidArgumentError("--import-qdq " + path +
                                ": no QuantizeLinear -> DequantizeLinear pair feeds any node; "
                                "pass a QDQ model (e.g. one written by qtune quantize)");
  }
  PatternSeeds seeds;
  for (const PatternInfo& pattern : patterns) {
    std::vector<std::string>& list = seeds[pattern.signature];
    for (const auto& region_points : pattern.resolved) {
      std::string scheme;
      for (const ResolvedPoint& p : region_points) {
        scheme += quantized.count({p.node, p.input_index}) ? '1' : '0';
      }
      if (std::find(list.begin(), list.end(), scheme) == list.end() && list.size() < 3) {
        list.push_back(scheme);
      }
    }
  }
  return seeds;
}

}  // namespace qtune::autotune
