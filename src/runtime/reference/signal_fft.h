// The discrete Fourier transform behind the reference DFT and STFT kernels.
//
//   X[k] = sum_{n<N} x[n] exp(-+2 pi i k n / N)   (minus: forward, plus: inverse; no 1/N)
//
// Power-of-two lengths run an iterative radix-2 FFT; any other length runs Bluestein's
// chirp-z transform through a power-of-two FFT, so every length is O(N log N). A plan is
// built once per length and direction and reused for every row (STFT frames, DFT batches).
// Internal to src/runtime/reference.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace qtune::runtime::reference {

using Complex = std::complex<double>;

class FftPlan {
 public:
  // REQUIRES: length >= 1.
  FftPlan(int64_t length, bool inverse);
  ~FftPlan();
  FftPlan(const FftPlan&) = delete;
  FftPlan& operator=(const FftPlan&) = delete;

  int64_t length() const { return length_; }
  // Transforms `data` in place. REQUIRES: data.size() == length().
  void Run(std::span<Complex> data);

 private:
  struct Bluestein;
  int64_t length_;
  std::vector<Complex> roots_;            // radix-2: exp(-+2 pi i k / N), k < N/2
  std::unique_ptr<Bluestein> bluestein_;  // null for power-of-two lengths
};

// The same transform as a direct O(N^2) sum (the definition above); for tests.
std::vector<Complex> DirectDft(std::span<const Complex> x, bool inverse);

}  // namespace qtune::runtime::reference
