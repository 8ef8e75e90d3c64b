// Native (plain C++, vectorized by the compiler) float32 ReduceMean, ReduceSum, ReduceMax,
// ReduceMin, ReduceSumSquare and ReduceL2 over one contiguous run of axes, in kPlain.
// The input is viewed as [outer, reduce, inner]: reducing the last axes (LayerNorm's
// statistics) runs a dot-product-like loop per output, reducing middle axes (mean over
// tokens) accumulates whole rows. oneDNN 2.6's reduction primitive is not used: it offers
// only its reference implementation for middle axes (~100x slower, measured on
// [8,197,768]). Axes from the "axes" attribute or a constant input 1, keepdims either way
// (the bytes are the same); non-contiguous axes, noop_with_empty_axes with no axes and
// other types are left to the reference tier.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/shape.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"

namespace qtune::runtime {
namespace {

enum class ReduceOp { kMean, kSum, kMax, kMin, kSumSquare, kL2 };

std::optional<ReduceOp> OpOf(const ir::Node& node) {
  if (!node.domain().empty()) return std::nullopt;
  const std::string& op = node.op_type();
  if (op == "ReduceMean") return ReduceOp::kMean;
  if (op == "ReduceSum") return ReduceOp::kSum;
  if (op == "ReduceMax") return ReduceOp::kMax;
  if (op == "ReduceMin") return ReduceOp::kMin;
  if (op == "ReduceSumSquare") return ReduceOp::kSumSquare;
  if (op == "ReduceL2") return ReduceOp::kL2;
  return std::nullopt;
}

const char* OpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kMean:
      return "mean";
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kMax:
      return "max";
    case ReduceOp::kMin:
      return "min";
    case ReduceOp::kSumSquare:
      return "sum_square";
    case ReduceOp::kL2:
      return "l2";
  }
  return "?";
}

struct ReduceShape {
  int64_t outer = 1, reduce = 1, inner = 1;
};

class NativeReduceKernel final : public Kernel {
 public:
  NativeReduceKernel(ReduceOp op, ReduceShape shape) : op_(op), s_(shape) {}

  std::string Describe() const override {
    return std::string("native:reduce_") + OpName(op_) + (s_.inner == 1 ? ":last" : ":rows");
  }

  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    const float* x = static_cast<const float*>(inputs[0].raw_data());
    float* y = static_cast<float*>(outputs[0].raw_data());
    for (int64_t o = 0; o < s_.outer; ++o) {
      const float* xo = x + o * s_.reduce * s_.inner;
      float* yo = y + o * s_.inner;
      if (s_.inner == 1) {
        *yo = Finish(ReduceRun(xo));
      } else {
        ReduceRows(xo, yo);
      }
    }
    return Status::Ok();
  }

 private:
  bool IsMax() const { return op_ == ReduceOp::kMax; }
  bool IsMin() const { return op_ == ReduceOp::kMin; }
  bool Squares() const { return op_ == ReduceOp::kSumSquare || op_ == ReduceOp::kL2; }
  float Identity() const {
    if (IsMax()) return -std::numeric_limits<float>::infinity();
    if (IsMin()) return std::numeric_limits<float>::infinity();
    return 0.0f;
  }
  float Finish(float acc) const {
    if (op_ == ReduceOp::kMean) return acc / static_cast<float>(s_.reduce);
    if (op_ == ReduceOp::kL2) return std::sqrt(acc);
    return acc;
  }

  // One contiguous run of `reduce` values; 8 partial accumulators so the loop vectorizes.
  float ReduceRun(const float* x) const {
    constexpr int kLanes = 8;
    float part[kLanes];
    std::fill(part, part + kLanes, Identity());
    const int64_t n = s_.reduce;
    int64_t i = 0;
    if (IsMax() || IsMin()) {
      for (; i + kLanes <= n; i += kLanes)
        for (int l = 0; l < kLanes; ++l)
          part[l] = IsMax() ? std::max(part[l], x[i + l]) : std::min(part[l], x[i + l]);
      float acc = part[0];
      for (int l = 1; l < kLanes; ++l)
        acc = IsMax() ? std::max(acc, part[l]) : std::min(acc, part[l]);
      for (; i < n; ++i) acc = IsMax() ? std::max(acc, x[i]) : std::min(acc, x[i]);
      return acc;
    }
    const bool squares = Squares();
    for (; i + kLanes <= n; i += kLanes)
      for (int l = 0; l < kLanes; ++l) part[l] += squares ? x[i + l] * x[i + l] : x[i + l];
    float acc = 0;
    for (int l = 0; l < kLanes; ++l) acc += part[l];
    for (; i < n; ++i) acc += squares ? x[i] * x[i] : x[i];
    return acc;
  }

  // `reduce` rows of `inner` values into one row.
  void ReduceRows(const float* x, float* y) const {
    const int64_t inner = s_.inner;
    std::fill(y, y + inner, Identity());
    // omp simd: at -O2 GCC vectorizes only loops whose trip count needs no epilogue (a
    // ViT's mean over 197 tokens of 192: 0.018 ms scalar).
    for (int64_t r = 0; r < s_.reduce; ++r) {
      const float* row = x + r * inner;
      if (IsMax()) {
#pragma omp simd
        for (int64_t i = 0; i < inner; ++i) y[i] = y[i] < row[i] ? row[i] : y[i];
      } else if (IsMin()) {
#pragma omp simd
        for (int64_t i = 0; i < inner; ++i) y[i] = row[i] < y[i] ? row[i] : y[i];
      } else if (Squares()) {
#pragma omp simd
        for (int64_t i = 0; i < inner; ++i) y[i] += row[i] * row[i];
      } else {
#pragma omp simd
        for (int64_t i = 0; i < inner; ++i) y[i] += row[i];
      }
    }
    for (int64_t i = 0; i < inner; ++i) y[i] = Finish(y[i]);
  }

  ReduceOp op_;
  ReduceShape s_;
};

