#include "measure/job_requeue.h"

#include <fmt/format.h>

#include <charconv>
#include <optional>

namespace qtune::measure {
namespace {

std::optional<int64_t> ParseNonNegative(std::string_view text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

}  // namespace

RequeueState ReadRequeueState(const StreamFields& fields) {
  RequeueState state;
  if (const std::string* v = FindField(fields, kRequeuesField)) {
    state.requeues = ParseNonNegative(*v).value_or(0);
  }
  if (const std::string* v = FindField(fields, kUnservedSinceField)) {
    state.unserved_since_ms = ParseNonNegative(*v).value_or(-1);
  }
  return state;
}

RequeueDecision DecideRequeue(const RequeueState& state, int64_t now_ms, bool served,
                              const std::string& job_id, const std::string& machine,
                              const RequeuePolicy& policy) {
  RequeueDecision d;
  d.next.requeues = state.requeues + 1;
  d.next.unserved_since_ms =
      served ? -1 : (state.unserved_since_ms >= 0 ? state.unserved_since_ms : now_ms);
  const double unserved_s =
      served ? 0 : static_cast<double>(now_ms - d.next.unserved_since_ms) / 1000.0;
  if (!served && unserved_s >= policy.unserved_grace_s) {
    d.dead_letter = true;
    d.reason = fmt::format(
        "job {} needs a worker on machine '{}', and no live worker announced that machine "
        "for {:.1f} s (it was put back {} times); start a worker on such a machine, or rerun "
        "the tuner so that it picks a machine that is served",
        job_id, machine, unserved_s, state.requeues);
  } else if (state.requeues >= policy.max_requeues) {
    d.dead_letter = true;
    d.reason = fmt::format(
        "job {} for machine '{}' was put back {} times without a worker of that machine "
        "taking it{}; check the workers of that machine (their logs), or raise "
        "qtune worker --max-requeues",
        job_id, machine, state.requeues, served ? " (one announces itself)" : "");
  }
  return d;
}

StreamFields RequeuedFields(const StreamFields& fields, const RequeueState& next) {
  StreamFields out;
  for (const auto& [f, v] : fields) {
    if (f != kRequeuesField && f != kUnservedSinceField) out.emplace_back(f, v);
  }
  out.emplace_back(kRequeuesField, std::to_string(next.requeues));
  if (next.unserved_since_ms >= 0) {
    out.emplace_back(kUnservedSinceField, std::to_string(next.unserved_since_ms));
  }
  return out;
}

}  // namespace qtune::measure
