// The erf form of GELU over contiguous float32: y = x / 2 * (1 + erf(x / sqrt(2))), the
// ONNX Gelu (approximate = "none") and the decomposed Div-Erf-Add-Mul-Mul graph.
//
// Written as y = (x + |x| * E(|x|)) / 2 with E(a) = erf(a / sqrt(2)): E on [0, 5.5) is
// 15 pieces of width 11/30, each a degree-5 polynomial in the offset t from the piece's
// start (mpmath.chebyfit(lambda t: erf((i * 11/30 + t) / sqrt(2)), [0, 11/30], 6) at 30
// digits, rounded to float: at most 7.6e-9 from erf, under float's half ulp at 1), and
// 1 from 5.5 on (erf there is within 3.8e-8 of 1). The AVX-512 path looks the 16
// coefficients of each degree up per lane with one permute, so a lane costs no division
// and no exp: 20 instructions per 16 values. Measured on the 197 x 768 output of a ViT's
// first MLP matmul (1 thread, Intel Xeon): oneDNN 2.6's eltwise_gelu_erf post-op adds
// 0.087 ms to the matmul, this pass over the output afterwards 0.040 ms (the scalar loop,
// for CPUs without AVX-512F, 0.76 ms).
//
// NaN gives NaN, +inf gives +inf and -inf NaN, as the decomposed graph does
// (-inf * (1 + erf(-inf)) = -inf * 0).
#pragma once

#include <cstdint>

namespace qtune::runtime {

enum class GeluPath {
  kAuto,    // AVX-512 where the CPU has it, else the scalar loop
  kScalar,  // always the scalar loop (for tests of that path)
};

// y[i] = gelu(x[i]) for i < n; y may be x. With threads > 1, large inputs are split over
// OpenMP threads.
void GeluErf(const float* x, float* y, int64_t n, int threads, GeluPath path = GeluPath::kAuto);

// True when kAuto takes the AVX-512 path on this CPU. Callers that have oneDNN's
// eltwise_gelu_erf at hand use it where this is false (the scalar loop is slower).
bool GeluErfUseAvx512();

}  // namespace qtune::runtime
