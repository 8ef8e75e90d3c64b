// Comparing an engine output with an ONNX test's expected output, with the tolerances of
// ONNX's backend test runner (numpy.testing.assert_allclose(rtol=1e-3, atol=1e-7)).
#pragma once

#include <string>

#include "core/tensor.h"

namespace qtune::conformance {

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

// Empty when `actual` matches `expected`: same dtype and sizes; floating-point elements
// (float8/16/32/64, bfloat16, complex parts) within atol + rtol * |expected|, NaN matching
// NaN and infinities matching exactly; every other type bit-exact. Otherwise a short
// description naming the first mismatching elements.
std::string CompareTensors(const Tensor& actual, const Tensor& expected,
                           const Tolerance& tolerance);

}  // namespace qtune::conformance
