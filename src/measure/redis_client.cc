#include "measure/redis_client.h"

#include <fmt/format.h>
#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <algorithm>
#include <charconv>
#include <thread>

namespace qtune::measure {
namespace {

timeval ToTimeval(double seconds) {
  timeval tv;
  tv.tv_sec = static_cast<time_t>(seconds);
  tv.tv_usec = static_cast<suseconds_t>((seconds - static_cast<double>(tv.tv_sec)) * 1e6);
  return tv;
}

RedisReply Convert(const redisReply* r) {
  RedisReply out;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      out.type = RedisReply::Type::kString;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = RedisReply::Type::kStatus;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = RedisReply::Type::kInteger;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::kArray;
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(Convert(r->element[i]));
      break;
    default:
      out.type = RedisReply::Type::kNil;
      break;
  }
  return out;
}

bool ParseInt(std::string_view text, int& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::string RedisUrl::Redacted() const {
  std::string auth;
  if (!password.empty()) auth = user + ":***@";
  // An IPv6 address goes in brackets, so its colons are not read as the port's.
  const std::string shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return fmt::format("redis://{}{}:{}/{}", auth, shown, port, db);
}

StatusOr<RedisUrl> ParseRedisUrl(const std::string& url) {
  constexpr std::string_view kScheme = "redis://";
  auto bad = [](const std::string& why) {
    return InvalidArgumentError("--redis: " + why +
                                "; expected redis://[:PASSWORD@]HOST[:PORT][/DB] (an IPv6 "
                                "HOST in brackets: redis://[::1]:6379)");
  };
  if (url.rfind(kScheme, 0) != 0) return bad("the URL does not start with redis://");
  std::string rest = url.substr(kScheme.size());
  RedisUrl out;
  if (size_t at = rest.rfind('@'); at != std::string::npos) {
    std::string auth = rest.substr(0, at);
    rest = rest.substr(at + 1);
    size_t colon = auth.find(':');
    if (colon == std::string::npos) return bad("the part before '@' must be [USER]:PASSWORD");
    out.user = auth.substr(0, colon);
    out.password = auth.substr(colon + 1);
  }
  if (size_t slash = rest.find('/'); slash != std::string::npos) {
    std::string db = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
    if (!db.empty() && (!ParseInt(db, out.db) || out.db < 0)) {
      return bad("the database '" + db + "' is not a number");
    }
  }
  // HOST, [IPV6], then an optional :PORT.
  std::string host, port;
  if (!rest.empty() && rest[0] == '[') {
    size_t close = rest.find(']');
    if (close == std::string::npos) return bad("the IPv6 address '" + rest + "' lacks its ']'");
    host = rest.substr(1, close - 1);
    if (host.empty() || host.find_first_of("[]/") != std::string::npos) {
      return bad("'" + rest.substr(0, close + 1) + "' is not an IPv6 address in brackets");
    }
    std::string after = rest.substr(close + 1);
    if (!after.empty() && after[0] != ':') {
      return bad("'" + after + "' follows the IPv6 address; expected :PORT");
    }
    if (!after.empty()) port = after.substr(1);
    if (!after.empty() && port.empty()) return bad("the port after ':' is empty");
  } else {
    size_t colon = rest.find(':');
    host = rest.substr(0, colon);
    if (colon != std::string::npos) {
      port = rest.substr(colon + 1);
      if (port.find(':') != std::string::npos) {
        return bad("the host '" + rest + "' holds several ':'; put an IPv6 address in brackets");
      }
      if (port.empty()) return bad("the port after ':' is empty");
    }
    if (host.find_first_of("[]") != std::string::npos) {
      return bad("the host '" + host + "' holds a bracket outside an IPv6 address");
    }
  }
  if (!port.empty() && (!ParseInt(port, out.port) || out.port < 1 || out.port > 65535)) {
    return bad("the port '" + port + "' is not a number in 1..65535");
  }
  if (!host.empty()) out.host = host;
  return out;
}

RedisClient::RedisClient(RedisUrl url, RedisClientOptions options)
    : url_(std::move(url)), options_(options) {}

RedisClient::~RedisClient() { Disconnect(); }

void RedisClient::Disconnect() {
  if (context_ != nullptr) redisFree(context_);
  context_ = nullptr;
}

Status RedisClient::Connect() {
  if (context_ != nullptr) return Status::Ok();
  std::this_thread::sleep_until(next_attempt_);
  Status status = ConnectOnce();
  if (status.ok()) {
    failures_ = 0;
    ++connects_;
    return status;
  }
  Disconnect();
  int delay =
      std::min(options_.backoff_max_ms, options_.backoff_initial_ms << std::min(failures_, 10));
  ++failures_;
  next_attempt_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(delay);
  return status;
}

Status RedisClient::ConnectOnce() {
  context_ =
      redisConnectWithTimeout(url_.host.c_str(), url_.port, ToTimeval(options_.connect_timeout_s));
  if (context_ == nullptr || context_->err) {
    std::string why = context_ != nullptr ? context_->errstr : "out of memory";
    return UnavailableError(
        fmt::format("cannot reach Redis at {}: {}; is redis-server running there and reachable?",
                    url_.Redacted(), why));
  }
  if (redisSetTimeout(context_, ToTimeval(options_.command_timeout_s)) != REDIS_OK) {
    return UnavailableError("cannot set the socket timeout for Redis at " + url_.Redacted());
  }
  if (!url_.password.empty()) {
    std::vector<std::string> auth = {"AUTH"};
    if (!url_.user.empty()) auth.push_back(url_.user);
    auth.push_back(url_.password);
    StatusOr<RedisReply> r = Command(auth);
    if (!r.ok() && r.status().code() == StatusCode::kUnavailable) return r.status();
    if (!r.ok()) {
      // The server's text ("WRONGPASS invalid username-password pair") holds no secret.
      return FailedPreconditionError("Redis at " + url_.Redacted() +
                                     " refused the password: " + r.status().message());
    }
  }
  if (url_.db != 0) {
    StatusOr<RedisReply> r = Command({"SELECT", std::to_string(url_.db)});
    if (!r.ok()) return r.status();
  }
  return Status::Ok();
}

StatusOr<RedisReply> RedisClient::Command(const std::vector<std::string>& argv,
                                          double extra_timeout_s) {
  RETURN_IF_ERROR(Connect());
  std::vector<const char*> args;
  std::vector<size_t> lengths;
  for (const std::string& a : argv) {
    args.push_back(a.data());
    lengths.push_back(a.size());
  }
  if (extra_timeout_s > 0) {
    redisSetTimeout(context_, ToTimeval(options_.command_timeout_s + extra_timeout_s));
  }
  auto* reply = static_cast<redisReply*>(
      redisCommandArgv(context_, static_cast<int>(args.size()), args.data(), lengths.data()));
  if (extra_timeout_s > 0 && reply != nullptr) {
    redisSetTimeout(context_, ToTimeval(options_.command_timeout_s));
  }
  if (reply == nullptr) {
    std::string why = context_->errstr;
    Disconnect();
    return UnavailableError(fmt::format("lost the connection to Redis at {} ({}): {}",
                                        url_.Redacted(), argv.empty() ? "" : argv[0], why));
  }
  std::unique_ptr<redisReply, void (*)(void*)> owner(reply, freeReplyObject);
  if (reply->type == REDIS_REPLY_ERROR) {
    return FailedPreconditionError(fmt::format("Redis at {} answered {}: {}", url_.Redacted(),
                                               argv.empty() ? "" : argv[0],
                                               std::string(reply->str, reply->len)));
  }
  return Convert(reply);
}

StatusOr<std::vector<StreamEntry>> ParseStreamEntries(const RedisReply& entries) {
  std::vector<StreamEntry> out;
  if (entries.is_nil()) return out;
  if (!entries.is_array()) return InvalidArgumentError("a stream reply is not an array");
  for (const RedisReply& e : entries.elements) {
    if (!e.is_array() || e.elements.size() != 2 || !e.elements[0].is_string()) {
      return InvalidArgumentError("a stream entry is not [id, fields]");
    }
    StreamEntry entry;
    entry.id = e.elements[0].str;
    const RedisReply& fields = e.elements[1];
    if (fields.is_array()) {
      if (fields.elements.size() % 2 != 0) {
        return InvalidArgumentError("stream entry " + entry.id + " has an odd field count");
      }
      for (size_t i = 0; i + 1 < fields.elements.size(); i += 2) {
        if (!fields.elements[i].is_string() || !fields.elements[i + 1].is_string()) {
          return InvalidArgumentError("stream entry " + entry.id + " has a non-string field");
        }
        entry.fields.emplace_back(fields.elements[i].str, fields.elements[i + 1].str);
      }
    }
    out.push_back(std::move(entry));
  }
  return out;
}

const std::string* FindField(const StreamFields& fields, const std::string& field) {
  for (const auto& [name, value] : fields) {
    if (name == field) return &value;
  }
  return nullptr;
}

}  // namespace qtune::measure
