#include "measure/benchmark.h"

#include <algorithm>
#include <tuple>

namespace qtune::measure {

std::string FailureKindName(FailureKind kind, int exit_code) {
  switch (kind) {
    case FailureKind::kNone:
      return "none";
    case FailureKind::kTimeout:
      return "timeout";
    case FailureKind::kCrash:
      return "crash";
    case FailureKind::kExit:
      return "exit:" + std::to_string(exit_code);
    case FailureKind::kUnparsable:
      return "unparsable";
    case FailureKind::kBuild:
      return "build";
    case FailureKind::kConnection:
      return "connection";
  }
  return "unknown";
}

bool IsTransient(FailureKind kind) {
  return kind == FailureKind::kTimeout || kind == FailureKind::kCrash ||
         kind == FailureKind::kConnection;
}

void Benchmark::MeasureAll(std::deque<MeasureRequest>& requests, const OnMeasured& on_done) {
  // requests.size() is read again after each on_done, which may have appended.
  for (size_t i = 0; i < requests.size(); ++i) on_done(i, Measure(Prepared(requests[i])));
}

void Benchmark::MeasureMany(std::span<const MeasureRequest> requests, const OnMeasured& on_done) {
  std::deque<MeasureRequest> queue(requests.begin(), requests.end());
  MeasureAll(queue, on_done);
}

MeasureRequest Prepared(const MeasureRequest& request) {
  MeasureRequest out = request;
  if (out.prepare) {
    std::tie(out.candidate_path, out.reference_path) = out.prepare();
    out.prepare = nullptr;
  }
  return out;
}

void Benchmark::SetStatusListener(std::function<void(const std::string&)> listener) {
  status_listener_ = std::move(listener);
}

void Benchmark::NotifyStatus() const {
  if (status_listener_) status_listener_(ProgressNote());
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  if (values.size() % 2 == 1) return values[mid];
  double upper = values[mid];
  double lower = *std::max_element(values.begin(), values.begin() + mid);
  return (lower + upper) / 2;
}

}  // namespace qtune::measure
