// Fuzz target for the Redis job, result and heartbeat parsers (measure/redis_protocol.h,
// docs/workers.md). An input is a stream entry's fields, "name\0value\0name\0value..." (a
// missing last value is empty), read by ParseJob (queue "fuzz") and ParseResult; the whole
// input is also read by ParseHeartbeat. What parses must encode and parse back the same.
#include <string>
#include <string_view>

#include "fuzz/fuzz_target.h"
#include "fuzz/json_fuzz_util.h"
#include "measure/redis_protocol.h"

namespace qtune::fuzz {

const char* const kTargetName = "redis";

namespace {

int64_t g_inputs = 0, g_jobs = 0, g_results = 0, g_heartbeats = 0;

measure::StreamFields SplitFields(std::string_view bytes) {
  measure::StreamFields fields;
  std::string parts[2];
  int n = 0;
  for (size_t offset = 0; offset <= bytes.size();) {
    size_t zero = bytes.find('\0', offset);
    size_t end = zero == std::string_view::npos ? bytes.size() : zero;
    parts[n++] = std::string(bytes.substr(offset, end - offset));
    if (n == 2) {
      fields.emplace_back(std::move(parts[0]), std::move(parts[1]));
      n = 0;
    }
    if (zero == std::string_view::npos) break;
    offset = end + 1;
  }
  if (n == 1) fields.emplace_back(std::move(parts[0]), "");
  return fields;
}

const measure::RedisKeys& Keys() {
  static const measure::RedisKeys keys = *measure::RedisKeys::ForQueue("fuzz");
  return keys;
}

void CheckJob(const measure::Job& job) {
  auto again = measure::ParseJob(measure::EncodeJob(job), Keys());
  if (!again.ok())
    FailTarget(kTargetName, "an encoded job is refused: " + again.status().ToString());
  if (again->id != job.id || again->shapes != job.shapes || again->seed != job.seed ||
      again->candidate_sha256 != job.candidate_sha256 || again->machine != job.machine) {
    FailTarget(kTargetName, "a job changed in an encode/parse round trip");
  }
}

void CheckResult(const measure::JobResult& result) {
  auto again = measure::ParseResult(measure::EncodeResult(result));
  if (!again.ok()) {
    FailTarget(kTargetName, "an encoded result is refused: " + again.status().ToString());
  }
  if (again->job_id != result.job_id ||
      again->measurement.candidate_ms != result.measurement.candidate_ms ||
      again->measurement.detail != result.measurement.detail) {
    FailTarget(kTargetName, "a result changed in an encode/parse round trip");
  }
}

}  // namespace

int FuzzOne(const uint8_t* data, size_t size) {
  ++g_inputs;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  measure::StreamFields fields = SplitFields(bytes);
  if (auto job = measure::ParseJob(fields, Keys()); job.ok()) {
    ++g_jobs;
    CheckJob(*job);
  }
  if (auto result = measure::ParseResult(fields); result.ok()) {
    ++g_results;
    CheckResult(*result);
  }
  if (measure::ParseHeartbeat(std::string(bytes)).ok()) ++g_heartbeats;
  return 0;
}

void PrintTargetStats() {
  std::fprintf(stderr, "redis target: %lld inputs, %lld jobs, %lld results, %lld heartbeats\n",
               static_cast<long long>(g_inputs), static_cast<long long>(g_jobs),
               static_cast<long long>(g_results), static_cast<long long>(g_heartbeats));
}

}  // namespace qtune::fuzz
