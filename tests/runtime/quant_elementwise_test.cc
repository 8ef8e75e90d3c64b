// qtune::QAdd: the reference against hand-computed values (ties to even, saturation, Relu,
// mixed uint8/int8 operands, invalid inputs), and the fast kernel (quant_add.cc)
// against the reference bit for bit in plain and nhwc, over odd sizes, type combinations,
// in place and on two threads.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "runtime/fusion/quant_ops.h"
#include "runtime/kernel_test_util.h"
#include "runtime/quant_test_tensors.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime::kernel_testing {
namespace {

constexpr DataType kU8 = DataType::kUint8;
constexpr DataType kS8 = DataType::kInt8;

struct QAddParams {
  DataType a_type = kU8, b_type = kU8, y_type = kU8;
  float a_scale = 1, b_scale = 1, y_scale = 1;
  int a_zp = 0, b_zp = 0, y_zp = 0;
  std::string activation;  // "" or "Relu"
};

std::vector<Tensor> QAddInputs(const Tensor& a, const Tensor& b, const QAddParams& p) {
  return {a,
          Tensor::Scalar<float>(p.a_scale),
          QuantScalar(p.a_type, p.a_zp),
          b,
          Tensor::Scalar<float>(p.b_scale),
          QuantScalar(p.b_type, p.b_zp),
          Tensor::Scalar<float>(p.y_scale),
          QuantScalar(p.y_type, p.y_zp)};
}

std::vector<Attribute> QAddAttributes(const QAddParams& p) {
  if (p.activation.empty()) return {};
  return {Attribute::String("activation", p.activation)};
}

// The qtune::QAdd reference kernel on one node.
StatusOr<Tensor> ReferenceQAdd(const std::vector<Tensor>& inputs,
                               const std::vector<Attribute>& attributes) {
  ir::GraphBuilder builder(17);
  builder.ImportOpset("qtune", 1);
  std::vector<ir::Value*> values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    values.push_back(builder.Initializer("in" + std::to_string(i), inputs[i]));
  }
  ir::OpOptions options;
  options.name = "qadd";
  options.domain = "qtune";
  builder.Output(builder.MultiOp(kQAdd, values, 1, attributes, options)[0]);
  std::unique_ptr<ir::Graph> graph = builder.Build();
  ReferenceKernel fn = ReferenceRegistry::Get().Find("qtune::QAdd");
  if (fn == nullptr) return InternalError("qtune::QAdd has no reference kernel");
  ASSIGN_OR_RETURN(std::vector<Tensor> out, fn(KernelArgs{*graph->FindNode("qadd"), inputs, 17}));
  return out.at(0);
}

template <typename T>
Tensor Values1D(std::vector<T> values) {
  return Tensor::FromVector<T>({static_cast<int64_t>(values.size())}, values);
}

template <typename T>
std::vector<int> AsInts(const Tensor& t) {
  std::vector<int> v;
  for (T x : t.span<T>()) v.push_back(x);
  return v;
}

std::vector<int> RunHand(const Tensor& a, const Tensor& b, const QAddParams& p) {
  auto y = ReferenceQAdd(QAddInputs(a, b, p), QAddAttributes(p));
  EXPECT_TRUE(y.ok()) << y.status().ToString();
  if (!y.ok()) return {};
  EXPECT_EQ(y->dtype(), p.y_type);
  return p.y_type == kU8 ? AsInts<uint8_t>(*y) : AsInts<int8_t>(*y);
}

TEST(QAddReference, TiesRoundHalfToEven) {
  QAddParams p;
  p.y_scale = 2;
  p.y_zp = 10;
  // Sums 1, 3, 5, 5, 0, 7; halved 0.5, 1.5, 2.5, 2.5, 0, 3.5.
  Tensor a = Values1D<uint8_t>({1, 3, 5, 2, 0, 7});
  Tensor b = Values1D<uint8_t>({0, 0, 0, 3, 0, 0});
  EXPECT_EQ(RunHand(a, b, p), (std::vector<int>{10, 12, 12, 12, 10, 14}));
}

TEST(QAddReference, NegativeTiesRoundHalfToEven) {
  QAddParams p;
  p.a_type = p.b_type = p.y_type = kS8;
  p.y_scale = 2;
  // -0.5, -1.5, -2.5, -3.5.
  Tensor a = Values1D<int8_t>({-1, -3, -5, -7});
  Tensor b = Values1D<int8_t>({0, 0, 0, 0});
  EXPECT_EQ(RunHand(a, b, p), (std::vector<int>{0, -2, -2, -4}));
}

TEST(QAddReference, SaturatesToTheOutputType) {
  QAddParams u8;
  EXPECT_EQ(RunHand(Values1D<uint8_t>({250, 0, 100}), Values1D<uint8_t>({250, 0, 100}), u8),
            (std::vector<int>{255, 0, 200}));
  u8.a_zp = 255;  // A real -255: the sum is negative and saturates to 0
  EXPECT_EQ(RunHand(Values1D<uint8_t>({0}), Values1D<uint8_t>({3}), u8), (std::vector<int>{0}));
  QAddParams s8;
  s8.a_type = s8.b_type = s8.y_type = kS8;
  EXPECT_EQ(
      RunHand(Values1D<int8_t>({-100, 100, 127, -128}), Values1D<int8_t>({-100, 100, 127, 0}), s8),
      (std::vector<int>{-128, 127, 127, -128}));
}

