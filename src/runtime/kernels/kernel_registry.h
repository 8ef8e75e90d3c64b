// The kernel registry: which kernel factories may serve a node, in which order.
//
// Each kernel file registers its factory with one line (a RegisterXxxKernels function
// next to the factory, called from the list in kernel_list.cc) under the ops it serves
// (domain and op type), the ONNX opset range, the data types its input 0 may have, the
// layout it reads, a tier and a priority. Compile asks Choose() for a node's kernel: the
// candidates of the node's op, highest priority first, are filtered by opset and dtype,
// then each factory is asked in turn; the first that applies wins. The reference tier is
// the fallback when none does. Every candidate passed over is recorded with the reason
// (the filter that refused it, or the factory's NotApplicable reason), for
// `qtune run --print-plan --explain-kernels`.
//
// Adding an op: one kernel file with its factory and RegisterXxxKernels(), one line in
// kernel_list.cc.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/status.h"
#include "runtime/kernels/kernel.h"

namespace qtune::runtime {

enum class KernelTier : uint8_t {
  kOnednn,     // a oneDNN primitive
  kNative,     // plain C++ loops (vectorized by the compiler)
  kReference,  // the obviously-correct reference kernels: every op, the fallback
};
const char* KernelTierName(KernelTier tier);

inline constexpr int64_t kAnyOpset = std::numeric_limits<int64_t>::max();

// One op a kernel serves. The domain is "" for ONNX ("ai.onnx" means the same) or "qtune".
struct KernelOp {
  std::string domain;
  std::string op_type;
};

struct KernelRegistration {
  std::string name;  // names the candidate in plan explanations, e.g. "onednn_conv"
  KernelTier tier = KernelTier::kOnednn;
  // Higher is tried first; equal priorities keep registration order. Only the order of
  // kernels that serve the same op matters (a specialised kernel above a general one).
  int priority = 100;
  std::vector<KernelOp> ops;
  int64_t opset_since = 1;  // the graph's ONNX opset must lie in [since, until]
  int64_t opset_until = kAnyOpset;
  std::vector<DataType> input_dtypes;  // types input 0 may have; empty: any
  // Layouts the kernel reads its input 0 in (the compiler reorders to the first); for
  // plan explanations, not a filter: a reorder step makes any layout acceptable.
  std::vector<Layout> reads = {Layout::kPlain};
  KernelFactory factory = nullptr;
};

// Why a candidate did not serve a node (PlanStep::passed_over).
struct KernelRejection {
  std::string kernel;  // KernelRegistration::name
  std::string reason;
};

struct KernelSelection {
  KernelChoice choice;
  std::string kernel;  // the registration that applied ("reference" for the fallback)
  KernelTier tier = KernelTier::kReference;
  std::vector<KernelRejection> passed_over;  // in the order they were tried
};

struct ChooseOptions {
  // False: only the reference tier (CompileOptions::use_onednn off, or an empty input);
  // `fast_tiers_off_reason` then says why, as every fast candidate's reason.
  bool fast_tiers = true;
  std::string fast_tiers_off_reason;
};

class KernelRegistry {
 public:
  KernelRegistry() = default;
  KernelRegistry(const KernelRegistry&) = delete;
  KernelRegistry& operator=(const KernelRegistry&) = delete;

  // The registry with every built-in kernel (kernel_list.cc), built on first use.
  static const KernelRegistry& Builtin();

  // REQUIRES: registration.factory set and at least one op.
  void Register(KernelRegistration registration);
  // The tier that serves any node no candidate took (CreateReferenceKernel).
  void SetFallback(KernelRegistration registration);

  // The registrations serving `domain`::`op_type`, highest priority first.
  std::vector<const KernelRegistration*> Candidates(const std::string& domain,
                                                    const std::string& op_type) const;

  // The kernel for `request`: the first candidate that passes the filters and whose
  // factory applies, else the fallback. An error from a factory (the node applies but is
  // invalid) is returned as is.
  StatusOr<KernelSelection> Choose(const KernelRequest& request,
                                   const ChooseOptions& options) const;

  // Every registration (not the fallback), in registration order.
  const std::vector<KernelRegistration>& registrations() const { return registrations_; }

  // Why `registration` cannot serve `request` by its opset range and dtypes, or "".
  static std::string FilterReason(const KernelRegistration& registration,
                                  const KernelRequest& request);

  // True when the CPU's int8 kernels compute exact int32 sums for 8-bit weights (an
  // 8-bit dot-product instruction: AVX512-VNNI, AVX-VNNI or AMX). Without one they
  // saturate for weights beyond 7 bits; the QDQ fusions then keep such weights in float.
  static bool Int8DotProductSupported();

 private:
  static std::string Key(const std::string& domain, const std::string& op_type);

  std::vector<KernelRegistration> registrations_;
  std::map<std::string, std::vector<size_t>> by_op_;  // Key -> indices, by priority
  KernelRegistration fallback_;
};

// Registers every built-in kernel (kernel_list.cc).
void RegisterBuiltinKernels(KernelRegistry& registry);

}  // namespace qtune::runtime
