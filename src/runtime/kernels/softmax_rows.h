// Softmax over contiguous rows of float32: y[r, i] = exp(x[r, i] - max_r) / sum_r, the
// ONNX Softmax of each row (the reference tier's formula, in float instead of double).
//
// One pass finds the row maximum, one writes exp(x - max) and sums it, one scales by
// 1 / sum; a row of a few hundred values stays in L1 through all three. exp is a
// Cephes-style polynomial (range reduction by ln 2 in two parts, degree-6 polynomial,
// 2^n by exponent arithmetic): within 2 ulp of std::exp; arguments below -87.3 (where
// exp underflows float's normal range) give 0, as does -infinity. NaN inputs give NaN
// rows, and a row that is all -infinity gives NaN, both as in the reference.
//
// AVX-512 intrinsics where the CPU has AVX-512F (16 lanes, masked tails), elsewhere a
// loop the compiler vectorizes for AVX2 or baseline x86-64. Measured on 591 rows of 197
// (a ViT's attention scores, 1 thread, Intel Xeon): oneDNN 2.6's softmax 0.067 ms, the
// AVX-512 path 0.046 ms, the portable loop (its AVX2 clone) 0.123 ms; so callers that
// have oneDNN's softmax at hand use it where SoftmaxRowsUseAvx512() is false.
#pragma once

#include <cstdint>

namespace qtune::runtime {

enum class SoftmaxPath {
  kAuto,      // AVX-512 where the CPU has it, else the portable loop
  kPortable,  // always the portable loop (for tests of that path)
};

// Softmax of `rows` rows of `count` values each (row r at x + r * count) into y, which may
// be x. With threads > 1, large inputs are split by rows over OpenMP threads.
void SoftmaxRows(const float* x, float* y, int64_t rows, int64_t count, int threads,
                 SoftmaxPath path = SoftmaxPath::kAuto);

// True when kAuto takes the AVX-512 path on this CPU.
bool SoftmaxRowsUseAvx512();

// Softmax's numerators and denominators for callers that know each row's maximum and
// divide later: for `count` rows of n values, row r at rows + r * stride, in place,
// x = exp(x - max[r]), and inverse_sums[r] = 1 / the row's sum. Rows go two at a time
// (their exp chains interleave). The AVX-512 path's exp; REQUIRES SoftmaxRowsUseAvx512()
// (declared where QTUNE_AVX512F_PATHS is).
void ExpMinusMaxRows(float* rows, int64_t stride, int64_t count, int64_t n, const float* max,
                     float* inverse_sums);

}  // namespace qtune::runtime
