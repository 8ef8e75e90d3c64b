#include "workers/redis_server.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/file_io.h"
#include "measure/redis_client.h"

namespace qtune::testing {

bool RedisServerAvailable() { return std::system("command -v redis-server >/dev/null 2>&1") == 0; }

int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

bool HasIpv6Loopback() {
  int fd = socket(AF_INET6, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in6 addr{};
  addr.sin6_family = AF_INET6;
  addr.sin6_addr = in6addr_loopback;
  addr.sin6_port = 0;
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

StatusOr<std::unique_ptr<RedisServer>> RedisServer::Start(const std::string& dir,
                                                          const std::string& password,
                                                          const std::string& bind) {
  std::unique_ptr<RedisServer> server(new RedisServer(dir, password, bind, FreeLoopbackPort()));
  RETURN_IF_ERROR(server->Launch());
  return server;
}

Status RedisServer::Launch() {
  std::vector<std::string> argv = {
      "redis-server", "--port",    std::to_string(port_), "--bind", bind_,
      "--save",       "",          "--appendonly",        "no",     "--dir",
      dir_,           "--logfile", dir_ + "/redis.log"};
  if (!password_.empty()) {
    argv.push_back("--requirepass");
    argv.push_back(password_);
  }
  ASSIGN_OR_RETURN(process_, measure::Subprocess::Start(argv, measure::SpawnOptions{}));
  auto url = measure::ParseRedisUrl(Url());
  if (!url.ok()) return url.status();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    measure::RedisClient client(*url, {.connect_timeout_s = 1,
                                       .command_timeout_s = 1,
                                       .backoff_initial_ms = 0,
                                       .backoff_max_ms = 0});
    if (client.Command({"PING"}).ok()) return Status::Ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto log = ReadFile(dir_ + "/redis.log");
  return UnavailableError("redis-server did not start on port " + std::to_string(port_) + ": " +
                          (log.ok() ? *log : std::string("no log")));
}

Status RedisServer::Restart() {
  Stop();
  return Launch();
}

void RedisServer::Stop() {
  if (process_) process_->Reap();
  process_.reset();
}

std::string RedisServer::Url() const {
  const std::string host = bind_.find(':') != std::string::npos ? "[" + bind_ + "]" : bind_;
  return "redis://" + (password_.empty() ? std::string() : ":" + password_ + "@") + host + ":" +
         std::to_string(port_) + "/0";
}

StatusOr<std::unique_ptr<WorkerProcess>> WorkerProcess::Start(const std::string& args,
                                                              const std::string& log_path) {
  auto worker = std::make_unique<WorkerProcess>();
  worker->log_path_ = log_path;
  const std::string command = "exec " + std::string(QTUNE_BINARY) + " worker " + args + " >" +
                              measure::ShellQuote(log_path) + " 2>&1";
  ASSIGN_OR_RETURN(worker->process_, measure::Subprocess::Start(measure::ShellArgv(command),
                                                                measure::SpawnOptions{}));
  return worker;
}

void WorkerProcess::Kill() {
  if (process_) ::kill(process_->pid(), SIGKILL);
}

std::string WorkerProcess::Log() const {
  auto text = ReadFile(log_path_);
  return text.ok() ? *text : std::string();
}

std::vector<int> ChildrenOf(int pid) {
  std::vector<int> children;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return children;
  while (dirent* e = readdir(proc)) {
    int child = std::atoi(e->d_name);
    if (child <= 0) continue;
    std::ifstream stat("/proc/" + std::string(e->d_name) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // pid (comm) state ppid ...: comm may hold spaces, so parse after the last ')'.
    size_t close_paren = line.rfind(')');
    if (close_paren == std::string::npos) continue;
    std::istringstream rest(line.substr(close_paren + 1));
    std::string state;
    int ppid = 0;
    rest >> state >> ppid;
    if (ppid == pid && state != "Z") children.push_back(child);
  }
  closedir(proc);
  return children;
}

}  // namespace qtune::testing
