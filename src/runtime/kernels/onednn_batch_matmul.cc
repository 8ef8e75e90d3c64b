// oneDNN fp32 MatMul whose operands are both computed at run time, e.g. attention's
// Q x K^T ([B,H,S,D] x [B,H,D,S]) and P x V: numpy-style batched matrix products with
// batch broadcasting, in kPlain. Both operands are bound at each run (runtime memory for
// the weights); constant 2-D weights are left to the prepacking kernel (onednn_matmul.cc).
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/onednn_context.h"
#include "runtime/kernels/onednn_exec_args.h"

namespace qtune::runtime {
namespace {

using dnnl::memory;

class OnednnBatchMatMulKernel : public Kernel {
 public:
  OnednnBatchMatMulKernel(dnnl::matmul::primitive_desc pd, memory::desc a, memory::desc b,
                          memory::desc c)
      : pd_(std::move(pd)), primitive_(pd_), a_(a), b_(b), c_(c), impl_(onednn::ImplName(pd_)) {}

  std::string Describe() const override { return "onednn:batch_matmul:" + impl_; }

  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    try {
      args_.Bind(DNNL_ARG_SRC, a_, inputs[0].raw_data());
      args_.Bind(DNNL_ARG_WEIGHTS, b_, inputs[1].raw_data());
      args_.Bind(DNNL_ARG_DST, c_, outputs[0].raw_data());
      args_.Execute(primitive_);
      return Status::Ok();
    } catch (const dnnl::error& e) {
      return onednn::FromDnnlError(e, "running batched matmul");
    }
  }

 private:
  dnnl::matmul::primitive_desc pd_;
  dnnl::matmul primitive_;
  memory::desc a_, b_, c_;
  std::string impl_;
  onednn::ExecArgs args_;
};

// Row-major memory of `sizes` extended with leading 1s to `rank`.
memory::desc PlainDesc(std::vector<int64_t> sizes, size_t rank) {
  while (sizes.size() < rank) sizes.insert(sizes.begin(), 1);
  memory::dims strides(rank, 1);
  for (size_t i = rank - 1; i-- > 0;) strides[i] = strides[i + 1] * sizes[i + 1];
  return memory::desc(onednn::ToDims(sizes), memory::data_type::f32, strides);
}

}  // namespace

StatusOr<std::optional<KernelChoice>> CreateOnednnBatchMatMulKernel(const KernelRequest& request) {
  const ir::Node& node = request.node;
  if (node.op_type() != "MatMul" || !(node.domain().empty() || node.domain() == "ai.onnx")) {
    return NotApplicable();
  }
  if (request.inputs.size() != 2 || request.inputs[0] == nullptr || request.inputs[1] == nullptr ||
      request.outputs.empty() || request.outputs[0] == nullptr) {
    return NotApplicable();
  }
  const ValueInfo& a = *request.inputs[0];
  const ValueInfo& b = *request.inputs[1];
  const std::vector<int64_t>& c = request.outputs[0]->sizes;
  if (a.dtype != DataType::kFloat32 || b.dtype != DataType::kFloat32) return NotApplicable();
  // Matrix-vector forms (rank 1) change the output rank; the reference handles them.
  const size_t rank = c.size();
  if (a.sizes.size() < 2 || b.sizes.size() < 2 || rank > DNNL_MAX_NDIMS) return NotApplicable();
  int64_t elements = 1;
  for (int64_t s : c) elements *= s;
  if (elements == 0 || a.sizes.back() == 0) return NotApplicable();
  onednn::SetThreads(request.threads);
  try {
    memory::desc a_md = PlainDesc(a.sizes, rank);
    memory::desc b_md = PlainDesc(b.sizes, rank);
    memory::desc c_md = PlainDesc(c, rank);
    dnnl::matmul::desc desc(a_md, b_md, c_md);
    dnnl::matmul::primitive_desc pd(desc, onednn::Engine());
    if (onednn::IsReferenceImpl(onednn::ImplName(pd))) {
      return NotApplicable(request, "oneDNN offers only its slow reference implementation (" +
                                        onednn::ImplName(pd) + ")");
    }
    KernelChoice choice;
    choice.kernel = std::make_unique<OnednnBatchMatMulKernel>(std::move(pd), a_md, b_md, c_md);
    choice.input_layouts = {Layout::kPlain, Layout::kPlain};
    choice.output_layouts = {Layout::kPlain};
    return std::optional<KernelChoice>(std::move(choice));
  } catch (const dnnl::error& e) {
    return onednn::DeclineOrError(request, e);
  }
}

void RegisterOnednnBatchMatMulKernels(KernelRegistry& registry) {
  registry.Register({.name = "onednn_batch_matmul",
                     .ops = {{"", "MatMul"}},
                     .input_dtypes = {DataType::kFloat32},
                     .factory = &CreateOnednnBatchMatMulKernel});
}

}  // namespace qtune::runtime
