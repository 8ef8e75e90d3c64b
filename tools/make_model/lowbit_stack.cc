#include "lowbit_stack.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "core/check.h"
#include "ir/builder.h"

namespace qtune::tools {

std::unique_ptr<ir::Graph> BuildLowBitStack(const ir::MatMulStackOptions& options, LowBitForm form,
                                            int64_t block) {
  const int64_t n = options.width;
  QTUNE_CHECK(options.layers > 0 && n > 0 && block > 0 && block % 2 == 0 && n % block == 0);
  std::mt19937_64 rng(options.seed);  // the draws of BuildMatMulStack, in its order
  auto uniform = [&](std::vector<int64_t> sizes, float bound) {
    std::uniform_real_distribution<float> dist(-bound, bound);
    Tensor t = *Tensor::Allocate(DataType::kFloat32, std::move(sizes));
    for (float& v : t.span<float>()) v = dist(rng);
    return t;
  };
  ir::GraphBuilder b(21);
  if (form == LowBitForm::kMatMulNBits) b.ImportOpset("com.microsoft", 1);
  Dim batch = options.batch > 0 ? Dim::Known(options.batch) : Dim::Symbolic("N");
  ir::Value* x = b.Input("x", DataType::kFloat32, Shape({batch, Dim::Known(n)}));
  const float bound = std::sqrt(3.0f / static_cast<float>(n));
  const int64_t kb = n / block;
  for (int64_t l = 0; l < options.layers; ++l) {
    const std::string name = "fc" + std::to_string(l);
    const Tensor w = uniform({n, n}, bound);  // [K, N]
    const Tensor bias = uniform({n}, 0.1f);
    // Scales [kb, N] and codes [K, N] in [-8, 7].
    Tensor scales = *Tensor::Allocate(DataType::kFloat32, {kb, n});
    std::vector<int8_t> codes(static_cast<size_t>(n * n));
    for (int64_t j = 0; j < kb; ++j) {
      for (int64_t c = 0; c < n; ++c) {
        float amax = 0.0f;
        for (int64_t k = j * block; k < (j + 1) * block; ++k) {
          amax = std::max(amax, std::fabs(w.data<float>()[k * n + c]));
        }
        const float s = amax > 0.0f ? amax / 7.0f : 1.0f;
        scales.data<float>()[j * n + c] = s;
        for (int64_t k = j * block; k < (j + 1) * block; ++k) {
          const float q = std::nearbyint(w.data<float>()[k * n + c] / s);
          codes[k * n + c] = static_cast<int8_t>(std::clamp(q, -8.0f, 7.0f));
        }
      }
    }
    ir::Value* product = nullptr;
    if (form == LowBitForm::kInt8Qdq) {
      Tensor q = *Tensor::Allocate(DataType::kInt8, {n, n});
      Tensor channel_scales = *Tensor::Allocate(DataType::kFloat32, {n});
      for (int64_t c = 0; c < n; ++c) {
        float amax = 0.0f;
        for (int64_t k = 0; k < n; ++k)
          amax = std::max(amax, std::fabs(w.data<float>()[k * n + c]));
        const float s = amax > 0.0f ? amax / 127.0f : 1.0f;
        channel_scales.data<float>()[c] = s;
        for (int64_t k = 0; k < n; ++k) {
          const float v = std::nearbyint(w.data<float>()[k * n + c] / s);
          q.data<int8_t>()[k * n + c] = static_cast<int8_t>(std::clamp(v, -127.0f, 127.0f));
        }
      }
      ir::Value* dq = b.Op("DequantizeLinear",
                           {b.Initializer(name + ".weight_q", std::move(q)),
                            b.Initializer(name + ".weight_scale", std::move(channel_scales))},
                           {ir::Attribute::Int("axis", 1)});
      product = b.Op("MatMul", {x, dq});
    } else if (form == LowBitForm::kQdq) {
      Tensor q = *Tensor::Allocate(DataType::kInt4, {n, n});  // one element per byte
      std::copy(codes.begin(), codes.end(), static_cast<int8_t*>(q.raw_data()));
      ir::Value* dq =
          b.Op("DequantizeLinear",
               {b.Initializer(name + ".weight_q", std::move(q)),
                b.Initializer(name + ".weight_scale", std::move(scales))},
               {ir::Attribute::Int("axis", 0), ir::Attribute::Int("block_size", block)});
      product = b.Op("MatMul", {x, dq});
    } else {
      Tensor packed = *Tensor::Allocate(DataType::kUint8, {n, kb, block / 2});
      Tensor nbits_scales = *Tensor::Allocate(DataType::kFloat32, {n, kb});
      for (int64_t c = 0; c < n; ++c) {
        uint8_t* column = packed.data<uint8_t>() + c * n / 2;
        for (int64_t k = 0; k < n; ++k) {
          const int code = codes[k * n + c] + 8;
          column[k / 2] |= static_cast<uint8_t>(code << (4 * (k % 2)));
        }
        for (int64_t j = 0; j < kb; ++j) {
          nbits_scales.data<float>()[c * kb + j] = scales.data<float>()[j * n + c];
        }
      }
      product = b.Op("MatMulNBits",
                     {x, b.Initializer(name + ".weight_nbits", std::move(packed)),
                      b.Initializer(name + ".weight_scales", std::move(nbits_scales))},
                     {ir::Attribute::Int("K", n), ir::Attribute::Int("N", n),
                      ir::Attribute::Int("bits", 4), ir::Attribute::Int("block_size", block)},
                     {.domain = "com.microsoft"});
    }
    ir::OpOptions relu;
    if (l + 1 == options.layers) relu.output_names = {"y"};
    x = b.Op("Relu", {b.Op("Add", {product, b.Initializer(name + ".bias", bias)})}, {}, relu);
  }
  b.SetType(x, DataType::kFloat32, Shape({batch, Dim::Known(n)}));
  b.Output(x);
  return b.Build();
}

}  // namespace qtune::tools
