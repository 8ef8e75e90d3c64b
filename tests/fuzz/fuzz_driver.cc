// Standalone fuzz driver: the main() of every qtune_fuzz_<target> executable.
//
//   qtune_fuzz_model [--seconds N] [--runs N] [--seed S] [--timeout T] [--max-len B]
//                    [--crash-dir DIR] [--memory-mb M] [--verbose] CORPUS_DIR_OR_FILE...
//
// Replays every corpus file through FuzzOne (fuzz_target.h), then feeds it mutated corpus
// inputs (mutator.h) until --seconds pass or --runs inputs ran. Before each input runs,
// the path it would be saved under is prepared; a fatal signal, a sanitizer report, an
// exception leaving FuzzOne or a run longer than --timeout seconds writes the input
// there, prints the path and exits non-zero. The mutation sequence depends only on
// --seed and the corpus, so `--seed S --runs K` reproduces a run of K inputs.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/logging.h"
#include "fuzz/fuzz_target.h"
#include "fuzz/mutator.h"

extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

// Under ASan an allocation above 4 GiB, or a process above 4 GiB resident, is reported
// (and the input saved) instead of the kernel's OOM killer ending the process unseen.
// A nothrow new that fails returns null, as qtune expects (AllocateArena turns it into
// ResourceExhausted); a throwing one is still reported. Leak checks are off: a fuzz run
// is one long process. Without ASan, --memory-mb sets
// RLIMIT_AS, so such an allocation throws std::bad_alloc out of FuzzOne.
extern "C" const char* __asan_default_options() {
  return "malloc_limit_mb=4096:hard_rss_limit_mb=4096:allocator_may_return_null=1:detect_leaks=0";
}

// GCC links UBSan as its own runtime (libubsan), whose reports do not run ASan's death
// callback: abort_on_error makes a UBSan report end in SIGABRT, which OnFatalSignal
// catches and saves the input for, as for an ASan report.
extern "C" const char* __ubsan_default_options() { return "abort_on_error=1:print_stacktrace=1"; }

namespace qtune::fuzz {
namespace {

// The input now running and where it goes if it kills the process. Read by the signal
// handlers, so plain data only and written before the input runs.
const std::string* g_current = nullptr;
char g_crash_path[4096];
volatile sig_atomic_t g_saving = 0;

void WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n <= 0) return;
    data += n;
    size -= static_cast<size_t>(n);
  }
}

void WriteMessage(const char* a, const char* b = "", const char* c = "") {
  WriteAll(2, a, strlen(a));
  WriteAll(2, b, strlen(b));
  WriteAll(2, c, strlen(c));
}

// Async-signal-safe: open/write/close only.
void SaveCurrentInput(const char* why) {
  if (g_current == nullptr || g_saving) return;
  g_saving = 1;
  int fd = open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    WriteAll(fd, g_current->data(), g_current->size());
    close(fd);
    WriteMessage("\nqtune_fuzz: ", why, ": input saved to ");
    WriteMessage(g_crash_path, "\n");
  } else {
    WriteMessage("\nqtune_fuzz: ", why, ": could not write ");
    WriteMessage(g_crash_path, "\n");
  }
}

void OnDeath() { SaveCurrentInput("sanitizer report"); }

void OnFatalSignal(int sig) {
  SaveCurrentInput(strsignal(sig));
  signal(sig, SIG_DFL);
  raise(sig);
}

void OnAlarm(int) {
  SaveCurrentInput("timeout (hang)");
  _exit(3);
}

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

struct Flags {
  double seconds = 0;
  int64_t runs = -1;  // -1: until --seconds
  uint64_t seed = 1;
  unsigned timeout = 60;
  size_t max_len = size_t{1} << 20;
  std::string crash_dir = ".";
  int64_t memory_mb = 8192;  // RLIMIT_AS without ASan (virtual: oneDNN and OpenMP reserve)
  bool verbose = false;      // keep qtune's own warnings (off: they flood the log)
  std::vector<std::string> corpus;
};

[[noreturn]] void Usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--seconds N] [--runs N] [--seed S] [--timeout T] [--max-len B]\n"
               "          [--crash-dir DIR] [--memory-mb M] [--verbose] CORPUS_DIR_OR_FILE...\n",
               argv0);
  std::exit(2);
}

Flags ParseFlags(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage(argv[0]);
      return argv[++i];
    };
    if (arg == "--seconds")
      flags.seconds = std::stod(value());
    else if (arg == "--runs")
      flags.runs = std::stoll(value());
    else if (arg == "--seed")
      flags.seed = std::stoull(value());
    else if (arg == "--timeout")
      flags.timeout = static_cast<unsigned>(std::stoul(value()));
    else if (arg == "--max-len")
      flags.max_len = std::stoull(value());
    else if (arg == "--crash-dir")
      flags.crash_dir = value();
    else if (arg == "--verbose")
      flags.verbose = true;
    else if (arg.starts_with("--"))
      Usage(argv[0]);
    else
      flags.corpus.push_back(arg);
  }
  if (flags.corpus.empty()) Usage(argv[0]);
  return flags;
}

