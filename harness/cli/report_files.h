// The one home for writing a report file, for every command that writes one (`faultline run`,
// `serve --report`, `simulate`, `report render|merge`, the conformance matrix): a report is
// either this run's, whole, or absent, never truncated and never an earlier run's.
//
// - A report is rendered straight into a temporary file beside its final name
//   (".NAME.tmp-PID-N"; never whole in memory: a result of 100,000 runs is gigabytes of text),
//   fsync'd, and renamed onto the final name only when every byte is on
//   disk; on a failure the temporary file is removed and nothing is left under the final name.
// - An earlier report under the final name is removed first, so a failed write cannot leave it
//   to pass for this run's (CI jobs publish reports `if: always()`).
// - A name that is a link, a device or a FIFO (`-o /dev/stdout`, `-o /dev/full`) is written
//   through instead, as the user asked (a regular file behind a link is emptied on a failure).
//   A report folder's names are ours: RemoveStaleReports removes a link there first.
// - RemoveStaleReports clears a whole report folder's names up front, those of formats this run
//   does not write too: an old junit.xml beside a new result.json would look current.
//
// Failures are values: a message naming the file and the OS reason ("cannot write
// 'o/result.json': No space left on device"); commands exit with ExitCode::kReportWriteError.
// Reading one back (ReadJsonFile) is here too: a result file is outside input like any other.
// Thread-safety: none (each call touches only its own files).
#pragma once

#include <expected>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "harness/cli/cli.h"
#include "nlohmann/json.hpp"

namespace faultline::cli {

using RenderReport = std::function<void(std::ostream&)>;

// Removes the files or links (never what they point at) under `paths`; a missing one is fine, a
// folder is an error. The error names the first that could not be removed, with the OS reason.
std::expected<void, std::string> RemoveStaleReports(std::span<const std::filesystem::path> paths);

// Writes what `render` writes to `path`, as the header says.
std::expected<void, std::string> WriteReportFile(const std::filesystem::path& path,
                                                 const RenderReport& render);

struct ReportFile {
  std::filesystem::path path;
  RenderReport render;
};

// Writes every file, going on after a failure (on a full disk a small summary may still fit):
// the paths written, or every failure, joined by "; ".
std::expected<std::vector<std::string>, std::string> WriteReportFiles(
    const std::vector<ReportFile>& files);

// A command's `-o FILE`: the report to `output` (WriteReportFile), or to `out` when `output` is
// "". A failure is said on `err` ("faultline report merge: cannot write 'm.json': No space left
// on device") and is kReportWriteError.
ExitCode EmitReport(const std::string& output, const RenderReport& render, std::string_view command,
                    std::ostream& out, std::ostream& err);

// Removes the temporary files of the reports being written at this moment, for an exit that
// cannot wait for them to finish (a second interrupt, interrupt.h): no ".NAME.tmp-PID-N" is left
// behind. Async-signal-safe: it only reads what writers published and calls unlink(2).
void RemoveReportTemporariesNow() noexcept;

// Registers `temporary` for RemoveReportTemporariesNow while it lives (WriteAndRename holds one
// over each write; public so a test can check the mechanism without a signal). A name too long
// for a slot, or a ninth at once, is not registered.
class PendingTemporary {
 public:
  explicit PendingTemporary(const std::filesystem::path& temporary) noexcept;
  ~PendingTemporary();
  PendingTemporary(const PendingTemporary&) = delete;
  PendingTemporary& operator=(const PendingTemporary&) = delete;

 private:
  int slot_ = -1;
};

// A JSON file written by a run (result.json, a shard's): its value, or why not ("'r.json': not
// valid JSON", "cannot read 'r.json': No such file or directory"). Text that nests deeper than
// scenario::kMaxJsonDepth is refused before it is parsed: no report nests past a dozen levels,
// and a hostile one would make every later dump recurse past the stack.
std::expected<nlohmann::json, std::string> ReadJsonFile(const std::filesystem::path& path);

}  // namespace faultline::cli
