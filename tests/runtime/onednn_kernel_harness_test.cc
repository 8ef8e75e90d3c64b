// The kernel-test harness catches what it exists to catch: a fake Relu kernel (inputs are
// positive, so Relu copies) misbehaves in one way per test, and CheckKernel must fail.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "runtime/kernel_test_util.h"

namespace qtune::runtime::kernel_testing {
namespace {

enum class Fault {
  kNone,
  kWritesPastTheEnd,
  kWritesBeforeTheStart,
  kSkipsLastElement,
  kWritesItsInput,
  kPlainDataClaimedNhwc,
  kRunFails,
};

Fault g_fault = Fault::kNone;  // the fault the next created kernel has

class FakeCopyKernel : public Kernel {
 public:
  explicit FakeCopyKernel(Fault fault) : fault_(fault) {}
  std::string Describe() const override { return "fake copy"; }
  Status Run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    if (fault_ == Fault::kRunFails) return InternalError("fake failure");
    float* out = outputs[0].data<float>();
    const float* in = inputs[0].data<float>();
    int64_t n = outputs[0].num_elements();
    int64_t written = fault_ == Fault::kSkipsLastElement ? n - 1 : n;
    std::memcpy(out, in, static_cast<size_t>(written) * sizeof(float));
    if (fault_ == Fault::kWritesPastTheEnd) out[n] = 1.0f;
    if (fault_ == Fault::kWritesBeforeTheStart) out[-1] = 1.0f;
    if (fault_ == Fault::kWritesItsInput) const_cast<float*>(in)[0] += 1.0f;
    return Status::Ok();
  }

 private:
  Fault fault_;
};

StatusOr<std::optional<KernelChoice>> CreateFakeKernel(const KernelRequest& request) {
  KernelChoice choice;
  choice.kernel = std::make_unique<FakeCopyKernel>(g_fault);
  // Copying is right in either layout, as long as input and output agree.
  Layout in = request.input_layouts[0];
  choice.input_layouts = {in};
  choice.output_layouts = {in};
  if (g_fault == Fault::kPlainDataClaimedNhwc) {
    choice.input_layouts = {Layout::kPlain};
    choice.output_layouts = {Layout::kNhwc};
  }
  return std::optional<KernelChoice>(std::move(choice));
}

StatusOr<std::optional<KernelChoice>> DeclineAlways(const KernelRequest&) {
  return NotApplicable();
}

KernelCase CopyCase(Fault fault, Layout layout = Layout::kPlain) {
  g_fault = fault;
  std::mt19937 rng(7);
  KernelCase c;
  c.factory = &CreateFakeKernel;
  c.op_type = "Relu";
  c.seed = 7;
  c.label = "fake";
  c.inputs = {Dynamic(RandomTensor({2, 3, 5, 7}, rng, 0.5f, 1.0f), layout)};
  return c;
}

TEST(KernelHarness, AcceptsACorrectKernelInEitherLayout) {
  EXPECT_TRUE(CheckKernel(CopyCase(Fault::kNone, Layout::kPlain)));
  EXPECT_TRUE(CheckKernel(CopyCase(Fault::kNone, Layout::kNhwc)));
  KernelCase in_place = CopyCase(Fault::kNone, Layout::kNhwc);
  in_place.in_place_input = 0;
  EXPECT_TRUE(CheckKernel(in_place));
}

TEST(KernelHarness, CatchesWritesOutsideTheOutput) {
  ::testing::AssertionResult after = CheckKernel(CopyCase(Fault::kWritesPastTheEnd));
  EXPECT_FALSE(after);
  EXPECT_NE(std::string(after.message()).find("sentinel"), std::string::npos) << after.message();
  EXPECT_FALSE(CheckKernel(CopyCase(Fault::kWritesBeforeTheStart)));
}

TEST(KernelHarness, CatchesAnOutputElementLeftUnwritten) {
  EXPECT_FALSE(CheckKernel(CopyCase(Fault::kSkipsLastElement)));
}

TEST(KernelHarness, CatchesAKernelWritingItsInput) {
  ::testing::AssertionResult result = CheckKernel(CopyCase(Fault::kWritesItsInput));
  EXPECT_FALSE(result);
  EXPECT_NE(std::string(result.message()).find("input 0"), std::string::npos) << result.message();
}

TEST(KernelHarness, CatchesAWrongOutputLayout) {
  EXPECT_FALSE(CheckKernel(CopyCase(Fault::kPlainDataClaimedNhwc)));
}

TEST(KernelHarness, CatchesAFailedRun) { EXPECT_FALSE(CheckKernel(CopyCase(Fault::kRunFails))); }

TEST(KernelHarness, ChecksTheFactoryDecision) {
  KernelCase c = CopyCase(Fault::kNone);
  c.expect = Expect::kNotApplicable;
  ::testing::AssertionResult applied = CheckKernel(c);
  EXPECT_FALSE(applied);
  EXPECT_NE(std::string(applied.message()).find("seed 7"), std::string::npos) << applied.message();
  c.factory = &DeclineAlways;
  EXPECT_TRUE(CheckKernel(c));
  c.expect = Expect::kFastPath;
  EXPECT_FALSE(CheckKernel(c));
  c.expect = Expect::kFastPathIfSupported;
  EXPECT_TRUE(CheckKernel(c));
}

}  // namespace
}  // namespace qtune::runtime::kernel_testing
