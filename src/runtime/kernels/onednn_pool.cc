// oneDNN 1-, 2- and 3-D pooling (rank-4 activations in kNhwc, ranks 3 and 5 plain, see
// WindowLayout): MaxPool (without the Indices output),
// AveragePool, GlobalAveragePool and GlobalMaxPool, on float32 and on uint8/int8 (the QDQ
// fusion's pass-through pools; the output has the input's type, averages are rounded
// half to even and saturated, as the reference tier does).
#include "runtime/fusion/quant_ops.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/onednn_context.h"
#include "runtime/kernels/onednn_conv_geometry.h"
#include "runtime/kernels/onednn_exec_args.h"

namespace qtune::runtime {
namespace {

using dnnl::memory;

class OnednnPoolKernel : public Kernel {
 public:
  explicit OnednnPoolKernel(dnnl::pooling_forward::primitive_desc pd)
      : pd_(std::move(pd)),
        primitive_(pd_),
        impl_(onednn::ImplName(pd_)),
        src_(pd_.src_desc()),
        dst_(pd_.dst_desc()) {}

  std::string Describe() const override { return "onednn:" + impl_; }

  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    try {
      args_.Bind(DNNL_ARG_SRC, src_, inputs[0].raw_data());
      args_.Bind(DNNL_ARG_DST, dst_, outputs[0].raw_data());
      args_.Execute(primitive_);
      return Status::Ok();
    } catch (const dnnl::error& e) {
      return onednn::FromDnnlError(e, "running pooling");
    }
  }

 private:
  dnnl::pooling_forward::primitive_desc pd_;
  dnnl::pooling_forward primitive_;
  std::string impl_;
  memory::desc src_, dst_;
  onednn::ExecArgs args_;
};

struct PoolParams {
  dnnl::algorithm algorithm;
  memory::dims kernel, strides, pad_begin, pad_end;
};

// Reads the pooling attributes; nullopt for variants this kernel leaves to the reference
// tier (dilations, storage_order, ceil_mode with counted padding).
std::optional<PoolParams> ReadParams(const ir::Node& node, const std::vector<int64_t>& x,
                                     const std::vector<int64_t>& y) {
  const std::string& op = node.op_type();
  const size_t dims = x.size() - 2;
  PoolParams p;
  if (op == "GlobalAveragePool" || op == "GlobalMaxPool") {
    p.algorithm = op == "GlobalMaxPool" ? dnnl::algorithm::pooling_max
                                        : dnnl::algorithm::pooling_avg_exclude_padding;
    p.kernel.assign(x.begin() + 2, x.end());
    p.strides.assign(dims, 1);
    p.pad_begin.assign(dims, 0);
    p.pad_end.assign(dims, 0);
    return p;
  }
  std::vector<int64_t> kernel = node.GetInts("kernel_shape", {});
  std::vector<int64_t> strides = node.GetInts("strides", std::vector<int64_t>(dims, 1));
  std::vector<int64_t> pads = node.GetInts("pads", std::vector<int64_t>(2 * dims, 0));
  std::vector<int64_t> dilations = node.GetInts("dilations", std::vector<int64_t>(dims, 1));
  std::string auto_pad = node.GetString("auto_pad", "NOTSET");
  bool count_include_pad = node.GetInt("count_include_pad", 0) != 0;
  bool ceil_mode = node.GetInt("ceil_mode", 0) != 0;
  if (kernel.size() != dims || strides.size() != dims || pads.size() != 2 * dims ||
      dilations != std::vector<int64_t>(dims, 1) || node.GetInt("storage_order", 0) != 0 ||
      (ceil_mode && count_include_pad)) {
    return std::nullopt;
  }
  if (op == "MaxPool") {
    p.algorithm = dnnl::algorithm::pooling_max;
  } else {
    p.algorithm = count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                    : dnnl::algorithm::pooling_avg_exclude_padding;
  }
  for (size_t i = 0; i < dims; ++i) {
    int64_t begin = pads[i];
    if (auto_pad == "VALID") {
      begin = 0;
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      int64_t total = std::max<int64_t>(0, (y[i + 2] - 1) * strides[i] + kernel[i] - x[i + 2]);
      begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    }
    // Right padding that makes oneDNN's output size equal ONNX's (covers ceil_mode).
    int64_t end = (y[i + 2] - 1) * strides[i] + kernel[i] - x[i + 2] - begin;
    if (count_include_pad && end != pads[i + dims] && auto_pad == "NOTSET") return std::nullopt;
    p.kernel.push_back(kernel[i]);
    p.strides.push_back(strides[i]);
    p.pad_begin.push_back(begin);
    p.pad_end.push_back(end);
  }
  return p;
}

}  // namespace

