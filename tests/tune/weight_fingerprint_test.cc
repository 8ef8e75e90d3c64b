// WeightFingerprint: stable for the same weights, names the first weight that differs.
#include "tune/weight_fingerprint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "ir/builder.h"
#include "ir/constant.h"
#include "ir/onnx_io.h"

namespace qtune::tune {
namespace {

using ::testing::HasSubstr;

const std::string kFmnist = std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx";
const std::string kPpocrDet = std::string(QTUNE_MODELS_DIR) + "/ppocr/ppocrv4_det.onnx";

std::unique_ptr<ir::Graph> LoadOrDie(const std::string& path) {
  auto graph = ir::LoadModel(path);
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  return graph.ok() ? std::move(*graph) : nullptr;
}

// Replaces initializer `name` with a copy whose byte `index` is flipped.
void FlipInitializerByte(ir::Graph& graph, const std::string& name, size_t index) {
  ir::Value* v = graph.FindValue(name);
  ASSERT_NE(v, nullptr);
  Tensor copy = v->initializer().Clone();
  ASSERT_LT(index, copy.byte_size());
  static_cast<unsigned char*>(copy.raw_data())[index] ^= 0x01;
  ASSERT_TRUE(graph.SetInitializer(v, copy).ok());
}

// x -> MatMul(w1) -> Add(Constant c) -> MatMul(w2)
std::unique_ptr<ir::Graph> SmallGraph(float w2_first = 1.0f, bool with_extra = false) {
  ir::GraphBuilder b(17);
  ir::Value* x = b.Input("x", DataType::kFloat32, {1, 2});
  ir::Value* w1 = b.Initializer("w1", Tensor::FromVector<float>({2, 2}, {1, 2, 3, 4}));
  ir::Value* w2 = b.Initializer("w2", Tensor::FromVector<float>({2, 2}, {w2_first, 0, 0, 1}));
  ir::Value* c = b.Constant(Tensor::FromVector<float>({2}, {0.5f, -0.5f}), {.output_names = {"c"}});
  ir::Value* y = b.Op("MatMul", {b.Op("Add", {b.Op("MatMul", {x, w1}), c}), w2});
  if (with_extra) {
    y = b.Op("Add", {y, b.Initializer("bias", Tensor::FromVector<float>({2}, {0, 0}))});
  }
  b.Output(y);
  return b.Build();
}

TEST(WeightFingerprintTest, SameModelGivesSameFingerprint) {
  auto a = LoadOrDie(kFmnist), b = LoadOrDie(kFmnist);
  ASSERT_TRUE(a && b);
  WeightFingerprint fa = FingerprintWeights(*a), fb = FingerprintWeights(*b);
  EXPECT_EQ(fa, fb);
  EXPECT_EQ(fa.initializers.size(), a->initializers().size());
  EXPECT_EQ(fa.whole.size(), 64u);
  EXPECT_TRUE(CheckWeights(fa, *b).ok());
  EXPECT_TRUE(std::is_sorted(fa.initializers.begin(), fa.initializers.end()));
}

TEST(WeightFingerprintTest, OneChangedByteInFmnistNamesThatInitializer) {
  auto model = LoadOrDie(kFmnist);
  ASSERT_TRUE(model);
  WeightFingerprint stored = FingerprintWeights(*model);
  // The largest initializer, a byte in its middle.
  const ir::Value* target = model->initializers().front();
  for (const ir::Value* v : model->initializers()) {
    if (v->initializer().byte_size() > target->initializer().byte_size()) target = v;
  }
  const std::string name = target->name();
  FlipInitializerByte(*model, name, target->initializer().byte_size() / 2);
  Status s = CheckWeights(stored, *model);
  ASSERT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("weight '" + name + "' differs"));
  EXPECT_THAT(s.message(), HasSubstr("--allow-weight-mismatch"));
  EXPECT_THAT(s.message(), ::testing::Not(HasSubstr("in all"))) << "only one differs";
}

TEST(WeightFingerprintTest, BuilderGraphFingerprintIsStable) {
  EXPECT_EQ(FingerprintWeights(*SmallGraph()), FingerprintWeights(*SmallGraph()));
  // Initializers and the Constant node's output.
  std::vector<std::string> names;
  for (const auto& [name, hex] : FingerprintWeights(*SmallGraph()).initializers)
    names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"c", "w1", "w2"}));
}

TEST(WeightFingerprintTest, OneChangedByteInBuilderGraphNamesThatInitializer) {
  WeightFingerprint stored = FingerprintWeights(*SmallGraph());
  auto model = SmallGraph();
  FlipInitializerByte(*model, "w2", 0);
  Status s = CheckWeights(stored, *model);
  ASSERT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("weight 'w2' differs"));
}

