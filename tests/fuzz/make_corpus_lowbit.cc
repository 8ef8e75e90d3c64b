// Seed models with block-scaled weights (issue 27), valid and corrupt: NVFP4 (float4e2m1
// values, E4M3 block scales behind a DequantizeLinear of the fp32 global scale, opset 23),
// MXFP8 (E4M3 values with float8e8m0 scales, opset 24) and int4 (opset 21), each feeding a
// MatMul; and the corrupt initializers a loader or kernel must refuse with the tensor named
// (exit 3), never a signal: a scale count that does not fit the block size, an infinite
// float scale, a float8e8m0 NaN (0xFF) scale and an NVFP4 E4M3 NaN (0x7F) block scale; and
// com.microsoft MatMulNBits with B, scales or zero_points of the wrong size.
// make_corpus.cc calls WriteLowBitCorpus.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/block_float.h"
#include "core/tensor.h"
#include "corpus_builders.h"
#include "ir/builder.h"

namespace qtune {
namespace {

using ir::Attribute;
using ir::GraphBuilder;
using ir::Value;

constexpr int64_t kK = 64, kN = 8;

Tensor Weight() {
  std::vector<float> w(kK * kN);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.3f * static_cast<float>(i));
  return Tensor::FromVector<float>({kK, kN}, w);
}

std::vector<Attribute> Blocked(int64_t block, bool float_output = false) {
  std::vector<Attribute> a = {Attribute::Int("axis", 0), Attribute::Int("block_size", block)};
  if (float_output) a.push_back(Attribute::Int("output_dtype", 1));
  return a;
}

// y = x [2, K] . W with W = `dequantized`.
void SaveMatMul(GraphBuilder& b, Value* x, Value* w, const std::string& dir,
                const std::string& name) {
  b.Output(b.Op("MatMul", {x, w}));
  corpus::Save(b, dir, name);
}

enum class Nvfp4Fault { kNone, kScaleCount, kNanScale };

void Nvfp4(const std::string& dir, const std::string& name, Nvfp4Fault fault) {
  BlockQuantized q = *QuantizeNvfp4(Weight(), 0);
  GraphBuilder b(23);
  Value* x = b.Input("x", DataType::kFloat32, {2, kK});
  Tensor scales = q.scales;
  if (fault == Nvfp4Fault::kScaleCount)
    scales = *Tensor::Allocate(DataType::kFloat8E4M3FN, {3, kN});
  if (fault == Nvfp4Fault::kNanScale) scales.data<uint8_t>()[5] = 0x7F;  // E4M3FN NaN
  Value* s = b.Op("DequantizeLinear", {b.Initializer("w_scale_e4m3", scales),
                                       b.Initializer("w_global", Tensor::Scalar(q.global_scale))});
  Value* w = b.Op("DequantizeLinear", {b.Initializer("w_e2m1", q.values), s}, Blocked(16));
  SaveMatMul(b, x, w, dir, name);
}

void Mxfp8(const std::string& dir, const std::string& name, bool nan_scale) {
  BlockQuantized q = *QuantizeMxfp8(Weight(), 0);
  if (nan_scale) q.scales.data<uint8_t>()[3] = 0xFF;
  GraphBuilder b(24);
  Value* x = b.Input("x", DataType::kFloat32, {2, kK});
  Value* w = b.Op("DequantizeLinear",
                  {b.Initializer("w_e4m3", q.values), b.Initializer("w_scale_e8m0", q.scales)},
                  Blocked(32, /*float_output=*/true));
  SaveMatMul(b, x, w, dir, name);
}

void Int4(const std::string& dir, const std::string& name, bool infinite_scale) {
  Tensor codes = *Tensor::Allocate(DataType::kInt4, {kK, kN});
  for (int64_t i = 0; i < codes.num_elements(); ++i) {
    codes.data<int8_t>()[i] = static_cast<int8_t>(i % 16 - 8);
  }
  std::vector<float> scale(2 * kN, 0.05f);
  if (infinite_scale) scale[5] = INFINITY;
  GraphBuilder b(21);
  Value* x = b.Input("x", DataType::kFloat32, {2, kK});
  Value* w = b.Op("DequantizeLinear",
                  {b.Initializer("w_int4", codes),
                   b.Initializer("w_scale", Tensor::FromVector<float>({2, kN}, scale))},
                  Blocked(32));
  SaveMatMul(b, x, w, dir, name);
}

// com.microsoft MatMulNBits (K 64, N 8, 4 bits, block 32) with uint8 zero points; one of
// B, scales or zero_points one element short when `fault` names it.
void MatMulNBits(const std::string& dir, const std::string& name, const std::string& fault) {
  constexpr int64_t kBlocks = kK / 32, kBlob = 32 * 4 / 8;
  std::vector<uint8_t> codes(kN * kBlocks * kBlob - (fault == "B" ? 1 : 0));
  for (size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<uint8_t>(i * 37 % 256);
  std::vector<float> scales(kN * kBlocks - (fault == "scales" ? 1 : 0), 0.02f);
  std::vector<uint8_t> zero_points(kN - (fault == "zero_points" ? 1 : 0), 0x88);
  GraphBuilder b(21);
  b.ImportOpset("com.microsoft", 1);
  Value* x = b.Input("x", DataType::kFloat32, {2, kK});
  const int64_t b_rows = static_cast<int64_t>(codes.size()) / kBlob;
  Tensor b_tensor = fault == "B"
                        ? Tensor::FromVector<uint8_t>({static_cast<int64_t>(codes.size())}, codes)
                        : Tensor::FromVector<uint8_t>({b_rows / kBlocks, kBlocks, kBlob}, codes);
  b.Output(b.Op("MatMulNBits",
                {x, b.Initializer("w_q4", b_tensor),
                 b.Initializer("w_scales", Tensor::FromVector<float>(
                                               {static_cast<int64_t>(scales.size())}, scales)),
                 b.Initializer("w_zero_points",
                               Tensor::FromVector<uint8_t>(
                                   {static_cast<int64_t>(zero_points.size())}, zero_points))},
                {Attribute::Int("K", kK), Attribute::Int("N", kN), Attribute::Int("bits", 4),
                 Attribute::Int("block_size", 32)},
                {.name = "nbits", .domain = "com.microsoft"}));
  corpus::Save(b, dir, name);
}

}  // namespace

void WriteLowBitCorpus(const std::string& dir) {
  Nvfp4(dir, "lowbit_nvfp4", Nvfp4Fault::kNone);
  Mxfp8(dir, "lowbit_mxfp8", false);
  Int4(dir, "lowbit_int4", false);
  MatMulNBits(dir, "lowbit_matmulnbits", "");
  Nvfp4(dir, "corrupt-nvfp4-scale-count", Nvfp4Fault::kScaleCount);
  Nvfp4(dir, "corrupt-nvfp4-nan-scale", Nvfp4Fault::kNanScale);
  Mxfp8(dir, "corrupt-mxfp8-e8m0-nan-scale", true);
  Int4(dir, "corrupt-int4-infinite-scale", true);
  MatMulNBits(dir, "corrupt-matmulnbits-b-size", "B");
  MatMulNBits(dir, "corrupt-matmulnbits-scales-size", "scales");
  MatMulNBits(dir, "corrupt-matmulnbits-zero-points-size", "zero_points");
}

}  // namespace qtune
