// The data model of post-training quantization, shared by its stages:
//   recipe (recipe.h) -> placement (placement.h: which tensors get quantizers, why others
//   do not) -> calibration (calibrate.h: ranges of activations on real data) -> guards
//   (placement.h) -> export (export_qdq.h: a standard QDQ ONNX model) -> summary.
// Plain structs; every stage documents which fields it reads and writes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace qtune::quant {

// Number format a quantizer produces. Each format has one row in FormatInfoOf's table
// (quant_types.cc); adding a block format (NVFP4, MXFP8) is one enumerant, one row, and its
// codec in the weight quantizer (block_weights.h).
enum class QuantFormat {
  kInt8,     // int8; symmetric (zero point 0) unless QuantizerConfig::symmetric is false,
             // in which case activations become asymmetric uint8 (CPU style). Weights:
             // per output channel, or blockwise along the reduction axis (block_size > 0)
  kFp8E4M3,  // float8 e4m3fn, scale = amax / 448, no zero point
  kInt4,     // int4 weights only, blockwise along the reduction axis: scale = amax / 7
             // (symmetric, INT4) or (max - min) / 15 with a UINT4 zero point (asymmetric)
  kNvfp4,    // NVFP4 weights only: float4e2m1 values, an E4M3 scale per 16 elements along
             // the reduction axis and an fp32 scale per tensor (core/block_float.h); 4.5 bits
  kMxfp8,    // MXFP8 weights only: e4m3 values, a float8e8m0 (power-of-two) scale per 32
             // elements along the reduction axis (core/block_float.h); 8.25 bits
};
const char* QuantFormatName(QuantFormat format);  // "int8", "fp8_e4m3", "int4", "nvfp4"...

// Static properties of a format.
struct FormatInfo {
  QuantFormat format;
  const char* name;         // QuantFormatName; the recipe spelling
  const char* aliases;      // other recipe spellings, space separated ("" = none)
  int bits;                 // bits of one stored value
  bool weight_only;         // activations cannot take it (activation quantizer: error)
  bool blockwise;           // weights always get block scales along the reduction axis
  int default_block_size;   // block size when a rule gives none (0 = per channel)
  int fixed_block_size;     // > 0: the only block size the format allows (MX: 32)
  bool zero_point_allowed;  // weights may be asymmetric (symmetric: false)
  int fixed_scale_bits;     // > 0: bits of one block scale regardless of scale_type
                            // (E4M3 / E8M0 scales); 0: from QuantizerConfig::scale_type
};
const FormatInfo& FormatInfoOf(QuantFormat format);
const std::vector<FormatInfo>& AllFormats();  // in enum order
std::string FormatNameList();                 // "int8, fp8_e4m3, int4" (for messages)

// How the weight scales of a (block) quantizer are chosen (algorithm: in a recipe).
enum class WeightAlgorithm {
  kRtn,   // round to nearest from the block's amax (or min/max)
  kClip,  // per block, shrink the range over a grid; keep the one with the least
          // output error (weight error weighted by the input channel's mean square)
  kAwq,   // activation-aware: per input channel scale s = mean|x|^alpha, alpha searched
          // on calibration activations; the weight is quantized as W*s and 1/s is folded
          // into the activation (a Mul on the MatMul's input)
};
const char* WeightAlgorithmName(WeightAlgorithm algorithm);  // "rtn", "clip", "awq"
std::optional<WeightAlgorithm> ParseWeightAlgorithm(const std::string& text);

// Type of the exported scale initializers of a weight quantizer.
enum class ScaleType { kFloat32, kFloat16 };
const char* ScaleTypeName(ScaleType type);  // "fp32", "fp16"

enum class CalibratorKind { kMax, kPercentile, kEntropy, kMse };
const char* CalibratorName(CalibratorKind kind);  // "max", "percentile", "entropy", "mse"

struct CalibratorConfig {
  CalibratorKind kind = CalibratorKind::kMax;
  double percentile = 99.99;  // kPercentile: the percentile of |x| taken as amax
  int bins = 2048;            // histogram bins (percentile, entropy, mse)
};

