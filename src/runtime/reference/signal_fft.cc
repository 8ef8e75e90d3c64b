#include "runtime/reference/signal_fft.h"

#include <numbers>

#include "core/check.h"

namespace qtune::runtime::reference {
namespace {

bool IsPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// exp(sign * 2 pi i k / n) for k < count, each from its own angle (no accumulated error).
std::vector<Complex> Roots(int64_t n, int64_t count, bool inverse) {
  std::vector<Complex> roots(static_cast<size_t>(count));
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < count; ++k) {
    roots[k] = std::polar(
        1.0, sign * 2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n));
  }
  return roots;
}

// In-place iterative radix-2 FFT. `roots` holds exp(-+2 pi i k / n) for k < n/2.
void Radix2(std::span<Complex> a, const std::vector<Complex>& roots) {
  const size_t n = a.size();
  for (size_t i = 1, j = 0; i < n; ++i) {
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  for (size_t len = 2; len <= n; len <<= 1) {
    const size_t half = len / 2;
    const size_t step = n / len;
    for (size_t start = 0; start < n; start += len) {
      for (size_t j = 0; j < half; ++j) {
        Complex u = a[start + j];
        Complex v = a[start + j + half] * roots[j * step];
        a[start + j] = u + v;
        a[start + j + half] = u - v;
      }
    }
  }
}

}  // namespace

// Bluestein: with w_k = exp(-+pi i k^2 / N), X_k = w_k * sum_n (x_n w_n) conj(w_{k-n}), a
// convolution computed with power-of-two FFTs of length m >= 2N - 1.
struct FftPlan::Bluestein {
  int64_t m = 0;
  std::vector<Complex> chirp;            // w_k, k < N
  std::vector<Complex> filter_spectrum;  // FFT_m of conj(w) laid out circularly
  std::vector<Complex> forward_roots;    // radix-2 roots of length m
  std::vector<Complex> inverse_roots;
  std::vector<Complex> work;  // length m
};

FftPlan::FftPlan(int64_t length, bool inverse) : length_(length) {
  QTUNE_CHECK(length >= 1);
  if (IsPowerOfTwo(length)) {
    roots_ = Roots(length, length / 2, inverse);
    return;
  }
  bluestein_ = std::make_unique<Bluestein>();
  Bluestein& b = *bluestein_;
  b.m = 1;
  while (b.m < 2 * length - 1) b.m <<= 1;
  b.chirp.resize(static_cast<size_t>(length));
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < length; ++k) {
    // k^2 mod 2N keeps the angle small (and exact) for large k.
    const int64_t k2 = static_cast<int64_t>((static_cast<__int128>(k) * k) % (2 * length));
    b.chirp[k] = std::polar(
        1.0, sign * std::numbers::pi * static_cast<double>(k2) / static_cast<double>(length));
  }
  b.forward_roots = Roots(b.m, b.m / 2, /*inverse=*/false);
  b.inverse_roots = Roots(b.m, b.m / 2, /*inverse=*/true);
  b.filter_spectrum.assign(static_cast<size_t>(b.m), Complex{});
  b.filter_spectrum[0] = std::conj(b.chirp[0]);
  for (int64_t k = 1; k < length; ++k) {
    b.filter_spectrum[k] = b.filter_spectrum[b.m - k] = std::conj(b.chirp[k]);
  }
  Radix2(b.filter_spectrum, b.forward_roots);
  b.work.resize(static_cast<size_t>(b.m));
}

FftPlan::~FftPlan() = default;

void FftPlan::Run(std::span<Complex> data) {
  QTUNE_CHECK(static_cast<int64_t>(data.size()) == length_);
  if (!bluestein_) {
    Radix2(data, roots_);
    return;
  }
  Bluestein& b = *bluestein_;
  std::fill(b.work.begin(), b.work.end(), Complex{});
  for (int64_t k = 0; k < length_; ++k) b.work[k] = data[k] * b.chirp[k];
  Radix2(b.work, b.forward_roots);
  for (int64_t k = 0; k < b.m; ++k) b.work[k] *= b.filter_spectrum[k];
  Radix2(b.work, b.inverse_roots);
  const double scale = 1.0 / static_cast<double>(b.m);
  for (int64_t k = 0; k < length_; ++k) data[k] = b.work[k] * scale * b.chirp[k];
}

std::vector<Complex> DirectDft(std::span<const Complex> x, bool inverse) {
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<Complex> out(x.size());
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < n; ++k) {
    Complex sum{};
    for (int64_t j = 0; j < n; ++j) {
      const int64_t kj = static_cast<int64_t>((static_cast<__int128>(k) * j) % n);
      sum += x[j] * std::polar(1.0, sign * 2.0 * std::numbers::pi * static_cast<double>(kj) /
                                        static_cast<double>(n));
    }
    out[k] = sum;
  }
  return out;
}

}  // namespace qtune::runtime::reference