TEST(QAddReference, ReluClampsTheRealSumAtZero) {
  QAddParams p;
  p.a_type = p.b_type = kS8;
  p.y_type = kU8;
  p.y_zp = 128;
  Tensor a = Values1D<int8_t>({-5, 5, 3});
  Tensor b = Values1D<int8_t>({0, -10, 4});
  EXPECT_EQ(RunHand(a, b, p), (std::vector<int>{123, 123, 135}));
  p.activation = "Relu";
  EXPECT_EQ(RunHand(a, b, p), (std::vector<int>{128, 128, 135}));
}

TEST(QAddReference, MixedOperandTypesAndZeroPoints) {
  QAddParams p;
  p.a_type = kU8;
  p.a_scale = 0.1f;
  p.a_zp = 128;
  p.b_type = kS8;
  p.b_scale = 0.2f;
  p.y_type = kS8;
  p.y_scale = 0.3f;
  p.y_zp = -1;
  // 10 * 0.1 + 5 * 0.2 = 2; 2 / 0.3 = 6.67 -> 7; 7 - 1 = 6. And 0 * 0.1 + -5 * 0.2 = -1;
  // -1 / 0.3 = -3.33 -> -3; -3 - 1 = -4.
  EXPECT_EQ(RunHand(Values1D<uint8_t>({138, 128}), Values1D<int8_t>({5, -5}), p),
            (std::vector<int>{6, -4}));
}

TEST(QAddReference, InvalidInputsAreErrorsNamingTheNode) {
  QAddParams p;
  Tensor a = Values1D<uint8_t>({1, 2});
  std::vector<Tensor> zero_scale = QAddInputs(a, a, p);
  zero_scale[6] = Tensor::Scalar<float>(0.0f);
  auto y = ReferenceQAdd(zero_scale, {});
  ASSERT_FALSE(y.ok());
  EXPECT_NE(y.status().message().find("qadd"), std::string::npos) << y.status().ToString();

  std::vector<Tensor> wrong_zp_type = QAddInputs(a, a, p);
  wrong_zp_type[2] = QuantScalar(kS8, 0);
  EXPECT_FALSE(ReferenceQAdd(wrong_zp_type, {}).ok());

  std::vector<Tensor> bad_activation = QAddInputs(a, a, p);
  EXPECT_FALSE(ReferenceQAdd(bad_activation, {Attribute::String("activation", "Tanh")}).ok());
}

// ---------------------------------------------------------------------------------------
// The fast kernel against the reference.

KernelCase MakeQAddCase(const std::vector<int64_t>& sizes, const QAddParams& p, Layout a_layout,
                        Layout b_layout, std::mt19937& rng, uint32_t seed) {
  KernelCase c;
  c.factory = &CreateQAddKernel;
  c.op_type = kQAdd;
  c.domain = "qtune";
  c.attributes = QAddAttributes(p);
  c.tolerance = 0;  // bit for bit
  c.seed = seed;
  std::vector<Tensor> values = QAddInputs(RandomQuantTensor(p.a_type, sizes, rng),
                                          RandomQuantTensor(p.b_type, sizes, rng), p);
  for (size_t i = 0; i < values.size(); ++i) {
    if (i == 0 || i == 3) {
      c.inputs.push_back(Dynamic(values[i], i == 0 ? a_layout : b_layout));
    } else {
      c.inputs.push_back(Constant(values[i]));
    }
  }
  c.label = SizesString(sizes) + " " + std::string(DataTypeName(p.a_type)) + "+" +
            std::string(DataTypeName(p.b_type)) + "->" + std::string(DataTypeName(p.y_type)) +
            " scales " + std::to_string(p.a_scale) + "," + std::to_string(p.b_scale) + "," +
            std::to_string(p.y_scale) + " zps " + std::to_string(p.a_zp) + "," +
            std::to_string(p.b_zp) + "," + std::to_string(p.y_zp) + " " +
            (p.activation.empty() ? "no activation" : p.activation) + " A " + LayoutName(a_layout) +
            " B " + LayoutName(b_layout);
  return c;
}

// Type combinations with zero points and scales: one set where many sums are exact ties,
// one with unrelated scales.
std::vector<QAddParams> QAddParamSweep() {
  std::vector<QAddParams> out;
  const DataType types[][3] = {{kU8, kU8, kU8}, {kS8, kS8, kS8}, {kU8, kS8, kU8}, {kS8, kU8, kS8}};
  for (const auto& t : types) {
    for (const char* activation : {"", "Relu"}) {
      QAddParams ties;
      ties.a_type = t[0];
      ties.b_type = t[1];
      ties.y_type = t[2];
      ties.y_scale = 2;
      ties.a_zp = t[0] == kU8 ? 128 : 0;
      ties.b_zp = t[1] == kU8 ? 120 : -3;
      ties.y_zp = t[2] == kU8 ? 100 : 5;
      ties.activation = activation;
      out.push_back(ties);
      QAddParams odd = ties;
      odd.a_scale = 0.0473f;
      odd.b_scale = 0.0219f;
      odd.y_scale = 0.0611f;
      out.push_back(odd);
    }
  }
  return out;
}