// The reduced axes of `request`, normalized and sorted; nullopt when they are not known at
// compile time or the request is a no-op reduction.
std::optional<std::vector<int64_t>> ReducedAxes(const KernelRequest& request, int64_t rank) {
  const ir::Node& node = request.node;
  std::vector<int64_t> axes;
  if (request.input(1) != nullptr) {
    const ValueInfo& a = *request.inputs[1];
    if (!a.has_constant() || a.dtype != DataType::kInt64) return std::nullopt;
    axes.assign(a.constant.data<int64_t>(), a.constant.data<int64_t>() + a.constant.num_elements());
  } else {
    axes = node.GetInts("axes", {});
  }
  if (axes.empty()) {
    if (node.GetInt("noop_with_empty_axes", 0) != 0) return std::nullopt;
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  for (int64_t& axis : axes) {
    if (axis < -rank || axis >= rank) return std::nullopt;
    if (axis < 0) axis += rank;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return std::nullopt;
  return axes;
}

}  // namespace

StatusOr<std::optional<KernelChoice>> CreateNativeReduceKernel(const KernelRequest& request) {
  std::optional<ReduceOp> op = OpOf(request.node);
  if (!op || request.inputs.empty() || request.inputs[0] == nullptr ||
      request.outputs.size() != 1 || request.outputs[0] == nullptr) {
    return NotApplicable();
  }
  const ValueInfo& x = *request.inputs[0];
  if (x.dtype != DataType::kFloat32 || x.sizes.empty()) return NotApplicable();
  const int64_t rank = static_cast<int64_t>(x.sizes.size());
  std::optional<std::vector<int64_t>> axes = ReducedAxes(request, rank);
  if (!axes || axes->back() - axes->front() + 1 != static_cast<int64_t>(axes->size())) {
    return NotApplicable(request, "the reduced axes are not contiguous");
  }
  ReduceShape shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t& part = d < axes->front()   ? shape.outer
                    : d <= axes->back() ? shape.reduce
                                        : shape.inner;
    part *= x.sizes[d];
  }
  if (shape.reduce == 0 || shape.outer * shape.inner != NumElements(request.outputs[0]->sizes)) {
    return NotApplicable();
  }
  KernelChoice choice;
  choice.kernel = std::make_unique<NativeReduceKernel>(*op, shape);
  choice.input_layouts.assign(request.inputs.size(), Layout::kPlain);
  choice.output_layouts = {Layout::kPlain};
  return std::optional<KernelChoice>(std::move(choice));
}

void RegisterNativeReduceKernels(KernelRegistry& registry) {
  registry.Register({.name = "native_reduce",
                     .tier = KernelTier::kNative,
                     .ops = {{"", "ReduceMean"},
                             {"", "ReduceSum"},
                             {"", "ReduceMax"},
                             {"", "ReduceMin"},
                             {"", "ReduceSumSquare"},
                             {"", "ReduceL2"}},
                     .input_dtypes = {DataType::kFloat32},
                     .factory = &CreateNativeReduceKernel});
}

}  // namespace qtune::runtime
