// QTUNE_SKIP_OR_FAIL_IN_CI: a skip on a developer's machine, a failure under CI=true.
#include "util/missing_dependency.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace qtune::testing {
namespace {

// Sets CI for one test and restores it afterwards.
class ScopedCi {
 public:
  explicit ScopedCi(const char* value) {
    if (const char* old = std::getenv("CI")) old_ = old;
    if (value != nullptr) {
      setenv("CI", value, 1);
    } else {
      unsetenv("CI");
    }
  }
  ~ScopedCi() {
    if (old_) {
      setenv("CI", old_->c_str(), 1);
    } else {
      unsetenv("CI");
    }
  }
  ScopedCi(const ScopedCi&) = delete;
  ScopedCi& operator=(const ScopedCi&) = delete;

 private:
  std::optional<std::string> old_;
};

void MissingPeer() { QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime (tools/ort) is not installed"; }

TEST(MissingDependencyTest, CiIsTrueOrOne) {
  for (const char* yes : {"true", "TRUE", "True", "1"}) {
    ScopedCi ci(yes);
    EXPECT_TRUE(RunningInCi()) << yes;
  }
  for (const char* no : {"false", "0", "", "no"}) {
    ScopedCi ci(no);
    EXPECT_FALSE(RunningInCi()) << no;
  }
  ScopedCi unset(nullptr);
  EXPECT_FALSE(RunningInCi());
}

TEST(MissingDependencyTest, MissingPeerFailsInCiWithTheReason) {
  ScopedCi ci("true");
  EXPECT_FATAL_FAILURE(MissingPeer(), "ONNX Runtime (tools/ort) is not installed");
  EXPECT_FATAL_FAILURE(MissingPeer(), "CI=true");
}

TEST(MissingDependencyTest, MissingPeerSkipsOutsideCi) {
  ScopedCi ci(nullptr);
  EXPECT_EQ(MissingDependencyResult(), ::testing::TestPartResult::kSkip);
}

TEST(MissingDependencyTest, OptionalPeerIsAFailureOnlyInCi) {
  {
    ScopedCi ci(nullptr);
    ExpectPresentInCi(false, "ONNX Runtime");  // no failure recorded
  }
  ScopedCi ci("true");
  EXPECT_NONFATAL_FAILURE(ExpectPresentInCi(false, "ONNX Runtime"), "CI=true and ONNX Runtime");
  ExpectPresentInCi(true, "ONNX Runtime");
}

}  // namespace
}  // namespace qtune::testing
