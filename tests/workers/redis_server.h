// Test fixtures for the distributed measuring tests: a real redis-server on a free
// loopback port (started and stopped by the test), and `qtune worker` processes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "measure/subprocess.h"

namespace qtune::testing {

// True when redis-server is on PATH. Tests that need it use QTUNE_SKIP_OR_FAIL_IN_CI().
bool RedisServerAvailable();

// A redis-server without persistence, bound to 127.0.0.1 (or `bind`, e.g. "::1"), logging
// to <dir>/redis.log. Stopped (SIGKILL to its process group) on destruction.
class RedisServer {
 public:
  static StatusOr<std::unique_ptr<RedisServer>> Start(const std::string& dir,
                                                      const std::string& password = "",
                                                      const std::string& bind = "127.0.0.1");
  // Kills the server (all data is lost, as in a crash) and starts it again on the same port.
  Status Restart();
  void Stop();
  int port() const { return port_; }
  // redis://[:PASSWORD@]127.0.0.1:PORT/0 (an IPv6 bind address in brackets)
  std::string Url() const;

 private:
  RedisServer(std::string dir, std::string password, std::string bind, int port)
      : dir_(std::move(dir)), password_(std::move(password)), bind_(std::move(bind)), port_(port) {}
  Status Launch();

  std::string dir_, password_, bind_;
  int port_;
  std::unique_ptr<measure::Subprocess> process_;
};

// A free TCP port on 127.0.0.1 (bound, then released).
int FreeLoopbackPort();
// True when this machine has the IPv6 loopback (a socket binds to [::1]).
bool HasIpv6Loopback();

// `qtune worker ARGS` with stdout and stderr going to `log_path`; killed with its process
// group on destruction. Children it starts in their own groups (measuring children) die
// when their stdin closes or are reaped by the worker.
class WorkerProcess {
 public:
  static StatusOr<std::unique_ptr<WorkerProcess>> Start(const std::string& args,
                                                        const std::string& log_path);
  // SIGKILL to the worker alone (a crash mid-job).
  void Kill();
  int pid() const { return process_ ? process_->pid() : 0; }
  // What it logged so far.
  std::string Log() const;

 private:
  std::string log_path_;
  std::unique_ptr<measure::Subprocess> process_;
};

// Pids of the live processes whose parent is `pid`.
std::vector<int> ChildrenOf(int pid);

}  // namespace qtune::testing
