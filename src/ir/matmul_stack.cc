#include "ir/matmul_stack.h"

#include <cmath>
#include <random>
#include <string>

#include "core/check.h"
#include "ir/builder.h"

namespace qtune::ir {

std::unique_ptr<Graph> BuildMatMulStack(const MatMulStackOptions& options) {
  QTUNE_CHECK(options.layers > 0 && options.width > 0 && options.batch >= 0);
  std::mt19937_64 rng(options.seed);
  auto uniform = [&](std::vector<int64_t> sizes, float bound) {
    std::uniform_real_distribution<float> dist(-bound, bound);
    Tensor t = *Tensor::Allocate(DataType::kFloat32, std::move(sizes));
    for (float& v : t.span<float>()) v = dist(rng);
    return t;
  };
  GraphBuilder b(13);
  const int64_t n = options.width;
  Dim batch = options.batch > 0 ? Dim::Known(options.batch) : Dim::Symbolic("N");
  Value* x = b.Input("x", DataType::kFloat32, Shape({batch, Dim::Known(n)}));
  const float bound = std::sqrt(3.0f / static_cast<float>(n));
  for (int64_t l = 0; l < options.layers; ++l) {
    const std::string name = "fc" + std::to_string(l);
    Value* w = b.Initializer(name + ".weight", uniform({n, n}, bound));
    Value* bias = b.Initializer(name + ".bias", uniform({n}, 0.1f));
    OpOptions relu;
    if (l + 1 == options.layers) relu.output_names = {"y"};
    x = b.Op("Relu", {b.Op("Add", {b.Op("MatMul", {x, w}), bias})}, {}, relu);
  }
  b.SetType(x, DataType::kFloat32, Shape({batch, Dim::Known(n)}));
  b.Output(x);
  return b.Build();
}

}  // namespace qtune::ir
