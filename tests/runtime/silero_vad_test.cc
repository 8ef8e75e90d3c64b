// A real recurrent model: Silero VAD (models/silero_vad), an If on the sample rate whose
// branches hold an LSTM with its state passed in and out. The model is called chunk by
// chunk with its own state fed back, as a streaming VAD runs: qtune matches ONNX Runtime
// call after call, on both tiers, and finds the speech in a synthesized sentence.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "core/npy.h"
#include "ir/onnx_io.h"
#include "runtime/session.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"

namespace qtune::runtime {
namespace {

const std::string kModel = std::string(QTUNE_SOURCE_DIR) + "/models/silero_vad/silero_vad.onnx";
const std::string kSpeech = std::string(QTUNE_SOURCE_DIR) + "/models/silero_vad/speech_16k.npy";
constexpr int64_t kChunk = 512;  // samples per call at 16 kHz

struct Vad {
  std::unique_ptr<Session> session;
  Tensor h, c;

  static Vad Create(const ir::Graph& graph, bool use_onednn) {
    SessionOptions options;
    options.use_onednn = use_onednn;
    auto session = Session::Create(graph, options);
    EXPECT_TRUE(session.ok()) << session.status().ToString();
    Vad vad{std::move(*session), Zeros(), Zeros()};
    return vad;
  }
  static Tensor Zeros() { return Tensor::Allocate(DataType::kFloat32, {2, 1, 64}).value(); }

  // Runs one chunk; returns the speech probability and keeps the new state.
  float Step(const Tensor& chunk, int64_t rate, NamedTensors* outputs) {
    auto out =
        session->Run({{"input", chunk}, {"sr", Tensor::Scalar<int64_t>(rate)}, {"h", h}, {"c", c}});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    if (!out.ok()) return -1;
    h = (*out)[1].second;
    c = (*out)[2].second;
    *outputs = *out;
    return (*out)[0].second.data<float>()[0];
  }
};

Tensor Chunk(const Tensor& audio, int64_t start, int64_t length, int64_t step = 1) {
  std::vector<float> samples(static_cast<size_t>(length));
  for (int64_t i = 0; i < length; ++i) samples[i] = audio.data<float>()[start + i * step];
  return Tensor::FromVector<float>({1, length}, samples);
}

class SileroVadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto graph = ir::LoadModel(kModel);
    ASSERT_TRUE(graph.ok()) << graph.status().ToString();
    graph_ = std::move(*graph);
    auto audio = ReadNpy(kSpeech);
    ASSERT_TRUE(audio.ok()) << audio.status().ToString();
    audio_ = *audio;
  }
  std::unique_ptr<ir::Graph> graph_;
  Tensor audio_;
};

// Streaming over the whole clip: low probability in the leading silence, high in the
// sentence, on the fast tier.
TEST_F(SileroVadTest, FindsTheSpeechInAStream) {
  Vad vad = Vad::Create(*graph_, true);
  std::vector<float> probs;
  NamedTensors outputs;
  for (int64_t start = 0; start + kChunk <= audio_.num_elements(); start += kChunk) {
    probs.push_back(vad.Step(Chunk(audio_, start, kChunk), 16000, &outputs));
  }
  ASSERT_GT(probs.size(), 100u);
  const int64_t silence_chunks = 8000 / kChunk;  // the leading 0.5 s
  const float silence_max = *std::max_element(probs.begin(), probs.begin() + silence_chunks - 1);
  const float speech_max = *std::max_element(probs.begin() + silence_chunks, probs.end());
  EXPECT_LT(silence_max, 0.2f);
  EXPECT_GT(speech_max, 0.8f);
}

