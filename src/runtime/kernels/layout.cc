#include "core/check.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/onednn_context.h"
#include "runtime/kernels/onednn_exec_args.h"

namespace qtune::runtime {

const char* LayoutName(Layout layout) { return layout == Layout::kNhwc ? "nhwc" : "plain"; }

std::vector<int64_t> PhysicalSizes(const std::vector<int64_t>& sizes, Layout layout) {
  if (layout == Layout::kPlain) return sizes;
  QTUNE_CHECK(sizes.size() == 4);
  return {sizes[0], sizes[2], sizes[3], sizes[1]};
}

namespace {

class ReorderKernel : public Kernel {
 public:
  ReorderKernel(dnnl::memory::desc from, dnnl::memory::desc to, Layout to_layout)
      : from_(from),
        to_(to),
        primitive_(dnnl::reorder::primitive_desc(onednn::Engine(), from, onednn::Engine(), to)),
        to_layout_(to_layout) {}

  std::string Describe() const override {
    return std::string("onednn:reorder to ") + LayoutName(to_layout_);
  }

  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    try {
      args_.Bind(DNNL_ARG_FROM, from_, inputs[0].raw_data());
      args_.Bind(DNNL_ARG_TO, to_, outputs[0].raw_data());
      args_.Execute(primitive_);
      return Status::Ok();
    } catch (const dnnl::error& e) {
      return onednn::FromDnnlError(e, "reorder");
    }
  }

 private:
  dnnl::memory::desc from_, to_;
  dnnl::reorder primitive_;
  Layout to_layout_;
  onednn::ExecArgs args_;
};

}  // namespace

StatusOr<std::unique_ptr<Kernel>> CreateReorderKernel(DataType dtype,
                                                      const std::vector<int64_t>& sizes,
                                                      Layout from, Layout to) {
  if (sizes.size() != 4) return InternalError("reorder between layouts needs a rank-4 value");
  ASSIGN_OR_RETURN(dnnl::memory::data_type dt, onednn::ToDnnl(dtype));
  auto tag = [](Layout l) {
    return l == Layout::kNhwc ? dnnl::memory::format_tag::nhwc : dnnl::memory::format_tag::nchw;
  };
  try {
    dnnl::memory::dims dims = onednn::ToDims(sizes);
    return std::unique_ptr<Kernel>(std::make_unique<ReorderKernel>(
        dnnl::memory::desc(dims, dt, tag(from)), dnnl::memory::desc(dims, dt, tag(to)), to));
  } catch (const dnnl::error& e) {
    return onednn::FromDnnlError(e, "creating a reorder");
  }
}

}  // namespace qtune::runtime
