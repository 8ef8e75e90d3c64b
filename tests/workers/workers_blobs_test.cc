// Content-addressed tensors (issue 25 item 4, measure/model_blobs.h): a skeleton saved
// next to its blobs computes what the original model computes; a tuner uploads each big
// tensor once; the worker re-fetches a tampered blob and refuses a skeleton whose external
// data names anything but a blob.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/file_io.h"
#include "core/sha256.h"
#include "ir/onnx_io.h"
#include "measure/model_blobs.h"
#include "runtime/session.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"
#include "workers/worker_pool_fixture.h"

namespace qtune::measure {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string SharedResNet18() {
  return std::string(QTUNE_SHARED_MODELS_DIR) + "/resnet18/resnet18.onnx";
}

// Runs the model at `path` in qtune's Session on a fixed input of `sizes`.
std::vector<float> RunModel(const std::string& path, std::vector<int64_t> sizes) {
  auto graph = ir::LoadModel(path);
  EXPECT_TRUE(graph.ok()) << graph.status().ToString();
  if (!graph.ok()) return {};
  const std::string input = (*graph)->inputs()[0]->name();
  auto session = runtime::Session::Create(std::move(*graph), runtime::SessionOptions{});
  EXPECT_TRUE(session.ok()) << session.status().ToString();
  if (!session.ok()) return {};
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  std::vector<float> x(static_cast<size_t>(n));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i));
  auto out = (*session)->Run({{input, Tensor::FromVector<float>(sizes, x)}});
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  if (!out.ok()) return {};
  const Tensor& y = (*out)[0].second;
  const float* p = y.data<float>();
  return std::vector<float>(p, p + y.num_elements());
}

class WorkersBlobsTest : public qtune::testing::WorkerPoolTest {
 protected:
  WorkersBlobsTest() : WorkerPoolTest("qtune_workers_blobs_") {}

  // Splits `model` and writes the skeleton and its blobs into <dir_>/<folder>; returns the
  // skeleton's path.
  std::string WriteSplit(const std::string& model, const std::string& folder, size_t threshold,
                         SplitModel* split_out = nullptr) {
    auto bytes = ReadFile(model);
    EXPECT_TRUE(bytes.ok());
    SplitModel split = SplitModelBytes(*bytes, threshold, 0);
    const fs::path dir = dir_ / folder;
    fs::create_directories(dir);
    for (const auto& [sha, blob] : split.blobs) {
      EXPECT_EQ(Sha256Hex(blob), sha);
      EXPECT_TRUE(WriteFileAtomic((dir / (sha + ".bin")).string(), blob).ok());
    }
    const std::string path = (dir / (split.sha256 + ".onnx")).string();
    EXPECT_TRUE(WriteFileAtomic(path, split.bytes).ok());
    if (split_out != nullptr) *split_out = std::move(split);
    return path;
  }

  void ExpectSameOutputs(const std::string& model, std::vector<int64_t> sizes, size_t threshold) {
    SplitModel split;
    const std::string skeleton = WriteSplit(model, "split", threshold, &split);
    ASSERT_FALSE(split.blobs.empty()) << "nothing was split";
    auto original = ReadFile(model);
    ASSERT_TRUE(original.ok());
    EXPECT_LT(split.bytes.size(), original->size() / 2) << "the skeleton keeps the big tensors";
    auto refs = SkeletonBlobs(split.bytes, "split");
    ASSERT_TRUE(refs.ok()) << refs.status().ToString();
    EXPECT_EQ(refs->size(), split.blobs.size());
    const std::vector<float> want = RunModel(model, sizes);
    const std::vector<float> got = RunModel(skeleton, sizes);
    ASSERT_FALSE(want.empty());
    EXPECT_EQ(got, want) << "the skeleton + blobs model computes something else";
  }
};

TEST_F(WorkersBlobsTest, SkeletonAndBlobsComputeWhatTheModelComputes) {
  ExpectSameOutputs(Model(), {1, 1, 28, 28}, kBlobThreshold);
  fs::remove_all(dir_ / "split");
  ExpectSameOutputs(Model(), {1, 1, 28, 28}, 1024);  // small tensors too
}

TEST_F(WorkersBlobsTest, ResNet18SkeletonComputesWhatTheModelComputes) {
  ASSERT_TRUE(fs::exists(SharedResNet18())) << SharedResNet18() << " (../shared/models)";
  ExpectSameOutputs(SharedResNet18(), {1, 3, 224, 224}, kBlobThreshold);
}

