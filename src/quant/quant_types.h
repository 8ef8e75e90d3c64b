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

// Number format a quantizer produces.
enum class QuantFormat {
  kInt8,     // int8; symmetric (zero point 0) unless QuantizerConfig::symmetric is false,
             // in which case activations become asymmetric uint8 (CPU style)
  kFp8E4M3,  // float8 e4m3fn, scale = amax / 448, no zero point
};
const char* QuantFormatName(QuantFormat format);  // "int8", "fp8_e4m3"

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
  int bits = 8;             // 8 only for now (validated by the recipe loader)
  std::optional<int> axis;  // per-channel axis (weights); nullopt = per-tensor
  bool symmetric = true;    // false: asymmetric uint8 activations (int8 only)
  CalibratorConfig calibrator;
};

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
