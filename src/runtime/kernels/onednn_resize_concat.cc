// oneDNN data-movement kernels on kNhwc activations: Resize (the cases whose ONNX
// semantics equal oneDNN's resampling) and Concat, on float32, and on uint8/int8 for
// Concat and nearest Resize (the QDQ fusion's pass-through ops; linear Resize of integers
// is left to the reference tier).
#include <cmath>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/onednn_context.h"
#include "runtime/kernels/onednn_exec_args.h"

namespace qtune::runtime {
namespace {

using dnnl::memory;

memory::desc Nhwc(const std::vector<int64_t>& sizes,
                  memory::data_type dt = memory::data_type::f32) {
  return memory::desc(onednn::ToDims(sizes), dt, memory::format_tag::nhwc);
}

// One primitive with N activation inputs (DNNL_ARG_MULTIPLE_SRC + i, or DNNL_ARG_SRC when
// `multiple` is false) and one output.
class OnednnMovementKernel : public Kernel {
 public:
  OnednnMovementKernel(dnnl::primitive primitive, std::string name, std::vector<memory::desc> srcs,
                       memory::desc dst, bool multiple)
      : primitive_(std::move(primitive)),
        name_(std::move(name)),
        srcs_(std::move(srcs)),
        dst_(dst),
        multiple_(multiple) {}

  std::string Describe() const override { return "onednn:" + name_; }

  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    try {
      for (size_t i = 0; i < srcs_.size(); ++i) {
        int arg = multiple_ ? DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i) : DNNL_ARG_SRC;
        args_.Bind(arg, srcs_[i], inputs[i].raw_data());
      }
      args_.Bind(DNNL_ARG_DST, dst_, outputs[0].raw_data());
      args_.Execute(primitive_);
      return Status::Ok();
    } catch (const dnnl::error& e) {
      return onednn::FromDnnlError(e, "running " + name_);
    }
  }

 private:
  dnnl::primitive primitive_;
  std::string name_;
  std::vector<memory::desc> srcs_;
  memory::desc dst_;
  bool multiple_;
  onednn::ExecArgs args_;
};

// The oneDNN algorithm equal to this Resize, if there is one: nearest with integer
// upscaling and asymmetric/floor rounding, or (half-pixel) linear.
std::optional<dnnl::algorithm> ResampleAlgorithm(const ir::Node& node,
                                                 const std::vector<int64_t>& in,
                                                 const std::vector<int64_t>& out, int64_t opset) {
  if (in[0] != out[0] || in[1] != out[1]) return std::nullopt;
  std::string mode = node.GetString("mode", "nearest");
  std::string coordinates =
      node.GetString("coordinate_transformation_mode", opset >= 11 ? "half_pixel" : "asymmetric");
  if (node.op_type() == "Upsample" || opset < 11) coordinates = "asymmetric";
  if (mode == "nearest") {
    std::string rounding = node.GetString("nearest_mode", "round_prefer_floor");
    bool integer_upscale = out[2] % in[2] == 0 && out[3] % in[3] == 0;
    bool floor_like = rounding == "floor" || node.op_type() == "Upsample" || opset < 11;
    if (coordinates == "asymmetric" && floor_like && integer_upscale) {
      return dnnl::algorithm::resampling_nearest;
    }
    return std::nullopt;
  }
  if (mode == "linear" && (coordinates == "half_pixel" ||
                           (coordinates == "pytorch_half_pixel" && out[2] > 1 && out[3] > 1))) {
    return dnnl::algorithm::resampling_linear;
  }
  return std::nullopt;
}

// oneDNN maps coordinates with the ratio out/in; ONNX with the given scales (or, under a
// keep_aspect_ratio_policy, a common scale). True when the two agree on every axis.
bool ScalesMatchSizes(const KernelRequest& request, const std::vector<int64_t>& in,
                      const std::vector<int64_t>& out) {
  const ir::Node& node = request.node;
  bool resize11 = node.op_type() == "Resize" && request.opset >= 11;
  std::vector<float> scales;
  if (node.op_type() == "Upsample" && node.HasAttribute("scales")) {
    scales = node.GetFloats("scales", {});
  } else {
    size_t index = resize11 ? 2 : 1;
    const ValueInfo* given = index < request.inputs.size() ? request.inputs[index] : nullptr;
    if (given != nullptr && !given->sizes.empty() && given->sizes[0] > 0) {
      if (!given->has_constant() || given->dtype != DataType::kFloat32) return false;
      scales.assign(given->constant.data<float>(),
                    given->constant.data<float>() + given->constant.num_elements());
    }
  }
  if (scales.empty()) {  // sizes given
    return !resize11 || node.GetString("keep_aspect_ratio_policy", "stretch") == "stretch";
  }
  if (scales.size() != in.size() || node.HasAttribute("axes")) return false;
  for (size_t d = 0; d < in.size(); ++d) {
    double ratio = static_cast<double>(out[d]) / static_cast<double>(in[d]);
    if (std::fabs(scales[d] - ratio) > 1e-6 * ratio) return false;
  }
  return true;
}

}  // namespace

