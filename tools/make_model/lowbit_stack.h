// The batch-1 MatMul stack (ir/matmul_stack.h: layers x (MatMul [W,W] + bias Add + Relu))
// with its weights quantized to int4, round to nearest, symmetric, one fp32 scale per
// block of `block` rows of K (amax / 7, codes clamped to [-8, 7]), in the two forms the
// low-bit benchmark compares (bench/lowbit_b1.sh):
//   kQdq:         opset 21, INT4 initializer [W, W] -> DequantizeLinear(axis 0,
//                 block_size) -> MatMul -> Add -> Relu (standard ONNX);
//   kMatMulNBits: com.microsoft MatMulNBits (bits 4, block_size, codes + 8 as uint8
//                 [W, k_blocks, block / 2], no zero points: the default 8) -> Add -> Relu
//                 (ONNX Runtime's int4 fast path);
//   kInt8Qdq:     int8 weight-only instead: one scale per output channel (amax / 127),
//                 INT8 initializer -> DequantizeLinear(axis 1) -> MatMul (`block` unused).
// The float weights are the ones BuildMatMulStack draws for the same seed.
#pragma once

#include <cstdint>
#include <memory>

#include "ir/graph.h"
#include "ir/matmul_stack.h"

namespace qtune::tools {

enum class LowBitForm { kQdq, kMatMulNBits, kInt8Qdq };

// REQUIRES: options.layers > 0, width > 0 and a multiple of block, block even > 0.
std::unique_ptr<ir::Graph> BuildLowBitStack(const ir::MatMulStackOptions& options, LowBitForm form,
                                            int64_t block);

}  // namespace qtune::tools
