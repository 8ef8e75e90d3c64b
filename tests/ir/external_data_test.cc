// External data: writing it, reading it back, and refusing files outside the model's
// folder or ranges outside the file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "ir/builder.h"
#include "ir/onnx_io.h"
#include "ir/onnx_test_util.h"

namespace qtune::ir {
namespace {
namespace fs = std::filesystem;

using testing::AddOutput;
using testing::MakeModel;
using testing::ReadBytes;
using testing::Serialize;
using testing::TempDir;
using testing::WriteBytes;

std::vector<float> Iota(size_t n, float start) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

// x + big (external) + small (inline), and a Constant node with a big tensor.
std::unique_ptr<Graph> MakeGraph() {
  GraphBuilder b(17);
  Value* x = b.Input("x", DataType::kFloat32, {64, 64});
  Value* big = b.Initializer("big", Tensor::FromVector<float>({64, 64}, Iota(4096, 0)));
  Value* big2 = b.Initializer("big2", Tensor::FromVector<float>({100}, Iota(100, 7)));
  Value* small = b.Initializer("small", Tensor::FromVector<float>({2}, {1, 2}));
  Value* c = b.Constant(Tensor::FromVector<float>({64, 64}, Iota(4096, 3)), {.name = "const"});
  Value* y = b.Op("Add", {b.Op("Add", {x, big}), c});
  Value* z = b.Op("Mul", {y, b.Op("ReduceSum", {big2})});
  b.Output(b.Op("Add", {z, small}));
  return b.Build();
}

// A model with one float initializer "w" [2] stored externally at `location`.
onnx::ModelProto ExternalModel(const std::string& location, const std::string& offset = "0",
                               const std::string& length = "8") {
  onnx::ModelProto m = MakeModel();
  onnx::TensorProto* t = m.mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(1);
  t->add_dims(2);
  t->set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
  for (auto [k, v] : {std::pair<std::string, std::string>{"location", location},
                      {"offset", offset},
                      {"length", length}}) {
    if (v.empty()) continue;
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  }
  AddOutput(m.mutable_graph(), "w");
  return m;
}

StatusOr<std::unique_ptr<Graph>> WriteAndLoad(const TempDir& dir, const onnx::ModelProto& m) {
  WriteBytes(dir.File("model.onnx"), Serialize(m));
  return LoadModel(dir.File("model.onnx"));
}

void ExpectRefused(const StatusOr<std::unique_ptr<Graph>>& g, const std::string& needle) {
  ASSERT_FALSE(g.ok()) << "expected a refusal mentioning " << needle;
  EXPECT_NE(g.status().code(), StatusCode::kInternal);
  EXPECT_NE(g.status().message().find("model.onnx"), std::string::npos) << g.status().message();
  EXPECT_NE(g.status().message().find("'w'"), std::string::npos) << g.status().message();
  EXPECT_NE(g.status().message().find(needle), std::string::npos) << g.status().message();
}

TEST(ExternalDataTest, SavedExternalDataReloadsIdentically) {
  auto graph = MakeGraph();
  TempDir dir;
  SaveOptions options;
  options.use_external_data = true;
  options.external_data_threshold_bytes = 1024;
  ASSERT_TRUE(SaveModel(*graph, dir.File("m.onnx"), options).ok());
  ASSERT_TRUE(fs::exists(dir.File("m.onnx.data")));
  // big (16 KiB) goes out; big2 (400 B) and small stay inline; Constant tensors stay inline.
  EXPECT_EQ(fs::file_size(dir.File("m.onnx.data")), 4096u * 4);
  EXPECT_GT(fs::file_size(dir.File("m.onnx")), 4096u * 4);
  auto reloaded = LoadModel(dir.File("m.onnx"));
  ASSERT_TRUE(reloaded.ok()) << reloaded.status().ToString();
  testing::ExpectSameGraph(*graph, **reloaded);
}

TEST(ExternalDataTest, OffsetsAreAlignedAndRecordedInTheProto) {
  auto graph = MakeGraph();
  TempDir dir;
  SaveOptions options;
  options.use_external_data = true;
  options.external_data_threshold_bytes = 16;
  options.external_data_file = "weights.bin";
  ASSERT_TRUE(SaveModel(*graph, dir.File("m.onnx"), options).ok());
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(ReadBytes(dir.File("m.onnx"))));
  int external = 0;
  for (const onnx::TensorProto& t : m.graph().initializer()) {
    if (t.data_location() != onnx::TensorProto_DataLocation_EXTERNAL) continue;
    ++external;
    for (const auto& e : t.external_data()) {
      if (e.key() == "location") EXPECT_EQ(e.value(), "weights.bin");
      if (e.key() == "offset") EXPECT_EQ(std::stoll(e.value()) % 64, 0) << t.name();
    }
    EXPECT_FALSE(t.has_raw_data());
  }
  EXPECT_EQ(external, 2);  // big and big2; small (8 bytes) stays inline
  auto reloaded = LoadModel(dir.File("m.onnx"));
  ASSERT_TRUE(reloaded.ok()) << reloaded.status().ToString();
  testing::ExpectSameGraph(*graph, **reloaded);
}

TEST(ExternalDataTest, LargeModelsSwitchToExternalDataAutomatically) {
  auto graph = MakeGraph();
  TempDir dir;
  SaveOptions options;
  options.max_inline_bytes = 20000;  // stands in for protobuf's 2 GiB
  ASSERT_TRUE(SaveModel(*graph, dir.File("m.onnx"), options).ok());
  ASSERT_TRUE(fs::exists(dir.File("m.onnx.data")));
  EXPECT_LT(fs::file_size(dir.File("m.onnx")), 20000u);
  auto reloaded = LoadModel(dir.File("m.onnx"));
  ASSERT_TRUE(reloaded.ok()) << reloaded.status().ToString();
  testing::ExpectSameGraph(*graph, **reloaded);
}

TEST(ExternalDataTest, ConstantTensorsMoveOutWhenInitializersAreNotEnough) {
  auto graph = MakeGraph();
  TempDir dir;
  SaveOptions options;
  options.max_inline_bytes = 10000;  // the big Constant (16 KiB) alone is above it
  ASSERT_TRUE(SaveModel(*graph, dir.File("m.onnx"), options).ok());
  EXPECT_EQ(fs::file_size(dir.File("m.onnx.data")), 2u * 4096 * 4);
  EXPECT_LT(fs::file_size(dir.File("m.onnx")), 4096u);
  auto reloaded = LoadModel(dir.File("m.onnx"));
  ASSERT_TRUE(reloaded.ok()) << reloaded.status().ToString();
  testing::ExpectSameGraph(*graph, **reloaded);
}

TEST(ExternalDataTest, DataFileMayNotLeaveTheFolder) {
  auto graph = MakeGraph();
  TempDir dir;
  SaveOptions options;
  options.use_external_data = true;
  options.external_data_file = "../outside.data";
  Status s = SaveModel(*graph, dir.File("m.onnx"), options);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
}

TEST(ExternalDataTest, ReadsOffsetAndLength) {
  TempDir dir;
  std::vector<float> values = {0, 0, 1.5f, -2.5f, 0};
  WriteBytes(dir.File("w.bin"), std::string(reinterpret_cast<const char*>(values.data()), 20));
  auto g = WriteAndLoad(dir, ExternalModel("w.bin", "8", "8"));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->FindValue("w")->initializer().span<float>()[1], -2.5f);
}

