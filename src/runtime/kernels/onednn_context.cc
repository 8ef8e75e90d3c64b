#include "runtime/kernels/onednn_context.h"

#include <omp.h>

#include <atomic>

namespace qtune::runtime::onednn {

dnnl::engine& Engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& Stream() {
  thread_local dnnl::stream stream(Engine());
  return stream;
}

void SetThreads(int threads) {
  if (threads > 0 && omp_get_max_threads() != threads) omp_set_num_threads(threads);
}

StatusOr<dnnl::memory::data_type> ToDnnl(DataType dtype) {
  using dt = dnnl::memory::data_type;
  switch (dtype) {
    case DataType::kFloat32:
      return dt::f32;
    case DataType::kFloat16:
      return dt::f16;
    case DataType::kBfloat16:
      return dt::bf16;
    case DataType::kInt8:
      return dt::s8;
    case DataType::kUint8:
      return dt::u8;
    case DataType::kInt32:
      return dt::s32;
    default:
      return UnimplementedError("oneDNN has no data type for " + std::string(DataTypeName(dtype)));
  }
}

dnnl::memory::dims ToDims(const std::vector<int64_t>& sizes) {
  return dnnl::memory::dims(sizes.begin(), sizes.end());
}

dnnl::memory::format_tag PlainTag(size_t rank) {
  using tag = dnnl::memory::format_tag;
  switch (rank) {
    case 1:
      return tag::a;
    case 2:
      return tag::ab;
    case 3:
      return tag::abc;
    case 4:
      return tag::abcd;
    case 5:
      return tag::abcde;
    case 6:
      return tag::abcdef;
    default:
      return tag::undef;
  }
}

dnnl::memory WrapMemory(const dnnl::memory::desc& desc, const void* data) {
  return dnnl::memory(desc, Engine(), const_cast<void*>(data));
}

StatusOr<dnnl::memory> ReorderConstant(const Tensor& tensor, const dnnl::memory::desc& plain,
                                       const dnnl::memory::desc& target) {
  try {
    dnnl::memory src = WrapMemory(plain, tensor.raw_data());
    dnnl::memory dst(target, Engine());
    dnnl::reorder(src, dst).execute(Stream(), src, dst);
    Stream().wait();
    return dst;
  } catch (const dnnl::error& e) {
    return FromDnnlError(e, "reordering a constant");
  }
}

std::string ImplName(const dnnl::primitive_desc_base& pd) {
  const char* name = pd.impl_info_str();
  return name == nullptr ? "unknown" : name;
}

bool IsReferenceImpl(const std::string& impl_name) { return impl_name.rfind("ref", 0) == 0; }

Status FromDnnlError(const dnnl::error& e, const std::string& context) {
  return InternalError(context + ": oneDNN error " + std::to_string(static_cast<int>(e.status)) +
                       ": " + e.what());
}

StatusOr<std::optional<KernelChoice>> DeclineOrError(const KernelRequest& request,
                                                     const dnnl::error& e) {
  if (e.status == dnnl_unimplemented) {
    return NotApplicable(request, "oneDNN has no implementation for this case");
  }
  return FromDnnlError(e, request.node.DebugName());
}

namespace {
std::atomic<bool> force_no_int8_dot{false};
}  // namespace

bool HasInt8DotProduct() {
  if (force_no_int8_dot.load()) return false;
  using isa = dnnl::cpu_isa;
  switch (dnnl::get_effective_cpu_isa()) {
    case isa::avx2_vnni:
    case isa::avx512_core_vnni:
    case isa::avx512_core_bf16:
    case isa::avx512_core_amx:
      return true;
    default:
      return false;
  }
}

void ForceNoInt8DotProductForTesting(bool force) { force_no_int8_dot.store(force); }

}  // namespace qtune::runtime::onednn