StatusOr<std::optional<KernelChoice>> CreateOnednnPoolKernel(const KernelRequest& request) {
  const ir::Node& node = request.node;
  const std::string& op = node.op_type();
  if (!node.domain().empty() || (op != "MaxPool" && op != "AveragePool" &&
                                 op != "GlobalAveragePool" && op != "GlobalMaxPool")) {
    return NotApplicable();
  }
  if (request.inputs.empty() || request.inputs[0] == nullptr) return NotApplicable();
  const ValueInfo& x = *request.inputs[0];
  const bool supported_type =
      x.dtype == DataType::kFloat32 || x.dtype == DataType::kUint8 || x.dtype == DataType::kInt8;
  const size_t rank = x.sizes.size();
  if (!supported_type || !onednn::IsWindowRank(rank)) return NotApplicable();
  if (request.outputs.empty() || request.outputs[0] == nullptr ||
      request.outputs[0]->sizes.size() != rank) {
    return NotApplicable();
  }
  if (node.num_outputs() > 1 && node.output(1) != nullptr) return NotApplicable();  // Indices
  if (node.FindAttribute(kPoolScaleAttribute) != nullptr) {
    return NotApplicable(request,
                         "an int8 average of a Q/DQ pair computes as the graph does (the "
                         "reference kernel: float taps, double sum), which oneDNN does not");
  }
  const std::vector<int64_t>& y = request.outputs[0]->sizes;
  std::optional<PoolParams> params = ReadParams(node, x.sizes, y);
  if (!params) return NotApplicable();
  onednn::SetThreads(request.threads);
  ASSIGN_OR_RETURN(memory::data_type dt, onednn::ToDnnl(x.dtype));
  try {
    memory::desc src_md(onednn::ToDims(x.sizes), dt, onednn::WindowTag(rank));
    memory::desc dst_md(onednn::ToDims(y), dt, onednn::WindowTag(rank));
    dnnl::pooling_forward::desc desc(dnnl::prop_kind::forward_inference, params->algorithm, src_md,
                                     dst_md, params->strides, params->kernel, params->pad_begin,
                                     params->pad_end);
    dnnl::pooling_forward::primitive_desc pd(desc, onednn::Engine());
    if (onednn::IsReferenceImpl(onednn::ImplName(pd))) {
      return NotApplicable(request, "oneDNN offers only its slow reference implementation (" +
                                        onednn::ImplName(pd) + ")");
    }
    KernelChoice choice;
    choice.kernel = std::make_unique<OnednnPoolKernel>(std::move(pd));
    choice.input_layouts = {onednn::WindowLayout(rank)};
    choice.output_layouts.assign(request.outputs.size(), onednn::WindowLayout(rank));
    return std::optional<KernelChoice>(std::move(choice));
  } catch (const dnnl::error& e) {
    return onednn::DeclineOrError(request, e);
  }
}

void RegisterOnednnPoolKernels(KernelRegistry& registry) {
  registry.Register({.name = "onednn_pool",
                     .ops = {{"", "MaxPool"},
                             {"", "AveragePool"},
                             {"", "GlobalAveragePool"},
                             {"", "GlobalMaxPool"}},
                     .input_dtypes = {DataType::kFloat32, DataType::kInt8, DataType::kUint8},
                     .reads = {Layout::kNhwc, Layout::kPlain},
                     .factory = &CreateOnednnPoolKernel});
}

}  // namespace qtune::runtime
