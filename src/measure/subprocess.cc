#include "measure/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

namespace qtune::measure {
namespace {

using Clock = std::chrono::steady_clock;

// How long one poll() sleeps at most, so a child that exited while something else holds
// its pipes open is noticed.
constexpr int kMaxPollMs = 50;
constexpr size_t kStderrTailBytes = 4096;

std::string ErrnoText(int err) { return std::strerror(err); }

void KeepTail(std::string& buffer, size_t max_bytes) {
  if (buffer.size() > max_bytes) buffer.erase(0, buffer.size() - max_bytes);
}

int MillisUntil(Deadline deadline) {
  if (deadline == Deadline::max()) return kMaxPollMs;
  auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, kMaxPollMs));
}

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

// posix_spawn attributes and file actions, destroyed on every path.
struct SpawnSetup {
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;
  SpawnSetup() {
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_init(&actions);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

}  // namespace

Deadline DeadlineAfter(double timeout_s) {
  if (!(timeout_s > 0) || timeout_s > 1e9) return Deadline::max();
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
}

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    Reset();
    fd_ = other.Release();
  }
  return *this;
}

int UniqueFd::Release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

void UniqueFd::Reset() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

std::string ExitStatus::ToString() const {
  if (exited()) return "exit code " + std::to_string(exit_code);
  if (signal > 0) {
    const char* name = strsignal(signal);
    return "signal " + std::to_string(signal) + " (" + (name ? name : "?") + ")";
  }
  return "still running";
}

StatusOr<std::unique_ptr<Subprocess>> Subprocess::Start(const std::vector<std::string>& argv,
                                                        const SpawnOptions& options) {
  if (argv.empty()) return InvalidArgumentError("cannot start a process without a program");
  int stdin_pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, stdin_pair) != 0) {
    return InternalError("socketpair for the stdin of '" + argv[0] + "': " + ErrnoText(errno));
  }
  UniqueFd stdin_parent(stdin_pair[0]), stdin_child(stdin_pair[1]);
  int out_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    return InternalError("pipe for the stdout of '" + argv[0] + "': " + ErrnoText(errno));
  }
  UniqueFd stdout_parent(out_pipe[0]), stdout_child(out_pipe[1]);
  UniqueFd stderr_parent, stderr_child;
  if (!options.merge_stderr) {
    int err_pipe[2];
    if (pipe2(err_pipe, O_CLOEXEC) != 0) {
      return InternalError("pipe for the stderr of '" + argv[0] + "': " + ErrnoText(errno));
    }
    stderr_parent = UniqueFd(err_pipe[0]);
    stderr_child = UniqueFd(err_pipe[1]);
  }
  // The child's ends become 0, 1 and 2 (dup2 clears close-on-exec on the copies); the
  // originals are close-on-exec, so nothing else leaks into the child.
  SpawnSetup setup;
  posix_spawn_file_actions_adddup2(&setup.actions, stdin_child.get(), 0);
  posix_spawn_file_actions_adddup2(&setup.actions, stdout_child.get(), 1);
  posix_spawn_file_actions_adddup2(
      &setup.actions, options.merge_stderr ? stdout_child.get() : stderr_child.get(), 2);
  // Its own process group (pgid = pid), default signal handling and an empty mask.
  sigset_t empty, defaults;
  sigemptyset(&empty);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) sigaddset(&defaults, sig);
  posix_spawnattr_setflags(&setup.attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&setup.attr, 0);
  posix_spawnattr_setsigmask(&setup.attr, &empty);
  posix_spawnattr_setsigdefault(&setup.attr, &defaults);

  std::vector<char*> c_argv;
  for (const std::string& arg : argv) c_argv.push_back(const_cast<char*>(arg.c_str()));
  c_argv.push_back(nullptr);
  pid_t pid = -1;
  int err = posix_spawnp(&pid, c_argv[0], &setup.actions, &setup.attr, c_argv.data(), environ);
  if (err != 0) {
    std::string message = "cannot start '" + argv[0] + "': " + ErrnoText(err);
    if (err == ENOENT) return NotFoundError(message + "; check the path or PATH");
    return InternalError(message);
  }
  std::unique_ptr<Subprocess> child(new Subprocess(options));
  child->pid_ = pid;
  SetNonBlocking(stdin_parent.get());
  SetNonBlocking(stdout_parent.get());
  if (stderr_parent.valid()) SetNonBlocking(stderr_parent.get());
  child->stdin_ = std::move(stdin_parent);
  child->stdout_fd_ = std::move(stdout_parent);
  child->stderr_fd_ = std::move(stderr_parent);
  return child;  // the child's ends close here, so EOF arrives when the child's close
}

Subprocess::~Subprocess() { Reap(); }

bool Subprocess::LeaderExited() {
  if (reaped_) return true;
  siginfo_t info{};
  // WNOWAIT: the zombie keeps the pid (and the group id) reserved until Reap().
  if (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    return errno == ECHILD;
  }
  return info.si_pid == pid_;
}

