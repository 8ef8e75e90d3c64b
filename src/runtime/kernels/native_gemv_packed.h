// Matrix-vector products with constant weights, for a few rows at a time (batch-1 and
// small-batch MatMul/Gemm): y[m, :] = x[m, :] W + bias, then an optional ReLU.
//
// At batch 1 the product reads every weight once per run and does one FMA with it: its
// speed is the speed of streaming the weights from memory. The weights are packed once,
// at kernel creation, into column blocks of kGemvBlock floats, each block stored K rows
// deep and contiguous ([N / kGemvBlock][K][kGemvBlock], the last block zero-padded), so a
// run reads them front to back in one stream; the buffer sits on transparent huge pages
// where the kernel allows it (fewer TLB misses while streaming tens of MiB: 2048x2048
// layers ran 1.5x faster with them on an AMD EPYC). Each block keeps its kGemvBlock
// columns of up to kGemvMaxRows rows in vector registers for the whole K loop.
//
// Loops are written with AVX-512F and AVX2+FMA intrinsics, picked when the kernel is
// created (BestGemvIsa); there is none for CPUs with neither (the caller then uses another
// kernel).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "core/status.h"

namespace qtune::runtime {

inline constexpr int64_t kGemvBlock = 64;   // columns per packed block
inline constexpr int64_t kGemvMaxRows = 4;  // rows computed together (one weight stream)

enum class GemvIsa : uint8_t { kAvx512, kAvx2 };
const char* GemvIsaName(GemvIsa isa);
// Whether this CPU runs `isa`'s loops (AVX-512F; AVX2 with FMA).
bool GemvIsaSupported(GemvIsa isa);
// The widest ISA this CPU runs, or nullopt (neither).
std::optional<GemvIsa> BestGemvIsa();

// Weights [K, N] (or [N, K] when transposed), packed once as described above.
// Non-copyable: owns the buffer.
class PackedGemvWeights {
 public:
  // `w` holds K*N floats, row-major [K,N], or [N,K] when `transposed`. `scale` multiplies
  // every weight (Gemm's alpha). ResourceExhausted when the buffer cannot be had.
  // REQUIRES: k > 0, n > 0.
  static StatusOr<std::unique_ptr<PackedGemvWeights>> Pack(const float* w, int64_t k, int64_t n,
                                                           bool transposed, float scale);
  PackedGemvWeights(const PackedGemvWeights&) = delete;
  PackedGemvWeights& operator=(const PackedGemvWeights&) = delete;

  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  int64_t blocks() const { return blocks_; }
  // Block b: K rows of kGemvBlock floats.
  const float* block(int64_t b) const { return data_.get() + b * k_ * kGemvBlock; }
  // Whether the buffer was advised onto transparent huge pages.
  bool huge_pages() const { return huge_pages_; }

 private:
  PackedGemvWeights(int64_t k, int64_t n);
  struct Free {
    void operator()(float* p) const;
  };
  int64_t k_, n_, blocks_;
  bool huge_pages_ = false;
  std::unique_ptr<float[], Free> data_;
};

struct GemvOptions {
  const float* bias = nullptr;  // n floats added to every row, or nullptr
  bool relu = false;            // max(0, .) after the bias
  int threads = 1;              // > 1: the column blocks are split between OpenMP threads
  GemvIsa isa = GemvIsa::kAvx2;
};

// y[r, :] = x[r, :] W (+ bias) (ReLU) for r < rows; x is rows x K, y rows x N, both
// row-major and dense. Every element of y is written, nothing outside it.
// Calls block(b) for every column block b in [0, blocks): in order on this thread when
// `threads` <= 1 or there is one block, else on `threads` OpenMP threads that take two
// blocks at a time (dynamic, so that a thread that starts late holds back no fixed share).
// The loop of RunGemv and RunLowBitGemv (lowbit_gemv_packed.h).
template <typename Block>
void ForEachColumnBlock(int64_t blocks, int threads, const Block& block) {
  if (threads <= 1 || blocks < 2) {
    for (int64_t b = 0; b < blocks; ++b) block(b);
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 2)
  for (int64_t b = 0; b < blocks; ++b) block(b);
}

// REQUIRES: GemvIsaSupported(options.isa), rows >= 1.
void RunGemv(const PackedGemvWeights& w, const float* x, int64_t rows, float* y,
             const GemvOptions& options);

}  // namespace qtune::runtime