TEST(QAddFast, MatchesReferenceBitForBitInBothLayouts) {
  uint32_t seed = TestSeed(8101);
  std::mt19937 rng(seed);
  const std::vector<std::vector<int64_t>> shapes = {
      {1, 3, 5, 7}, {2, 17, 3, 3}, {1, 1, 1, 1}, {1, 33, 15, 1}, {3, 31, 2, 5}};
  for (const QAddParams& p : QAddParamSweep()) {
    for (const auto& sizes : shapes) {
      for (Layout layout : {Layout::kPlain, Layout::kNhwc}) {
        EXPECT_TRUE(CheckKernel(MakeQAddCase(sizes, p, layout, layout, rng, seed)));
      }
    }
  }
}

TEST(QAddFast, NonRank4ValuesRunPlain) {
  uint32_t seed = TestSeed(8102);
  std::mt19937 rng(seed);
  for (const QAddParams& p : QAddParamSweep()) {
    for (const std::vector<int64_t>& sizes :
         std::vector<std::vector<int64_t>>{{1}, {7, 31}, {2, 3, 17}}) {
      EXPECT_TRUE(CheckKernel(MakeQAddCase(sizes, p, Layout::kPlain, Layout::kPlain, rng, seed)));
    }
  }
}

TEST(QAddFast, OperandsInDifferentLayoutsShareOne) {
  uint32_t seed = TestSeed(8103);
  std::mt19937 rng(seed);
  QAddParams p = QAddParamSweep()[1];
  EXPECT_TRUE(CheckKernel(MakeQAddCase({1, 5, 3, 7}, p, Layout::kNhwc, Layout::kPlain, rng, seed)));
  EXPECT_TRUE(CheckKernel(MakeQAddCase({1, 5, 3, 7}, p, Layout::kPlain, Layout::kNhwc, rng, seed)));
}

TEST(QAddFast, InPlaceOnTheFirstOperand) {
  uint32_t seed = TestSeed(8104);
  std::mt19937 rng(seed);
  for (const QAddParams& p : QAddParamSweep()) {
    if (p.a_type != p.y_type) continue;
    KernelCase c = MakeQAddCase({1, 7, 5, 3}, p, Layout::kNhwc, Layout::kNhwc, rng, seed);
    c.in_place_input = 0;
    c.label += " in place";
    EXPECT_TRUE(CheckKernel(c));
  }
}

// Large enough to split into several chunks; runs on 1 and 2 threads.
TEST(QAddFast, LargeTensorsOnOneAndTwoThreads) {
  uint32_t seed = TestSeed(8105);
  std::mt19937 rng(seed);
  for (const char* threads : {"1", "2"}) {
    setenv("QTUNE_KERNEL_TEST_THREADS", threads, 1);
    for (const QAddParams& p : {QAddParamSweep()[1], QAddParamSweep()[7]}) {
      KernelCase c = MakeQAddCase({2, 64, 33, 35}, p, Layout::kNhwc, Layout::kNhwc, rng, seed);
      c.label += std::string(" threads ") + threads;
      EXPECT_TRUE(CheckKernel(c));
    }
  }
  unsetenv("QTUNE_KERNEL_TEST_THREADS");
}

TEST(QAddFast, DeclinesWhatTheReferenceMustJudge) {
  uint32_t seed = TestSeed(8106);
  std::mt19937 rng(seed);
  QAddParams p;
  p.activation = "Tanh";
  KernelCase c = MakeQAddCase({1, 2, 3, 4}, p, Layout::kPlain, Layout::kPlain, rng, seed);
  c.expect = Expect::kNotApplicable;
  // The reference rejects Tanh, so check the factory alone.
  ir::GraphBuilder builder(17);
  builder.ImportOpset("qtune", 1);
  std::vector<ir::Value*> values;
  std::vector<ValueInfo> infos;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    values.push_back(builder.Initializer("in" + std::to_string(i), c.inputs[i].value));
  }
  ir::OpOptions options;
  options.name = "qadd";
  options.domain = "qtune";
  builder.Output(builder.MultiOp(kQAdd, values, 1, c.attributes, options)[0]);
  std::unique_ptr<ir::Graph> graph = builder.Build();
  for (const KernelInput& in : c.inputs)
    infos.push_back(MakeInfo(in.value.dtype(), in.value.sizes()));
  ValueInfo out = MakeInfo(kU8, {1, 2, 3, 4});
  KernelRequest request{*graph->FindNode("qadd"), 17, 1, {}, {&out}, {}};
  for (const ValueInfo& info : infos) {
    request.inputs.push_back(&info);
    request.input_layouts.push_back(Layout::kPlain);
  }
  auto created = CreateQAddKernel(request);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_FALSE(created->has_value());
}

}  // namespace
}  // namespace qtune::runtime::kernel_testing
