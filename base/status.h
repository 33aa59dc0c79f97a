// Errors as values for rooftrace code.
//
// Status carries an error code and a message meant for the user: it names the
// input, what was wrong, and the fix. StatusOr<T> holds a value or an error.
// Both are cheap to move and carry no exceptions, so libinject can use them.
// Thread-compatible (no shared state).
#ifndef ROOFTRACE_BASE_STATUS_H_
#define ROOFTRACE_BASE_STATUS_H_

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace rooftrace {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // the user's input (option, file content) is wrong
  kNotFound,         // a file, run id or symbol does not exist
  kCorrupt,          // data is damaged or not ours
  kUnavailable,      // a peer, device or service is not there
  kFailedPrecondition,
  kResourceExhausted,
  kInternal,
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidArgument(std::string m) {
  return Status(StatusCode::kInvalidArgument, std::move(m));
}
inline Status NotFound(std::string m) {
  return Status(StatusCode::kNotFound, std::move(m));
}
inline Status Corrupt(std::string m) {
  return Status(StatusCode::kCorrupt, std::move(m));
}
inline Status Unavailable(std::string m) {
  return Status(StatusCode::kUnavailable, std::move(m));
}
inline Status FailedPrecondition(std::string m) {
  return Status(StatusCode::kFailedPrecondition, std::move(m));
}
inline Status InternalError(std::string m) {
  return Status(StatusCode::kInternal, std::move(m));
}

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT
    assert(!status_.ok() && "StatusOr built from an OK status has no value");
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace rooftrace

// Returns early from the enclosing function when `expr` is not OK.
#define RT_RETURN_IF_ERROR(expr)                  \
  do {                                            \
    ::rooftrace::Status rt_status_ = (expr);      \
    if (!rt_status_.ok()) return rt_status_;      \
  } while (0)

#define RT_CONCAT_INNER_(a, b) a##b
#define RT_CONCAT_(a, b) RT_CONCAT_INNER_(a, b)

// `RT_ASSIGN_OR_RETURN(auto x, Foo());` assigns the value or returns the error.
#define RT_ASSIGN_OR_RETURN(lhs, expr) \
  RT_ASSIGN_OR_RETURN_IMPL_(RT_CONCAT_(rt_statusor_, __LINE__), lhs, expr)
#define RT_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()

#endif  // ROOFTRACE_BASE_STATUS_H_
