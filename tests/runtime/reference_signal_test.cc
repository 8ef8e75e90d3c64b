// DFT, STFT, the window generators and MelWeightMatrix: ONNX node tests, non-power-of-two
// lengths against a direct sum, opset 20's axis input, odd and degenerate sizes, and errors
// that name the node.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <numbers>

#include "reference_nn_test_util.h"
#include "runtime/reference/signal_fft.h"
#include "runtime/reference/signal_kernels.h"

namespace qtune::runtime::reference {
namespace {

using ir::Attribute;
using nn::testing::CheckOnnxNodeCase;
using nn::testing::NodeSpecForTest;
using nn::testing::RandomDoubles;
using nn::testing::RandomFloats;
using nn::testing::RunNode;
using nn::testing::RunOk;
using nn::testing::TensorsNear;

NodeSpecForTest Spec(std::string op, int64_t opset, std::vector<Attribute> attributes = {}) {
  return {.op_type = std::move(op), .attributes = std::move(attributes), .opset = opset};
}

// The window test data was computed with pi rounded to 3.1415: within 1e-3, not 1e-5.
TEST(SignalTest, OnnxNodeTests) {
  CheckOnnxNodeCase("test_dft", &Dft, 1e-4, 1e-4);
  CheckOnnxNodeCase("test_dft_axis", &Dft, 1e-4, 1e-4);
  CheckOnnxNodeCase("test_dft_inverse", &Dft, 1e-4, 1e-4);
  CheckOnnxNodeCase("test_stft", &Stft, 1e-4, 1e-4);
  CheckOnnxNodeCase("test_stft_with_window", &Stft, 1e-4, 1e-4);
  CheckOnnxNodeCase("test_hannwindow", &HannWindow, 1e-4, 1e-3);
  CheckOnnxNodeCase("test_hannwindow_symmetric", &HannWindow, 1e-4, 1e-3);
  CheckOnnxNodeCase("test_hammingwindow", &HammingWindow, 1e-4, 1e-3);
  CheckOnnxNodeCase("test_hammingwindow_symmetric", &HammingWindow, 1e-4, 1e-3);
  CheckOnnxNodeCase("test_blackmanwindow", &BlackmanWindow, 1e-4, 1e-3);
  CheckOnnxNodeCase("test_blackmanwindow_symmetric", &BlackmanWindow, 1e-4, 1e-3);
  CheckOnnxNodeCase("test_melweightmatrix", &MelWeightMatrix);
}

// Bluestein (1000, 7, 1), radix-2 (1024) and every length in between agree with the
// definition.
TEST(SignalTest, FftMatchesDirectSumForAnyLength) {
  for (int64_t n : {1, 2, 3, 5, 7, 12, 17, 31, 64, 100, 1000, 1024}) {
    for (bool inverse : {false, true}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " inverse=" + std::to_string(inverse));
      Tensor values = RandomDoubles({n, 2}, static_cast<uint32_t>(n));
      std::vector<Complex> x(n);
      for (int64_t i = 0; i < n; ++i) {
        x[i] = Complex(values.data<double>()[2 * i], values.data<double>()[2 * i + 1]);
      }
      std::vector<Complex> expected = DirectDft(x, inverse);
      FftPlan plan(n, inverse);
      plan.Run(x);
      double worst = 0;
      for (int64_t i = 0; i < n; ++i) worst = std::max(worst, std::abs(x[i] - expected[i]));
      EXPECT_LT(worst, 1e-9 * static_cast<double>(n));
    }
  }
}

// A [2, 15, 3, 1] real signal along axis 1 with dft_length 9 (cut) and 21 (zero-padded),
// both sides and one side, against the direct sum.
TEST(SignalTest, DftOddLengthsCutAndPadAgainstDirectSum) {
  Tensor x = RandomDoubles({2, 15, 3, 1}, 3);
  for (int64_t length : {9, 21}) {
    for (int64_t onesided : {0, 1}) {
      SCOPED_TRACE("dft_length=" + std::to_string(length) +
                   " onesided=" + std::to_string(onesided));
      Tensor y = RunOk(&Dft, Spec("DFT", 17, {Attribute::Int("onesided", onesided)}),
                       {x, Tensor::Scalar<int64_t>(length)});
      const int64_t bins = onesided ? length / 2 + 1 : length;
      ASSERT_EQ(y.sizes(), (std::vector<int64_t>{2, bins, 3, 2}));
      for (int64_t b = 0; b < 2; ++b) {
        for (int64_t i = 0; i < 3; ++i) {
          std::vector<Complex> row(length);
          for (int64_t k = 0; k < std::min<int64_t>(length, 15); ++k) {
            row[k] = x.data<double>()[(b * 15 + k) * 3 + i];
          }
          std::vector<Complex> expected = DirectDft(row, false);
          for (int64_t k = 0; k < bins; ++k) {
            const double* got = &y.data<double>()[((b * bins + k) * 3 + i) * 2];
            EXPECT_NEAR(got[0], expected[k].real(), 1e-9);
            EXPECT_NEAR(got[1], expected[k].imag(), 1e-9);
          }
        }
      }
    }
  }
}

// Opset 20 takes the axis as an input (default -2, the last signal axis); the inverse of the
// forward transform is the signal again.
TEST(SignalTest, Opset20AxisInputAndInverseRoundTrip) {
  Tensor x = RandomFloats({3, 11, 2}, 5);  // complex, odd length
  Tensor by_default = RunOk(&Dft, Spec("DFT", 20), {x});
  Tensor by_input = RunOk(&Dft, Spec("DFT", 20), {x, Tensor(), Tensor::Scalar<int64_t>(1)});
  Tensor by_attr17 = RunOk(&Dft, Spec("DFT", 17, {Attribute::Int("axis", 1)}), {x});
  EXPECT_TRUE(TensorsNear(by_default, by_input, 0, 0));
  EXPECT_TRUE(TensorsNear(by_default, by_attr17, 0, 0));
  Tensor back = RunOk(&Dft, Spec("DFT", 20, {Attribute::Int("inverse", 1)}), {by_default});
  EXPECT_TRUE(TensorsNear(back, x, 1e-5, 1e-5));
  // Axis 0 over a batch of complex values.
  Tensor axis0 = RunOk(&Dft, Spec("DFT", 20), {x, Tensor(), Tensor::Scalar<int64_t>(0)});
  EXPECT_EQ(axis0.sizes(), (std::vector<int64_t>{3, 11, 2}));
}

TEST(SignalTest, WindowsOfOddAndDegenerateSizes) {
  auto window = [](ReferenceKernel kernel, const char* op, int64_t size, int64_t periodic) {
    return RunOk(kernel, Spec(op, 17, {Attribute::Int("periodic", periodic)}),
                 {Tensor::Scalar<int64_t>(size)});
  };
  EXPECT_TRUE(TensorsNear(window(&HannWindow, "HannWindow", 5, 0),
                          Tensor::FromVector<float>({5}, {0, 0.5f, 1, 0.5f, 0}), 1e-7));
  EXPECT_TRUE(
      TensorsNear(window(&HannWindow, "HannWindow", 1, 0), Tensor::FromVector<float>({1}, {1})));
  EXPECT_EQ(window(&BlackmanWindow, "BlackmanWindow", 0, 1).num_elements(), 0);
  // Symmetric windows are symmetric; periodic ones are the symmetric one of size + 1, cut.
  Tensor symmetric = window(&HammingWindow, "HammingWindow", 8, 0);
  Tensor periodic = window(&HammingWindow, "HammingWindow", 7, 1);
  for (int64_t i = 0; i < 7; ++i) {
    EXPECT_NEAR(symmetric.data<float>()[i], symmetric.data<float>()[7 - i], 1e-6);
    EXPECT_NEAR(periodic.data<float>()[i], symmetric.data<float>()[i], 1e-6);
  }
  // output_datatype: float64.
  Tensor f64 = RunOk(&HannWindow, Spec("HannWindow", 17, {Attribute::Int("output_datatype", 11)}),
                     {Tensor::Scalar<int32_t>(4)});
  EXPECT_EQ(f64.dtype(), DataType::kFloat64);
}

TEST(SignalTest, StftOfAudioLengthSignalIsFast) {
  // 16000 samples, 400-sample frames (not a power of two: Bluestein) every 160.
  Tensor x = RandomFloats({1, 16000, 1}, 9);
  Tensor window = RunOk(&HannWindow, Spec("HannWindow", 17), {Tensor::Scalar<int64_t>(400)});
  auto start = std::chrono::steady_clock::now();
  Tensor y = RunOk(&Stft, Spec("STFT", 17), {x, Tensor::Scalar<int64_t>(160), window});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{1, 98, 201, 2}));
  EXPECT_LT(seconds, 0.5);
  // Frame 3 against a direct sum.
  std::vector<Complex> frame(400);
  for (int64_t j = 0; j < 400; ++j)
    frame[j] = x.data<float>()[3 * 160 + j] * window.data<float>()[j];
  std::vector<Complex> expected = DirectDft(frame, false);
  for (int64_t k = 0; k < 201; ++k) {
    EXPECT_NEAR(y.data<float>()[((3 * 201) + k) * 2], expected[k].real(), 1e-3);
    EXPECT_NEAR(y.data<float>()[((3 * 201) + k) * 2 + 1], expected[k].imag(), 1e-3);
  }
}