TEST(ExternalDataTest, LengthDefaultsToTheRestOfTheFile) {
  TempDir dir;
  fs::create_directories(dir.path() / "sub");
  WriteBytes(dir.File("sub/w.bin"), std::string(12, '\1'));
  auto g = WriteAndLoad(dir, ExternalModel("sub/w.bin", "4", ""));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
}

TEST(ExternalDataTest, AbsolutePathIsRefused) {
  TempDir dir;
  WriteBytes(dir.File("w.bin"), std::string(8, '\0'));
  ExpectRefused(WriteAndLoad(dir, ExternalModel(dir.File("w.bin"))), "absolute");
}

TEST(ExternalDataTest, DotDotPathIsRefused) {
  TempDir dir;
  fs::create_directories(dir.path() / "model");
  WriteBytes(dir.File("w.bin"), std::string(8, '\0'));
  WriteBytes(dir.File("model/model.onnx"), Serialize(ExternalModel("../w.bin")));
  ExpectRefused(LoadModel(dir.File("model/model.onnx")), "'..'");
  WriteBytes(dir.File("model/model.onnx"), Serialize(ExternalModel("sub/../../w.bin")));
  ExpectRefused(LoadModel(dir.File("model/model.onnx")), "'..'");
}

TEST(ExternalDataTest, SymlinkOutOfTheFolderIsRefused) {
  TempDir outside;
  WriteBytes(outside.File("secret.bin"), std::string(8, '\0'));
  TempDir dir;
  fs::create_symlink(outside.File("secret.bin"), dir.path() / "w.bin");
  ExpectRefused(WriteAndLoad(dir, ExternalModel("w.bin")), "outside the model's folder");
  fs::create_directory_symlink(outside.path(), dir.path() / "linkdir");
  ExpectRefused(WriteAndLoad(dir, ExternalModel("linkdir/secret.bin")),
                "outside the model's folder");
}

