// HannWindow, HammingWindow, BlackmanWindow (opset 17) and MelWeightMatrix (opset 17),
// after onnx/reference/ops/op_*_window.py and op_mel_weight_matrix.py.
//
// A window of `size` samples is w[n] = f(2 pi n / N) with N = size when `periodic` (the
// default) and size - 1 otherwise:
//   Hann      0.5 - 0.5 cos(t)                (= sin^2(pi n / N))
//   Hamming   25/46 - 21/46 cos(t)
//   Blackman  0.42 - 0.5 cos(t) + 0.08 cos(2t)
// A symmetric window of one sample is [1] (as in PyTorch; the formula would divide by 0).
// The output type is `output_datatype` (default float32).
#include <climits>
#include <cmath>
#include <numbers>
#include <string>

#include "runtime/reference/float_buffer.h"
#include "runtime/reference/signal_kernels.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

// Largest window or matrix side accepted from a model (each element is computed).
constexpr int64_t kMaxGeneratedSize = int64_t{1} << 28;

StatusOr<DataType> OutputType(const ir::Node& node) {
  const int64_t code = node.GetInt("output_datatype", static_cast<int64_t>(DataType::kFloat32));
  const auto type = static_cast<DataType>(code);
  if (code < 0 || code > INT32_MAX || !IsKnownDataType(static_cast<int32_t>(code)) ||
      !IsStorableDataType(type) || !(IsFloatingPoint(type) || IsInteger(type))) {
    return NodeUnimplemented(node, "output_datatype " + std::to_string(code) +
                                       " is not a numeric type the reference kernel can write");
  }
  return type;
}

StatusOr<int64_t> ReadSize(const ir::Node& node, const Tensor& t, std::string_view what) {
  ASSIGN_OR_RETURN(int64_t size, ReadIndexScalar(node, t, what));
  if (size < 0 || size > kMaxGeneratedSize) {
    return NodeError(node, std::string(what) + " is " + std::to_string(size) +
                               "; it must be in [0, " + std::to_string(kMaxGeneratedSize) + "]");
  }
  return size;
}

enum class WindowKind { kHann, kHamming, kBlackman };

StatusOr<std::vector<Tensor>> Window(const KernelArgs& args, WindowKind kind) {
  const ir::Node& node = args.node;
  RETURN_IF_ERROR(CheckInputCount(args, 1, 1));
  ASSIGN_OR_RETURN(const int64_t size, ReadSize(node, args.inputs[0], "size"));
  ASSIGN_OR_RETURN(const DataType type, OutputType(node));
  const bool periodic = node.GetInt("periodic", 1) != 0;
  const double n_total = static_cast<double>(periodic ? size : size - 1);
  std::vector<double> w(static_cast<size_t>(size), 1.0);
  for (int64_t n = 0; n < size && n_total > 0; ++n) {
    const double t = 2.0 * std::numbers::pi * static_cast<double>(n) / n_total;
    switch (kind) {
      case WindowKind::kHann:
        w[n] = 0.5 - 0.5 * std::cos(t);
        break;
      case WindowKind::kHamming:
        w[n] = 25.0 / 46.0 - (21.0 / 46.0) * std::cos(t);
        break;
      case WindowKind::kBlackman:
        w[n] = 0.42 - 0.5 * std::cos(t) + 0.08 * std::cos(2.0 * t);
        break;
    }
  }
  ASSIGN_OR_RETURN(Tensor y, FromDoubles(type, {size}, w));
  return std::vector<Tensor>{std::move(y)};
}

double HertzToMel(double hertz) { return 2595.0 * std::log10(1.0 + hertz / 700.0); }
double MelToHertz(double mel) { return 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0); }

