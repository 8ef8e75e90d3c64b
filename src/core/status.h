// Status and StatusOr: qtune's single error model. Every place where untrusted
// input enters (model files, data files, state logs, flags, network) returns one of
// these; no exception crosses a module boundary.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace qtune {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kFailedPrecondition,
  kOutOfRange,
  kUnimplemented,
  kResourceExhausted,
  kDataLoss,
  kUnavailable,
  kDeadlineExceeded,
  kInternal,
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "InvalidArgument: message", or "OK".
  std::string ToString() const;

  // Returns a copy whose message is "context: message" (for adding the file or node name
  // as an error travels outwards). OK stays OK.
  Status WithContext(const std::string& context) const;

  // Explicitly drops the status (for the rare place where failure is acceptable).
  void IgnoreError() const {}

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

Status InvalidArgumentError(std::string message);
Status NotFoundError(std::string message);
Status AlreadyExistsError(std::string message);
Status FailedPreconditionError(std::string message);
Status OutOfRangeError(std::string message);
Status UnimplementedError(std::string message);
Status ResourceExhaustedError(std::string message);
Status DataLossError(std::string message);
Status UnavailableError(std::string message);
Status DeadlineExceededError(std::string message);
Status InternalError(std::string message);

// Holds either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  // REQUIRES: !status.ok()  (an OK status without a value is turned into an Internal error).
  StatusOr(Status status) : state_(std::move(status)) {  // NOLINT(runtime/explicit)
    if (std::get<Status>(state_).ok()) {
      state_ = InternalError("StatusOr constructed from OK status without a value");
    }
  }
  StatusOr(T value) : state_(std::move(value)) {}  // NOLINT(runtime/explicit)

  bool ok() const { return std::holds_alternative<T>(state_); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(state_); }

  // REQUIRES: ok().
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<Status, T> state_;
};

}  // namespace qtune

#define QTUNE_STATUS_CONCAT_INNER(a, b) a##b
#define QTUNE_STATUS_CONCAT(a, b) QTUNE_STATUS_CONCAT_INNER(a, b)

// Returns from the enclosing function if `expr` (a Status) is not OK.
#define RETURN_IF_ERROR(expr)                      \
  do {                                             \
    ::qtune::Status qtune_status_ = (expr);        \
    if (!qtune_status_.ok()) return qtune_status_; \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, MakeX());` — assigns the value or returns the error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  QTUNE_ASSIGN_OR_RETURN_IMPL(QTUNE_STATUS_CONCAT(qtune_statusor_, __LINE__), lhs, expr)
#define QTUNE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()
