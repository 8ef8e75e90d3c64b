// Scan (opset 9 and later): N state values carried through the iterations, M scan inputs
// sliced along their scan axis (one slice per iteration, forward or reverse), K scan
// outputs stacked along theirs. The number of iterations is the scan inputs' length
// along their axes, known when the plan is compiled.
#include <cstring>

#include "core/shape.h"
#include "runtime/control/control_flow.h"
#include "runtime/control/control_kernels.h"
#include "runtime/control/recurrence.h"

namespace qtune::runtime {
namespace {

// Where one scan input or output's slices lie: `outer` blocks of `trip` slices of
// `inner_bytes` each.
struct SliceGeometry {
  int64_t outer = 1;
  int64_t inner_bytes = 0;
  bool reverse = false;
};

SliceGeometry Geometry(const std::vector<int64_t>& sizes, int64_t axis, DataType dtype,
                       bool reverse) {
  SliceGeometry g;
  g.reverse = reverse;
  int64_t inner = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d) {
    if (d < axis) g.outer *= sizes[d];
    if (d > axis) inner *= sizes[d];
  }
  g.inner_bytes = inner * static_cast<int64_t>(DataTypeSize(dtype));
  return g;
}

struct ScanAnalysis {
  std::unique_ptr<SubgraphProgram> body;
  OuterBinding outer;
  RecurrenceInputs inputs;
  RecurrenceShapes shapes;
  int64_t trip = 0;
  std::vector<SliceGeometry> in_slices, out_slices;
  std::vector<ValueInfo> outputs;
};

StatusOr<int64_t> NormalizedAxis(const ir::Node& node, int64_t axis, int64_t rank,
                                 const std::string& what) {
  if (axis < -rank || axis >= rank) {
    return InvalidArgumentError(node.DebugName() + ": " + what + " axis " + std::to_string(axis) +
                                " is out of range for rank " + std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

int64_t AttributeAt(const std::vector<int64_t>& values, size_t i) {
  return i < values.size() ? values[i] : 0;
}

StatusOr<ScanAnalysis> AnalyzeScan(const BodyRequest& request,
                                   std::span<const ValueInfo* const> node_inputs) {
  const ir::Node& node = request.node;
  if (request.opset < 9) {
    return UnimplementedError(node.DebugName() +
                              ": Scan-8 (batched, with sequence_lens) is not supported; "
                              "upgrade the model to opset 9 or later");
  }
  const int64_t num_scan = node.GetInt("num_scan_inputs", -1);
  if (num_scan < 1 || num_scan > static_cast<int64_t>(node.num_inputs())) {
    return InvalidArgumentError(node.DebugName() + ": num_scan_inputs must be between 1 and " +
                                std::to_string(node.num_inputs()));
  }
  const size_t num_state = node.num_inputs() - static_cast<size_t>(num_scan);
  const std::vector<int64_t> in_axes = node.GetInts("scan_input_axes", {});
  const std::vector<int64_t> in_dirs = node.GetInts("scan_input_directions", {});
  const std::vector<int64_t> out_axes = node.GetInts("scan_output_axes", {});
  const std::vector<int64_t> out_dirs = node.GetInts("scan_output_directions", {});
  ScanAnalysis a;
  std::vector<DataType> formal;
  for (size_t i = 0; i < node.num_inputs(); ++i) {
    if (node_inputs[i] == nullptr) {
      return InvalidArgumentError(node.DebugName() + ": input " + std::to_string(i) +
                                  " is omitted");
    }
    formal.push_back(node_inputs[i]->dtype);
  }
  for (size_t i = 0; i < num_state; ++i) {
    a.inputs.carried.push_back(MakeInfo(node_inputs[i]->dtype, node_inputs[i]->sizes));
  }
  for (size_t j = 0; j < static_cast<size_t>(num_scan); ++j) {
    const ValueInfo& in = *node_inputs[num_state + j];
    const int64_t rank = static_cast<int64_t>(in.sizes.size());
    ASSIGN_OR_RETURN(int64_t axis,
                     NormalizedAxis(node, AttributeAt(in_axes, j), rank, "scan input"));
    const int64_t length = in.sizes[axis];
    if (j == 0) a.trip = length;
    if (length != a.trip) {
      return InvalidArgumentError(node.DebugName() + ": scan input " + std::to_string(j) + " has " +
                                  std::to_string(length) + " slices along axis " +
                                  std::to_string(axis) + ", scan input 0 has " +
                                  std::to_string(a.trip));
    }
    std::vector<int64_t> slice = in.sizes;
    slice.erase(slice.begin() + axis);
    a.inputs.slices.push_back(MakeInfo(in.dtype, slice));
    a.in_slices.push_back(Geometry(in.sizes, axis, in.dtype, AttributeAt(in_dirs, j) != 0));
  }
  ASSIGN_OR_RETURN(a.body, CreateBody(request, "body", formal));
  ASSIGN_OR_RETURN(a.outer, BindOuterInputs(*a.body, request));
  a.inputs.outer = a.outer.sizes;
  const int64_t trip = a.trip;
  StaticTripFn static_trip =
      [trip](const std::vector<ValueInfo>&) -> StatusOr<std::optional<int64_t>> {
    return std::optional<int64_t>(trip);
  };
  ASSIGN_OR_RETURN(a.shapes, InferRecurrence(node, *a.body, a.inputs, static_trip));
  const size_t num_out = a.shapes.per_iteration.size();
  if (node.num_outputs() != num_state + num_out) {
    return InvalidArgumentError(node.DebugName() + " has " + std::to_string(node.num_outputs()) +
                                " outputs; its body gives " + std::to_string(num_state) +
                                " states and " + std::to_string(num_out) + " scan outputs");
  }
  for (size_t c = 0; c < num_state; ++c) {
    a.outputs.push_back(MakeInfo(a.inputs.carried[c].dtype, a.shapes.final_carried()[c]));
  }
  for (size_t k = 0; k < num_out; ++k) {
    const ValueInfo& v = a.shapes.per_iteration[k];
    const int64_t rank = static_cast<int64_t>(v.sizes.size()) + 1;
    ASSIGN_OR_RETURN(int64_t axis,
                     NormalizedAxis(node, AttributeAt(out_axes, k), rank, "scan output"));
    std::vector<int64_t> sizes = v.sizes;
    sizes.insert(sizes.begin() + axis, trip);
    a.out_slices.push_back(Geometry(sizes, axis, v.dtype, AttributeAt(out_dirs, k) != 0));
    a.outputs.push_back(MakeInfo(v.dtype, std::move(sizes)));
  }
  return a;
}

class ScanKernel final : public Kernel {
 public:
  ScanKernel(ScanAnalysis analysis, std::unique_ptr<RecurrenceRunner> runner, size_t num_inputs,
             std::string what)
      : a_(std::move(analysis)),
        runner_(std::move(runner)),
        num_inputs_(num_inputs),
        what_(std::move(what)) {}

  std::string Describe() const override {
    return "control:Scan (iterations: " + std::to_string(a_.trip) + ", body plans: " +
           std::to_string(a_.shapes.stable() ? 1 : a_.shapes.carried.size() - 1) + ")";
  }

  std::vector<const Plan*> NestedPlans() const override { return runner_->plans(); }

  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    const size_t num_state = a_.inputs.carried.size();
    outer_.clear();
    for (size_t k : a_.outer.implicit_index) outer_.push_back(inputs[num_inputs_ + k]);
    RETURN_IF_ERROR(runner_->Start(inputs.first(num_state), outer_));
    for (int64_t t = 0; t < a_.trip; ++t) {
      for (size_t j = 0; j < a_.in_slices.size(); ++j) {
        CopySlice(a_.in_slices[j], t,
                  static_cast<const std::byte*>(inputs[num_state + j].raw_data()),
                  static_cast<std::byte*>(runner_->slice(j).raw_data()), /*gather=*/true);
      }
      RETURN_IF_ERROR(runner_->RunIteration(t));
      for (size_t k = 0; k < a_.out_slices.size(); ++k) {
        CopySlice(
            a_.out_slices[k], t, static_cast<std::byte*>(outputs[num_state + k].raw_data()),
            static_cast<std::byte*>(const_cast<void*>(runner_->per_iteration_output(k).raw_data())),
            /*gather=*/false);
      }
    }
    for (size_t c = 0; c < num_state; ++c) {
      const size_t bytes = runner_->carried_bytes(c);
      if (bytes != outputs[c].byte_size()) {
        return InternalError(what_ + ": final state " + std::to_string(c) + " has " +
                             std::to_string(bytes) + " bytes, its output " +
                             std::to_string(outputs[c].byte_size()));
      }
      if (bytes > 0) std::memcpy(outputs[c].raw_data(), runner_->carried_data(c), bytes);
    }
    return Status::Ok();
  }

 private:
  // gather: copies slice t of `full` into `slice`; else the reverse.
  void CopySlice(const SliceGeometry& g, int64_t t, const std::byte* full_c, std::byte* slice,
                 bool gather) const {
    if (g.inner_bytes == 0) return;
    std::byte* full = const_cast<std::byte*>(full_c);
    const int64_t index = g.reverse ? a_.trip - 1 - t : t;
    for (int64_t o = 0; o < g.outer; ++o) {
      std::byte* at = full + (o * a_.trip + index) * g.inner_bytes;
      std::byte* part = slice + o * g.inner_bytes;
      if (gather) {
        std::memcpy(part, at, static_cast<size_t>(g.inner_bytes));
      } else {
        std::memcpy(at, part, static_cast<size_t>(g.inner_bytes));
      }
    }
  }

  ScanAnalysis a_;
  std::unique_ptr<RecurrenceRunner> runner_;
  size_t num_inputs_;
  std::string what_;
  std::vector<Tensor> outer_;
};

}  // namespace

StatusOr<std::vector<ValueInfo>> InferScanShapes(const ShapeArgs& args) {
  BodyRequest request{args.node, args.opset, args.implicit_inputs, ShapeOnlyBodyOptions()};
  ASSIGN_OR_RETURN(ScanAnalysis a, AnalyzeScan(request, args.inputs));
  return a.outputs;
}

StatusOr<std::optional<KernelChoice>> CreateScanKernel(const KernelRequest& request,
                                                       const CompileOptions& options) {
  const ir::Node& node = request.node;
  std::span<const ValueInfo* const> all(request.inputs);
  BodyRequest body{node, request.opset, all.subspan(node.num_inputs()), KernelBodyOptions(options)};
  ASSIGN_OR_RETURN(ScanAnalysis a, AnalyzeScan(body, all.first(node.num_inputs())));
  ASSIGN_OR_RETURN(std::unique_ptr<RecurrenceRunner> runner,
                   RecurrenceRunner::Create(*a.body, a.inputs, a.shapes));
  auto kernel = std::make_unique<ScanKernel>(std::move(a), std::move(runner), node.num_inputs(),
                                             node.DebugName());
  return PlainLayoutChoice(std::move(kernel), request);
}

}  // namespace qtune::runtime
