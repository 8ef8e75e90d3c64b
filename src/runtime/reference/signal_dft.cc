// DFT (opset 17: `axis` attribute, default 1; opset 20: `axis` input, default -2) and STFT
// (opset 17), after onnx/reference/ops/op_dft.py and op_stft.py:
//  - the signal is [batch, n1, ..., nk, 1] (real) or [..., 2] (complex);
//  - DFT transforms along `axis` with length dft_length (default the axis size): the input
//    is cut or zero-padded to it; `inverse` scales by 1/dft_length; `onesided` keeps the
//    first dft_length/2 + 1 bins; the output ends in 2 (complex);
//  - STFT cuts [batch, length, 1|2] into frames of frame_length (default the window's
//    length) every frame_step samples, multiplies each by the window (default all ones)
//    and transforms it: [batch, frames, bins, 2] with frames = (length - frame_length) /
//    frame_step + 1 and bins = frame_length / 2 + 1 when onesided (default), else
//    frame_length.
#include <algorithm>
#include <string>

#include "runtime/reference/float_buffer.h"
#include "runtime/reference/signal_fft.h"
#include "runtime/reference/signal_kernels.h"
#include "runtime/reference/tensor_util.h"

namespace qtune::runtime::reference {
namespace {

// An upper bound on transform lengths: a dft_length or frame_length from a model beyond
// this is treated as corrupt (each length allocates its plan and buffers).
constexpr int64_t kMaxTransformLength = int64_t{1} << 26;

Status CheckTransformLength(const ir::Node& node, int64_t length, std::string_view what) {
  if (length < 1 || length > kMaxTransformLength) {
    return NodeError(node, std::string(what) + " is " + std::to_string(length) +
                               "; it must be in [1, " + std::to_string(kMaxTransformLength) + "]");
  }
  return Status::Ok();
}

// The complex components of a signal: 1 (real) or 2 (real, imaginary), its last size.
StatusOr<int64_t> ComponentCount(const ir::Node& node, const Tensor& signal) {
  const int64_t last = signal.rank() == 0 ? 0 : signal.sizes().back();
  if (last != 1 && last != 2) {
    return NodeError(node, "the signal " + signal.DebugString() +
                               " must end in a dimension of 1 (real) or 2 (complex)");
  }
  return last;
}

StatusOr<int64_t> DftAxis(const KernelArgs& args, int64_t rank) {
  int64_t axis = 1;
  if (args.opset >= 20) {
    axis = -2;
    if (HasInput(args, 2)) {
      ASSIGN_OR_RETURN(axis, ReadIndexScalar(args.node, args.inputs[2], "axis"));
    }
  } else {
    axis = args.node.GetInt("axis", 1);
  }
  // Accepted: [-rank, -2] and [0, rank - 2] (the last dimension holds the components).
  if (axis < -rank || axis > rank - 2 || axis == -1) {
    return NodeError(args.node, "axis " + std::to_string(axis) +
                                    " is out of range for a signal of rank " +
                                    std::to_string(rank) + " (accepted: [" + std::to_string(-rank) +
                                    ", -2] and [0, " + std::to_string(rank - 2) + "])");
  }
  return axis < 0 ? axis + rank : axis;
}

StatusOr<std::vector<Tensor>> DftKernel(const KernelArgs& args) {
  const ir::Node& node = args.node;
  RETURN_IF_ERROR(CheckInputCount(args, 1, 3));
  const Tensor& x = args.inputs[0];
  RETURN_IF_ERROR(CheckComputeFloatType(node, x, "input"));
  if (x.rank() < 2) return NodeError(node, "the signal " + x.DebugString() + " needs rank >= 2");
  ASSIGN_OR_RETURN(const int64_t components, ComponentCount(node, x));
  const int64_t rank = static_cast<int64_t>(x.rank());
  ASSIGN_OR_RETURN(const int64_t axis, DftAxis(args, rank));
  const int64_t in_length = x.size(axis);
  int64_t length = in_length;
  if (HasInput(args, 1)) {
    ASSIGN_OR_RETURN(length, ReadIndexScalar(node, args.inputs[1], "dft_length"));
  }
  RETURN_IF_ERROR(CheckTransformLength(node, length, "dft_length"));
  const bool inverse = node.GetInt("inverse", 0) != 0;
  const bool onesided = node.GetInt("onesided", 0) != 0;
  const int64_t out_length = onesided ? length / 2 + 1 : length;

  std::vector<int64_t> out_sizes = x.sizes();
  out_sizes[axis] = out_length;
  out_sizes.back() = 2;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.size(d);
  for (int64_t d = axis + 1; d < rank - 1; ++d) inner *= x.size(d);

  RETURN_IF_ERROR(CheckOutputElements(
      node, static_cast<double>(outer) * static_cast<double>(out_length) * inner * 2));
  const std::vector<double> in = ToDoubles(x);
  std::vector<double> out(static_cast<size_t>(outer * out_length * inner * 2));
  FftPlan plan(length, inverse);
  std::vector<Complex> row(static_cast<size_t>(length));
  const double scale = inverse ? 1.0 / static_cast<double>(length) : 1.0;
  const int64_t copied = std::min(in_length, length);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      std::fill(row.begin(), row.end(), Complex{});
      for (int64_t k = 0; k < copied; ++k) {
        const int64_t at = ((o * in_length + k) * inner + i) * components;
        row[k] = Complex(in[at], components == 2 ? in[at + 1] : 0.0);
      }
      plan.Run(row);
      for (int64_t k = 0; k < out_length; ++k) {
        const int64_t at = ((o * out_length + k) * inner + i) * 2;
        out[at] = row[k].real() * scale;
        out[at + 1] = row[k].imag() * scale;
      }
    }
  }
  ASSIGN_OR_RETURN(Tensor y, FromDoubles(x.dtype(), std::move(out_sizes), out));
  return std::vector<Tensor>{std::move(y)};
}