// What a --benchmark-command gets: ONNX Runtime reads the skeleton and its blobs as is.
TEST_F(WorkersBlobsTest, OnnxRuntimeReadsTheSkeletonAsIs) {
  if (!qtune::testing::OrtAvailable()) QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime is missing";
  SplitModel split;
  const std::string skeleton = WriteSplit(Model(), "ort", 1024, &split);
  ASSERT_FALSE(split.blobs.empty());
  auto graph = ir::LoadModel(Model());
  ASSERT_TRUE(graph.ok());
  const std::string input = (*graph)->inputs()[0]->name();
  const std::string output = (*graph)->outputs()[0]->name();
  std::vector<float> x(28 * 28);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i));
  const qtune::testing::NamedTensors inputs = {
      {input, Tensor::FromVector<float>({1, 1, 28, 28}, x)}};
  auto want = qtune::testing::RunOrt(Model(), inputs, {output});
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  auto got = qtune::testing::RunOrt(skeleton, inputs, {output});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(qtune::testing::MaxAbsDiff((*got)[0].second, (*want)[0].second), 0.0);
}

TEST_F(WorkersBlobsTest, ModelWithoutBigTensorsOrUnparsableIsKeptAsIs) {
  const std::string variant = ModelVariant("v.onnx", 'a');  // not a valid protobuf any more
  auto bytes = ReadFile(variant);
  ASSERT_TRUE(bytes.ok());
  SplitModel kept = SplitModelBytes(*bytes);
  EXPECT_EQ(kept.bytes, *bytes);
  EXPECT_EQ(kept.sha256, Sha256Hex(*bytes));
  EXPECT_TRUE(kept.blobs.empty());
  auto model = ReadFile(Model());
  SplitModel whole = SplitModelBytes(*model, size_t{1} << 30, 0);
  EXPECT_TRUE(whole.blobs.empty());
  whole = SplitModelBytes(*model);  // under 1 MiB: not worth splitting
  EXPECT_EQ(whole.bytes, *model);
  EXPECT_TRUE(whole.blobs.empty());
}

// A skeleton whose first external tensor names `location` instead of its blob.
std::string HostileSkeleton(const std::string& model, const std::string& location) {
  auto bytes = ReadFile(model);
  EXPECT_TRUE(bytes.ok());
  SplitModel split = SplitModelBytes(*bytes, 1024, 0);
  onnx::ModelProto proto;
  EXPECT_TRUE(proto.ParseFromString(split.bytes));
  for (onnx::TensorProto& t : *proto.mutable_graph()->mutable_initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    for (auto& e : *t.mutable_external_data()) {
      if (e.key() == "location") e.set_value(location);
    }
    break;
  }
  return proto.SerializeAsString();
}

TEST_F(WorkersBlobsTest, SkeletonNamingOtherFilesIsRefused) {
  for (const std::string location : std::vector<std::string>{
           "../x.bin", "/etc/passwd", "ABCDEF.bin", std::string(64, 'A') + ".bin",
           std::string(64, 'a') + ".bin/../../etc/passwd", std::string(64, 'a') + ".onnx"}) {
    auto refs = SkeletonBlobs(HostileSkeleton(Model(), location), "hostile.onnx");
    ASSERT_FALSE(refs.ok()) << location;
    EXPECT_EQ(refs.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(refs.status().message(), HasSubstr("hostile.onnx"));
    EXPECT_THAT(refs.status().message(), HasSubstr("external data location"));
    EXPECT_THAT(refs.status().message(), HasSubstr("refused"));
  }
  EXPECT_TRUE(SkeletonBlobs(HostileSkeleton(Model(), std::string(64, 'a') + ".bin"), "ok").ok());
  // A Constant node's tensor (here in a model-local function) naming a file is refused too.
  onnx::ModelProto proto;
  auto bytes = ReadFile(Model());
  ASSERT_TRUE(proto.ParseFromString(*bytes));
  onnx::FunctionProto* f = proto.add_functions();
  f->set_name("f");
  onnx::AttributeProto* value = f->add_node()->add_attribute();
  value->set_name("value");
  value->mutable_t()->set_name("c");
  value->mutable_t()->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = value->mutable_t()->add_external_data();
  e->set_key("location");
  e->set_value("/etc/passwd");
  auto refs = SkeletonBlobs(proto.SerializeAsString(), "constant.onnx");
  ASSERT_FALSE(refs.ok());
  EXPECT_THAT(refs.status().message(), HasSubstr("tensor 'c'"));
  EXPECT_THAT(refs.status().message(), HasSubstr("refused"));
}

TEST_F(WorkersBlobsTest, WorkerRefusesAHostileSkeletonWithAClearError) {
  StartRedis();
  qtune::testing::WorkerProcess& worker = StartWorker("w");
  auto bench = Bench();
  ASSERT_NE(bench, nullptr);
  // Nothing left to split (its tensors are external already): uploaded as it is.
  const std::string path = (dir_ / "hostile.onnx").string();
  ASSERT_TRUE(WriteFileAtomic(path, HostileSkeleton(Model(), "../x.bin")).ok());
  Measurement m = bench->Measure({path, "", 1, 10});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.failure, FailureKind::kUnparsable);
  EXPECT_THAT(m.detail, HasSubstr("external data location '../x.bin' refused"));
  EXPECT_THAT(worker.Log(), HasSubstr("'../x.bin' refused"));
}