// Eight consecutive calls from silence into speech, each tier's state fed back, against
// ONNX Runtime fed its own state; and one 8 kHz call (the other If branch).
TEST_F(SileroVadTest, MatchesOnnxRuntimeCallAfterCallWithItsStateFedBack) {
  if (!qtune::testing::OrtAvailable()) {
    QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
  }
  for (bool use_onednn : {true, false}) {
    Vad vad = Vad::Create(*graph_, use_onednn);
    Tensor ort_h = Vad::Zeros(), ort_c = Vad::Zeros();
    for (int64_t k = 12; k < 20; ++k) {
      Tensor chunk = Chunk(audio_, k * kChunk, kChunk);
      NamedTensors ours;
      vad.Step(chunk, 16000, &ours);
      auto ort = qtune::testing::RunOrt(
          kModel,
          {{"input", chunk}, {"sr", Tensor::Scalar<int64_t>(16000)}, {"h", ort_h}, {"c", ort_c}},
          {"output", "hn", "cn"});
      ASSERT_TRUE(ort.ok()) << ort.status().ToString();
      ort_h = (*ort)[1].second;
      ort_c = (*ort)[2].second;
      for (size_t i = 0; i < 3; ++i) {
        EXPECT_LT(qtune::testing::MaxAbsDiff(ours[i].second, (*ort)[i].second), 2e-4)
            << "call " << k << " output " << i << (use_onednn ? " onednn" : " reference");
      }
    }
    Vad slow = Vad::Create(*graph_, use_onednn);
    Tensor chunk = Chunk(audio_, 20 * kChunk, 256, 2);
    NamedTensors ours;
    slow.Step(chunk, 8000, &ours);
    auto ort = qtune::testing::RunOrt(kModel,
                                      {{"input", chunk},
                                       {"sr", Tensor::Scalar<int64_t>(8000)},
                                       {"h", Vad::Zeros()},
                                       {"c", Vad::Zeros()}},
                                      {"output", "hn", "cn"});
    ASSERT_TRUE(ort.ok()) << ort.status().ToString();
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_LT(qtune::testing::MaxAbsDiff(ours[i].second, (*ort)[i].second), 2e-4)
          << "8 kHz output " << i;
    }
  }
}

// Profiled time of `plan`'s steps (control-flow bodies included) whose kernel description
// starts with `prefix`, per run; `runs`: 0 for the top-level plan (each step's own count).
double ProfiledMs(const Plan& plan, const std::string& prefix, int64_t runs = 0) {
  double ms = 0;
  for (const PlanStep& step : plan.steps) {
    const int64_t n = runs > 0 ? runs : step.profile_runs;
    if (n == 0) continue;
    const std::vector<const Plan*> nested = step.kernel->NestedPlans();
    if (nested.empty() && step.kernel->Describe().rfind(prefix, 0) == 0) {
      ms += step.profile_ms / static_cast<double>(n);
    }
    for (const Plan* body : nested) ms += ProfiledMs(*body, prefix, n);
  }
  return ms;
}

// The profile and the printed plan reach into the If's branches and the LSTM's branch
// inside them; the fast tier serves nearly all of the time (Slice and Pad as runs of
// copies, the depthwise convolutions natively), the reference tier at most 10 %.
TEST_F(SileroVadTest, ProfileAndPlanReachIntoTheBranches) {
  SessionOptions options;
  options.profile = true;
  auto session = Session::Create(*graph_, options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  Tensor h = Vad::Zeros(), c = Vad::Zeros();
  for (int64_t k = 0; k < 20; ++k) {
    auto out = (*session)->Run({{"input", Chunk(audio_, k * kChunk, kChunk)},
                                {"sr", Tensor::Scalar<int64_t>(16000)},
                                {"h", h},
                                {"c", c}});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    h = (*out)[1].second;
    c = (*out)[2].second;
  }
  auto plan = (*session)->Prepare(
      {{"input", {1, kChunk}}, {"sr", {}}, {"h", {2, 1, 64}}, {"c", {2, 1, 64}}});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const std::string profile = (*plan)->ProfileToString();
  const std::string printed = (*plan)->ToString();
  for (const char* kernel : {"LSTM", "native:depthwise_conv1d", "native:copy_runs:Slice",
                             "native:copy_runs:Pad", "native:Pow"}) {
    EXPECT_NE(profile.find(kernel), std::string::npos) << kernel << " not in\n" << profile;
    EXPECT_NE(printed.find(kernel), std::string::npos) << kernel << " not in\n" << printed;
  }
  const double total = ProfiledMs(**plan, "");
  const double reference = ProfiledMs(**plan, "reference");
  EXPECT_GT(total, 0.0);
  EXPECT_LE(reference, 0.10 * total) << profile;
  std::printf("reference tier %.1f%% of %.3f ms\n%s", 100 * reference / total, total,
              profile.c_str());
}

}  // namespace
}  // namespace qtune::runtime
