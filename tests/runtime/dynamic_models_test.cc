// Models with data-dependent sizes (dynamic_test_models.h) against ONNX Runtime: each
// model runs on several inputs that give different output sizes, through one Session per
// tier (oneDNN and reference only), so the per-size stage caching is exercised too; bad
// run-time sizes end in a Status naming the node.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include "ir/onnx_io.h"
#include "runtime/dynamic_test_models.h"
#include "runtime/session.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"

namespace qtune::runtime {
namespace {

namespace fs = std::filesystem;
using testing::BuildCompressThreshold;
using testing::BuildConstantOfShapeInput;
using testing::BuildDetectorHead;
using testing::BuildExpandInput;
using testing::BuildNonZeroGather;
using testing::BuildPadInput;
using testing::BuildRangeInput;
using testing::BuildReshapeInput;
using testing::BuildResizeInput;
using testing::BuildSliceInput;
using testing::BuildTileInput;
using testing::BuildTopKInput;
using testing::BuildUnique;

// Every element of a float, integer or bool tensor as double.
std::vector<double> AsDoubles(const Tensor& t) {
  std::vector<double> out;
  out.reserve(static_cast<size_t>(t.num_elements()));
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    switch (t.dtype()) {
      case DataType::kFloat32:
        out.push_back(t.data<float>()[i]);
        break;
      case DataType::kFloat64:
        out.push_back(t.data<double>()[i]);
        break;
      case DataType::kInt64:
        out.push_back(static_cast<double>(t.data<int64_t>()[i]));
        break;
      case DataType::kInt32:
        out.push_back(t.data<int32_t>()[i]);
        break;
      case DataType::kBool:
        out.push_back(t.data<bool>()[i] ? 1 : 0);
        break;
      default:
        ADD_FAILURE() << "unexpected dtype in " << t.DebugString();
        return out;
    }
  }
  return out;
}

void ExpectSameTensor(const Tensor& ours, const Tensor& want, double tolerance) {
  ASSERT_EQ(ours.dtype(), want.dtype());
  ASSERT_EQ(ours.sizes(), want.sizes());
  std::vector<double> a = AsDoubles(ours), b = AsDoubles(want);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_NEAR(a[i], b[i], tolerance) << "element " << i;
  }
}

Tensor F32(std::vector<int64_t> sizes, std::vector<float> v) {
  return Tensor::FromVector<float>(std::move(sizes), v);
}
Tensor I64(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromVector<int64_t>({n}, v);
}

// ONNX Runtime's outputs for each input set of `cases` (the model written once).
std::vector<NamedTensors> RunOrtCases(const ir::Graph& graph,
                                      const std::vector<NamedTensors>& cases,
                                      const std::string& tag) {
  std::vector<std::string> names;
  for (const ir::Value* v : graph.outputs()) names.push_back(v->name());
  fs::path path =
      fs::temp_directory_path() / ("qtune_dyn_" + tag + "_" + std::to_string(getpid()) + ".onnx");
  Status saved = ir::SaveModel(graph, path.string());
  EXPECT_TRUE(saved.ok()) << saved.ToString();
  std::vector<NamedTensors> results;
  for (const NamedTensors& inputs : cases) {
    auto ort = testing::RunOrt(path.string(), inputs, names);
    EXPECT_TRUE(ort.ok()) << tag << ": " << ort.status().ToString();
    results.push_back(ort.ok() ? *ort : NamedTensors{});
  }
  fs::remove(path);
  return results;
}

// Runs every case (and then every case again, to hit the cached stages) through one
// session per tier and compares with ONNX Runtime. Returns the oneDNN tier's outputs
// of the first pass, per case.
std::vector<NamedTensors> ExpectMatchesOrt(const ir::Graph& graph,
                                           const std::vector<NamedTensors>& cases,
                                           const std::string& tag, double tolerance = 1e-5) {
  std::vector<NamedTensors> want = RunOrtCases(graph, cases, tag);
  std::vector<NamedTensors> first;
  for (bool use_onednn : {true, false}) {
    SessionOptions options;
    options.use_onednn = use_onednn;
    auto session = Session::Create(graph, options);
    EXPECT_TRUE(session.ok()) << session.status().ToString();
    if (!session.ok()) return first;
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t c = 0; c < cases.size(); ++c) {
        SCOPED_TRACE(tag + " case " + std::to_string(c) + (use_onednn ? " onednn" : " reference") +
                     " pass " + std::to_string(pass));
        auto ours = (*session)->Run(cases[c]);
        EXPECT_TRUE(ours.ok()) << ours.status().ToString();
        if (!ours.ok() || want[c].empty()) continue;
        EXPECT_EQ(ours->size(), want[c].size());
        for (size_t i = 0; i < ours->size() && i < want[c].size(); ++i) {
          SCOPED_TRACE("output " + want[c][i].first);
          ExpectSameTensor((*ours)[i].second, want[c][i].second, tolerance);
        }
        if (use_onednn && pass == 0) first.push_back(*ours);
      }
    }
  }
  return first;
}

class DynamicModelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::OrtAvailable()) {
      QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
    }
  }
};

// x [1, 3, 1, n] for BuildDetectorHead from per-box rows (y, x, class-0 logit).
Tensor DetectorInput(const std::vector<std::array<float, 3>>& rows) {
  const int64_t n = static_cast<int64_t>(rows.size());
  std::vector<float> v(static_cast<size_t>(3 * n));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t c = 0; c < 3; ++c) v[c * n + i] = rows[i][c];
  }
  return F32({1, 3, 1, n}, v);
}

TEST_F(DynamicModelsTest, DetectorHeadKeepsZeroThreeOrManyBoxes) {
  constexpr int64_t kBoxes = 16;
  std::vector<std::array<float, 3>> none(kBoxes), three(kBoxes), many(kBoxes);
  for (int64_t i = 0; i < kBoxes; ++i) {
    none[i] = {0.5f * i, 0, 0};  // every score is 0: none above 0.5
    three[i] = {0, 2.0f * i, 0};
    // A 0.5 grid (neighbours overlap with IoU 1/3, kept), scores in [-2, 2] with ties;
    // boxes 12..15 repeat boxes 0..3 (suppressed when they score lower).
    const int64_t cell = i % 12;
    many[i] = {0.5f * (cell % 4), 0.5f * (cell / 4), 0.25f * ((i * 7) % 17 - 8)};
  }
  three[0][2] = 1.0f;
  three[1][2] = 1.5f;
  three[2][2] = 2.0f;
  three[3] = {0, 0.25f, 1.25f};  // overlaps box 0 (IoU 0.6): one of them goes
  std::vector<NamedTensors> cases = {
      {{"x", DetectorInput(none)}}, {{"x", DetectorInput(three)}}, {{"x", DetectorInput(many)}}};
  std::vector<NamedTensors> ours = ExpectMatchesOrt(*BuildDetectorHead(kBoxes), cases, "detector");
  ASSERT_EQ(ours.size(), 3u);
  EXPECT_EQ(ours[0][0].second.sizes(), (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(ours[1][0].second.sizes(), (std::vector<int64_t>{3, 4}));
  EXPECT_GE(ours[2][0].second.size(0), 8);
}

TEST_F(DynamicModelsTest, NonZeroTransposeGatherND) {
  std::vector<NamedTensors> cases = {{{"x", F32({3, 4}, std::vector<float>(12, 0.0f))}},
                                     {{"x", F32({3, 4}, {0, 1.5f, 0, 0, -2, 0, 0, 0, 0, 0, 3, 0})}},
                                     {{"x", F32({3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})}}};
  std::vector<NamedTensors> ours = ExpectMatchesOrt(*BuildNonZeroGather(), cases, "nonzero");
  ASSERT_EQ(ours.size(), 3u);
  EXPECT_EQ(ours[1][0].second.sizes(), (std::vector<int64_t>{3}));
}

TEST_F(DynamicModelsTest, CompressOfAThresholdedVector) {
  std::vector<float> m(24);
  for (size_t i = 0; i < m.size(); ++i) m[i] = static_cast<float>(i % 5) - 2.0f;
  std::vector<NamedTensors> cases = {
      {{"x", F32({8}, {0, 0, 0, 0, 0, 0, 0, 0})}, {"m", F32({8, 3}, std::vector<float>(24, -1))}},
      {{"x", F32({8}, {0.5f, 0, 1, 0, 0, 0, 0.3f, 0})}, {"m", F32({8, 3}, m)}},
      {{"x", F32({8}, {1, 2, 3, 4, 5, 6, 7, 8})}, {"m", F32({8, 3}, std::vector<float>(24, 1))}}};
  ExpectMatchesOrt(*BuildCompressThreshold(8), cases, "compress");
}

TEST_F(DynamicModelsTest, TopKWithKFromAnInput) {
  Tensor x = F32({8}, {0.5f, -1, 3, 2, 7, -4, 1, 6});
  std::vector<NamedTensors> cases = {
      {{"x", x}, {"k", I64({1})}}, {{"x", x}, {"k", I64({4})}}, {{"x", x}, {"k", I64({8})}}};
  ExpectMatchesOrt(*BuildTopKInput(8), cases, "topk");
}

TEST_F(DynamicModelsTest, UniqueSortedAndUnsorted) {
  std::vector<NamedTensors> cases = {{{"x", F32({10}, std::vector<float>(10, 2.5f))}},
                                     {{"x", F32({10}, {3, 1, 2, 3, 1, 0, 5, 2, 2, -1})}},
                                     {{"x", F32({10}, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0})}}};
  ExpectMatchesOrt(*BuildUnique(10), cases, "unique");
}

TEST_F(DynamicModelsTest, ReshapeExpandTileFromInputs) {
  Tensor six = F32({6}, {1, 2, 3, 4, 5, 6});
  ExpectMatchesOrt(*BuildReshapeInput(),
                   {{{"x", six}, {"shape", I64({2, 3})}},
                    {{"x", six}, {"shape", I64({3, 2})}},
                    {{"x", six}, {"shape", I64({-1, 1})}},
                    {{"x", six}, {"shape", I64({0, 1})}}},  // 0 copies dim 0 of x: [6, 1]
                   "reshape");
  Tensor row = F32({1, 3}, {1, -2, 3});
  ExpectMatchesOrt(*BuildExpandInput(2),
                   {{{"x", row}, {"shape", I64({2, 3})}},
                    {{"x", row}, {"shape", I64({4, 1})}},
                    {{"x", row}, {"shape", I64({1, 1})}}},
                   "expand2");
  ExpectMatchesOrt(
      *BuildExpandInput(3),
      {{{"x", row}, {"shape", I64({2, 1, 3})}}, {{"x", row}, {"shape", I64({1, 5, 1})}}},
      "expand3");
  Tensor square = F32({2, 2}, {1, -2, 3, -4});
  ExpectMatchesOrt(*BuildTileInput(),
                   {{{"x", square}, {"repeats", I64({1, 1})}},
                    {{"x", square}, {"repeats", I64({2, 3})}},
                    {{"x", square}, {"repeats", I64({3, 0})}}},
                   "tile");
}

TEST_F(DynamicModelsTest, RangeAndConstantOfShapeFromInputs) {
  auto range = [](int64_t start, int64_t limit, int64_t delta) {
    return NamedTensors{{"start", Tensor::Scalar<int64_t>(start)},
                        {"limit", Tensor::Scalar<int64_t>(limit)},
                        {"delta", Tensor::Scalar<int64_t>(delta)}};
  };
  ExpectMatchesOrt(*BuildRangeInput(),
                   {range(0, 5, 1), range(10, 0, -3), range(2, 2, 1), range(-4, 7, 2)}, "range");
  ExpectMatchesOrt(*BuildConstantOfShapeInput(2),
                   {{{"shape", I64({2, 3})}}, {{"shape", I64({0, 4})}}, {{"shape", I64({5, 1})}}},
                   "constant_of_shape");
}

TEST_F(DynamicModelsTest, SlicePadResizeFromInputs) {
  Tensor ten = F32({10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto slice = [&](int64_t start, int64_t end) {
    return NamedTensors{{"x", ten}, {"starts", I64({start})}, {"ends", I64({end})}};
  };
  ExpectMatchesOrt(*BuildSliceInput(), {slice(0, 10), slice(2, 5), slice(-3, 100), slice(7, 2)},
                   "slice");
  Tensor x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectMatchesOrt(*BuildPadInput(),
                   {{{"x", x}, {"pads", I64({0, 0, 0, 0})}},
                    {{"x", x}, {"pads", I64({1, 2, 0, 1})}},
                    {{"x", x}, {"pads", I64({0, 1, 2, 0})}}},
                   "pad");
  Tensor image = F32({1, 1, 2, 2}, {1, 2, 3, 4});
  ExpectMatchesOrt(*BuildResizeInput(),
                   {{{"x", image}, {"sizes", I64({1, 1, 4, 4})}},
                    {{"x", image}, {"sizes", I64({1, 1, 3, 5})}},
                    {{"x", image}, {"sizes", I64({1, 1, 1, 1})}}},
                   "resize");
}

// One session, inputs alternating between two size sets: every run must give that size
// set's result (a stale cached stage would give the other's).
TEST_F(DynamicModelsTest, AlternatingSizesReuseTheRightStages) {
  std::unique_ptr<ir::Graph> graph = BuildReshapeInput();
  Tensor six = F32({6}, {1, 2, 3, 4, 5, 6});
  std::vector<NamedTensors> cases = {{{"x", six}, {"shape", I64({2, 3})}},
                                     {{"x", six}, {"shape", I64({3, 2})}}};
  std::vector<NamedTensors> want = RunOrtCases(*graph, cases, "alternate");
  std::unique_ptr<ir::Graph> nonzero = BuildNonZeroGather();
  std::vector<NamedTensors> nz_cases = {{{"x", F32({3, 4}, {0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2})}},
                                        {{"x", F32({3, 4}, {1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2})}}};
  std::vector<NamedTensors> nz_want = RunOrtCases(*nonzero, nz_cases, "alternate_nz");
  for (bool use_onednn : {true, false}) {
    SessionOptions options;
    options.use_onednn = use_onednn;
    auto session = Session::Create(*graph, options);
    auto nz_session = Session::Create(*nonzero, options);
    ASSERT_TRUE(session.ok() && nz_session.ok());
    for (int run = 0; run < 8; ++run) {
      SCOPED_TRACE("run " + std::to_string(run) + (use_onednn ? " onednn" : " reference"));
      auto ours = (*session)->Run(cases[run % 2]);
      ASSERT_TRUE(ours.ok()) << ours.status().ToString();
      ExpectSameTensor((*ours)[0].second, want[run % 2][0].second, 1e-6);
      auto nz = (*nz_session)->Run(nz_cases[run % 2]);
      ASSERT_TRUE(nz.ok()) << nz.status().ToString();
      ExpectSameTensor((*nz)[0].second, nz_want[run % 2][0].second, 0);
      ExpectSameTensor((*nz)[1].second, nz_want[run % 2][1].second, 0);
    }
  }
}

// Bad run-time sizes: an error naming the node, and the session still runs good inputs.
TEST(DynamicModelsErrors, BadRunTimeSizesNameTheNode) {
  for (bool use_onednn : {true, false}) {
    SCOPED_TRACE(use_onednn ? "onednn" : "reference");
    SessionOptions options;
    options.use_onednn = use_onednn;
    std::unique_ptr<ir::Graph> reshape_graph = BuildReshapeInput();
    auto reshape = Session::Create(*reshape_graph, options);
    ASSERT_TRUE(reshape.ok()) << reshape.status().ToString();
    Tensor six = F32({6}, {1, 2, 3, 4, 5, 6});
    for (const Tensor& shape : {I64({4, 4}), I64({-1, 4}), I64({-1, -1})}) {
      auto bad = (*reshape)->Run({{"x", six}, {"shape", shape}});
      ASSERT_FALSE(bad.ok()) << "reshape to " << shape.DebugString() << " succeeded";
      EXPECT_NE(bad.status().ToString().find("'reshape'"), std::string::npos)
          << bad.status().ToString();
    }
    auto good = (*reshape)->Run({{"x", six}, {"shape", I64({3, 2})}});
    ASSERT_TRUE(good.ok()) << good.status().ToString();
    EXPECT_EQ((*good)[0].second.sizes(), (std::vector<int64_t>{3, 2}));

    std::unique_ptr<ir::Graph> fill_graph = BuildConstantOfShapeInput(2);
    auto fill = Session::Create(*fill_graph, options);
    ASSERT_TRUE(fill.ok()) << fill.status().ToString();
    for (const Tensor& shape :
         {I64({-1, 2}), I64({1000000000000, 1000000000000}), I64({int64_t{1} << 62, 4})}) {
      auto bad = (*fill)->Run({{"shape", shape}});
      ASSERT_FALSE(bad.ok()) << "ConstantOfShape " << shape.DebugString() << " succeeded";
      EXPECT_NE(bad.status().ToString().find("'fill'"), std::string::npos)
          << bad.status().ToString();
    }
    auto filled = (*fill)->Run({{"shape", I64({2, 2})}});
    ASSERT_TRUE(filled.ok()) << filled.status().ToString();
    EXPECT_EQ(AsDoubles((*filled)[0].second), (std::vector<double>{3, 3, 3, 3}));
  }
}

}  // namespace
}  // namespace qtune::runtime
