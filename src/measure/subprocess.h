// Child processes for the measuring back ends: started in their own process group with
// pipes to stdin/stdout/stderr, read with a deadline (poll), and on timeout killed as a
// whole group with SIGKILL, so a tool's own children (a shell's `sleep`, trtexec under
// ssh) die with it. Every child is reaped: the owning object kills and waits for it on
// destruction, so neither zombies nor stray processes outlive it. No threads.
//
// stdin is one end of a Unix socket pair written with MSG_NOSIGNAL, so a child that dies
// before reading its input gives EPIPE here, never SIGPIPE in the caller's process.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace qtune::measure {

using Deadline = std::chrono::steady_clock::time_point;
// now + timeout_s; timeout_s <= 0 means no deadline.
Deadline DeadlineAfter(double timeout_s);

// Owns a file descriptor (-1: none) and closes it. Move-only.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release();
  void Reset();

 private:
  int fd_ = -1;
};

// How a child ended: exited with a code, or killed by a signal.
struct ExitStatus {
  int exit_code = -1;  // >= 0 when it exited
  int signal = 0;      // > 0 when a signal killed it
  bool exited() const { return exit_code >= 0; }
  std::string ToString() const;  // "exit code 3", "signal 9 (Killed)"
};

struct SpawnOptions {
  bool merge_stderr = false;  // stderr into the stdout pipe: one stream in the order written
  // The most of stdout (and of stderr) kept; older output is dropped (the tail is kept).
  size_t max_output_bytes = size_t{4} << 20;
};

// One running child. The child's pid is also its process group id.
class Subprocess {
 public:
  enum class PumpResult {
    kDone,      // `done()` returned true
    kEnded,     // the child exited, or closed stdout and stderr
    kDeadline,  // the deadline passed first
  };

  // argv[0] is looked up in PATH. Errors: InvalidArgument (empty argv), NotFound or
  // Internal when the program cannot be started (names it and says why).
  static StatusOr<std::unique_ptr<Subprocess>> Start(const std::vector<std::string>& argv,
                                                     const SpawnOptions& options);
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  // Kills the group and reaps the child unless Reap() already ran.
  ~Subprocess();

  int pid() const { return pid_; }

  // Appends to what is written to the child's stdin while pumping.
  void QueueStdin(std::string_view data) { stdin_pending_.append(data); }
  // Closes stdin (EOF for the child) once the queued data is written.
  void CloseStdinWhenWritten() { close_stdin_when_written_ = true; }

  // Writes queued stdin and reads stdout/stderr into the buffers below until `done()`
  // (checked after every read; may be empty), the child ends, or the deadline passes.
  PumpResult Pump(Deadline deadline, const std::function<bool()>& done);

  // Output read so far (only the tail when over max_output_bytes). The caller may consume
  // from the front of stdout_buffer().
  std::string& stdout_buffer() { return stdout_; }
  std::string& stderr_buffer() { return stderr_; }

  // Waits until the child exits or the deadline passes; true when it exited (not reaped).
  bool WaitForExit(Deadline deadline);
  // Kills the whole process group with SIGKILL (leftovers of a child that exited too)
  // and reaps the child. Idempotent; returns how the child ended.
  ExitStatus Reap();

 private:
  explicit Subprocess(const SpawnOptions& options) : options_(options) {}
  bool LeaderExited();
  void ReadAvailable(UniqueFd& fd, std::string& buffer);
  void WritePending();

  SpawnOptions options_;
  int pid_ = -1;
  bool reaped_ = false;
  ExitStatus exit_status_;
  UniqueFd stdin_;  // parent's end of the socket pair
  UniqueFd stdout_fd_;
  UniqueFd stderr_fd_;
  std::string stdin_pending_;
  bool close_stdin_when_written_ = false;
  std::string stdout_;
  std::string stderr_;
};

// {"/bin/sh", "-c", command}.
std::vector<std::string> ShellArgv(const std::string& command);
// `s` as one word for /bin/sh: 'it'\''s' — safe for spaces, quotes, $ and backslashes.
std::string ShellQuote(std::string_view s);

struct RunOptions {
  std::string stdin_text;  // written to stdin, which is then closed
  double timeout_s = 60;   // <= 0: none
  bool merge_stderr = false;
  size_t max_output_bytes = size_t{4} << 20;
};

struct RunResult {
  bool timed_out = false;  // the deadline passed; the group was killed
  ExitStatus status;
  std::string output;       // stdout (stdout and stderr interleaved with merge_stderr)
  std::string stderr_text;  // empty with merge_stderr
  double wall_s = 0;
};

// Runs a child to completion (or to the deadline, then kills its group). Errors only
// when it cannot be started.
StatusOr<RunResult> RunSubprocess(const std::vector<std::string>& argv, const RunOptions& options);

// A long-lived child that answers one line per request line (the measure worker).
// Started on the first Exchange and again after it was stopped; a timeout or an
// unexpected end kills and reaps it, so the next Exchange starts a fresh one.
class PersistentChild {
 public:
  explicit PersistentChild(std::vector<std::string> argv) : argv_(std::move(argv)) {}
  PersistentChild(const PersistentChild&) = delete;
  PersistentChild& operator=(const PersistentChild&) = delete;
  ~PersistentChild() = default;  // the Subprocess kills and reaps

  // Sends `line` (a '\n' is added) and returns the reply line without its '\n'.
  // Errors: DeadlineExceeded (no reply in time; the child was killed), Unavailable (the
  // child ended first; last_exit() says how, stderr_tail() what it printed), or the
  // Start() error when it could not be started.
  StatusOr<std::string> Exchange(std::string_view line, double timeout_s);
  // Kills and reaps the child if one runs.
  void Stop();
  // The running child's pid (its process group), or 0.
  int pid() const { return child_ ? child_->pid() : 0; }
  const ExitStatus& last_exit() const { return last_exit_; }
  // The last few KiB the child wrote to stderr during the last Exchange.
  const std::string& stderr_tail() const { return stderr_tail_; }

 private:
  std::vector<std::string> argv_;
  std::unique_ptr<Subprocess> child_;
  ExitStatus last_exit_;
  std::string stderr_tail_;
};

}  // namespace qtune::measure
