// Shared oneDNN state for the fast kernels: one CPU engine per process, one stream per
// thread, and the conversions from qtune types to oneDNN's. oneDNN errors are caught here and in
// each kernel and turned into Status (no dnnl::error crosses a module boundary).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "runtime/kernels/kernel.h"

namespace qtune::runtime::onednn {

dnnl::engine& Engine();
// The calling thread's stream (in-order CPU stream; execution is synchronous). Sessions
// run on several threads at once each get their own stream.
dnnl::stream& Stream();

// Sets the OpenMP thread count oneDNN uses on the calling thread (an OpenMP setting is
// per thread, so two sessions with different counts on two threads do not interfere).
// oneDNN bakes the count into primitives when they are created, so call this before
// creating and before running (threads <= 0 leaves the current setting).
void SetThreads(int threads);

StatusOr<dnnl::memory::data_type> ToDnnl(DataType dtype);
dnnl::memory::dims ToDims(const std::vector<int64_t>& sizes);
// Plain row-major tag for a rank (a, ab, abc, abcd, abcde).
dnnl::memory::format_tag PlainTag(size_t rank);

// A memory object over caller-owned data (no copy).
dnnl::memory WrapMemory(const dnnl::memory::desc& desc, const void* data);
// Copies `tensor` into a new memory object with layout `desc` (weights reordering).
StatusOr<dnnl::memory> ReorderConstant(const Tensor& tensor, const dnnl::memory::desc& plain,
                                       const dnnl::memory::desc& target);

// The implementation name of a primitive descriptor, e.g. "brgconv:avx512_core".
std::string ImplName(const dnnl::primitive_desc_base& pd);
// oneDNN's reference implementations are orders of magnitude slower; kernels refuse them.
bool IsReferenceImpl(const std::string& impl_name);

Status FromDnnlError(const dnnl::error& e, const std::string& context);
// A kernel factory's answer to a dnnl::error thrown while it builds primitives: not
// applicable when oneDNN has no implementation for the case (the next candidate is
// tried), otherwise an error naming the request's node.
StatusOr<std::optional<KernelChoice>> DeclineOrError(const KernelRequest& request,
                                                     const dnnl::error& e);

// True when the CPU has an 8-bit dot-product instruction (AVX512-VNNI, AVX-VNNI or AMX).
// Without one, oneDNN's u8 x s8 kernels add pairs of products into int16 with saturation
// (vpmaddubsw), which is wrong for weights beyond 7 bits. Tests may force false.
bool HasInt8DotProduct();
void ForceNoInt8DotProductForTesting(bool force);

}  // namespace qtune::runtime::onednn