TEST(ExternalDataTest, SymlinkInsideTheFolderIsAccepted) {
  TempDir dir;
  WriteBytes(dir.File("real.bin"), std::string(8, '\0'));
  fs::create_symlink(dir.File("real.bin"), dir.path() / "w.bin");
  auto g = WriteAndLoad(dir, ExternalModel("w.bin"));
  EXPECT_TRUE(g.ok()) << g.status().ToString();
}

TEST(ExternalDataTest, OffsetPastEndOfFileIsRefused) {
  TempDir dir;
  WriteBytes(dir.File("w.bin"), std::string(8, '\0'));
  ExpectRefused(WriteAndLoad(dir, ExternalModel("w.bin", "100", "8")), "past the end");
}

TEST(ExternalDataTest, RangeRunningPastEndOfFileIsRefused) {
  TempDir dir;
  WriteBytes(dir.File("w.bin"), std::string(10, '\0'));
  ExpectRefused(WriteAndLoad(dir, ExternalModel("w.bin", "4", "8")), "past the end");
}

TEST(ExternalDataTest, LengthThatDisagreesWithDimsIsRefused) {
  TempDir dir;
  WriteBytes(dir.File("w.bin"), std::string(64, '\0'));
  ExpectRefused(WriteAndLoad(dir, ExternalModel("w.bin", "0", "12")), "length 12");
}

TEST(ExternalDataTest, MalformedNumbersAreRefused) {
  TempDir dir;
  WriteBytes(dir.File("w.bin"), std::string(64, '\0'));
  ExpectRefused(WriteAndLoad(dir, ExternalModel("w.bin", "-8", "8")), "offset");
  ExpectRefused(WriteAndLoad(dir, ExternalModel("w.bin", "0", "8x")), "length");
  ExpectRefused(WriteAndLoad(dir, ExternalModel("w.bin", "99999999999999999999", "8")), "offset");
}

TEST(ExternalDataTest, MissingFileIsNotFound) {
  TempDir dir;
  auto g = WriteAndLoad(dir, ExternalModel("absent.bin"));
  ExpectRefused(g, "absent.bin");
  EXPECT_EQ(g.status().code(), StatusCode::kNotFound);
}

TEST(ExternalDataTest, MissingLocationIsRefused) {
  TempDir dir;
  ExpectRefused(WriteAndLoad(dir, ExternalModel("")), "location");
}

TEST(ExternalDataTest, FolderIsNotAFile) {
  TempDir dir;
  fs::create_directories(dir.path() / "w.bin");
  ExpectRefused(WriteAndLoad(dir, ExternalModel("w.bin")), "not a regular file");
}

TEST(ExternalDataTest, ExplicitFolderInLoadOptionsIsUsed) {
  TempDir data_dir;
  TempDir model_dir;
  WriteBytes(data_dir.File("w.bin"), std::string(8, '\0'));
  WriteBytes(model_dir.File("model.onnx"), Serialize(ExternalModel("w.bin")));
  LoadOptions options;
  options.external_data_dir = data_dir.path().string();
  auto g = LoadModel(model_dir.File("model.onnx"), options);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
}

}  // namespace
}  // namespace qtune::ir
