// Block-scaled float formats for weights: NVFP4 and MXFP8. Pure functions over float32
// values; the element and scale codes are core/float_convert.h's.
//
// NVFP4 (NVIDIA; ModelOpt's weight recipe): blocks of 16 elements along one axis.
//   global = amax(tensor) / (6 * 448)                     float32, one per tensor
//   scale  = E4M3(amax(block) / 6 / global)               float8e4m3fn, one per block
//   value  = E2M1(x / (decode(scale) * global))           float4e2m1
//   x' = decode(value) * decode(scale) * global
// so the largest block scale is 448 and the largest element 6. A block whose scale
// rounds to 0 (amax(block) < 2^-10 * 6 * global) holds zeros.
//
// MXFP8 (OCP Microscaling): blocks of 32 elements, E4M3 values, a power-of-two E8M0
// scale per block: scale = 2^e with the smallest e such that amax(block) / 2^e <= 448
// (amax / 448 rounded UP to a power of two, as ModelOpt and Transformer Engine do; OCP's
// floor(log2(amax)) - 8 can be one smaller and then clips up to 12.5% of amax).
//   value = E4M3(x / 2^e) (round to nearest even; never saturates by construction)
// An all-zero block gets scale 2^0.
//
// Blocks run along `axis` of a row-major tensor; the last block along the axis may be
// shorter (ONNX's blocked DequantizeLinear: ceil(size / block) scales along the axis).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"

namespace qtune {

inline constexpr int64_t kNvfp4BlockSize = 16;
inline constexpr int64_t kMxfp8BlockSize = 32;

// amax / (6 * 448); 1 for amax == 0 (any positive value works for an all-zero tensor).
// REQUIRES: amax finite and >= 0.
float Nvfp4GlobalScale(float amax);

// One NVFP4 block: writes the E2M1 codes of `values` to `codes` and returns the block's
// E4M3 scale code. REQUIRES: codes.size() == values.size(), values finite, global > 0.
uint8_t QuantizeNvfp4Block(std::span<const float> values, float global_scale,
                           std::span<uint8_t> codes);

// The E8M0 code of one MXFP8 block's scale (see above), from the block's amax.
// REQUIRES: amax finite and >= 0.
uint8_t Mxfp8ScaleCode(float amax);
// One MXFP8 block: writes the E4M3 codes of `values` to `codes` and returns the E8M0 scale
// code. REQUIRES: codes.size() == values.size(), values finite.
uint8_t QuantizeMxfp8Block(std::span<const float> values, std::span<uint8_t> codes);

// A tensor quantized blockwise along `axis`.
struct BlockQuantized {
  Tensor values;  // float4e2m1 (NVFP4) or float8e4m3fn (MXFP8); the input's sizes
  Tensor scales;  // float8e4m3fn (NVFP4) or float8e8m0 (MXFP8); ceil(size / block) on axis
  float global_scale = 1.0f;  // NVFP4: the per-tensor float32 scale; MXFP8: 1
  int64_t axis = 0;
  int64_t block_size = 0;
};

// Quantizes a float32 tensor. InvalidArgument for a non-float32 or scalar input, an axis
// out of range or a non-finite element (naming its index).
StatusOr<BlockQuantized> QuantizeNvfp4(const Tensor& x, int64_t axis);
StatusOr<BlockQuantized> QuantizeMxfp8(const Tensor& x, int64_t axis);

// The float32 values the quantized tensor stands for (what the exported DequantizeLinear
// chain computes): value * scale (* global_scale for NVFP4).
Tensor DequantizeBlocks(const BlockQuantized& q);

}  // namespace qtune
