// LSTM, GRU and RNN models against ONNX Runtime (the external oracle), on both tiers:
//   - an LSTM whose state is carried across three calls (Y_h, Y_c fed back as initial_h,
//     initial_c), matching ORT at every call;
//   - a bidirectional GRU with per-row sequence_lens (both reset modes);
//   - the attributes only the reference takes (clip, input_forget, peepholes, the other
//     activations with alpha/beta, sequence_lens) for each op.
//
// Setting QTUNE_RNN_EXPORT_DIR also writes the models docs/performance.md times there
// (lstm.onnx, bilstm.onnx, gru.onnx: seq 64, batch 1, input 64, hidden 128; input "x").
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/shape.h"
#include "ir/builder.h"
#include "ir/onnx_io.h"
#include "runtime/session.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"

namespace qtune::runtime {
namespace {

namespace fs = std::filesystem;
using ir::Attribute;
using testing::NamedTensors;

Tensor Random(const std::vector<int64_t>& sizes, std::mt19937& rng, float scale = 0.5f) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(static_cast<size_t>(NumElements(sizes)));
  for (float& x : v) x = dist(rng);
  return Tensor::FromVector<float>(sizes, v);
}

int64_t Gates(const std::string& op) { return op == "LSTM" ? 4 : (op == "GRU" ? 3 : 1); }

// One recurrent node. X, initial_h (and initial_c), sequence_lens are graph inputs when
// given; W, R, B, P initializers.
struct RnnModel {
  std::string op = "LSTM";
  int64_t seq = 5, batch = 2, input = 4, hidden = 6;
  std::string direction = "forward";
  std::vector<Attribute> attributes;
  bool initial_states = false, sequence_lens = false, peepholes = false;
  std::vector<int32_t> lens;  // with sequence_lens; empty: seq - b % seq for row b
};

std::unique_ptr<ir::Graph> Build(const RnnModel& m, std::mt19937& rng) {
  const int64_t dirs = m.direction == "bidirectional" ? 2 : 1;
  const int64_t gh = Gates(m.op) * m.hidden;
  ir::GraphBuilder b(14);
  ir::Value* x = b.Input("x", DataType::kFloat32, {m.seq, m.batch, m.input});
  std::vector<ir::Value*> inputs = {x, b.Initializer("w", Random({dirs, gh, m.input}, rng)),
                                    b.Initializer("r", Random({dirs, gh, m.hidden}, rng)),
                                    b.Initializer("b", Random({dirs, 2 * gh}, rng))};
  inputs.push_back(m.sequence_lens ? b.Input("lens", DataType::kInt32, {m.batch}) : nullptr);
  const std::vector<int64_t> state = {dirs, m.batch, m.hidden};
  inputs.push_back(m.initial_states ? b.Input("h0", DataType::kFloat32, state) : nullptr);
  if (m.op == "LSTM") {
    inputs.push_back(m.initial_states ? b.Input("c0", DataType::kFloat32, state) : nullptr);
    inputs.push_back(m.peepholes ? b.Initializer("p", Random({dirs, 3 * m.hidden}, rng)) : nullptr);
  }
  while (inputs.back() == nullptr) inputs.pop_back();
  std::vector<Attribute> attributes = m.attributes;
  attributes.push_back(Attribute::Int("hidden_size", m.hidden));
  attributes.push_back(Attribute::String("direction", m.direction));
  ir::OpOptions options;
  options.name = "rnn";
  options.output_names = {"y", "y_h"};
  if (m.op == "LSTM") options.output_names.push_back("y_c");
  for (ir::Value* out : b.MultiOp(m.op, inputs, options.output_names.size(), attributes, options)) {
    b.Output(out);
  }
  return b.Build();
}

class RnnOrtTest : public ::testing::Test {
 public:
  void SetUp() override {
    if (!testing::OrtAvailable()) {
      QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
    }
  }

  // Saves `graph` for ORT; removed by TearDown.
  std::string Save(const ir::Graph& graph, const std::string& tag) {
    path_ = (fs::temp_directory_path() /
             ("qtune_rnn_" + tag + "_" + std::to_string(getpid()) + ".onnx"))
                .string();
    EXPECT_TRUE(ir::SaveModel(graph, path_).ok());
    return path_;
  }
  void TearDown() override {
    if (!path_.empty()) fs::remove(path_);
  }

