// `qtune run` on corrupt block-scaled and MatMulNBits weights (issue 27, docs/cli.md "How
// bad input is answered"): exit 3 naming the node and the file's own initializer (never an
// intermediate value such as NVFP4's dequantized scale), on the engine and on --reference,
// never a signal. The models are the fuzz corpus seeds of make_corpus_lowbit.cc.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "core/npy.h"
#include "core/tensor.h"

namespace qtune {
namespace {

namespace fs = std::filesystem;

using testing::CliResult;
using testing::RunQtuneCli;

std::string Seed(const std::string& name) {
  return std::string(QTUNE_SOURCE_DIR) + "/tests/fuzz/corpus/model/" + name + ".onnx";
}

class RunCorruptLowBitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("qtune_corrupt_lowbit_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    std::vector<float> x(2 * 64);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.01f * static_cast<float>(i % 50) - 0.2f;
    input_ = (dir_ / "x.npy").string();
    ASSERT_TRUE(WriteNpy(input_, Tensor::FromVector<float>({2, 64}, x)).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  CliResult Run(const std::string& seed, bool reference) {
    return RunQtuneCli("run " + Seed(seed) + " -i x=" + input_ + " -o " +
                       (dir_ / "y.npy").string() + (reference ? " --reference" : ""));
  }

  fs::path dir_;
  std::string input_;
};

TEST_F(RunCorruptLowBitTest, ValidSeedsRun) {
  for (const char* seed : {"lowbit_nvfp4", "lowbit_mxfp8", "lowbit_int4", "lowbit_matmulnbits"}) {
    for (bool reference : {false, true}) {
      CliResult r = Run(seed, reference);
      EXPECT_EQ(r.exit_code, 0) << seed << " reference " << reference << ": " << r.out;
    }
  }
}

TEST_F(RunCorruptLowBitTest, CorruptWeightsExit3NamingTheNodeAndTheFilesTensor) {
  struct Case {
    std::string seed;
    std::vector<std::string> named;  // each must appear in the message
  } cases[] = {
      {"corrupt-nvfp4-scale-count",
       {"DequantizeLinear 'DequantizeLinear_1': block scales 'w_scale_e4m3' (through "
        "DequantizeLinear 'DequantizeLinear_0') of x 'w_e2m1': the scale is [3,8]",
        "needs [4,8]"}},
      {"corrupt-nvfp4-nan-scale",
       {"DequantizeLinear 'DequantizeLinear_1': block scales 'w_scale_e4m3' (through "
        "DequantizeLinear 'DequantizeLinear_0') of x 'w_e2m1' hold nan at index 5"}},
      {"corrupt-mxfp8-e8m0-nan-scale",
       {"DequantizeLinear 'DequantizeLinear_0': block scales 'w_scale_e8m0' of x 'w_e4m3' "
        "hold nan at index 3 (float8e8m0 0xFF is NaN)"}},
      {"corrupt-int4-infinite-scale",
       {"DequantizeLinear 'DequantizeLinear_0': block scales 'w_scale' of x 'w_int4' hold inf "
        "at index 5"}},
      {"corrupt-matmulnbits-b-size",
       {"MatMulNBits 'nbits': B 'w_q4' uint8[255] has 255 elements; expected [8,2,16] = 256"}},
      {"corrupt-matmulnbits-scales-size",
       {"MatMulNBits 'nbits': scales 'w_scales' float32[15] has 15 elements"}},
      {"corrupt-matmulnbits-zero-points-size",
       {"MatMulNBits 'nbits': zero_points 'w_zero_points' uint8[7] has 7 elements"}},
  };
  for (const Case& c : cases) {
    for (bool reference : {false, true}) {
      SCOPED_TRACE(c.seed + (reference ? " --reference" : ""));
      CliResult r = Run(c.seed, reference);
      EXPECT_EQ(r.exit_code, 3) << r.out;
      EXPECT_EQ(r.out.rfind("qtune: error: ", 0), 0u) << r.out;
      for (const std::string& what : c.named) {
        EXPECT_NE(r.out.find(what), std::string::npos) << "expected '" << what << "' in " << r.out;
      }
      // Not an intermediate value ("DequantizeLinear_0_out"), and the node named once.
      EXPECT_EQ(r.out.find("_out'"), std::string::npos) << r.out;
      const std::string node =
          c.named[0].substr(0, c.named[0].find('\'', c.named[0].find('\'') + 1) + 1);
      EXPECT_EQ(r.out.find(node), r.out.rfind(node)) << r.out;
    }
  }
}

}  // namespace
}  // namespace qtune
