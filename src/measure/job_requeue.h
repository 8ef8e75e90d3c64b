// Jobs a worker cannot take (they name another machine fingerprint, redis_protocol.h) are
// put back on the jobs stream for the workers that can; this file bounds how long.
//
// A put-back entry carries two extra fields, kept by every worker that puts it back:
//   requeues            how many times it was put back
//   unserved_since_ms   Redis time (ms) when a worker first saw that no live worker
//                       announces the job's machine; absent while one does
// A job goes to the dead-letter stream (RedisKeys::dead()) and its tuner is answered with
// a `connection` failure naming the machine nobody serves, when
//   - no live worker has announced its machine for `unserved_grace_s` seconds, or
//   - it was put back more than `max_requeues` times (a backstop: a worker that
//     announces the machine but never takes the job).
// Without this a job for a machine nobody serves circled forever, and every worker that
// bounced it lost a second each time.
#pragma once

#include <cstdint>
#include <string>

#include "measure/redis_client.h"

namespace qtune::measure {

inline constexpr const char* kRequeuesField = "requeues";
inline constexpr const char* kUnservedSinceField = "unserved_since_ms";

struct RequeuePolicy {
  double unserved_grace_s = 10;  // qtune worker --dead-letter-after
  int64_t max_requeues = 1000;   // qtune worker --max-requeues
};

struct RequeueState {
  int64_t requeues = 0;            // times put back so far
  int64_t unserved_since_ms = -1;  // -1: served (or not looked at yet)
};

// The state an entry carries; absent or malformed fields read as a first put-back.
RequeueState ReadRequeueState(const StreamFields& fields);

struct RequeueDecision {
  bool dead_letter = false;
  RequeueState next;   // what the put-back entry carries (when !dead_letter)
  std::string reason;  // why it is dead, naming the job and the machine (when dead_letter)
};

// `now_ms`: Redis time; `served`: a live worker announces `machine`.
RequeueDecision DecideRequeue(const RequeueState& state, int64_t now_ms, bool served,
                              const std::string& job_id, const std::string& machine,
                              const RequeuePolicy& policy);

// `fields` with the requeue fields replaced by `next`'s.
StreamFields RequeuedFields(const StreamFields& fields, const RequeueState& next);

}  // namespace qtune::measure
