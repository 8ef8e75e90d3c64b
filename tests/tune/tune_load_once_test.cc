// A checkpoint load prepares the model once (issue 26 item 5): one pass pipeline run and
// one copy of the model for the session (tune::BuildTunedGraph's, which the session takes
// over), plus the plan's own fused copy for the stored input sizes (Compile); the warm-up
// runs reuse that plan. Before, Session::Create copied and cleaned the rebuilt graph again:
// two pipeline runs and three copies.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "ir/matmul_stack.h"
#include "passes/pipeline.h"
#include "tune/tune.h"
#include "tune/weight_fingerprint.h"

namespace qtune::tune {
namespace {

class TempDir {
 public:
  TempDir() {
    path_ =
        std::filesystem::temp_directory_path() / ("qtune_load_once_" + std::to_string(::getpid()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string Join(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// An fp32 result for `model` at batch 1, as Tune would save it.
TuneResult Fp32Result(const ir::Graph& model) {
  TuneResult result;
  TuneRow row;
  row.candidate = "fp32";
  row.threads = 1;
  row.status = TuneRow::Status::kPassed;
  row.chosen = true;
  row.latency_ms = 1.0;
  row.fp32_latency_ms = 1.0;
  row.throughput = 1000.0;
  result.rows = {row};
  result.strategy = "min-latency";
  result.recipe = "int8";
  result.input_sizes = {{"x", {1, 16}}};
  result.weights = FingerprintWeights(model);
  return result;
}

TEST(TuneLoadOnce, CheckpointLoadRunsThePipelineOnceAndCopiesTheModelOnce) {
  std::unique_ptr<ir::Graph> model = ir::BuildMatMulStack({.layers = 2, .width = 16});
  TempDir dir;
  const std::string checkpoint = dir.Join("fp32.qtc");
  ASSERT_TRUE(SaveTuned(checkpoint, Fp32Result(*model)).ok());

  LoadTunedOptions options;
  options.warmup_runs = 2;
  const int64_t pipelines = passes::PipelineRunCount();
  const int64_t clones = ir::Graph::CloneCount();
  auto tuned = LoadTunedSession(*model, checkpoint, options);
  ASSERT_TRUE(tuned.ok()) << tuned.status().ToString();
  EXPECT_EQ(passes::PipelineRunCount() - pipelines, 1) << "the pass pipeline ran again";
  // One copy of the model for the session, one fused copy for the plan of [1,16].
  EXPECT_EQ(ir::Graph::CloneCount() - clones, 2) << "the model was copied more than once";

  auto x = Tensor::Allocate(DataType::kFloat32, {1, 16});
  ASSERT_TRUE(x.ok());
  for (int i = 0; i < 16; ++i) x->data<float>()[i] = 0.1f * static_cast<float>(i - 8);
  auto from_checkpoint = tuned->session->Run({{"x", *x}});
  ASSERT_TRUE(from_checkpoint.ok()) << from_checkpoint.status().ToString();
  auto plain = runtime::Session::Create(*model, runtime::SessionOptions{});
  ASSERT_TRUE(plain.ok());
  auto expected = (*plain)->Run({{"x", *x}});
  ASSERT_TRUE(expected.ok());
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ((*from_checkpoint)[0].second.data<float>()[i],
              (*expected)[0].second.data<float>()[i]);
  }
}

}  // namespace
}  // namespace qtune::tune