StatusOr<std::vector<Tensor>> StftKernel(const KernelArgs& args) {
  const ir::Node& node = args.node;
  RETURN_IF_ERROR(CheckInputCount(args, 2, 4));
  const Tensor& x = args.inputs[0];
  RETURN_IF_ERROR(CheckComputeFloatType(node, x, "signal"));
  if (x.rank() != 3) {
    return NodeError(node, "the signal " + x.DebugString() +
                               " must be [batch, length, 1] (real) or [batch, length, 2]");
  }
  ASSIGN_OR_RETURN(const int64_t components, ComponentCount(node, x));
  ASSIGN_OR_RETURN(const int64_t step, ReadIndexScalar(node, args.inputs[1], "frame_step"));
  if (step < 1)
    return NodeError(node, "frame_step is " + std::to_string(step) + "; it must be >= 1");
  std::vector<double> window;
  if (HasInput(args, 2)) {
    const Tensor& w = args.inputs[2];
    RETURN_IF_ERROR(CheckComputeFloatType(node, w, "window"));
    if (w.rank() != 1) return NodeError(node, "the window " + w.DebugString() + " must be 1-D");
    window = ToDoubles(w);
  }
  const int64_t batch = x.size(0), signal_length = x.size(1);
  int64_t frame_length = HasInput(args, 2) ? static_cast<int64_t>(window.size()) : signal_length;
  if (HasInput(args, 3)) {
    ASSIGN_OR_RETURN(frame_length, ReadIndexScalar(node, args.inputs[3], "frame_length"));
  }
  RETURN_IF_ERROR(CheckTransformLength(node, frame_length, "frame_length"));
  if (!HasInput(args, 2)) window.assign(static_cast<size_t>(frame_length), 1.0);
  if (frame_length > signal_length) {
    return NodeError(node, "frame_length " + std::to_string(frame_length) +
                               " is longer than the signal (" + std::to_string(signal_length) +
                               " samples)");
  }
  const int64_t frames = (signal_length - frame_length) / step + 1;
  const bool onesided = node.GetInt("onesided", 1) != 0;
  const int64_t bins = onesided ? frame_length / 2 + 1 : frame_length;
  // A frame holds the window's length of samples, cut or zero-padded to frame_length.
  const int64_t taps = std::min(static_cast<int64_t>(window.size()), frame_length);

  RETURN_IF_ERROR(CheckOutputElements(
      node, static_cast<double>(batch) * static_cast<double>(frames) * bins * 2));
  const std::vector<double> in = ToDoubles(x);
  std::vector<double> out(static_cast<size_t>(batch * frames * bins * 2));
  FftPlan plan(frame_length, /*inverse=*/false);
  std::vector<Complex> row(static_cast<size_t>(frame_length));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t f = 0; f < frames; ++f) {
      std::fill(row.begin(), row.end(), Complex{});
      for (int64_t j = 0; j < taps; ++j) {
        const int64_t t = f * step + j;
        if (t >= signal_length) break;
        const int64_t at = (b * signal_length + t) * components;
        row[j] = Complex(in[at], components == 2 ? in[at + 1] : 0.0) * window[j];
      }
      plan.Run(row);
      for (int64_t k = 0; k < bins; ++k) {
        const int64_t at = ((b * frames + f) * bins + k) * 2;
        out[at] = row[k].real();
        out[at + 1] = row[k].imag();
      }
    }
  }
  ASSIGN_OR_RETURN(Tensor y, FromDoubles(x.dtype(), {batch, frames, bins, 2}, out));
  return std::vector<Tensor>{std::move(y)};
}

}  // namespace

StatusOr<std::vector<Tensor>> Dft(const KernelArgs& args) { return DftKernel(args); }
StatusOr<std::vector<Tensor>> Stft(const KernelArgs& args) { return StftKernel(args); }

}  // namespace qtune::runtime::reference
