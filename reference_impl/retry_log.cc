#include "reference_impl/retry_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "reference_impl/call_event.h"

namespace faultline::ref {
namespace {

using Json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::system_clock;

std::string SystemError(std::string_view what, const std::filesystem::path& path) {
  return fmt::format("{} {}: {}", what, path.string(), std::strerror(errno));
}

template <typename T>
std::optional<T> Get(const Json& object, std::string_view key) {
  const auto found = object.find(std::string(key));
  if (found == object.end()) return std::nullopt;
  if constexpr (std::is_same_v<T, std::string>) {
    if (!found->is_string()) return std::nullopt;
  } else {
    if (!found->is_number_integer()) return std::nullopt;
    if (found->is_number_unsigned() &&
        found->template get<std::uint64_t>() > std::uint64_t{INT64_MAX}) {
      return std::numeric_limits<std::int64_t>::max();  // saturate, do not wrap
    }
  }
  return found->template get<T>();
}

// A logged time as a time_point, saturated to the range of system_clock (nanoseconds since
// 1970 in 64 bits: about the years 1678 to 2261), so later arithmetic cannot overflow.
system_clock::time_point FromUnixMs(std::int64_t ms) {
  constexpr std::int64_t kMin =
      std::chrono::duration_cast<milliseconds>(system_clock::duration::min()).count();
  constexpr std::int64_t kMax =
      std::chrono::duration_cast<milliseconds>(system_clock::duration::max()).count();
  return system_clock::time_point(milliseconds(std::clamp(ms, kMin, kMax)));
}

// The call id as the log holds it: the id's JSON text, read back.
std::string LoggedCallId(std::string_view call_id) {
  return Json::parse(DumpJson(std::string(call_id))).get<std::string>();
}

// The record in one JSON line, or nullopt when the object is not a record.
std::optional<RetryLogRecord> ParseRecord(const Json& json) {
  if (!json.is_object()) return std::nullopt;
  auto call_id = Get<std::string>(json, "call_id");
  auto attempt = Get<std::int64_t>(json, "attempt");
  auto scheduled = Get<std::int64_t>(json, "scheduled_at_ms");
  auto started = Get<std::int64_t>(json, "started_at_ms");
  if (!call_id || !attempt || scheduled.has_value() == started.has_value() || *attempt < 1 ||
      *attempt > 1'000'000) {
    return std::nullopt;
  }
  RetryLogRecord record;
  record.kind = started ? RetryLogRecord::Kind::kAttempt : RetryLogRecord::Kind::kRetry;
  record.call_id = std::move(*call_id);
  record.attempt = static_cast<int>(*attempt);
  record.scheduled_at = FromUnixMs(started ? *started : *scheduled);
  if (started) return record;
  record.delay = milliseconds(Get<std::int64_t>(json, "delay_ms").value_or(0));
  record.delay_source = ParseDelaySource(Get<std::string>(json, "delay_source").value_or(""))
                            .value_or(DelaySource::kBackoff);
  record.failure_code = ParseFailureCode(Get<std::string>(json, "failure_code").value_or(""))
                            .value_or(FailureCode::kUnknown);
  return record;
}

void Apply(const RetryLogRecord& record, RecoveredCall& call) {
  ++call.records;
  if (record.kind == RetryLogRecord::Kind::kAttempt) {
    call.attempts_started = std::max(call.attempts_started, record.attempt);
    return;
  }
  if (record.attempt >= call.retries) call.last_failure_code = record.failure_code;
  call.retries = std::max(call.retries, record.attempt);
  call.attempts_started = std::max(call.attempts_started, record.attempt);
  if (!call.last_scheduled_at || record.scheduled_at > *call.last_scheduled_at) {
    call.last_scheduled_at = record.scheduled_at;
  }
}

}  // namespace

std::string ToJsonLine(const RetryLogRecord& record) {
  const auto scheduled_ms =
      std::chrono::duration_cast<milliseconds>(record.scheduled_at.time_since_epoch()).count();
  if (record.kind == RetryLogRecord::Kind::kAttempt) {
    return DumpJson({{"call_id", record.call_id},
                     {"attempt", record.attempt},
                     {"started_at_ms", scheduled_ms}});
  }
  Json json = {{"call_id", record.call_id},
               {"attempt", record.attempt},
               {"scheduled_at_ms", scheduled_ms},
               {"delay_ms", record.delay.count()},
               {"delay_source", ToString(record.delay_source)},
               {"failure_code", ToString(record.failure_code)}};
  return DumpJson(json);
}

RecoveredCall RecoverFromLog(std::string_view log_text, std::string_view call_id) {
  const std::string logged_id = LoggedCallId(call_id);
  RecoveredCall call;
  std::size_t start = 0;
  while (start < log_text.size()) {
    const std::size_t end = log_text.find('\n', start);
    if (end == std::string_view::npos) {
      ++call.torn_lines;  // the unterminated tail of an interrupted append
      break;
    }
    const std::string_view line = log_text.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    const Json json = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded()) {
      ++call.torn_lines;
      continue;
    }
    const std::optional<RetryLogRecord> record = ParseRecord(json);
    if (!record) {
      ++call.invalid_lines;
      continue;
    }
    if (record->call_id == logged_id) Apply(*record, call);
  }
  return call;
}

