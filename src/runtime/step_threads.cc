#include "runtime/step_threads.h"

#include <algorithm>
#include <string>

#include "core/shape.h"

namespace qtune::runtime {
namespace {

bool IsOneOf(const std::string& op, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return op == n; });
}

int64_t Elements(const ValueInfo* v) { return v == nullptr ? 0 : NumElements(v->sizes); }

// Multiply-adds per output element of a convolution or matrix product, or 0.
int64_t ReductionDepth(const KernelRequest& request) {
  const std::string& op = request.node.op_type();
  const auto& in = request.inputs;
  if (in.size() < 2 || in[0] == nullptr || in[1] == nullptr) return 0;
  if (IsOneOf(op, {"Conv", "FusedConv", "QConv", "ConvInteger", "QLinearConv"})) {
    const size_t w_index = op == "QLinearConv" ? 3 : 1;  // [M, C/group, kernel...]
    if (w_index >= in.size() || in[w_index] == nullptr) return 0;
    const auto& w = in[w_index]->sizes;
    int64_t depth = 1;
    for (size_t d = 1; d < w.size(); ++d) depth *= w[d];
    return depth;
  }
  if (IsOneOf(op, {"MatMul", "Gemm", "MatMulBias", "QMatMul", "MatMulInteger", "MatMulNBits",
                   "QLinearMatMul", "FusedMatMul"})) {
    const auto& a = in[0]->sizes;
    if (a.empty()) return 0;
    // Gemm may read A transposed: the larger of its two dimensions bounds K.
    return a.size() >= 2 ? std::max(a[a.size() - 1], a[a.size() - 2]) : a.back();
  }
  return 0;
}

}  // namespace

StepWork WorkOf(const KernelRequest& request) {
  StepWork work;
  for (const ValueInfo* v : request.inputs) {
    if (v != nullptr && !v->has_constant()) work.elements += Elements(v);
  }
  for (const ValueInfo* v : request.outputs) work.elements += Elements(v);
  const int64_t first_output = request.outputs.empty() ? 0 : Elements(request.outputs[0]);
  work.macs = first_output * ReductionDepth(request);
  return work;
}

int StepThreads(const KernelRequest& request, int threads) {
  if (threads <= 1) return threads;
  const ir::Node& node = request.node;
  if (IsOneOf(node.op_type(),
              {"If", "Loop", "Scan", "SequenceMap", "LSTM", "GRU", "RNN", "Attention"})) {
    return threads;
  }
  const StepWork work = WorkOf(request);
  return work.elements < kSmallStepElements && work.macs < kSmallStepMacs ? 1 : threads;
}

}  // namespace qtune::runtime
