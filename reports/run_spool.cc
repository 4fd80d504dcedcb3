#include "reports/run_spool.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "nlohmann/json.hpp"
#include "reports/write_all.h"

namespace faultline::report {
std::expected<std::shared_ptr<RunSpool>, std::string> RunSpool::Create(
    const std::filesystem::path& file) {
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    return std::unexpected(CannotWrite(file, errno));
  }
  return std::shared_ptr<RunSpool>(new RunSpool(file, fd));
}

RunSpool::~RunSpool() { ::close(fd_); }

ScenarioResult RunSpool::Keep(ScenarioResult run, std::size_t place) {
  // The run as result.json lists it, compact, then its place: `{...,"run":N}`. The JSON of the
  // run is the line's first `compact.size()` bytes with a '}' for the last (ReadJson).
  const std::string compact =
      ToJson(run).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::string line = fmt::format(
      "{},\"run\":{}}}\n", std::string_view(compact).substr(0, compact.size() - 1), place);
  std::lock_guard lock(mutex_);
  if (error_) return run;
  // Under the lock: the line lands at end_, and lines never interleave.
  if (const int error = WriteAll(fd_, line); error != 0) {
    error_ = CannotWrite(path_, error);
    return run;
  }
  const DetailsRef details{shared_from_this(), end_, compact.size()};
  end_ += line.size();
  return SlimRun(std::move(run), details);
}

std::optional<std::string> RunSpool::ReadJson(std::uint64_t at, std::uint64_t size) const {
  if (size < 2) return std::nullopt;
  std::string bytes(size, '\0');
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::pread(fd_, bytes.data() + got, size - got, static_cast<off_t>(at + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    got += static_cast<std::size_t>(n);
  }
  if (bytes.front() != '{' || bytes.back() != ',') return std::nullopt;  // not a line we wrote
  bytes.back() = '}';
  return bytes;
}

std::optional<ScenarioResult> RunSpool::Read(std::uint64_t at, std::uint64_t size) const {
  const std::optional<std::string> text = ReadJson(at, size);
  if (!text) return std::nullopt;
  const nlohmann::json json = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  auto run = ScenarioResultFromJson(json);
  if (!run) return std::nullopt;
  return std::move(*run);
}

std::optional<std::string> RunSpool::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

}  // namespace faultline::report
