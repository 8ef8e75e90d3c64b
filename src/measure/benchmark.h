// The autotuner's measuring instrument: latency of a candidate model file, measured
// interleaved with a reference model (the incumbent) so drift and noise on a shared
// machine cancel out. A failure is a result (Measurement::failure), never a crash of the
// tuner.
//
// Implementations:
//  * InProcessBenchmark (benchmark_inprocess.h): qtune's own engine, in a child worker
//    process (`qtune measure-worker`) that is killed and restarted on timeout or crash.
//  * CommandBenchmark (benchmark_command.h): any external tool, e.g. `trtexec
//    --onnx={model}` or `qtune bench {model} --json`; latency parsed with a regex.
//  * RedisBenchmark (benchmark_redis.h): `qtune worker`s on other machines, reached through
//    Redis Streams; the one back end that measures several requests at once (MeasureAll).
// The autotuner and `qtune tune` measure through this interface alone.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace qtune::measure {

enum class FailureKind {
  kNone,
  kTimeout,     // no answer within the timeout (the worker/command was killed)
  kCrash,       // killed by a signal
  kExit,        // exited non-zero (Measurement::exit_code)
  kUnparsable,  // ran, but no latency could be read from its output
  kBuild,       // the engine rejected the model (load/compile error)
  kConnection,  // a remote measurer could not be reached
};
// "timeout", "crash", "exit:N" (with the exit code), "unparsable", "build", "connection";
// "none" for kNone.
std::string FailureKindName(FailureKind kind, int exit_code = 0);
// Worth retrying within the same run (timeout, crash, connection). The others are
// recorded, and retried only on the next warm restart.
bool IsTransient(FailureKind kind);

// A model named by a float model file and the quantization plan to export onto it
// (planned_model.h), instead of an exported file: the autotuner's candidates. A back end
// whose measurers can build it themselves (Redis workers that announce it) ships the plan,
// kilobytes, and the float model once; the others call `prepare` for the files.
struct PlannedModel {
  std::string base_path;  // the float model, the same file for every candidate of a run
  std::string plan_json;  // quant::PlanToJsonText of the plan
};

struct MeasureRequest {
  std::string candidate_path;
  std::string reference_path;  // empty: measure the candidate alone
  int rounds = 3;              // alternations candidate/reference; one median per round
  double timeout_s = 0;        // > 0: overrides the back end's timeout for this request
  // The candidate runs with fp32 Conv/MatMul/Gemm computed in bfloat16 (SessionOptions::
  // bf16): the `bf16` tuning candidate. Back ends that cannot do it fail with kBuild.
  bool candidate_bf16 = false;
  // When set, called (once) by the back end just before the request's files are needed,
  // instead of reading the two paths above: it writes the candidate (and reference) and
  // returns their paths. So a back end with several measurements in flight prepares the
  // next candidate while the others are measured. An error answers the request
  // kUnparsable with its message (the caller, who made the error, knows what it was).
  std::function<std::pair<std::string, std::string>()> prepare;
  // When set: the candidate (and, when reference_plan is set, the reference; otherwise
  // none) as plans. `prepare` must still give the same models as files, for back ends
  // that do not build plans.
  std::optional<PlannedModel> candidate_plan, reference_plan;
};

struct Measurement {
  FailureKind failure = FailureKind::kNone;
  int exit_code = 0;
  std::string detail;                // failure detail (stderr tail, engine error...)
  std::vector<double> candidate_ms;  // one median per round
  std::vector<double> reference_ms;  // one median per round (empty without reference)
  bool ok() const { return failure == FailureKind::kNone; }
};

class Benchmark {
 public:
  virtual ~Benchmark() = default;
  // Never throws; every failure comes back in the Measurement.
  virtual Measurement Measure(const MeasureRequest& request) = 0;

  // Measures every request; `on_done(i, m)` is called exactly once per request i, from the
  // calling thread, as each one completes (in any order), before MeasureAll returns.
  // on_done may append requests to `requests` (a follow-up that depends on what was just
  // measured): they are measured in the same call, after those already waiting, so they
  // fill the measurers the others leave idle. Back ends that can measure several at once do
  // (Redis: one job per request, taken by as many workers as there are); the default
  // measures one at a time, in order, because two measurements on one machine would
  // disturb each other (in-process, command).
  using OnMeasured = std::function<void(size_t index, Measurement measurement)>;
  virtual void MeasureAll(std::deque<MeasureRequest>& requests, const OnMeasured& on_done);
  // MeasureAll of a fixed list.
  void MeasureMany(std::span<const MeasureRequest> requests, const OnMeasured& on_done);

  // At most this many of MeasureAll's requests in flight at once (Redis: the rest wait
  // in this process, their files not yet written); no limit unless set. Back ends that
  // measure one at a time ignore it.
  void set_max_in_flight(int n) { max_in_flight_ = n < 1 ? 1 : n; }
  int max_in_flight() const { return max_in_flight_; }
  // Seconds this process spent getting written files to the measurer (Redis: reading,
  // hashing and uploading them); 0 for back ends that read them in place.
  virtual double transfer_seconds() const { return 0; }
  // Whether this back end may measure a request as its plans (MeasureRequest::
  // candidate_plan) rather than its files; when false, callers need not make plans or the
  // float model they apply to.
  virtual bool may_build_plans() const { return false; }

  // One line for the report: "inprocess (threads 1, 20 iters)" or the command.
  virtual std::string Describe() const = 0;

  // A short live status for a progress line ("workers 2, in flight 2, w1 0.45/s ..."); ""
  // when the back end has nothing to say. `listener` (may be empty) is called with it,
  // from the measuring thread, whenever it changes.
  virtual std::string ProgressNote() const { return {}; }
  void SetStatusListener(std::function<void(const std::string&)> listener);

 protected:
  // Calls the status listener, if any, with ProgressNote().
  void NotifyStatus() const;

 private:
  std::function<void(const std::string&)> status_listener_;
  int max_in_flight_ = std::numeric_limits<int>::max();
};

// The request with its `prepare` run (paths filled, prepare cleared); a failed prepare
// gives an empty candidate path, which every back end answers kUnparsable.
MeasureRequest Prepared(const MeasureRequest& request);

// The middle value; the mean of the two middle values for an even count; 0 when empty.
double Median(std::vector<double> values);

}  // namespace qtune::measure
