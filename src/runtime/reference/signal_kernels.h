// The reference signal-processing kernels: DFT and STFT (signal_dft.cc), the window
// generators HannWindow, HammingWindow, BlackmanWindow and MelWeightMatrix
// (signal_window.cc). They compute in double and return the element type ONNX asks for:
// the signal's type for DFT and STFT, `output_datatype` (default float32) for the others.
//
// Their output sizes come from input values (DFT's dft_length, STFT's frame_length and
// window, the window size, MelWeightMatrix's bins), so they have no shape function: the
// compiler sizes them by running the kernel when those inputs are constant.
#pragma once

#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "runtime/reference/registry.h"

namespace qtune::runtime::reference {

// Complex values travel as a trailing dimension of 2 (real, imaginary); a trailing
// dimension of 1 is a real signal.
StatusOr<std::vector<Tensor>> Dft(const KernelArgs& args);
StatusOr<std::vector<Tensor>> Stft(const KernelArgs& args);

StatusOr<std::vector<Tensor>> HannWindow(const KernelArgs& args);
StatusOr<std::vector<Tensor>> HammingWindow(const KernelArgs& args);
StatusOr<std::vector<Tensor>> BlackmanWindow(const KernelArgs& args);
StatusOr<std::vector<Tensor>> MelWeightMatrix(const KernelArgs& args);

}  // namespace qtune::runtime::reference
