// Planned candidates (issue 25 item 4, measure/planned_model.h): a tuner ships a
// quantization plan and its float model once; the worker builds the candidate itself,
// byte for byte the model the tuner would have written, and refuses a plan that does not
// fit its float model. A pool with a worker that does not build plans gets files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/file_io.h"
#include "core/json_limits.h"
#include "ir/onnx_io.h"
#include "measure/planned_model.h"
#include "measure/redis_client.h"
#include "measure/redis_protocol.h"
#include "quant/plan_json.h"
#include "workers/worker_pool_fixture.h"

namespace qtune::measure {
namespace {
namespace fs = std::filesystem;
using ::testing::HasSubstr;

// An int8 plan for the first Conv of `graph`: its input (range +-amax) and its weight.
quant::QuantPlan FirstConvPlan(const ir::Graph& graph, float amax) {
  const ir::Node* conv = nullptr;
  for (const ir::Node* n : graph.nodes()) {
    if (n->op_type() == "Conv") {
      conv = n;
      break;
    }
  }
  EXPECT_NE(conv, nullptr);
  quant::QuantPlan plan;
  if (conv == nullptr) return plan;
  quant::QuantSite input;
  input.value = conv->input(0)->name();
  input.consumers = {{conv->name(), 0}};
  input.config.symmetric = true;
  input.range = quant::TensorRange{-amax, amax, amax, 100};
  plan.sites.push_back(input);
  quant::QuantSite weight;
  weight.kind = quant::QuantSite::Kind::kWeight;
  weight.value = conv->input(1)->name();
  weight.consumers = {{conv->name(), 1}};
  weight.config.symmetric = true;
  weight.config.axis = 0;
  plan.sites.push_back(weight);
  return plan;
}

class WorkersPlansTest : public qtune::testing::WorkerPoolTest {
 protected:
  WorkersPlansTest() : WorkerPoolTest("qtune_workers_plans_") {}

  void SetUp() override {
    WorkerPoolTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    auto graph = ir::LoadModel(Model());
    ASSERT_TRUE(graph.ok()) << graph.status().ToString();
    graph_ = std::move(*graph);
    base_ = (dir_ / "float.onnx").string();
    auto bytes = ir::SerializeModel(*graph_);
    ASSERT_TRUE(bytes.ok());
    ASSERT_TRUE(WriteFileAtomic(base_, *bytes).ok());
  }

  // The model the tuner itself would write for `plan` (on its graph in memory).
  std::string TunersModel(const quant::QuantPlan& plan, const std::string& name) {
    auto built = ExportPlannedModel(*graph_, plan);
    EXPECT_TRUE(built.ok()) << built.status().ToString();
    if (!built.ok()) return "";
    auto bytes = ir::SerializeModel(**built);
    EXPECT_TRUE(bytes.ok());
    const std::string path = (dir_ / name).string();
    EXPECT_TRUE(WriteFileAtomic(path, *bytes).ok());
    return path;
  }

  // A request for `plan` as a plan only: its files must never be asked for.
  MeasureRequest PlanRequest(const quant::QuantPlan& plan) {
    MeasureRequest r;
    r.rounds = 1;
    r.prepare = [this]() {
      ++files_asked_;
      return std::make_pair(std::string(), std::string());
    };
    r.candidate_plan = PlannedModel{base_, quant::PlanToJsonText(plan)};
    return r;
  }

