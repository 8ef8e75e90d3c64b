// qtune::Session (include/qtune/session.h): what it reports about a model, that it runs
// exactly what the engine runs, and the errors a caller sees.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>

#include "core/npy.h"
#include "ir/onnx_io.h"
#include "qtune/qtune.h"
#include "runtime/session.h"

namespace qtune {
namespace {

const std::string kModel = std::string(QTUNE_MODELS_DIR) + "/fmnist/fmnist_resnet.onnx";
const std::string kCalib = std::string(QTUNE_MODELS_DIR) + "/fmnist/calib_512.npy";

// The first `n` calibration images as one batch.
Tensor FirstImages(int64_t n) {
  auto all = ReadNpy(kCalib);
  EXPECT_TRUE(all.ok()) << all.status().ToString();
  std::vector<int64_t> sizes = all->sizes();
  sizes[0] = n;
  auto batch = Tensor::Allocate(DataType::kFloat32, sizes);
  EXPECT_TRUE(batch.ok());
  std::memcpy(batch->raw_data(), all->raw_data(), batch->byte_size());
  return *batch;
}

TEST(ApiSessionTest, DescribesTheModelsInputsAndOutputs) {
  auto session = Session::Open(kModel);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const auto& inputs = (*session)->inputs();
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs[0].dtype, DataType::kFloat32);
  ASSERT_TRUE(inputs[0].has_shape);
  ASSERT_EQ(inputs[0].dims.size(), 4u);
  EXPECT_EQ(inputs[0].dims[1], 1);
  EXPECT_EQ(inputs[0].dims[2], 28);
  ASSERT_EQ((*session)->outputs().size(), 1u);
  EXPECT_EQ((*session)->outputs()[0].name, "logits");
  EXPECT_EQ((*session)->options().threads, 1);
}

TEST(ApiSessionTest, RunsBitExactlyWhatTheEngineRuns) {
  SessionOptions options;
  options.threads = 2;
  auto session = Session::Open(kModel, options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  NamedTensors inputs = {{(*session)->inputs()[0].name, FirstImages(5)}};
  auto outputs = (*session)->Run(inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.status().ToString();

  auto graph = ir::LoadModel(kModel);
  ASSERT_TRUE(graph.ok());
  runtime::SessionOptions engine_options;
  engine_options.threads = 2;
  auto engine = runtime::Session::Create(**graph, engine_options);
  ASSERT_TRUE(engine.ok());
  auto expected = (*engine)->Run(inputs);
  ASSERT_TRUE(expected.ok());
  ASSERT_EQ(outputs->size(), 1u);
  const Tensor& got = (*outputs)[0].second;
  const Tensor& want = (*expected)[0].second;
  ASSERT_EQ(got.sizes(), (std::vector<int64_t>{5, 10}));
  EXPECT_EQ(std::memcmp(got.raw_data(), want.raw_data(), want.byte_size()), 0);
}

TEST(ApiSessionTest, OpenBytesRunsTheSameModel) {
  std::ifstream in(kModel, std::ios::binary);
  const std::string bytes(std::istreambuf_iterator<char>(in), {});
  auto from_bytes = Session::OpenBytes(bytes);
  auto from_file = Session::Open(kModel);
  ASSERT_TRUE(from_bytes.ok()) << from_bytes.status().ToString();
  ASSERT_TRUE(from_file.ok());
  NamedTensors inputs = {{(*from_file)->inputs()[0].name, FirstImages(1)}};
  auto a = (*from_bytes)->Run(inputs);
  auto b = (*from_file)->Run(inputs);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(
      std::memcmp((*a)[0].second.raw_data(), (*b)[0].second.raw_data(), (*b)[0].second.byte_size()),
      0);
}

TEST(ApiSessionTest, MissingModelIsNotFoundNamingTheFile) {
  auto session = Session::Open("/nonexistent/m.onnx");
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), StatusCode::kNotFound);
  EXPECT_NE(session.status().message().find("/nonexistent/m.onnx"), std::string::npos);
}

TEST(ApiSessionTest, GarbageBytesAreAnErrorNotACrash) {
  auto session = Session::OpenBytes("not an onnx model");
  EXPECT_FALSE(session.ok());
}

TEST(ApiSessionTest, WrongInputNameIsInvalidArgumentNamingIt) {
  auto session = Session::Open(kModel);
  ASSERT_TRUE(session.ok());
  auto outputs = (*session)->Run({{"no_such_input", FirstImages(1)}});
  ASSERT_FALSE(outputs.ok());
  EXPECT_EQ(outputs.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(outputs.status().message().find("no_such_input"), std::string::npos)
      << outputs.status().message();
}

TEST(ApiSessionTest, BenchTimesTheRequestedRunsAndRejectsBadCounts) {
  auto session = Session::Open(kModel);
  ASSERT_TRUE(session.ok());
  const NamedTensors inputs = {{(*session)->inputs()[0].name, FirstImages(1)}};
  auto stats = (*session)->Bench(inputs, {.warmup = 2, .iters = 7});
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  ASSERT_EQ(stats->times_ms.size(), 7u);
  for (double ms : stats->times_ms) EXPECT_GT(ms, 0);
  EXPECT_LE(stats->min_ms, stats->median_ms);
  EXPECT_LE(stats->median_ms, stats->p90_ms);
  auto bad = (*session)->Bench(inputs, {.warmup = 0, .iters = 0});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  auto wrong = (*session)->Bench({{"no_such_input", FirstImages(1)}});
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("no_such_input"), std::string::npos)
      << wrong.status().message();
}

}  // namespace
}  // namespace qtune
