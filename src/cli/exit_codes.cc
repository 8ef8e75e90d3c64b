#include "cli/exit_codes.h"

#include <cstdio>

namespace qtune::cli {

int ReportAndExitCode(const Status& status) {
  if (status.ok()) return kExitOk;
  std::fprintf(stderr, "qtune: error: %s\n", status.message().c_str());
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kDataLoss:
    case StatusCode::kOutOfRange:
    case StatusCode::kResourceExhausted:
    case StatusCode::kAlreadyExists:
      return kExitBadInput;
    case StatusCode::kUnimplemented:
      return kExitUnsupported;
    default:
      return kExitFailure;
  }
}

int ReportUsageError(const Status& status) {
  std::fprintf(stderr, "qtune: error: %s\n", status.message().c_str());
  return kExitUsage;
}

int ReportRecipeError(const Status& status) {
  if (status.code() == StatusCode::kInvalidArgument) return ReportUsageError(status);
  return ReportAndExitCode(status);
}

}  // namespace qtune::cli