  std::unique_ptr<ir::Graph> graph_;
  std::string base_;
  int files_asked_ = 0;
};

TEST_F(WorkersPlansTest, WorkerBuildsTheTunersModelByteForByteFromThePlan) {
  StartRedis();
  StartWorker("w");
  auto bench = Bench();
  ASSERT_NE(bench, nullptr);
  ASSERT_TRUE(bench->workers_build_plans());
  const quant::QuantPlan a = FirstConvPlan(*graph_, 2.0f), b = FirstConvPlan(*graph_, 3.0f);
  // fast.sh's latency is a checksum of the file measured: equal only for the same bytes.
  const double expect_a = ScriptLatency(TunersModel(a, "a.onnx"));
  const double expect_b = ScriptLatency(TunersModel(b, "b.onnx"));
  ASSERT_NE(expect_a, expect_b);
  ASSERT_NE(expect_a, ScriptLatency(base_));

  MeasureRequest request = PlanRequest(a);
  request.reference_plan = PlanRequest(b).candidate_plan;
  Measurement m = bench->Measure(request);
  ASSERT_TRUE(m.ok()) << FailureKindName(m.failure) << ": " << m.detail;
  EXPECT_EQ(m.candidate_ms, std::vector<double>{expect_a});
  EXPECT_EQ(m.reference_ms, std::vector<double>{expect_b});
  Measurement again = bench->Measure(PlanRequest(a));  // built once: from the cache now
  ASSERT_TRUE(again.ok()) << again.detail;
  EXPECT_EQ(again.candidate_ms, std::vector<double>{expect_a});
  EXPECT_EQ(files_asked_, 0) << "a plan request had its files written";
  EXPECT_EQ(bench->plans_uploaded(), 2);
  EXPECT_EQ(bench->models_uploaded(), 1) << "the float model goes once";
  const auto plan_bytes = static_cast<int64_t>(quant::PlanToJsonText(a).size());
  EXPECT_LT(bench->bytes_uploaded(), static_cast<int64_t>(fs::file_size(base_)) + 4 * plan_bytes);
}

TEST_F(WorkersPlansTest, PlanThatDoesNotFitTheFloatModelIsRefusedWithItsReason) {
  StartRedis();
  qtune::testing::WorkerProcess& worker = StartWorker("w");
  auto bench = Bench();
  ASSERT_NE(bench, nullptr);
  quant::QuantPlan plan = FirstConvPlan(*graph_, 2.0f);
  plan.sites[0].value = "no_such_tensor";
  Measurement m = bench->Measure(PlanRequest(plan));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.failure, FailureKind::kUnparsable);
  EXPECT_THAT(m.detail, HasSubstr("no_such_tensor"));
  EXPECT_THAT(worker.Log(), HasSubstr("no_such_tensor"));
  // The worker keeps serving: a good plan after the bad one is measured.
  Measurement good = bench->Measure(PlanRequest(FirstConvPlan(*graph_, 2.0f)));
  EXPECT_TRUE(good.ok()) << good.detail;
}

TEST_F(WorkersPlansTest, HostileOrDamagedPlanDocumentsAreRefused) {
  EXPECT_THAT(ParsePlannedModel("[[[[", "plan x").status().message(), HasSubstr("plan x"));
  EXPECT_THAT(ParsePlannedModel(std::string(100000, '['), "plan x").status().message(),
              HasSubstr("deep"));
  EXPECT_THAT(ParsePlannedModel(R"({"format": "qtune-planned-model", "version": 2})", "plan x")
                  .status()
                  .message(),
              HasSubstr("'version' is not 1"));
  EXPECT_THAT(
      ParsePlannedModel(EncodePlannedModel("../../etc/passwd", "{}"), "plan x").status().message(),
      HasSubstr("'base' is not a SHA-256"));
  const std::string sha(64, 'a');
  auto bad_plan = ParsePlannedModel(EncodePlannedModel(sha, R"({"format": 1})"), "plan x");
  ASSERT_FALSE(bad_plan.ok());
  EXPECT_THAT(bad_plan.status().message(), HasSubstr("plan x plan"));

  // A document overwritten in Redis no longer has its SHA-256: refused, not built.
  StartRedis();
  StartWorker("w");
  auto bench = Bench();
  ASSERT_NE(bench, nullptr);
  const quant::QuantPlan plan = FirstConvPlan(*graph_, 2.0f);
  ASSERT_TRUE(bench->Measure(PlanRequest(plan)).ok());
  auto url = ParseRedisUrl(redis_->Url());
  ASSERT_TRUE(url.ok());
  RedisClient client(*url);
  auto keys = client.Command({"KEYS", "qtune:default:plan:*"});
  ASSERT_TRUE(keys.ok());
  ASSERT_EQ(keys->elements.size(), 1u);
  ASSERT_TRUE(client.Command({"SET", keys->elements[0].str, "{\"format\": 0}"}).ok());
  workers_.clear();
  StartWorker("w2");  // a fresh worker, which never built it, must fetch the document
  Measurement m = bench->Measure(PlanRequest(plan));  // uploaded on this connection: not again
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.failure, FailureKind::kUnparsable);
  EXPECT_THAT(m.detail, HasSubstr("do not have that SHA-256"));
}

TEST_F(WorkersPlansTest, PoolWithAWorkerThatDoesNotBuildPlansGetsFiles) {
  StartRedis();
  StartWorker("w");
  // A worker of before plans announces itself without "builds_plans".
  auto url = ParseRedisUrl(redis_->Url());
  ASSERT_TRUE(url.ok());
  RedisClient client(*url);
  WorkerHeartbeat old{"old", "elsewhere", 1, ThisMachine(1), 0, 0, /*builds_plans=*/false};
  auto json = ParseUntrustedJson(EncodeHeartbeat(old), "heartbeat");
  ASSERT_TRUE(json.ok());
  json->erase("builds_plans");
  ASSERT_TRUE(
      client.Command({"SET", "qtune:default:worker:old", DumpJson(*json), "EX", "60"}).ok());
  auto bench = Bench();
  ASSERT_NE(bench, nullptr);
  EXPECT_FALSE(bench->workers_build_plans());
  const quant::QuantPlan plan = FirstConvPlan(*graph_, 2.0f);
  const std::string file = TunersModel(plan, "a.onnx");
  MeasureRequest request = PlanRequest(plan);
  request.prepare = [&]() {
    ++files_asked_;
    return std::make_pair(file, std::string());
  };
  Measurement m = bench->Measure(request);
  ASSERT_TRUE(m.ok()) << m.detail;
  EXPECT_EQ(files_asked_, 1);
  EXPECT_EQ(bench->plans_uploaded(), 0);
  EXPECT_EQ(m.candidate_ms, std::vector<double>{ScriptLatency(file)});
}

}  // namespace
}  // namespace qtune::measure
