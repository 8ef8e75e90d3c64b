// Helpers shared by the Conv block-format tests (conv_lowbit_test.cc,
// conv_lowbit_fmnist_test.cc): temporary recipe files, quantizing with them, counting the
// Conv weights read through a DequantizeLinear.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "export_test_util.h"
#include "quant/quantize_model.h"

namespace qtune::quant::conv_lowbit {

namespace fs = std::filesystem;

// Per process: ctest runs the tests of these files in parallel processes.
inline std::string TempPath(const std::string& name) {
  return (fs::temp_directory_path() /
          ("qtune_conv_lowbit_" + std::to_string(getpid()) + "_" + name))
      .string();
}

// int4 (block `block`, awq or rtn) on every Conv and Gemm weight; the rest removed.
inline std::string Int4ConvRecipe(int block, const std::string& algorithm,
                                  const std::string& extra = "") {
  const std::string path = TempPath("int4_b" + std::to_string(block) + "_" + algorithm + ".yaml");
  std::ofstream(path) << "quantizers:\n  - name: \"*\"\n    enable: false\n"
                      << "  - name: \"*weight_quantizer\"\n    op: Conv\n    format: int4\n"
                      << "    block_size: " << block << "\n    algorithm: " << algorithm << "\n"
                      << "  - name: \"*weight_quantizer\"\n    op: Gemm\n    format: int4\n"
                      << "    block_size: 64\n    algorithm: " << algorithm << "\n"
                      << extra;
  return path;
}

inline StatusOr<QuantizeModelResult> Quantize(const ir::Graph& g, const std::string& recipe,
                                              std::optional<Target> target = std::nullopt,
                                              bool fmnist_calibration = false) {
  QuantizeModelOptions options;
  options.recipe = recipe;
  options.target = target;
  options.show_progress = false;
  if (fmnist_calibration) {
    options.calib_specs = {testing::FmnistCalibPath()};
  } else {
    options.random_calibration = true;
    options.random_samples = 4;
  }
  return QuantizeModel(g, options);
}

inline int DequantizeFeedingConv(const ir::Graph& g) {
  int n = 0;
  for (const ir::Node* node : g.nodes()) {
    if (node->op_type() != "Conv" || node->input(1)->producer() == nullptr) continue;
    n += node->input(1)->producer()->op_type() == "DequantizeLinear";
  }
  return n;
}

}  // namespace qtune::quant::conv_lowbit
