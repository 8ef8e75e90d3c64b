// MatMul with block-quantized low-bit weights: ONNX Runtime's com.microsoft MatMulNBits,
// and qtune::MatMulNBits, the same op that the compiler builds from a constant
// DequantizeLinear(INT4/UINT4/INT8/UINT8 weight) -> MatMul [-> Add bias] [-> activation]
// (lowbit_matmul_fusion.cc).
//
// Inputs (ONNX Runtime's contrib spec):
//   A            float32 [..., K]
//   B            uint8 [N, k_blocks, blob], k_blocks = ceil(K / block_size),
//                blob = block_size * bits / 8: column n's codes along K, block by block,
//                packed low bits first (bits 4: code 2i in the low nibble of byte i)
//   scales       float32 [N * k_blocks] (any shape of that count), column-major by block
//   zero_points  optional: uint8 [N * ceil(k_blocks * bits / 8)] packed like B (each
//                column's row of blocks starts on a byte), or float32 [N * k_blocks];
//                absent: 2^(bits-1) (8 for 4 bits, 128 for 8 bits)
//   g_idx        optional int32 [K] (act-order): refused (Unimplemented)
//   bias         optional float32 [N]
// Attributes: K, N, bits (4 or 8; default 4), block_size, accuracy_level (ignored: qtune
//   computes in fp32). com.microsoft requires a power-of-two block_size >= 16; the qtune
//   op accepts any block_size with block_size * bits a multiple of 8 (a per-channel int8
//   weight is one block of K), and also the activation attributes of fused_ops.h.
// Y [..., N] = activation(A x W^T + bias), W[n, k] = (code - zero_point) * scale of the
//   block k / block_size of column n.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"

namespace qtune::runtime {

inline constexpr char kMicrosoftDomain[] = "com.microsoft";
inline constexpr char kMatMulNBits[] = "MatMulNBits";

// Input positions.
inline constexpr size_t kNBitsA = 0, kNBitsB = 1, kNBitsScales = 2, kNBitsZeroPoints = 3,
                        kNBitsGIdx = 4, kNBitsBias = 5;

// True for com.microsoft::MatMulNBits and qtune::MatMulNBits.
bool IsMatMulNBits(const ir::Node& node);

// The attributes, checked (InvalidArgument / Unimplemented naming the node).
struct NBitsShape {
  int64_t k = 0, n = 0, bits = 4, block = 0;
  int64_t k_blocks() const { return (k + block - 1) / block; }
  int64_t blob() const { return block * bits / 8; }
};
StatusOr<NBitsShape> ReadNBitsShape(const ir::Node& node);

// The weights of one node unpacked: every code one byte, the parameters as floats.
struct LowBitWeights {
  NBitsShape shape;
  std::vector<uint8_t> codes;      // [N][K], unsigned codes < 2^bits
  std::vector<float> scales;       // [N][k_blocks]
  std::vector<float> zero_points;  // [N][k_blocks], in code units
  std::vector<float> bias;         // N floats, or empty
  float weight(int64_t n, int64_t k) const {
    const int64_t j = n * shape.k_blocks() + k / shape.block;
    return (static_cast<float>(codes[n * shape.k + k]) - zero_points[j]) * scales[j];
  }
};

// Reads B, scales, zero_points and bias (`inputs` parallel to the node's inputs; invalid
// tensors for omitted ones), checking every type and size against the attributes and the
// scales for non-finite values. Errors name the node and the tensor.
StatusOr<LowBitWeights> ReadLowBitWeights(const ir::Node& node, std::span<const Tensor> inputs);

class ReferenceRegistry;
class ShapeRegistry;
// The reference kernel for both domains, and the shape function ("MatMulNBits").
void RegisterMatMulNBitsReference(ReferenceRegistry& registry);
void RegisterMatMulNBitsShape(ShapeRegistry& registry);

}  // namespace qtune::runtime
