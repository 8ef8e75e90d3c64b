// RedisClient: a small synchronous Redis client over hiredis, for the distributed
// measuring back end (benchmark_redis.h) and `qtune worker` (redis_worker.h).
//
// Every command has a socket timeout, so a dead server or a dropped connection is an
// error within seconds, never a hang. After an I/O error the connection is dropped; the
// next Command() reconnects (with capped exponential backoff between failed attempts,
// so a restarting Redis is not hammered). The URL's password is never put in a message:
// messages name the server by RedactedUrl().
//
// Not thread-safe: one client per thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

struct redisContext;

namespace qtune::measure {

// redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]   (unix sockets are not supported); an IPv6
// HOST is written in brackets: redis://[::1]:6379, redis://:PW@[fd00::5]/2.
struct RedisUrl {
  std::string host = "127.0.0.1";  // an IPv6 address without its brackets
  int port = 6379;
  int db = 0;
  std::string user;      // empty: the default user
  std::string password;  // empty: no AUTH
  // The URL with the password replaced by "***": safe to log.
  std::string Redacted() const;
};
// InvalidArgument (the message never repeats the password) for anything else.
StatusOr<RedisUrl> ParseRedisUrl(const std::string& url);

// A reply, converted from hiredis' tree. kError replies become a Status in Command().
struct RedisReply {
  enum class Type { kNil, kString, kInteger, kArray, kStatus };
  Type type = Type::kNil;
  std::string str;  // kString, kStatus
  int64_t integer = 0;
  std::vector<RedisReply> elements;  // kArray

  bool is_nil() const { return type == Type::kNil; }
  bool is_array() const { return type == Type::kArray; }
  bool is_string() const { return type == Type::kString || type == Type::kStatus; }
};

struct RedisClientOptions {
  double connect_timeout_s = 3;
  double command_timeout_s = 10;  // socket timeout; blocking commands add their own block time
  int backoff_initial_ms = 100;   // wait before the 2nd connect attempt after a failure...
  int backoff_max_ms = 2000;      // ...doubling up to this
};

class RedisClient {
 public:
  RedisClient(RedisUrl url, RedisClientOptions options = {});
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  // Connects (AUTH, SELECT) if not connected. Unavailable when the server cannot be
  // reached; PermissionDenied-like failures (wrong password) are FailedPrecondition.
  // Waits out the backoff of the previous failed attempt first.
  Status Connect();
  // Runs one command. Errors: Unavailable (connection lost or not possible; the
  // connection is dropped and the next call reconnects), FailedPrecondition for a Redis
  // error reply (its text, e.g. "NOGROUP ..."). `extra_timeout_s` lengthens the socket
  // timeout for this command (XREAD BLOCK).
  StatusOr<RedisReply> Command(const std::vector<std::string>& argv, double extra_timeout_s = 0);
  // Drops the connection (the next Command reconnects).
  void Disconnect();
  bool connected() const { return context_ != nullptr; }
  const RedisUrl& url() const { return url_; }
  // How many times a connection was (re)established.
  int connects() const { return connects_; }

 private:
  Status ConnectOnce();

  RedisUrl url_;
  RedisClientOptions options_;
  redisContext* context_ = nullptr;
  int failures_ = 0;  // consecutive failed connect attempts
  std::chrono::steady_clock::time_point next_attempt_{};
  int connects_ = 0;
};

// Field/value pairs of a stream entry ([f1, v1, f2, v2...]) as a list; InvalidArgument
// when the reply is not such an array of strings.
using StreamFields = std::vector<std::pair<std::string, std::string>>;
struct StreamEntry {
  std::string id;
  StreamFields fields;
};
// The entries of one XREAD/XREADGROUP/XAUTOCLAIM entry array ([[id, [f, v, ...]], ...]).
// Entries whose fields are nil (deleted) keep an empty field list.
StatusOr<std::vector<StreamEntry>> ParseStreamEntries(const RedisReply& entries);
// The value of `field`, or nullptr.
const std::string* FindField(const StreamFields& fields, const std::string& field);

}  // namespace qtune::measure