TEST(WeightFingerprintTest, FirstDifferenceInNameOrderIsNamedAndOthersCounted) {
  WeightFingerprint stored = FingerprintWeights(*SmallGraph());
  auto model = SmallGraph();
  FlipInitializerByte(*model, "w2", 0);
  FlipInitializerByte(*model, "w1", 3);
  Status s = CheckWeights(stored, *model);
  EXPECT_THAT(s.message(), HasSubstr("weight 'w1' differs"));
  EXPECT_THAT(s.message(), HasSubstr("2 weights differ in all"));
}

TEST(WeightFingerprintTest, ChangedConstantNodeWeightIsNamed) {
  WeightFingerprint stored = FingerprintWeights(*SmallGraph());
  auto model = SmallGraph();
  ir::Node* constant = model->FindValue("c")->producer();
  ASSERT_NE(constant, nullptr);
  constant->SetAttribute(
      ir::Attribute::TensorValue("value", Tensor::FromVector<float>({2}, {0.5f, 0.25f})));
  Status s = CheckWeights(stored, *model);
  EXPECT_THAT(s.message(), HasSubstr("weight 'c' differs"));
}

TEST(WeightFingerprintTest, MissingWeightIsNamed) {
  WeightFingerprint stored = FingerprintWeights(*SmallGraph(1.0f, /*with_extra=*/true));
  Status s = CheckWeights(stored, *SmallGraph());
  ASSERT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("weight 'bias' is in the checkpoint's fingerprint but "
                                     "missing from the supplied model"));
}

TEST(WeightFingerprintTest, ExtraWeightIsNamed) {
  WeightFingerprint stored = FingerprintWeights(*SmallGraph());
  Status s = CheckWeights(stored, *SmallGraph(1.0f, /*with_extra=*/true));
  ASSERT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("the supplied model has weight 'bias'"));
}

TEST(WeightFingerprintTest, SameBytesWithOtherSizesDiffer) {
  ir::Graph a, b;
  ASSERT_TRUE(a.AddInitializer("w", Tensor::FromVector<float>({2, 2}, {1, 2, 3, 4})).ok());
  ASSERT_TRUE(b.AddInitializer("w", Tensor::FromVector<float>({4}, {1, 2, 3, 4})).ok());
  EXPECT_NE(FingerprintWeights(a).whole, FingerprintWeights(b).whole);
  EXPECT_THAT(CheckWeights(FingerprintWeights(a), b).message(), HasSubstr("weight 'w' differs"));
}

TEST(WeightFingerprintTest, EmptyStoredFingerprintIsRefused) {
  Status s = CheckWeights(WeightFingerprint{}, *SmallGraph());
  ASSERT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("records no weight fingerprint"));
}

TEST(WeightFingerprintTest, PpocrConstantNodeWeightsAreFingerprinted) {
  auto model = LoadOrDie(kPpocrDet);
  ASSERT_TRUE(model);
  size_t constants = 0;
  for (const ir::Node* n : model->nodes()) constants += ir::IsConstantNode(*n) ? 1 : 0;
  ASSERT_GT(constants, 0u) << "ppocrv4_det keeps its weights in Constant nodes";
  WeightFingerprint fp = FingerprintWeights(*model);
  EXPECT_FALSE(fp.initializers.empty());
  EXPECT_EQ(fp.initializers.size(), model->initializers().size() + constants);
  EXPECT_TRUE(CheckWeights(fp, *LoadOrDie(kPpocrDet)).ok());
}

TEST(WeightFingerprintTest, JsonRoundTrip) {
  WeightFingerprint fp = FingerprintWeights(*SmallGraph());
  auto back = WeightFingerprintFromJson(WeightFingerprintToJson(fp), "test");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, fp);
  auto empty = WeightFingerprintFromJson(WeightFingerprintToJson({}), "test");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(WeightFingerprintTest, JsonWithAWholeThatDoesNotMatchIsRefused) {
  nlohmann::json j = WeightFingerprintToJson(FingerprintWeights(*SmallGraph()));
  j["tensors"][0]["sha256"] = std::string(64, 'a');
  auto back = WeightFingerprintFromJson(j, "where");
  ASSERT_EQ(back.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(back.status().message(), HasSubstr("where: field 'whole' does not match"));
}

TEST(WeightFingerprintTest, JsonWithUnsortedNamesIsRefused) {
  nlohmann::json j = WeightFingerprintToJson(FingerprintWeights(*SmallGraph()));
  std::swap(j["tensors"][0], j["tensors"][1]);
  EXPECT_THAT(WeightFingerprintFromJson(j, "w").status().message(), HasSubstr("out of order"));
}

TEST(WeightFingerprintTest, JsonMissingFieldIsRefusedNamingIt) {
  nlohmann::json j = WeightFingerprintToJson(FingerprintWeights(*SmallGraph()));
  j.erase("tensors");
  auto back = WeightFingerprintFromJson(j, "w");
  ASSERT_EQ(back.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(back.status().message(), HasSubstr("missing field 'tensors'"));
}

}  // namespace
}  // namespace qtune::tune
