// oneDNN Transpose: one reorder from the input read through permuted strides to the plain
// output (attention's head split/merge, [B,S,H,D] <-> [B,H,S,D], and K^T). Dims that stay
// adjacent through the permutation are merged first, so the reorder sees the fewest dims.
#include <algorithm>
#include <numeric>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/onednn_context.h"
#include "runtime/kernels/onednn_exec_args.h"

namespace qtune::runtime {
namespace {

using dnnl::memory;

class OnednnTransposeKernel : public Kernel {
 public:
  OnednnTransposeKernel(dnnl::reorder::primitive_desc pd, memory::desc src, memory::desc dst)
      : pd_(std::move(pd)), primitive_(pd_), src_(src), dst_(dst), impl_(onednn::ImplName(pd_)) {}

  std::string Describe() const override { return "onednn:transpose:" + impl_; }

  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    try {
      args_.Bind(DNNL_ARG_FROM, src_, inputs[0].raw_data());
      args_.Bind(DNNL_ARG_TO, dst_, outputs[0].raw_data());
      args_.Execute(primitive_);
      return Status::Ok();
    } catch (const dnnl::error& e) {
      return onednn::FromDnnlError(e, "running transpose");
    }
  }

 private:
  dnnl::reorder::primitive_desc pd_;
  dnnl::reorder primitive_;
  memory::desc src_, dst_;
  std::string impl_;
  onednn::ExecArgs args_;
};

// The transpose with size-1 dims dropped and runs of input dims that stay consecutive in
// the output merged: `in` gets the merged input sizes, `perm` the permutation over them.
void Simplify(const std::vector<int64_t>& sizes, const std::vector<int64_t>& perm,
              std::vector<int64_t>& in, std::vector<int64_t>& out_perm) {
  std::vector<int64_t> kept;  // output order, input dims of size > 1
  for (int64_t p : perm) {
    if (sizes[p] != 1) kept.push_back(p);
  }
  // Groups of consecutive input dims, in output order.
  std::vector<std::vector<int64_t>> groups;
  for (int64_t p : kept) {
    if (!groups.empty() && groups.back().back() + 1 == p) {
      groups.back().push_back(p);
    } else {
      groups.push_back({p});
    }
  }
  // Number the groups by their position in the input.
  std::vector<size_t> by_input(groups.size());
  std::iota(by_input.begin(), by_input.end(), 0);
  std::sort(by_input.begin(), by_input.end(),
            [&](size_t a, size_t b) { return groups[a].front() < groups[b].front(); });
  in.assign(groups.size(), 1);
  out_perm.assign(groups.size(), 0);
  for (size_t rank = 0; rank < by_input.size(); ++rank) {
    for (int64_t d : groups[by_input[rank]]) in[rank] *= sizes[d];
    out_perm[by_input[rank]] = static_cast<int64_t>(rank);
  }
}

}  // namespace

StatusOr<std::optional<KernelChoice>> CreateOnednnTransposeKernel(const KernelRequest& request) {
  const ir::Node& node = request.node;
  if (node.op_type() != "Transpose" || !(node.domain().empty() || node.domain() == "ai.onnx") ||
      request.inputs.empty() || request.inputs[0] == nullptr || request.outputs.empty() ||
      request.outputs[0] == nullptr) {
    return NotApplicable();
  }
  const ValueInfo& x = *request.inputs[0];
  // float32, and uint8/int8 (the QDQ fusion's pass-through Transpose): a reorder moves
  // bytes without converting them.
  if (x.has_constant() || !(x.dtype == DataType::kFloat32 || x.dtype == DataType::kUint8 ||
                            x.dtype == DataType::kInt8)) {
    return NotApplicable();
  }
  const int64_t rank = static_cast<int64_t>(x.sizes.size());
  std::vector<int64_t> perm = node.GetInts("perm", {});
  if (perm.empty()) {
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  std::vector<bool> seen(rank, false);
  if (static_cast<int64_t>(perm.size()) != rank) return NotApplicable();
  for (int64_t& p : perm) {
    if (p < 0) p += rank;
    if (p < 0 || p >= rank || seen[p]) return NotApplicable();  // the reference reports it
    seen[p] = true;
  }
  int64_t elements = 1;
  for (int64_t s : x.sizes) elements *= s;
  if (elements == 0) return NotApplicable();
  std::vector<int64_t> in, merged_perm;
  Simplify(x.sizes, perm, in, merged_perm);
  if (in.empty()) {  // every dim has size 1
    in = {1};
    merged_perm = {0};
  }
  const size_t dims = in.size();
  if (dims > DNNL_MAX_NDIMS) return NotApplicable();
  // Input strides of the merged dims; the source is read in output order through them.
  std::vector<int64_t> in_strides(dims, 1);
  for (size_t i = dims - 1; i-- > 0;) in_strides[i] = in_strides[i + 1] * in[i + 1];
  memory::dims out_dims(dims), src_strides(dims), dst_strides(dims, 1);
  for (size_t i = 0; i < dims; ++i) {
    out_dims[i] = in[merged_perm[i]];
    src_strides[i] = in_strides[merged_perm[i]];
  }
  for (size_t i = dims - 1; i-- > 0;) dst_strides[i] = dst_strides[i + 1] * out_dims[i + 1];
  ASSIGN_OR_RETURN(memory::data_type dt, onednn::ToDnnl(x.dtype));
  onednn::SetThreads(request.threads);
  try {
    memory::desc src_md(out_dims, dt, src_strides);
    memory::desc dst_md(out_dims, dt, dst_strides);
    dnnl::reorder::primitive_desc pd(onednn::Engine(), src_md, onednn::Engine(), dst_md);
    if (onednn::IsReferenceImpl(onednn::ImplName(pd))) {
      return NotApplicable(request, "oneDNN offers only its slow reference implementation (" +
                                        onednn::ImplName(pd) + ")");
    }
    KernelChoice choice;
    choice.kernel = std::make_unique<OnednnTransposeKernel>(std::move(pd), src_md, dst_md);
    choice.input_layouts = {Layout::kPlain};
    choice.output_layouts = {Layout::kPlain};
    return std::optional<KernelChoice>(std::move(choice));
  } catch (const dnnl::error& e) {
    return onednn::DeclineOrError(request, e);
  }
}

void RegisterOnednnTransposeKernels(KernelRegistry& registry) {
  registry.Register({.name = "onednn_transpose",
                     .ops = {{"", "Transpose"}},
                     .input_dtypes = {DataType::kFloat32, DataType::kInt8, DataType::kUint8},
                     .factory = &CreateOnednnTransposeKernel});
}

}  // namespace qtune::runtime