// Every regular file under each argument (a file or a folder), sorted by path.
std::vector<std::pair<std::string, std::string>> LoadCorpus(const std::vector<std::string>& roots) {
  std::vector<std::string> paths;
  for (const std::string& root : roots) {
    if (std::filesystem::is_regular_file(root)) {
      paths.push_back(root);
      continue;
    }
    if (!std::filesystem::is_directory(root)) {
      std::fprintf(stderr, "qtune_fuzz: %s is neither a file nor a folder\n", root.c_str());
      std::exit(2);
    }
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
      if (entry.is_regular_file()) paths.push_back(entry.path().string());
    }
  }
  std::sort(paths.begin(), paths.end());
  std::vector<std::pair<std::string, std::string>> corpus;
  for (const std::string& path : paths) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    corpus.emplace_back(path, bytes.str());
  }
  return corpus;
}

// Runs one input under the crash and hang guards. Returns false (after saving the input)
// if an exception left FuzzOne.
bool RunOne(const std::string& input, const Flags& flags, const char* kind) {
  std::snprintf(g_crash_path, sizeof(g_crash_path), "%s/%s-%s-%016llx", flags.crash_dir.c_str(),
                kind, kTargetName, static_cast<unsigned long long>(Fnv1a(input)));
  g_current = &input;
  alarm(flags.timeout);
  bool ok = true;
  try {
    FuzzOne(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  } catch (const std::exception& e) {
    SaveCurrentInput("exception escaped FuzzOne");
    std::fprintf(stderr, "qtune_fuzz: exception: %s\n", e.what());
    ok = false;
  } catch (...) {
    SaveCurrentInput("unknown exception escaped FuzzOne");
    ok = false;
  }
  alarm(0);
  g_current = nullptr;
  return ok;
}

int Main(int argc, char** argv) {
  Flags flags = ParseFlags(argc, argv);
  std::filesystem::create_directories(flags.crash_dir);
  if (!flags.verbose) SetLogLevel(LogLevel::kOff);
#if !defined(__SANITIZE_ADDRESS__)
  rlimit limit{static_cast<rlim_t>(flags.memory_mb) << 20, static_cast<rlim_t>(flags.memory_mb)
                                                               << 20};
  if (setrlimit(RLIMIT_AS, &limit) != 0) std::perror("qtune_fuzz: setrlimit");
#endif
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(sig, OnFatalSignal);
  signal(SIGALRM, OnAlarm);
  if (__sanitizer_set_death_callback != nullptr) __sanitizer_set_death_callback(OnDeath);

  auto corpus_files = LoadCorpus(flags.corpus);
  std::vector<std::string> corpus;
  for (const auto& [path, bytes] : corpus_files) corpus.push_back(bytes);
  if (corpus.empty()) {
    std::fprintf(stderr, "qtune_fuzz: the corpus is empty\n");
    return 2;
  }
  auto start = std::chrono::steady_clock::now();
  for (const auto& [path, bytes] : corpus_files) {
    std::fprintf(stderr, "qtune_fuzz %s: replay %s (%zu bytes)\n", kTargetName, path.c_str(),
                 bytes.size());
    if (!RunOne(bytes, flags, "crash-replay")) return 1;
  }
  double replay_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "qtune_fuzz %s: replayed %zu inputs in %.1f s\n", kTargetName, corpus.size(),
               replay_s);

  Mutator mutator(flags.seed, flags.max_len);
  start = std::chrono::steady_clock::now();
  int64_t runs = 0;
  double elapsed = 0, next_report = 30;
  while (flags.runs >= 0 ? runs < flags.runs : elapsed < flags.seconds) {
    const std::string& base = corpus[mutator.rng()() % corpus.size()];
    std::string input = mutator.Mutate(base, corpus);
    if (!RunOne(input, flags, "crash")) return 1;
    ++runs;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed >= next_report) {
      std::fprintf(stderr, "qtune_fuzz %s: %lld mutated inputs in %.0f s\n", kTargetName,
                   static_cast<long long>(runs), elapsed);
      next_report += 30;
    }
  }
  std::fprintf(stderr, "qtune_fuzz %s: %lld mutated inputs in %.1f s (seed %llu), no crash\n",
               kTargetName, static_cast<long long>(runs), elapsed,
               static_cast<unsigned long long>(flags.seed));
  PrintTargetStats();
  return 0;
}

}  // namespace
}  // namespace qtune::fuzz

int main(int argc, char** argv) { return qtune::fuzz::Main(argc, argv); }
