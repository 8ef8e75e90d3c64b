// What a test does when something it needs from outside the repository is missing (ONNX
// Runtime under tools/ort, the ONNX node test data, ../shared/models): on a developer's
// machine it skips, with the reason; in CI (environment variable CI=true, as GitHub
// Actions and most CI services set it) it fails, so that a missing peer cannot turn
// whole-model checks into silent skips.
//
//   if (!testing::OrtAvailable()) QTUNE_SKIP_OR_FAIL_IN_CI() << "ONNX Runtime is not installed";
//
// QTUNE_SKIP_OR_FAIL_IN_CI() returns from the current function like GTEST_SKIP(), so use
// it in a test body or a function returning void.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <string>

namespace qtune::testing {

// True when the environment variable CI is "true" or "1" (any case for "true").
inline bool RunningInCi() {
  const char* ci = std::getenv("CI");
  if (ci == nullptr) return false;
  std::string value = ci;
  for (char& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return value == "true" || value == "1";
}

inline ::testing::TestPartResult::Type MissingDependencyResult() {
  return RunningInCi() ? ::testing::TestPartResult::kFatalFailure
                       : ::testing::TestPartResult::kSkip;
}

inline const char* MissingDependencyHeader() {
  return RunningInCi() ? "Missing dependency, and CI=true makes that a failure, not a skip"
                       : "Skipped: missing dependency";
}

// For a test that goes on with fewer checks when an optional peer is missing: records a
// (non-fatal) failure in CI, nothing elsewhere.
inline void ExpectPresentInCi(bool present, const std::string& what) {
  if (!present && RunningInCi()) {
    ADD_FAILURE() << "CI=true and " << what << " is missing; install it (scripts/install_deps.sh)";
  }
}

}  // namespace qtune::testing

// GTEST_SKIP() outside CI, a fatal failure in CI; stream the reason into it.
#define QTUNE_SKIP_OR_FAIL_IN_CI()                                            \
  return ::testing::internal::AssertHelper(                                   \
             ::qtune::testing::MissingDependencyResult(), __FILE__, __LINE__, \
             ::qtune::testing::MissingDependencyHeader()) = ::testing::Message()
