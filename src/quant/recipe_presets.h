// The built-in recipe presets (recipes/*.yaml at the repository root), compiled into the
// library by CMake (a generated recipe_presets.cc) so an installed qtune needs no files.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

namespace qtune::quant {

// {name, YAML text} for every preset, in a fixed order: int8, fp8, int8_residual,
// fp8_residual.
const std::vector<std::pair<std::string_view, std::string_view>>& EmbeddedRecipePresets();

}  // namespace qtune::quant
