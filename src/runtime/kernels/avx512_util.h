// What the native AVX-512F loops share: QTUNE_AVX512F_PATHS where the compiler can build
// them (GCC on x86-64), the target attribute of their functions, the mask of a tail of
// fewer than 16 lanes, and the load-time check of the CPU. Each such kernel also has a
// path (its own portable loop or a oneDNN primitive) for CPUs without AVX-512F.
#pragma once

#include <cstdint>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
// GCC 12's avx512fintrin.h trips -W(maybe-)uninitialized on its own _mm512_undefined_*()
// pass-through operands (in the including file, where the intrinsics are inlined).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#define QTUNE_AVX512F_PATHS 1
#define QTUNE_AVX512F __attribute__((target("avx512f")))
#endif

namespace qtune::runtime {

#ifdef QTUNE_AVX512F_PATHS
// Lanes [0, min(remaining, 16)).
QTUNE_AVX512F inline __mmask16 TailMask16(int64_t remaining) {
  return remaining >= 16 ? static_cast<__mmask16>(0xFFFF)
                         : static_cast<__mmask16>((1u << remaining) - 1u);
}
#endif

// True when the AVX-512F paths can run on this CPU.
inline bool CpuHasAvx512F() {
#ifdef QTUNE_AVX512F_PATHS
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
#else
  return false;
#endif
}

}  // namespace qtune::runtime
