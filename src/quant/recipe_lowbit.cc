// The low-bit keys of a recipe's `quantizers:` entries (block_size, algorithm,
// scale_type) and the checks that tie them to the format (recipe.h).
#include <string>

#include "quant/recipe.h"
#include "quant/recipe_yaml.h"

namespace qtune::quant {

using recipe_yaml::ErrorAt;
using recipe_yaml::Located;

namespace {

constexpr int kMinBlockSize = 16;
constexpr int kMaxBlockSize = 4096;

bool IsPowerOfTwo(int v) { return v > 0 && (v & (v - 1)) == 0; }

}  // namespace

StatusOr<bool> ParseLowBitRuleKey(const std::string& key, const Located& value,
                                  QuantizerRule& rule) {
  if (key == "block_size") {
    int block = 0;
    if (!value.node.IsScalar() || !YAML::convert<int>::decode(value.node, block)) {
      return ErrorAt(value,
                     "must be an integer (a power of two, e.g. 32, 64, 128; 0 = per channel)");
    }
    if (block != 0 && (!IsPowerOfTwo(block) || block < kMinBlockSize || block > kMaxBlockSize)) {
      return ErrorAt(value, "block_size " + std::to_string(block) +
                                " is not a power of two in [16, 4096]; use 32, 64 or 128 (or 0 "
                                "for per channel)");
    }
    rule.block_size = block;
    return true;
  }
  if (key == "algorithm") {
    std::optional<WeightAlgorithm> a =
        value.node.IsScalar() ? ParseWeightAlgorithm(value.node.Scalar()) : std::nullopt;
    if (!a) {
      return ErrorAt(value, "'" + (value.node.IsScalar() ? value.node.Scalar() : std::string()) +
                                "' is not valid; use one of rtn, clip, awq");
    }
    rule.algorithm = *a;
    return true;
  }
  if (key == "scale_type") {
    const std::string text = value.node.IsScalar() ? value.node.Scalar() : "";
    if (text == "fp32" || text == "float32") {
      rule.scale_type = ScaleType::kFloat32;
    } else if (text == "fp16" || text == "float16") {
      rule.scale_type = ScaleType::kFloat16;
    } else {
      return ErrorAt(value, "'" + text + "' is not valid; use fp32 or fp16");
    }
    return true;
  }
  return false;
}

bool RecipeHasLowBitRules(const Recipe& recipe) {
  for (const QuantizerRule& r : recipe.quantizers) {
    if (r.enable == false) continue;
    if ((r.format && FormatInfoOf(*r.format).weight_only) || (r.block_size && *r.block_size > 0) ||
        (r.algorithm && *r.algorithm != WeightAlgorithm::kRtn)) {
      return true;
    }
  }
  return false;
}

Status CheckLowBitRule(const Located& at, const QuantizerRule& rule) {
  if (rule.format && rule.bits && *rule.bits != FormatInfoOf(*rule.format).bits) {
    return ErrorAt(at, std::string(QuantFormatName(*rule.format)) + " has " +
                           std::to_string(FormatInfoOf(*rule.format).bits) + "-bit values; bits " +
                           std::to_string(*rule.bits) + " contradicts it (drop 'bits')");
  }
  if (rule.format && rule.block_size) {
    const FormatInfo& info = FormatInfoOf(*rule.format);
    if (info.fixed_block_size > 0 && *rule.block_size != info.fixed_block_size) {
      return ErrorAt(at, std::string(info.name) + " has blocks of exactly " +
                             std::to_string(info.fixed_block_size) + " elements; block_size " +
                             std::to_string(*rule.block_size) + " is not possible");
    }
    if (info.blockwise && *rule.block_size == 0) {
      return ErrorAt(at, std::string(info.name) + " is blockwise; block_size 0 is not possible");
    }
    if (*rule.format == QuantFormat::kFp8E4M3 && *rule.block_size != 0) {
      return ErrorAt(at,
                     "fp8_e4m3 weights are per channel or per tensor; drop block_size (or "
                     "use mxfp8 for block scales)");
    }
  }
  return Status::Ok();
}

}  // namespace qtune::quant
