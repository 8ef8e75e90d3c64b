// Shape functions of the sampling ops (GridSample, RoiAlign) and the losses
// (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss): their output sizes follow from
// input sizes and attributes alone. (The signal ops' sizes come from input values; the
// compiler runs their kernels instead.)
#include "core/shape.h"
#include "runtime/shape/shape_registry.h"

namespace qtune::runtime {
namespace {

// X [N, C, D1..Dr], grid [N, O1..Or, r] -> [N, C, O1..Or].
StatusOr<std::vector<ValueInfo>> GridSampleShape(const ShapeArgs& args) {
  if (!args.has_input(0) || !args.has_input(1)) return ShapeError(args.node, "needs X and grid");
  const auto& x = args.input(0).sizes;
  const auto& grid = args.input(1).sizes;
  if (x.size() < 3 || grid.size() != x.size() || grid[0] != x[0] ||
      grid.back() != static_cast<int64_t>(x.size() - 2)) {
    return ShapeError(args.node, "X [" + SizesToString(x) + "] and grid [" + SizesToString(grid) +
                                     "] must be [N, C, D1..Dr] and [N, O1..Or, r]");
  }
  std::vector<int64_t> out = {x[0], x[1]};
  out.insert(out.end(), grid.begin() + 1, grid.end() - 1);
  return std::vector<ValueInfo>{MakeInfo(args.input(0).dtype, std::move(out))};
}

// X [N, C, H, W], rois [R, 4], batch_indices [R] -> [R, C, output_height, output_width].
StatusOr<std::vector<ValueInfo>> RoiAlignShape(const ShapeArgs& args) {
  if (!args.has_input(0) || !args.has_input(1) || !args.has_input(2)) {
    return ShapeError(args.node, "needs X, rois and batch_indices");
  }
  const auto& x = args.input(0).sizes;
  const auto& rois = args.input(1).sizes;
  const auto& indices = args.input(2).sizes;
  if (x.size() != 4 || rois.size() != 2 || rois[1] != 4 || indices.size() != 1 ||
      indices[0] != rois[0]) {
    return ShapeError(args.node, "X [" + SizesToString(x) + "], rois [" + SizesToString(rois) +
                                     "] and batch_indices [" + SizesToString(indices) +
                                     "] must be [N, C, H, W], [R, 4] and [R]");
  }
  const int64_t height = args.node.GetInt("output_height", 1);
  const int64_t width = args.node.GetInt("output_width", 1);
  if (height < 1 || width < 1) {
    return ShapeError(args.node, "output_height and output_width must be >= 1");
  }
  return std::vector<ValueInfo>{MakeInfo(args.input(0).dtype, {rois[0], x[1], height, width})};
}

// input [N, C, d1..dk], target [N, d1..dk] -> loss [N, d1..dk] (reduction none) or [];
// SoftmaxCrossEntropyLoss's log_prob is the input's size.
StatusOr<std::vector<ValueInfo>> LossShape(const ShapeArgs& args) {
  if (!args.has_input(0) || !args.has_input(1))
    return ShapeError(args.node, "needs input and target");
  const auto& input = args.input(0).sizes;
  const auto& target = args.input(1).sizes;
  bool ok = input.size() >= 2 && target.size() + 1 == input.size() && target[0] == input[0];
  for (size_t d = 2; ok && d < input.size(); ++d) ok = target[d - 1] == input[d];
  if (!ok) {
    return ShapeError(args.node, "input [" + SizesToString(input) + "] and target [" +
                                     SizesToString(target) +
                                     "] must be [N, C, d1..dk] and [N, d1..dk]");
  }
  const DataType dtype = args.input(0).dtype;
  const bool unreduced = args.node.GetString("reduction", "mean") == "none";
  std::vector<ValueInfo> out = {MakeInfo(dtype, unreduced ? target : std::vector<int64_t>{})};
  if (args.node.num_outputs() > 1) out.push_back(MakeInfo(dtype, input));
  return out;
}

}  // namespace

void RegisterSamplingLossShapes(ShapeRegistry& registry) {
  registry.Register("GridSample", GridSampleShape);
  registry.Register("RoiAlign", RoiAlignShape);
  registry.Register("NegativeLogLikelihoodLoss", LossShape);
  registry.Register("SoftmaxCrossEntropyLoss", LossShape);
}

}  // namespace qtune::runtime