void Subprocess::ReadAvailable(UniqueFd& fd, std::string& buffer) {
  char chunk[65536];
  while (fd.valid()) {
    ssize_t n = read(fd.get(), chunk, sizeof(chunk));
    if (n > 0) {
      buffer.append(chunk, static_cast<size_t>(n));
      KeepTail(buffer, options_.max_output_bytes);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    fd.Reset();  // EOF or a read error
  }
}

void Subprocess::WritePending() {
  while (stdin_.valid() && !stdin_pending_.empty()) {
    ssize_t n = send(stdin_.get(), stdin_pending_.data(), stdin_pending_.size(),
                     MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      stdin_pending_.erase(0, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    stdin_.Reset();  // EPIPE: the child closed its stdin or ended
    stdin_pending_.clear();
  }
  if (stdin_.valid() && stdin_pending_.empty() && close_stdin_when_written_) stdin_.Reset();
}

Subprocess::PumpResult Subprocess::Pump(Deadline deadline, const std::function<bool()>& done) {
  WritePending();
  while (true) {
    if (done && done()) return PumpResult::kDone;
    if (!stdout_fd_.valid() && !stderr_fd_.valid()) return PumpResult::kEnded;
    if (LeaderExited()) {
      // Whatever it wrote before exiting is in the pipes now; a descendant that still
      // holds them is not waited for.
      ReadAvailable(stdout_fd_, stdout_);
      ReadAvailable(stderr_fd_, stderr_);
      return done && done() ? PumpResult::kDone : PumpResult::kEnded;
    }
    if (Clock::now() >= deadline) return PumpResult::kDeadline;
    pollfd fds[3];
    nfds_t count = 0;
    for (UniqueFd* fd : {&stdout_fd_, &stderr_fd_}) {
      if (fd->valid()) fds[count++] = {fd->get(), POLLIN, 0};
    }
    if (stdin_.valid() && !stdin_pending_.empty()) fds[count++] = {stdin_.get(), POLLOUT, 0};
    int ready = poll(fds, count, MillisUntil(deadline));
    if (ready < 0 && errno != EINTR) return PumpResult::kEnded;
    if (ready <= 0) continue;
    ReadAvailable(stdout_fd_, stdout_);
    ReadAvailable(stderr_fd_, stderr_);
    WritePending();
  }
}

bool Subprocess::WaitForExit(Deadline deadline) {
  while (!LeaderExited()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

ExitStatus Subprocess::Reap() {
  if (reaped_) return exit_status_;
  // Safe before the wait: until the leader is reaped its pid, and so the group id,
  // cannot be reused by another process.
  kill(-pid_, SIGKILL);
  int status = 0;
  pid_t result;
  do {
    result = waitpid(pid_, &status, 0);
  } while (result < 0 && errno == EINTR);
  reaped_ = true;
  if (result == pid_) {
    if (WIFEXITED(status)) exit_status_.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) exit_status_.signal = WTERMSIG(status);
  }
  stdin_.Reset();
  stdout_fd_.Reset();
  stderr_fd_.Reset();
  return exit_status_;
}

std::vector<std::string> ShellArgv(const std::string& command) {
  return {"/bin/sh", "-c", command};
}

std::string ShellQuote(std::string_view s) {
  std::string quoted = "'";
  for (char c : s) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  quoted += "'";
  return quoted;
}

StatusOr<RunResult> RunSubprocess(const std::vector<std::string>& argv, const RunOptions& options) {
  auto start = Clock::now();
  Deadline deadline = DeadlineAfter(options.timeout_s);
  SpawnOptions spawn_options;
  spawn_options.merge_stderr = options.merge_stderr;
  spawn_options.max_output_bytes = options.max_output_bytes;
  ASSIGN_OR_RETURN(std::unique_ptr<Subprocess> child, Subprocess::Start(argv, spawn_options));
  child->QueueStdin(options.stdin_text);
  child->CloseStdinWhenWritten();
  RunResult result;
  Subprocess::PumpResult pumped = child->Pump(deadline, nullptr);
  result.timed_out = pumped == Subprocess::PumpResult::kDeadline || !child->WaitForExit(deadline);
  result.status = child->Reap();
  result.output = std::move(child->stdout_buffer());
  result.stderr_text = child->stderr_buffer();
  result.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

StatusOr<std::string> PersistentChild::Exchange(std::string_view line, double timeout_s) {
  Deadline deadline = DeadlineAfter(timeout_s);
  stderr_tail_.clear();
  if (!child_) {
    ASSIGN_OR_RETURN(child_, Subprocess::Start(argv_, SpawnOptions{}));
  }
  child_->stdout_buffer().clear();  // a late reply to an earlier request is stale
  child_->stderr_buffer().clear();  // keep what this request makes it print
  child_->QueueStdin(line);
  child_->QueueStdin("\n");
  std::string& out = child_->stdout_buffer();
  Subprocess::PumpResult pumped =
      child_->Pump(deadline, [&out] { return out.find('\n') != std::string::npos; });
  stderr_tail_ = child_->stderr_buffer();
  KeepTail(stderr_tail_, kStderrTailBytes);
  if (pumped == Subprocess::PumpResult::kDone) {
    size_t newline = out.find('\n');
    std::string reply = out.substr(0, newline);
    out.erase(0, newline + 1);
    return reply;
  }
  last_exit_ = child_->Reap();
  child_.reset();
  std::string program = argv_.empty() ? std::string("child") : argv_[0];
  if (pumped == Subprocess::PumpResult::kDeadline) {
    return DeadlineExceededError("'" + program + "' did not answer within " +
                                 std::to_string(timeout_s) + " s; it was killed");
  }
  return UnavailableError("'" + program + "' ended (" + last_exit_.ToString() +
                          ") before answering");
}

void PersistentChild::Stop() {
  if (!child_) return;
  last_exit_ = child_->Reap();
  child_.reset();
}

}  // namespace qtune::measure
