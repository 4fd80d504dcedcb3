// The optional durable retry log: one JSON line per attempt, written before it is sent, and one
// per scheduled retry, written before the wait.
//
// A call that is restarted (the process died during an attempt or a backoff sleep) reads the log
// back and continues where it was: it knows how many attempts it already spent and when the last
// retry was due, so a restart neither resets the attempt budget, nor sends again an attempt that
// was in flight when the process died, nor retries earlier than scheduled.
//
//   {"call_id":"c-42","attempt":2,"started_at_ms":1732900000100}
//   {"call_id":"c-42","attempt":2,"scheduled_at_ms":1732900000123,"delay_ms":1500,
//    "delay_source":"retry-after","failure_code":"RATE_LIMIT"}
//
// An attempt line: `attempt` was about to be sent at `started_at_ms` (its outcome is unknown
// until a retry line for it follows, or the call ends). A retry line: `attempt` is the attempt
// that failed (so after the line, `attempt` retries have been scheduled); `scheduled_at_ms` is
// the wall-clock Unix time in ms at which the retry starts. Times are read back saturated to what
// system_clock can hold (about the years 1678 to 2261).
//
// The call id is written as JSON text: bytes that are not UTF-8 are written as U+FFFD (writing
// never throws), and Recover() looks the id up the same way, so a restart still finds it.
//
// Durability: RetryLog::Record() writes the whole line with one append and returns only after
// it (and, with `fsync`, after fdatasync). A crash can still leave a torn last line; reading
// tolerates it: a final line with no newline, or any line that is not valid JSON, is skipped and
// counted (`torn_lines`); valid JSON that is not a record is skipped and counted
// (`invalid_lines`). Opening a file whose last line is torn first ends it with a newline, so
// the next record starts on a line of its own.
//
// This is the one place in reference_impl/ that does file I/O, and only behind RetryLogStorage,
// so tests and the virtual world can keep the log in memory.
//
// Thread-safety: RetryLog serialises Record() and Recover() with a mutex; storages are used
// through a RetryLog only. RecoverFromLog() is a pure function.
#pragma once

#include <chrono>
#include <cstddef>
#include <expected>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "reference_impl/failure.h"
#include "reference_impl/retry_after.h"

namespace faultline::ref {

struct RetryLogRecord {
  enum class Kind {
    kRetry,    // `attempt` failed and a retry is scheduled at `scheduled_at`
    kAttempt,  // `attempt` is about to be sent, at `scheduled_at` (`started_at_ms`)
  };
  Kind kind = Kind::kRetry;
  std::string call_id;
  int attempt = 1;  // the attempt that failed and is being retried, or that starts
  std::chrono::system_clock::time_point scheduled_at;  // when the retry / attempt starts (ms)
  std::chrono::milliseconds delay{0};
  DelaySource delay_source = DelaySource::kBackoff;
  FailureCode failure_code = FailureCode::kUnknown;
  friend bool operator==(const RetryLogRecord&, const RetryLogRecord&) = default;
};

// The JSON line for a record, without the newline.
std::string ToJsonLine(const RetryLogRecord& record);

// What a restarted call learns from the log.
struct RecoveredCall {
  int retries = 0;  // retries already scheduled (the highest `attempt` of a retry line)
  // Attempts already sent (the highest `attempt` of an attempt line): more than `retries` when
  // the process died during an attempt, which is then spent, its outcome unknown.
  int attempts_started = 0;
  std::optional<std::chrono::system_clock::time_point> last_scheduled_at;
  // The failure of the last attempt recorded (the one with the highest `attempt`).
  FailureCode last_failure_code = FailureCode::kUnknown;
  std::size_t records = 0;        // records of this call
  std::size_t torn_lines = 0;     // lines skipped as torn (any call)
  std::size_t invalid_lines = 0;  // JSON lines skipped as not a record (any call)
};

// Scans a whole log for `call_id`.
RecoveredCall RecoverFromLog(std::string_view log_text, std::string_view call_id);

// Where the lines go. Implementations need not be thread-safe (RetryLog serialises).
class RetryLogStorage {
 public:
  virtual ~RetryLogStorage() = default;
  // Appends `line` (which ends in '\n') as one write; returns once it is as durable as the
  // storage promises.
  virtual std::expected<void, std::string> Append(std::string_view line) = 0;
  // Everything appended so far (including any torn tail from before a crash).
  virtual std::expected<std::string, std::string> ReadAll() = 0;
};

// A log file opened for appending. With `fsync`, every append is followed by fdatasync().
class FileRetryLogStorage final : public RetryLogStorage {
 public:
  static std::expected<std::unique_ptr<FileRetryLogStorage>, std::string> Open(
      const std::filesystem::path& path, bool fsync);
  ~FileRetryLogStorage() override;
  FileRetryLogStorage(const FileRetryLogStorage&) = delete;
  FileRetryLogStorage& operator=(const FileRetryLogStorage&) = delete;

  std::expected<void, std::string> Append(std::string_view line) override;
  std::expected<std::string, std::string> ReadAll() override;

 private:
  FileRetryLogStorage(int fd, std::filesystem::path path, bool fsync);
  std::expected<void, std::string> WriteAll(std::string_view bytes);

  int fd_;
  std::filesystem::path path_;
  bool fsync_;
};

// The log in memory (tests, the virtual world). `contents` is public so tests can tear it.
class MemoryRetryLogStorage final : public RetryLogStorage {
 public:
  std::expected<void, std::string> Append(std::string_view line) override;
  std::expected<std::string, std::string> ReadAll() override;
  std::string contents;
};

class RetryLog {
 public:
  explicit RetryLog(std::unique_ptr<RetryLogStorage> storage);

  // Appends the record; call it BEFORE sending the attempt, or after the decision to retry and
  // BEFORE starting the wait.
  std::expected<void, std::string> Record(const RetryLogRecord& record);

  // Reads the log back for `call_id`.
  std::expected<RecoveredCall, std::string> Recover(std::string_view call_id);

 private:
  std::mutex mutex_;
  std::unique_ptr<RetryLogStorage> storage_;  // guarded by mutex_
};

}  // namespace faultline::ref
