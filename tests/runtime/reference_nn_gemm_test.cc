// Gemm and MatMul reference kernels: ONNX node tests, hand-computed cases, and cross-checks
// (MatMul vs Gemm, transposes vs explicit transposition, C broadcasting, 1-D promotion,
// batch broadcasting against per-matrix Gemm).
#include <gtest/gtest.h>

#include "reference_nn_test_util.h"

namespace qtune::runtime::nn {
namespace {

using ir::Attribute;
using testing::CheckOnnxNodeCase;
using testing::RandomFloats;
using testing::RunNode;
using testing::RunOk;
using testing::TensorsNear;

Tensor F32(std::vector<int64_t> sizes, std::vector<float> values) {
  return Tensor::FromVector<float>(std::move(sizes), values);
}

testing::NodeSpecForTest Spec(std::string op, std::vector<Attribute> attributes = {}) {
  return {.op_type = std::move(op), .attributes = std::move(attributes)};
}

Tensor Transpose(const Tensor& t) {
  const int64_t rows = t.size(0), cols = t.size(1);
  Tensor out = *Tensor::Allocate(DataType::kFloat32, {cols, rows});
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      out.data<float>()[j * rows + i] = t.data<float>()[i * cols + j];
  return out;
}

TEST(GemmTest, OnnxNodeTests) {
  for (const char* name :
       {"test_gemm_all_attributes", "test_gemm_alpha", "test_gemm_beta",
        "test_gemm_default_matrix_bias", "test_gemm_default_no_bias",
        "test_gemm_default_scalar_bias", "test_gemm_default_single_elem_vector_bias",
        "test_gemm_default_vector_bias", "test_gemm_default_zero_bias", "test_gemm_transposeA",
        "test_gemm_transposeB"}) {
    SCOPED_TRACE(name);
    CheckOnnxNodeCase(name, &Gemm);
  }
  for (const char* name : {"test_matmul_2d", "test_matmul_3d", "test_matmul_4d"}) {
    SCOPED_TRACE(name);
    CheckOnnxNodeCase(name, &MatMul);
  }
}

TEST(GemmTest, HandComputedWithAlphaBetaAndRowBias) {
  Tensor a = F32({2, 2}, {1, 2, 3, 4});
  Tensor b = F32({2, 2}, {5, 6, 7, 8});
  Tensor c = F32({2}, {1, -1});
  // A*B = [[19 22] [43 50]]; 2 * A*B + 0.5 * C.
  Tensor y =
      RunOk(&Gemm, Spec("Gemm", {Attribute::Float("alpha", 2), Attribute::Float("beta", 0.5f)}),
            {a, b, c});
  EXPECT_TRUE(TensorsNear(y, F32({2, 2}, {38.5f, 43.5f, 86.5f, 99.5f})));
}

TEST(GemmTest, TransposeAttributesEqualExplicitTransposes) {
  uint32_t seed = 1;
  for (int64_t m : {1, 3, 17}) {
    for (int64_t k : {1, 2, 7}) {
      for (int64_t n : {1, 5, 15}) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        Tensor a = RandomFloats({m, k}, seed++);
        Tensor b = RandomFloats({k, n}, seed++);
        Tensor plain = RunOk(&Gemm, Spec("Gemm"), {a, b});
        Tensor both =
            RunOk(&Gemm, Spec("Gemm", {Attribute::Int("transA", 1), Attribute::Int("transB", 1)}),
                  {Transpose(a), Transpose(b)});
        EXPECT_TRUE(TensorsNear(both, plain));
        Tensor matmul = RunOk(&MatMul, Spec("MatMul"), {a, b});
        EXPECT_TRUE(TensorsNear(matmul, plain));
      }
    }
  }
}

TEST(GemmTest, BiasBroadcastsToEveryShapeOnnxAllows) {
  const int64_t m = 3, n = 5;
  Tensor a = RandomFloats({m, 4}, 10);
  Tensor b = RandomFloats({4, n}, 11);
  Tensor ab = RunOk(&Gemm, Spec("Gemm"), {a, b});
  for (std::vector<int64_t> c_sizes :
       std::vector<std::vector<int64_t>>{{}, {1}, {n}, {1, n}, {m, 1}, {m, n}, {1, 1}}) {
    SCOPED_TRACE(SizesToString(c_sizes));
    Tensor c = RandomFloats(c_sizes, 12);
    Tensor y = RunOk(&Gemm, Spec("Gemm", {Attribute::Float("beta", 2)}), {a, b, c});
    std::vector<float> expected(m * n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int64_t ci = 0;
        if (c_sizes.size() == 1) ci = c_sizes[0] == 1 ? 0 : j;
        if (c_sizes.size() == 2)
          ci = (c_sizes[0] == 1 ? 0 : i) * c_sizes[1] + (c_sizes[1] == 1 ? 0 : j);
        expected[i * n + j] = ab.data<float>()[i * n + j] + 2 * c.data<float>()[ci];
      }
    EXPECT_TRUE(TensorsNear(y, F32({m, n}, expected)));
  }
  KernelResult bad = RunNode(&Gemm, Spec("Gemm"), {a, b, RandomFloats({n, 1}, 13)});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("Gemm 'node'"), std::string::npos);
}

