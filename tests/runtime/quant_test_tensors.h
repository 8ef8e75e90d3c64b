// Integer tensors for the int8 kernel tests (quant_elementwise_test.cc,
// onednn_int8_passthrough_test.cc).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "core/check.h"
#include "core/tensor.h"

namespace qtune::runtime::kernel_testing {

// uint8 or int8 tensor of uniform values over the type's whole range.
inline Tensor RandomQuantTensor(DataType dtype, const std::vector<int64_t>& sizes,
                                std::mt19937& rng) {
  auto t = Tensor::Allocate(dtype, sizes);
  QTUNE_CHECK(t.ok());
  const bool is_unsigned = dtype == DataType::kUint8;
  std::uniform_int_distribution<int> dist(is_unsigned ? 0 : -128, is_unsigned ? 255 : 127);
  for (int64_t i = 0; i < t->num_elements(); ++i) {
    int v = dist(rng);
    if (is_unsigned) {
      t->data<uint8_t>()[i] = static_cast<uint8_t>(v);
    } else {
      t->data<int8_t>()[i] = static_cast<int8_t>(v);
    }
  }
  return *std::move(t);
}

// A uint8 or int8 scalar (a zero point).
inline Tensor QuantScalar(DataType dtype, int value) {
  return dtype == DataType::kUint8 ? Tensor::Scalar<uint8_t>(static_cast<uint8_t>(value))
                                   : Tensor::Scalar<int8_t>(static_cast<int8_t>(value));
}

}  // namespace qtune::runtime::kernel_testing