  std::string path_;
};

std::vector<std::string> OutputNames(const ir::Graph& graph) {
  std::vector<std::string> names;
  for (const ir::Value* v : graph.outputs()) names.push_back(v->name());
  return names;
}

void ExpectClose(const NamedTensors& ours, const NamedTensors& ort, const std::string& tag,
                 float tolerance) {
  ASSERT_EQ(ours.size(), ort.size()) << tag;
  for (size_t i = 0; i < ort.size(); ++i) {
    SCOPED_TRACE(tag + " output " + ort[i].first);
    EXPECT_EQ(ours[i].second.sizes(), ort[i].second.sizes());
    EXPECT_LE(testing::MaxAbsDiff(ours[i].second, ort[i].second), tolerance);
  }
}

TEST_F(RnnOrtTest, LstmStateCarriedAcrossThreeCalls) {
  std::mt19937 rng(2301);
  RnnModel m{.seq = 7, .batch = 3, .input = 5, .hidden = 17, .initial_states = true};
  std::unique_ptr<ir::Graph> graph = Build(m, rng);
  const std::string path = Save(*graph, "lstm_state");
  const std::vector<std::string> names = OutputNames(*graph);
  for (bool use_onednn : {true, false}) {
    SessionOptions options;
    options.use_onednn = use_onednn;
    auto session = Session::Create(*graph, options);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    Tensor zeros = Random({1, m.batch, m.hidden}, rng, 0.0f);
    Tensor h_ours = zeros, c_ours = zeros, h_ort = zeros, c_ort = zeros;
    for (int call = 0; call < 3; ++call) {
      Tensor x = Random({m.seq, m.batch, m.input}, rng, 1.0f);
      auto ours = (*session)->Run({{"x", x}, {"h0", h_ours}, {"c0", c_ours}});
      ASSERT_TRUE(ours.ok()) << ours.status().ToString();
      auto ort = testing::RunOrt(path, {{"x", x}, {"h0", h_ort}, {"c0", c_ort}}, names);
      ASSERT_TRUE(ort.ok()) << ort.status().ToString();
      ExpectClose(
          *ours, *ort,
          std::string(use_onednn ? "onednn" : "reference") + " call " + std::to_string(call),
          1e-5f);
      h_ours = (*ours)[1].second, c_ours = (*ours)[2].second;
      h_ort = (*ort)[1].second, c_ort = (*ort)[2].second;
    }
  }
}

// Runs `m` (random inputs) in qtune on both tiers and in ORT.
void ExpectModelMatchesOrt(RnnOrtTest& test, const RnnModel& m, const std::string& tag,
                           uint32_t seed) {
  std::mt19937 rng(seed);
  std::unique_ptr<ir::Graph> graph = Build(m, rng);
  const int64_t dirs = m.direction == "bidirectional" ? 2 : 1;
  NamedTensors inputs = {{"x", Random({m.seq, m.batch, m.input}, rng, 1.0f)}};
  if (m.sequence_lens) {
    std::vector<int32_t> lens = m.lens;
    for (int64_t b = static_cast<int64_t>(lens.size()); b < m.batch; ++b) {
      lens.push_back(static_cast<int32_t>(m.seq - b % m.seq));
    }
    inputs.push_back({"lens", Tensor::FromVector<int32_t>({m.batch}, lens)});
  }
  if (m.initial_states) {
    inputs.push_back({"h0", Random({dirs, m.batch, m.hidden}, rng)});
    if (m.op == "LSTM") inputs.push_back({"c0", Random({dirs, m.batch, m.hidden}, rng)});
  }
  auto ort = testing::RunOrt(test.Save(*graph, tag), inputs, OutputNames(*graph));
  ASSERT_TRUE(ort.ok()) << tag << ": " << ort.status().ToString();
  for (bool use_onednn : {true, false}) {
    SessionOptions options;
    options.use_onednn = use_onednn;
    auto session = Session::Create(*graph, options);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    auto ours = (*session)->Run(inputs);
    ASSERT_TRUE(ours.ok()) << ours.status().ToString();
    ExpectClose(*ours, *ort, tag + (use_onednn ? " onednn" : " reference"), 1e-5f);
  }
}

TEST_F(RnnOrtTest, BidirectionalGruWithSequenceLens) {
  for (int64_t lbr : {0, 1}) {
    RnnModel m{.op = "GRU", .seq = 6, .batch = 4, .input = 3, .hidden = 7};
    m.direction = "bidirectional";
    m.sequence_lens = m.initial_states = true;
    m.attributes = {Attribute::Int("linear_before_reset", lbr)};
    ExpectModelMatchesOrt(*this, m, "gru_lens_lbr" + std::to_string(lbr), 2302 + lbr);
  }
}

TEST_F(RnnOrtTest, LstmReferenceOnlyAttributes) {
  RnnModel base{.seq = 5, .batch = 3, .input = 4, .hidden = 6};
  base.initial_states = base.peepholes = true;
  std::vector<std::pair<std::string, RnnModel>> cases;
  RnnModel clip = base;
  clip.attributes = {Attribute::Float("clip", 0.3f)};
  cases.push_back({"clip", clip});
  RnnModel forget = base;
  forget.attributes = {Attribute::Int("input_forget", 1)};
  cases.push_back({"input_forget", forget});
  RnnModel acts = base;
  acts.direction = "bidirectional";
  acts.attributes = {Attribute::Strings("activations", {"HardSigmoid", "LeakyRelu", "ScaledTanh",
                                                        "Sigmoid", "Softsign", "Affine"}),
                     Attribute::Floats("activation_alpha", {0.3f, 0.05f, 1.5f, 0.7f}),
                     Attribute::Floats("activation_beta", {0.4f, 0.8f, 0.1f})};
  cases.push_back({"activations", acts});
  RnnModel lens = base;
  lens.direction = "reverse";
  lens.sequence_lens = true;
  cases.push_back({"reverse_lens", lens});
  uint32_t seed = 2310;
  for (const auto& [tag, m] : cases) ExpectModelMatchesOrt(*this, m, "lstm_" + tag, seed++);
}

TEST_F(RnnOrtTest, GruAndRnnOtherActivations) {
  RnnModel gru{.op = "GRU", .seq = 4, .batch = 2, .input = 3, .hidden = 5};
  gru.initial_states = true;
  gru.attributes = {Attribute::Strings("activations", {"Elu", "Softplus"}),
                    Attribute::Floats("activation_alpha", {0.6f}), Attribute::Float("clip", 2.0f)};
  ExpectModelMatchesOrt(*this, gru, "gru_acts", 2320);
  RnnModel rnn{.op = "RNN", .seq = 4, .batch = 2, .input = 3, .hidden = 5};
  rnn.direction = "bidirectional";
  rnn.sequence_lens = true;
  rnn.attributes = {Attribute::Strings("activations", {"ThresholdedRelu", "Relu"}),
                    Attribute::Floats("activation_alpha", {0.1f})};
  ExpectModelMatchesOrt(*this, rnn, "rnn_acts", 2321);
}

// A row of length 0 runs no step: Y and its Y_h (and Y_c) are zero, as in ONNX Runtime.
TEST_F(RnnOrtTest, ZeroLengthRow) {
  uint32_t seed = 2325;
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    RnnModel m{.op = op, .seq = 4, .batch = 3, .input = 3, .hidden = 5};
    m.direction = "bidirectional";
    m.sequence_lens = m.initial_states = true;
    m.lens = {4, 0, 2};
    ExpectModelMatchesOrt(*this, m, std::string("zero_len_") + op, seed++);
  }
}

TEST(RnnBenchModels, ExportWhenAsked) {
  const char* dir = std::getenv("QTUNE_RNN_EXPORT_DIR");
  if (dir == nullptr) GTEST_SKIP() << "QTUNE_RNN_EXPORT_DIR is not set";
  std::mt19937 rng(2330);
  for (const auto& [name, op, direction] :
       {std::tuple{"lstm", "LSTM", "forward"}, std::tuple{"bilstm", "LSTM", "bidirectional"},
        std::tuple{"gru", "GRU", "forward"}}) {
    RnnModel m{.op = op, .seq = 64, .batch = 1, .input = 64, .hidden = 128};
    m.direction = direction;
    std::unique_ptr<ir::Graph> graph = Build(m, rng);
    const std::string path = (fs::path(dir) / (std::string(name) + ".onnx")).string();
    ASSERT_TRUE(ir::SaveModel(*graph, path).ok()) << path;
  }
}

}  // namespace
}  // namespace qtune::runtime