TEST(MatMulTest, OneDimensionalOperandsArePromotedAndSqueezed) {
  Tensor v = F32({3}, {1, 2, 3});
  Tensor m = F32({3, 2}, {1, 0, 0, 1, 1, 1});
  Tensor vv = RunOk(&MatMul, Spec("MatMul"), {v, v});
  EXPECT_TRUE(TensorsNear(vv, F32({}, {14})));
  Tensor vm = RunOk(&MatMul, Spec("MatMul"), {v, m});
  EXPECT_TRUE(TensorsNear(vm, F32({2}, {4, 5})));
  Tensor mv = RunOk(&MatMul, Spec("MatMul"), {Transpose(m), v});
  EXPECT_TRUE(TensorsNear(mv, F32({2}, {4, 5})));
  // [3] x [2, 3, 1]: the vector becomes [1, 3], broadcast over the batch, then squeezed.
  Tensor batched_v =
      RunOk(&MatMul, Spec("MatMul"), {F32({3}, {1, 1, 1}), F32({2, 3, 1}, {1, 2, 3, 4, 5, 6})});
  EXPECT_TRUE(TensorsNear(batched_v, F32({2, 1}, {6, 15})));
}

TEST(MatMulTest, BatchDimensionsBroadcastLikeNumpy) {
  Tensor a = RandomFloats({2, 1, 3, 4}, 20);
  Tensor b = RandomFloats({5, 4, 7}, 21);
  Tensor y = RunOk(&MatMul, Spec("MatMul"), {a, b});
  ASSERT_EQ(y.sizes(), (std::vector<int64_t>{2, 5, 3, 7}));
  auto matrix = [](const Tensor& t, int64_t index, int64_t rows, int64_t cols) {
    std::vector<float> values(t.data<float>() + index * rows * cols,
                              t.data<float>() + (index + 1) * rows * cols);
    return F32({rows, cols}, values);
  };
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 5; ++j) {
      Tensor expected = RunOk(&Gemm, Spec("Gemm"), {matrix(a, i, 3, 4), matrix(b, j, 4, 7)});
      EXPECT_TRUE(TensorsNear(matrix(y, i * 5 + j, 3, 7), expected)) << i << "," << j;
    }
  }
  KernelResult bad =
      RunNode(&MatMul, Spec("MatMul"), {RandomFloats({2, 3, 4}, 1), RandomFloats({3, 4, 2}, 2)});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("broadcast"), std::string::npos);
}

TEST(MatMulTest, IntegersAndDoubles) {
  Tensor a = Tensor::FromVector<int32_t>({2, 2}, {1, -2, 3, 4});
  Tensor b = Tensor::FromVector<int32_t>({2, 1}, {5, 6});
  Tensor y = RunOk(&MatMul, Spec("MatMul"), {a, b});
  EXPECT_EQ(y.dtype(), DataType::kInt32);
  EXPECT_EQ(y.data<int32_t>()[0], -7);
  EXPECT_EQ(y.data<int32_t>()[1], 39);
  Tensor ad = Tensor::FromVector<double>({1, 2}, {0.1, 0.2});
  Tensor bd = Tensor::FromVector<double>({2, 1}, {3, 4});
  Tensor yd = RunOk(&MatMul, Spec("MatMul"), {ad, bd});
  EXPECT_DOUBLE_EQ(yd.data<double>()[0], 0.1 * 3 + 0.2 * 4);
  KernelResult mixed = RunNode(&MatMul, Spec("MatMul"), {a, bd});
  EXPECT_EQ(mixed.status().code(), StatusCode::kInvalidArgument);
}

TEST(MatMulTest, InnerDimensionMismatchNamesBothShapes) {
  KernelResult r =
      RunNode(&MatMul, Spec("MatMul"), {RandomFloats({2, 3}, 1), RandomFloats({4, 2}, 2)});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("2x3"), std::string::npos);
  EXPECT_NE(r.status().message().find("4x2"), std::string::npos);
}

}  // namespace
}  // namespace qtune::runtime::nn