StatusOr<std::optional<KernelChoice>> CreateOnednnResizeKernel(const KernelRequest& request) {
  const ir::Node& node = request.node;
  if (!node.domain().empty() || (node.op_type() != "Resize" && node.op_type() != "Upsample")) {
    return NotApplicable();
  }
  if (request.inputs.empty() || !request.inputs[0] ||
      !(request.inputs[0]->dtype == DataType::kFloat32 ||
        IsInt8OrUint8(request.inputs[0]->dtype)) ||
      request.inputs[0]->sizes.size() != 4) {
    return NotApplicable();
  }
  const DataType dtype = request.inputs[0]->dtype;
  const std::vector<int64_t>& in = request.inputs[0]->sizes;
  const std::vector<int64_t>& out = request.outputs[0]->sizes;
  auto algorithm = ResampleAlgorithm(node, in, out, request.opset);
  if (!algorithm || !ScalesMatchSizes(request, in, out)) return NotApplicable();
  if (IsInt8OrUint8(dtype) && *algorithm != dnnl::algorithm::resampling_nearest)
    return NotApplicable();
  ASSIGN_OR_RETURN(memory::data_type dt, onednn::ToDnnl(dtype));
  onednn::SetThreads(request.threads);
  try {
    dnnl::resampling_forward::desc desc(dnnl::prop_kind::forward_inference, *algorithm,
                                        Nhwc(in, dt), Nhwc(out, dt));
    dnnl::resampling_forward::primitive_desc pd(desc, onednn::Engine());
    if (onednn::IsReferenceImpl(onednn::ImplName(pd))) {
      return NotApplicable(request, "oneDNN offers only its slow reference implementation (" +
                                        onednn::ImplName(pd) + ")");
    }
    KernelChoice choice;
    choice.kernel = std::make_unique<OnednnMovementKernel>(
        dnnl::resampling_forward(pd), "resampling:" + onednn::ImplName(pd),
        std::vector<memory::desc>{Nhwc(in, dt)}, Nhwc(out, dt), /*multiple=*/false);
    choice.input_layouts.assign(request.inputs.size(), Layout::kPlain);
    choice.input_layouts[0] = Layout::kNhwc;
    choice.output_layouts = {Layout::kNhwc};
    return std::optional<KernelChoice>(std::move(choice));
  } catch (const dnnl::error& e) {
    return onednn::DeclineOrError(request, e);
  }
}

StatusOr<std::optional<KernelChoice>> CreateOnednnConcatKernel(const KernelRequest& request) {
  const ir::Node& node = request.node;
  if (!node.domain().empty() || node.op_type() != "Concat") return NotApplicable();
  const std::vector<int64_t>& out = request.outputs[0]->sizes;
  const DataType dtype = request.outputs[0]->dtype;
  if (out.size() != 4 || !(dtype == DataType::kFloat32 || IsInt8OrUint8(dtype)))
    return NotApplicable();
  ASSIGN_OR_RETURN(memory::data_type dt, onednn::ToDnnl(dtype));
  std::vector<memory::desc> srcs;
  for (const ValueInfo* in : request.inputs) {
    if (in == nullptr || in->has_constant() || in->dtype != dtype) return NotApplicable();
    srcs.push_back(Nhwc(in->sizes, dt));
  }
  int64_t axis = node.GetInt("axis", 0);
  if (axis < 0) axis += 4;
  onednn::SetThreads(request.threads);
  try {
    dnnl::concat::primitive_desc pd(Nhwc(out, dt), static_cast<int>(axis), srcs, onednn::Engine());
    KernelChoice choice;
    choice.kernel = std::make_unique<OnednnMovementKernel>(
        dnnl::concat(pd), "concat:" + onednn::ImplName(pd), srcs, Nhwc(out, dt), /*multiple=*/true);
    choice.input_layouts.assign(request.inputs.size(), Layout::kNhwc);
    choice.output_layouts = {Layout::kNhwc};
    return std::optional<KernelChoice>(std::move(choice));
  } catch (const dnnl::error& e) {
    return onednn::DeclineOrError(request, e);
  }
}

void RegisterOnednnResizeConcatKernels(KernelRegistry& registry) {
  registry.Register({.name = "onednn_resize",
                     .ops = {{"", "Resize"}, {"", "Upsample"}},
                     .input_dtypes = {DataType::kFloat32, DataType::kInt8, DataType::kUint8},
                     .reads = {Layout::kNhwc},
                     .factory = &CreateOnednnResizeKernel});
  registry.Register({.name = "onednn_concat",
                     .ops = {{"", "Concat"}},
                     .input_dtypes = {DataType::kFloat32, DataType::kInt8, DataType::kUint8},
                     .reads = {Layout::kNhwc},
                     .factory = &CreateOnednnConcatKernel});
}

}  // namespace qtune::runtime