// ---- FileRetryLogStorage ----

std::expected<std::unique_ptr<FileRetryLogStorage>, std::string> FileRetryLogStorage::Open(
    const std::filesystem::path& path, bool fsync) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return std::unexpected(SystemError("cannot open retry log", path));
  std::unique_ptr<FileRetryLogStorage> storage(new FileRetryLogStorage(fd, path, fsync));
  // End a torn last line so that the next record starts on a line of its own.
  const off_t size = ::lseek(fd, 0, SEEK_END);
  char last = '\n';
  if (size > 0 && ::pread(fd, &last, 1, size - 1) != 1) {
    return std::unexpected(SystemError("cannot read retry log", path));
  }
  if (last != '\n') {
    if (auto written = storage->Append("\n"); !written) return std::unexpected(written.error());
  }
  return storage;
}

FileRetryLogStorage::FileRetryLogStorage(int fd, std::filesystem::path path, bool fsync)
    : fd_(fd), path_(std::move(path)), fsync_(fsync) {}

FileRetryLogStorage::~FileRetryLogStorage() { ::close(fd_); }

std::expected<void, std::string> FileRetryLogStorage::WriteAll(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd_, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) return std::unexpected(SystemError("cannot append to retry log", path_));
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
  return {};
}

std::expected<void, std::string> FileRetryLogStorage::Append(std::string_view line) {
  if (auto written = WriteAll(line); !written) return written;
  if (fsync_ && ::fdatasync(fd_) != 0) {
    return std::unexpected(SystemError("cannot sync retry log", path_));
  }
  return {};
}

std::expected<std::string, std::string> FileRetryLogStorage::ReadAll() {
  std::string contents;
  char buffer[8192];
  off_t offset = 0;
  while (true) {
    const ssize_t got = ::pread(fd_, buffer, sizeof buffer, offset);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return std::unexpected(SystemError("cannot read retry log", path_));
    if (got == 0) return contents;
    contents.append(buffer, static_cast<std::size_t>(got));
    offset += got;
  }
}

// ---- MemoryRetryLogStorage ----

std::expected<void, std::string> MemoryRetryLogStorage::Append(std::string_view line) {
  contents.append(line);
  return {};
}

std::expected<std::string, std::string> MemoryRetryLogStorage::ReadAll() { return contents; }

// ---- RetryLog ----

RetryLog::RetryLog(std::unique_ptr<RetryLogStorage> storage) : storage_(std::move(storage)) {}

std::expected<void, std::string> RetryLog::Record(const RetryLogRecord& record) {
  const std::string line = ToJsonLine(record) + "\n";
  std::lock_guard lock(mutex_);
  return storage_->Append(line);
}

std::expected<RecoveredCall, std::string> RetryLog::Recover(std::string_view call_id) {
  std::lock_guard lock(mutex_);
  auto contents = storage_->ReadAll();
  if (!contents) return std::unexpected(contents.error());
  return RecoverFromLog(*contents, call_id);
}

}  // namespace faultline::ref
