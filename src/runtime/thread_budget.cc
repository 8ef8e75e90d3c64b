#include "runtime/thread_budget.h"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace qtune::runtime {
namespace {

// Busy time (everything but idle and iowait) of the CPUs in `allowed`, in seconds, from
// /proc/stat's per-CPU lines; -1 when the file cannot be read.
double AllowedCpusBusySeconds(const cpu_set_t& allowed) {
  std::FILE* file = std::fopen("/proc/stat", "r");
  if (file == nullptr) return -1.0;
  static const double ticks_per_second = static_cast<double>(sysconf(_SC_CLK_TCK));
  double busy_ticks = 0.0;
  bool any = false;
  char line[512];
  while (std::fgets(line, sizeof(line), file) != nullptr) {
    int cpu = -1;
    unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0,
                       steal = 0;
    // "cpuN user nice system idle iowait irq softirq steal ..." (the aggregate "cpu " line
    // has no number and is skipped by the %d).
    if (std::sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &user, &nice,
                    &system, &idle, &iowait, &irq, &softirq, &steal) < 5) {
      continue;
    }
    if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed)) continue;
    busy_ticks += static_cast<double>(user + nice + system + irq + softirq + steal);
    any = true;
  }
  std::fclose(file);
  return any ? busy_ticks / ticks_per_second : -1.0;
}

double ProcessCpuSeconds() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0.0;
  auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

class LoadSampler {
 public:
  CpuLoad Sample() {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto now = std::chrono::steady_clock::now();
    if (have_sample_ && now - sampled_at_ < std::chrono::milliseconds(kLoadWindowMs)) {
      return load_;
    }
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
      for (int i = 0; i < 1024 && i < CPU_SETSIZE; ++i) CPU_SET(i, &allowed);
    }
    load_.allowed_cpus = std::max(1, CPU_COUNT(&allowed));
    const double busy = AllowedCpusBusySeconds(allowed);
    const double self = ProcessCpuSeconds();
    if (busy >= 0.0 && have_sample_) {
      const double wall = std::chrono::duration<double>(now - sampled_at_).count();
      const double others = (busy - busy_) - (self - self_);
      load_.other_busy_cores = std::clamp(others / wall, 0.0, double(load_.allowed_cpus));
    }
    if (busy >= 0.0) {
      busy_ = busy;
      self_ = self;
      sampled_at_ = now;
      have_sample_ = true;
    }
    return load_;
  }

 private:
  std::mutex mutex_;
  bool have_sample_ = false;
  std::chrono::steady_clock::time_point sampled_at_;
  double busy_ = 0.0, self_ = 0.0;
  CpuLoad load_;
};

}  // namespace

const char* ThreadPolicyName(ThreadPolicy policy) {
  return policy == ThreadPolicy::kFixed ? "fixed" : "adaptive";
}

StatusOr<ThreadPolicy> ParseThreadPolicy(std::string_view name) {
  if (name == "fixed") return ThreadPolicy::kFixed;
  if (name == "adaptive") return ThreadPolicy::kAdaptive;
  return InvalidArgumentError("unknown thread policy '" + std::string(name) +
                              "'; use 'adaptive' or 'fixed'");
}

StatusOr<ThreadPolicy> ThreadPolicyFromEnvironment() {
  const char* value = std::getenv("QTUNE_THREAD_POLICY");
  if (value == nullptr || *value == '\0') return ThreadPolicy::kAdaptive;
  StatusOr<ThreadPolicy> policy = ParseThreadPolicy(value);
  if (!policy.ok()) {
    return InvalidArgumentError("QTUNE_THREAD_POLICY: " + policy.status().message());
  }
  return policy;
}

CpuLoad CurrentCpuLoad() {
  static LoadSampler sampler;
  return sampler.Sample();
}

int ThreadsForLoad(int requested, const CpuLoad& load) {
  if (requested <= 1) return requested;
  // A core counts as taken from 0.6 of it busy, so a brief burst does not halve the team.
  const int taken = static_cast<int>(std::floor(load.other_busy_cores + 0.4));
  return std::clamp(load.allowed_cpus - taken, 1, requested);
}

int ThreadsForRun(int requested, ThreadPolicy policy) {
  if (policy == ThreadPolicy::kFixed || requested <= 1) return requested;
  return ThreadsForLoad(requested, CurrentCpuLoad());
}

}  // namespace qtune::runtime
