// qtune worker --redis URL [--queue NAME] [--threads N] [--name ID]: measures candidate
// models for tuners on other machines, taking jobs from a Redis stream
// (measure/redis_worker.h, docs/workers.md). Runs until SIGINT or SIGTERM.
#include <signal.h>

#include <atomic>
#include <memory>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "measure/measure_executable.h"
#include "measure/redis_worker.h"

namespace qtune::cli {
namespace {

std::atomic<bool> g_stop{false};

extern "C" void OnStopSignal(int) { g_stop.store(true); }

int ServeWorker(measure::RedisWorkerOptions& o) {
  o.worker_executable = measure::ThisExecutable();
  o.stop = &g_stop;
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);
  Status status = measure::RunRedisWorker(o);
  if (status.code() == StatusCode::kInvalidArgument) return ReportUsageError(status);
  return ReportAndExitCode(status);
}

}  // namespace

void AddWorkerCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<measure::RedisWorkerOptions>();
  CLI::App* cmd = app.add_subcommand(
      "worker", "Measure models for `qtune autotune --benchmark redis` (jobs from Redis Streams)");
  cmd->add_option("--redis", o->url, "Redis URL: redis://[:PASSWORD@]HOST[:PORT][/DB]")->required();
  cmd->add_option("--queue", o->queue, "Queue name (the tuner's --queue)")->capture_default_str();
  cmd->add_option("--threads", o->threads, "Threads the engine measures with")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--name", o->name, "Worker name in heartbeats and results (default HOST-PID)");
  cmd->add_option("--lease", o->lease_s,
                  "Seconds a job may stay pending on a silent worker before another takes it")
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
  cmd->add_option("--heartbeat", o->heartbeat_s, "Seconds between heartbeats")
      ->check(CLI::Range(0.05, 3600.0))
      ->capture_default_str();
  cmd->add_option("--cache-dir", o->cache_dir,
                  "Where models are kept by SHA-256; must be private to this user (default: "
                  "$XDG_CACHE_HOME/qtune/worker-NAME or ~/.cache/qtune/worker-NAME)");
  cmd->add_option("--benchmark-command", o->benchmark_command,
                  "Measure with this command ({model}) instead of qtune's engine");
  cmd->add_option("--latency-regex", o->latency_regex,
                  "With --benchmark-command: regex whose first group is the latency in ms");
  cmd->add_option("--dead-letter-after", o->requeue.unserved_grace_s,
                  "Seconds a job for a machine no live worker serves is put back before it "
                  "goes to the dead-letter stream")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  cmd->add_option("--max-requeues", o->requeue.max_requeues,
                  "Times a job for another machine is put back before it goes to the "
                  "dead-letter stream")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40))
      ->capture_default_str();
  cmd->add_option("--max-jobs", o->max_jobs, "Stop after answering this many jobs (0: never)")
      ->check(CLI::Range(0, 1 << 30));
  cmd->callback([o, exit_code] { *exit_code = ServeWorker(*o); });
}

}  // namespace qtune::cli