TEST_F(WorkersBlobsTest, TamperedBlobInTheWorkerCacheIsDetectedAndFetchedAgain) {
  StartRedis();
  qtune::testing::WorkerProcess& worker = StartWorker("w");
  auto bench = Bench();
  ASSERT_NE(bench, nullptr);
  ASSERT_TRUE(fs::exists(SharedResNet18())) << SharedResNet18();
  Measurement first = bench->Measure({SharedResNet18(), "", 1, 10});
  ASSERT_TRUE(first.ok()) << FailureKindName(first.failure) << ": " << first.detail;
  std::vector<fs::path> blobs;
  for (const auto& e : fs::directory_iterator(CacheOf("w"))) {
    if (e.path().extension() == ".bin") blobs.push_back(e.path());
  }
  ASSERT_FALSE(blobs.empty()) << "the worker cached no blob";
  const std::string sha = blobs[0].stem().string();
  auto good = ReadFile(blobs[0].string());
  ASSERT_TRUE(good.ok());
  std::string bad = *good;
  bad[bad.size() / 2] ^= 0x40;
  ASSERT_TRUE(WriteFileAtomic(blobs[0].string(), bad).ok());
  Measurement again = bench->Measure({SharedResNet18(), "", 1, 10});
  ASSERT_TRUE(again.ok()) << again.detail;
  EXPECT_EQ(again.candidate_ms, first.candidate_ms);
  EXPECT_THAT(worker.Log(), HasSubstr("cached tensor blob"));
  EXPECT_THAT(worker.Log(), HasSubstr("fetching the tensor blob again"));
  EXPECT_EQ(*Sha256File(blobs[0].string()), sha) << "replaced by the real bytes";
}

// The tuner's bytes per candidate (issue 25): two ResNet-18 candidates that differ in one
// small tensor share all their big ones, so the second costs only its skeleton.
TEST_F(WorkersBlobsTest, CandidatesSharingTheirBigTensorsUploadThemOnce) {
  ASSERT_TRUE(fs::exists(SharedResNet18())) << SharedResNet18();
  StartRedis();
  StartWorker("w");
  auto bench = Bench({.input_sizes = {{"input", {1, 3, 224, 224}}}});
  ASSERT_NE(bench, nullptr);
  auto bytes = ReadFile(SharedResNet18());
  ASSERT_TRUE(bytes.ok());
  onnx::ModelProto proto;
  ASSERT_TRUE(proto.ParseFromString(*bytes));
  std::string candidates[2];
  for (int i = 0; i < 2; ++i) {
    proto.mutable_graph()->set_doc_string("candidate " + std::to_string(i));
    candidates[i] = (dir_ / ("c" + std::to_string(i) + ".onnx")).string();
    ASSERT_TRUE(WriteFileAtomic(candidates[i], proto.SerializeAsString()).ok());
  }
  Measurement m0 = bench->Measure({candidates[0], "", 1, 10});
  ASSERT_TRUE(m0.ok()) << m0.detail;
  const int64_t first = bench->bytes_uploaded();
  Measurement m1 = bench->Measure({candidates[1], "", 1, 10});
  ASSERT_TRUE(m1.ok()) << m1.detail;
  const int64_t second = bench->bytes_uploaded() - first;
  std::printf("resnet18 (%zu bytes): first candidate uploads %lld bytes, the next %lld\n",
              bytes->size(), static_cast<long long>(first), static_cast<long long>(second));
  EXPECT_GT(first, static_cast<int64_t>(bytes->size()) * 9 / 10);
  EXPECT_LT(second, static_cast<int64_t>(bytes->size()) / 100);
  EXPECT_EQ(bench->models_uploaded(), 2);
}

}  // namespace
}  // namespace qtune::measure