// How one tensor is quantized.
struct QuantizerConfig {
  bool enable = true;
  QuantFormat format = QuantFormat::kInt8;
  int bits = 8;             // FormatInfoOf(format).bits (validated by the recipe loader)
  std::optional<int> axis;  // per-channel axis (weights); nullopt = per-tensor. With
                            // block_size > 0, placement sets it to the reduction axis
  bool symmetric = true;    // false: asymmetric uint8 activations (int8), or int4 weights
                            // with UINT4 zero points
  CalibratorConfig calibrator;
  // Weights only. > 0: one scale per block_size consecutive elements along `axis` (the
  // reduction axis), as DequantizeLinear's block_size (opset 21). 0: per channel.
  int block_size = 0;
  WeightAlgorithm algorithm = WeightAlgorithm::kRtn;
  ScaleType scale_type = ScaleType::kFloat32;  // of the exported weight scales
};

// Effective bits per weight element, scale and zero point overhead included: int4 with
// block 64 and fp16 scales is 4 + 16/64 = 4.25; per channel, `reduction_length` elements
// share one scale (0 = unknown: no overhead counted).
double EffectiveBits(const QuantizerConfig& config, int64_t reduction_length);

// The calibrated range of one activation tensor (calibrate.h fills it).
struct TensorRange {
  float min = 0.0f;     // smallest value observed
  float max = 0.0f;     // largest value observed
  float amax = 0.0f;    // the calibrator's choice of clipping range for symmetric formats
  int64_t samples = 0;  // elements observed
};

// One quantizer: Q/DQ inserted on `value` for the listed consumers.
struct QuantSite {
  enum class Kind { kActivation, kWeight };
  Kind kind = Kind::kActivation;
  std::string value;  // the tensor quantized (graph value name)
  // The node inputs that read the quantized version: {node name, input index}. Other
  // readers of `value` keep the float tensor.
  std::vector<std::pair<std::string, int>> consumers;
  QuantizerConfig config;
  std::string role;             // why it exists: "Conv input", "residual add", "Concat input"...
  std::string scale_group;      // sites with the same non-empty group share one scale (Concat)
  bool enabled = true;          // false after a guard disabled it
  std::string disabled_reason;  // set with enabled = false
  std::optional<TensorRange> range;  // activations: filled by calibration
  // Weight-only layers (no activation quantizer): the weight's consumers read a float
  // activation. Set by placement.
  bool weight_only = false;
  // AWQ: per input channel scale s (length K) chosen by the search. Export quantizes
  // W * s (row k times s[k]) and multiplies the activation by 1 / s. Empty: none.
  std::vector<float> input_scale;
  // clip / awq: the mean square of each input channel (length K) on the calibration data,
  // the weights of the clip search's output error. Empty: unweighted.
  std::vector<float> input_mean_square;
};

// A layer the placement left in floating point, and why (shown in the summary).
struct SkippedLayer {
  std::string node;
  std::string op_type;
  std::string reason;  // e.g. "24 output channels < 16"... "GEMV shape (M = 1)"
};

// A guard that fired (summary "guard hits").
struct GuardHit {
  std::string guard;  // "dead_quantizer", "fp8_low_channel_input", ...
  std::string site;   // QuantSite::value
  std::string detail;
};

// kCpu: qtune's engine; kTrt: TensorRT (ModelOpt layout); kOrt: ONNX Runtime's CPU QDQ
// selectors (quantize_static's layout, ort_layout.h).
enum class Target { kCpu, kTrt, kOrt };
const char* TargetName(Target target);  // "cpu", "trt", "ort"

struct QuantPlan {
  Target target = Target::kCpu;
  std::vector<QuantSite> sites;
  std::vector<SkippedLayer> skipped;
  std::vector<GuardHit> guard_hits;
  std::vector<std::string> quantized_nodes;  // nodes whose inputs are quantized
};

}  // namespace qtune::quant
