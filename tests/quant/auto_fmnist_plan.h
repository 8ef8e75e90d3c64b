// The fmnist plan the `--auto` tests search over (auto_quantize_test, auto_lowbit_test):
// the rule-based plan for a recipe, calibrated and guarded, not exported.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "export_test_util.h"
#include "ir/onnx_io.h"
#include "quant/quantize_model.h"
#include "quant/recipe.h"

namespace qtune::quant::testing {

struct Prepared {
  QuantizeModelResult result;
  Recipe recipe;
  InputSizes sizes;
};

inline Prepared PrepareFmnist(const std::string& recipe) {
  auto model = ir::LoadModel(FmnistModelPath());
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  QuantizeModelOptions options;
  options.recipe = recipe;
  options.calib_specs = {FmnistCalibPath()};
  options.show_progress = false;
  options.export_model = false;
  auto result = QuantizeModel(**model, options);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  auto loaded = LoadRecipe(recipe);
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  return {std::move(result).value(), *loaded, {{"input", {32, 1, 28, 28}}}};
}

}  // namespace qtune::quant::testing
