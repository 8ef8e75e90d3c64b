// The decomposed encoder layer saved as an ONNX file and run by ONNX Runtime (the
// external oracle) and by qtune's oneDNN tier with the transformer fusions.
//
// Setting QTUNE_ENCODER_EXPORT_DIR also writes encoder_small.onnx (this test's model) and
// encoder_base.onnx (hidden 768, 12 heads, FFN 3072, 2 layers) there, for `qtune bench`
// and tools/ort/ort_bench.js.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "ir/onnx_io.h"
#include "runtime/session.h"
#include "runtime/transformer_test_model.h"
#include "util/missing_dependency.h"
#include "util/ort_peer.h"

namespace qtune::runtime {
namespace {

namespace fs = std::filesystem;
using testing::BuildEncoder;
using testing::EncoderOptions;

TEST(TransformerOrtTest, EncoderMatchesOnnxRuntime) {
  if (!testing::OrtAvailable()) {
    QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed";
  }
  for (int64_t opset : {13, 18}) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    EncoderOptions options;
    options.opset = opset;
    std::unique_ptr<ir::Graph> graph = BuildEncoder(options);
    fs::path path = fs::temp_directory_path() / ("qtune_encoder_" + std::to_string(getpid()) + "_" +
                                                 std::to_string(opset) + ".onnx");
    ASSERT_TRUE(ir::SaveModel(*graph, path.string()).ok());
    NamedTensors inputs = {{"x", testing::RandomTensor({2, 16, 64}, 11)}};
    auto ort = testing::RunOrt(path.string(), inputs, {"y"});
    fs::remove(path);
    ASSERT_TRUE(ort.ok()) << ort.status().ToString();
    auto session = Session::Create(*graph, SessionOptions{});
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    auto ours = (*session)->Run(inputs);
    ASSERT_TRUE(ours.ok()) << ours.status().ToString();
    EXPECT_EQ((*ours)[0].second.sizes(), (*ort)[0].second.sizes());
    EXPECT_LE(testing::RelativeL2((*ours)[0].second, (*ort)[0].second), 1e-4);
  }
}

TEST(TransformerOrtTest, ExportForBenchmarks) {
  const char* dir = std::getenv("QTUNE_ENCODER_EXPORT_DIR");
  if (dir == nullptr) GTEST_SKIP() << "set QTUNE_ENCODER_EXPORT_DIR to write the models";
  EncoderOptions base;
  base.hidden = 768;
  base.heads = 12;
  base.ffn = 3072;
  base.layers = 2;
  ASSERT_TRUE(ir::SaveModel(*BuildEncoder({}), (fs::path(dir) / "encoder_small.onnx")).ok());
  ASSERT_TRUE(ir::SaveModel(*BuildEncoder(base), (fs::path(dir) / "encoder_base.onnx")).ok());
}

}  // namespace
}  // namespace qtune::runtime