TEST(SignalTest, BadInputsAreErrorsNamingTheNode) {
  auto dft = RunNode(&Dft, Spec("DFT", 17), {RandomFloats({1, 8, 3}, 1)});
  ASSERT_FALSE(dft.ok());
  EXPECT_EQ(dft.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(dft.status().message().find("DFT '"), std::string::npos) << dft.status().ToString();
  EXPECT_NE(dft.status().message().find("1 (real) or 2 (complex)"), std::string::npos);

  auto length =
      RunNode(&Dft, Spec("DFT", 17), {RandomFloats({1, 8, 1}, 1), Tensor::Scalar<int64_t>(0)});
  ASSERT_FALSE(length.ok());
  EXPECT_NE(length.status().message().find("dft_length is 0"), std::string::npos);

  // 64 rows of 2^26 complex bins: far beyond what qtune allocates; refused up front.
  auto huge = RunNode(&Dft, Spec("DFT", 17),
                      {RandomFloats({64, 8, 1}, 1), Tensor::Scalar<int64_t>(int64_t{1} << 26)});
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), StatusCode::kResourceExhausted);

  auto axis =
      RunNode(&Dft, Spec("DFT", 17, {Attribute::Int("axis", 2)}), {RandomFloats({1, 8, 1}, 1)});
  ASSERT_FALSE(axis.ok());
  EXPECT_NE(axis.status().message().find("axis 2 is out of range"), std::string::npos);

  auto stft = RunNode(&Stft, Spec("STFT", 17),
                      {RandomFloats({1, 100, 1}, 1), Tensor::Scalar<int64_t>(10), Tensor(),
                       Tensor::Scalar<int64_t>(128)});
  ASSERT_FALSE(stft.ok());
  EXPECT_NE(stft.status().message().find("STFT '"), std::string::npos);
  EXPECT_NE(stft.status().message().find("longer than the signal"), std::string::npos);

  auto mel = RunNode(
      &MelWeightMatrix, Spec("MelWeightMatrix", 17),
      {Tensor::Scalar<int64_t>(8), Tensor::Scalar<int64_t>(16), Tensor::Scalar<int64_t>(8000),
       Tensor::Scalar<float>(0), Tensor::Scalar<float>(6000)});
  ASSERT_FALSE(mel.ok());
  EXPECT_NE(mel.status().message().find("sample_rate / 2"), std::string::npos);
}

}  // namespace
}  // namespace qtune::runtime::reference
