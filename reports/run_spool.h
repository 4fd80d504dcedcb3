// The run spool: each judged run written whole, as one line of JSON, the moment it is judged
// (`runs.jsonl` in the report folder), and kept in memory slimmed (run_result.h's SlimRun). A run
// of any length then holds under a kilobyte a run; the reports read a run's full form back
// (FullRun) only while they render it, one run at a time.
//
// The file is JSON Lines: one run per line, in the order the runs finished, each as result.json
// lists it under "scenarios" plus "run" (its place in result.json, 0-based). It can be followed
// while the run goes on (`tail -f runs.jsonl | jq`), and it holds every finished run if the
// process dies before result.json is written.
//
// Ownership: the spool owns its file descriptor; every slim run that points into it shares the
// spool (DetailsRef), so it outlives the result. Thread-safety: Keep from any thread (appends are
// serialised); Read from any thread (pread).
#pragma once

#include <cstdint>
#include <expected>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "reports/run_result.h"

namespace faultline::report {

class RunSpool : public RunDetails, public std::enable_shared_from_this<RunSpool> {
 public:
  // Creates (or empties) `file`. Error: it cannot be opened for writing, with the OS reason.
  static std::expected<std::shared_ptr<RunSpool>, std::string> Create(
      const std::filesystem::path& file);
  ~RunSpool() override;
  RunSpool(const RunSpool&) = delete;
  RunSpool& operator=(const RunSpool&) = delete;

  // Appends `run` (the `place`-th of the result) whole and returns it slimmed. A run that could
  // not be written is returned whole (nothing is lost; memory grows) and the first such error is
  // kept for error().
  ScenarioResult Keep(ScenarioResult run, std::size_t place);

  std::optional<ScenarioResult> Read(std::uint64_t at, std::uint64_t size) const override;
  std::optional<std::string> ReadJson(std::uint64_t at, std::uint64_t size) const override;

  // The first write error ("cannot write 'o/runs.jsonl': No space left on device"), if any.
  std::optional<std::string> error() const;
  const std::filesystem::path& path() const { return path_; }

 private:
  RunSpool(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::filesystem::path path_;
  int fd_;
  mutable std::mutex mutex_;
  std::uint64_t end_ = 0;  // bytes written so far
  std::optional<std::string> error_;
};

}  // namespace faultline::report
