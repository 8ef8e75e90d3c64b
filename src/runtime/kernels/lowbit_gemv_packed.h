// Matrix-vector products with constant low-bit weights (4-bit codes in blocks along K, or
// 8-bit codes), for a few rows at a time: y[m, :] = x[m, :] W + bias, then an optional ReLU,
// where W[k, n] = code[n, k] * scale + offset of k's block in column n (offset =
// -scale * zero_point, so any zero point, integer or not, costs nothing extra).
//
// At batch 1 the product is bound by streaming the weights: 4-bit codes are 1/8 of fp32's
// bytes. The codes are packed once, at kernel creation, into column blocks of
// kLowBitBlock (64) columns, each K rows deep and contiguous ([N / 64][K][row bytes]):
//   4 bits: 32 bytes a row; byte j < 16 holds column j in its low nibble and column j + 16
//           in its high one, byte 16 + j columns 32 + j and 48 + j (one zero-extending
//           load of 16 bytes, an AND and a shift give 32 columns);
//   8 bits: 64 bytes a row, column c in byte c.
// Each block's parameters follow as [k_blocks][scale x 64, offset x 64] floats. A run
// unpacks a row of codes to floats, dequantizes them with one FMA per 16 columns
// (code * scale + offset), and accumulates x[m, k] times them for up to 4 rows, all in fp32
// (no activation quantization: the result is the dequantized weights' product up to
// float summation order). AVX-512F and AVX2+FMA loops, picked at creation (GemvIsa).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/status.h"
#include "runtime/kernels/native_gemv_packed.h"

namespace qtune::runtime {

inline constexpr int64_t kLowBitBlock = 64;  // columns per packed block

class PackedLowBitWeights {
 public:
  // `codes` [N][K] one unsigned code per byte (< 2^bits), `scales` and `zero_points`
  // [N][k_blocks] with k_blocks = ceil(K / block). ResourceExhausted when the buffer
  // cannot be had. REQUIRES: k, n, block > 0; bits 4 or 8.
  static StatusOr<std::unique_ptr<PackedLowBitWeights>> Pack(const uint8_t* codes,
                                                             const float* scales,
                                                             const float* zero_points, int64_t k,
                                                             int64_t n, int bits, int64_t block);
  PackedLowBitWeights(const PackedLowBitWeights&) = delete;
  PackedLowBitWeights& operator=(const PackedLowBitWeights&) = delete;

  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  int bits() const { return bits_; }
  int64_t quant_block() const { return block_; }
  int64_t k_blocks() const { return (k_ + block_ - 1) / block_; }
  int64_t blocks() const { return (n_ + kLowBitBlock - 1) / kLowBitBlock; }
  int64_t row_bytes() const { return kLowBitBlock * bits_ / 8; }
  // Column block b: K rows of row_bytes() code bytes.
  const uint8_t* codes(int64_t b) const { return data_.get() + b * block_stride_; }
  // Column block b's parameters: per K block, 64 scales then 64 offsets.
  const float* params(int64_t b) const {
    return reinterpret_cast<const float*>(data_.get() + b * block_stride_ + codes_bytes_);
  }
  size_t bytes() const { return static_cast<size_t>(blocks() * block_stride_); }

 private:
  PackedLowBitWeights(int64_t k, int64_t n, int bits, int64_t block);
  struct Free {
    void operator()(uint8_t* p) const;
  };
  int64_t k_, n_;
  int bits_;
  int64_t block_;
  int64_t codes_bytes_ = 0;   // K * row_bytes(), rounded up to 64
  int64_t block_stride_ = 0;  // bytes per column block (codes, then params; 64-aligned)
  std::unique_ptr<uint8_t[], Free> data_;
};

// y[r, :] = x[r, :] W (+ bias) (ReLU) for r < rows (any count; 4 at a time); x is rows x K,
// y rows x N, row-major and dense. Every element of y is written, nothing outside it.
// REQUIRES: GemvIsaSupported(options.isa), rows >= 1.
void RunLowBitGemv(const PackedLowBitWeights& w, const float* x, int64_t rows, float* y,
                   const GemvOptions& options);

}  // namespace qtune::runtime