// [dft_length / 2 + 1, num_mel_bins]: triangular filters whose edges are num_mel_bins + 2
// points spaced evenly on the mel scale from lower_edge_hertz to upper_edge_hertz (step
// (high - low) / (num_mel_bins + 2), as ONNX's reference has it), mapped to spectrogram
// bins floor((dft_length + 1) * hertz / sample_rate).
StatusOr<std::vector<Tensor>> MelKernel(const KernelArgs& args) {
  const ir::Node& node = args.node;
  RETURN_IF_ERROR(CheckInputCount(args, 5, 5));
  ASSIGN_OR_RETURN(const int64_t mel_bins, ReadSize(node, args.inputs[0], "num_mel_bins"));
  ASSIGN_OR_RETURN(const int64_t dft_length, ReadSize(node, args.inputs[1], "dft_length"));
  ASSIGN_OR_RETURN(const int64_t sample_rate, ReadIndexScalar(node, args.inputs[2], "sample_rate"));
  ASSIGN_OR_RETURN(const double lower,
                   ReadScalarAsDouble(node, args.inputs[3], "lower_edge_hertz"));
  ASSIGN_OR_RETURN(const double upper,
                   ReadScalarAsDouble(node, args.inputs[4], "upper_edge_hertz"));
  ASSIGN_OR_RETURN(const DataType type, OutputType(node));
  if (sample_rate <= 0) {
    return NodeError(node, "sample_rate is " + std::to_string(sample_rate) + "; it must be > 0");
  }
  if (!(lower >= 0 && lower <= upper && std::isfinite(upper))) {
    return NodeError(node,
                     "the edges must be finite with 0 <= lower_edge_hertz <= upper_edge_hertz");
  }
  const int64_t spectrogram_bins = dft_length / 2 + 1;
  if (spectrogram_bins * mel_bins > kMaxGeneratedSize) {
    return NodeError(node, "the matrix [" + std::to_string(spectrogram_bins) + ", " +
                               std::to_string(mel_bins) + "] is too large");
  }
  const double low_mel = HertzToMel(lower);
  const double mel_step = (HertzToMel(upper) - low_mel) / static_cast<double>(mel_bins + 2);
  std::vector<int64_t> edges(static_cast<size_t>(mel_bins + 2));
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    const double hertz = MelToHertz(static_cast<double>(i) * mel_step + low_mel);
    const double bin =
        std::floor(static_cast<double>(dft_length + 1) * hertz / static_cast<double>(sample_rate));
    // (Checked as a double: a huge edge must not reach the integer conversion.)
    if (!(bin >= 0 && bin < static_cast<double>(spectrogram_bins))) {
      return NodeError(node, "upper_edge_hertz " + std::to_string(upper) +
                                 " maps past the last spectrogram bin (" +
                                 std::to_string(spectrogram_bins - 1) +
                                 "); keep it at most sample_rate / 2");
    }
    edges[i] = static_cast<int64_t>(bin);
  }
  std::vector<double> m(static_cast<size_t>(spectrogram_bins * mel_bins), 0.0);
  auto at = [&](int64_t bin, int64_t mel) -> double& { return m[bin * mel_bins + mel]; };
  for (int64_t i = 0; i < mel_bins; ++i) {
    const int64_t left = edges[i], center = edges[i + 1], right = edges[i + 2];
    if (center == left) {
      at(center, i) = 1.0;
    } else {
      for (int64_t j = left; j <= center; ++j) {
        at(j, i) = static_cast<double>(j - left) / static_cast<double>(center - left);
      }
    }
    for (int64_t j = center; j < right; ++j) {
      at(j, i) = static_cast<double>(right - j) / static_cast<double>(right - center);
    }
  }
  ASSIGN_OR_RETURN(Tensor y, FromDoubles(type, {spectrogram_bins, mel_bins}, m));
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

StatusOr<std::vector<Tensor>> HannWindow(const KernelArgs& args) {
  return Window(args, WindowKind::kHann);
}
StatusOr<std::vector<Tensor>> HammingWindow(const KernelArgs& args) {
  return Window(args, WindowKind::kHamming);
}
StatusOr<std::vector<Tensor>> BlackmanWindow(const KernelArgs& args) {
  return Window(args, WindowKind::kBlackman);
}
StatusOr<std::vector<Tensor>> MelWeightMatrix(const KernelArgs& args) { return MelKernel(args); }

}  // namespace qtune::runtime::reference

namespace qtune::runtime {

void RegisterSignalKernels(ReferenceRegistry& registry) {
  registry.Register("DFT", &reference::Dft);
  registry.Register("STFT", &reference::Stft);
  registry.Register("HannWindow", &reference::HannWindow);
  registry.Register("HammingWindow", &reference::HammingWindow);
  registry.Register("BlackmanWindow", &reference::BlackmanWindow);
  registry.Register("MelWeightMatrix", &reference::MelWeightMatrix);
}

}  // namespace qtune::runtime
