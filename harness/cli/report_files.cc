#include "harness/cli/report_files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <ostream>
#include <sstream>
#include <streambuf>
#include <system_error>
#include <vector>

#include "reports/write_all.h"
#include "scenarios/parse_limits.h"

namespace faultline::cli {
namespace {

namespace fs = std::filesystem;
using report::CannotWrite;
using report::WriteAll;

// A link, a device, a FIFO or a socket the user named (`-o /dev/stdout`, `-o /dev/full`): written
// through, never replaced (replacing /dev/stdout would delete the link itself). A regular file
// behind a link that cannot be written whole is emptied rather than left truncated.
std::expected<void, std::string> WriteThrough(const fs::path& path, std::string_view bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
  if (fd < 0) return std::unexpected(CannotWrite(path, errno));
  struct stat info {};
  const bool regular = ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
  int error = WriteAll(fd, bytes);
  if (error == 0 && regular && ::fsync(fd) != 0 && errno != EINVAL) error = errno;
  if (error != 0 && regular) {
    [[maybe_unused]] const int emptied = ::ftruncate(fd, 0);  // nothing more to do if it fails
  }
  if (::close(fd) != 0 && error == 0 && errno != EINTR) error = errno;
  if (error != 0) return std::unexpected(CannotWrite(path, error));
  return {};
}

// A name no other writer uses (O_EXCL checks): hidden, so a CI glob for *.xml never takes a
// half-written report, and with the pid and a counter, so parallel writers never meet.
fs::path TemporaryBeside(const fs::path& path) {
  static std::atomic<unsigned> counter{0};
  return path.parent_path() /
         fmt::format(".{}.tmp-{}-{}", path.filename().string(), ::getpid(), counter++);
}

// The temporaries being written, for RemoveReportTemporariesNow. A slot is free (0), being
// filled (1) or published (2): its name is complete before the flag says 2, so a signal handler
// reading it never sees half a name. Fixed storage: a handler may not allocate.
struct TemporarySlot {
  std::atomic<int> state{0};
  char name[4096];
};
TemporarySlot g_temporaries[8];
static_assert(std::atomic<int>::is_always_lock_free, "read by a signal handler");

// The rename is what makes the report appear; syncing the folder keeps it across a crash. Best
// effort: some file systems cannot sync a folder, and the report is whole either way.
void SyncFolder(const fs::path& folder) {
  const int fd = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// An output stream into a file descriptor through a 256 KiB buffer, keeping the errno of the
// first write that failed (then it takes no more bytes): a report is written as it is rendered,
// so a result of 100,000 runs is never all in memory as text.
class FdStreamBuf : public std::streambuf {
 public:
  explicit FdStreamBuf(int fd) : fd_(fd), buffer_(kBufferBytes) {
    setp(buffer_.data(), buffer_.data() + buffer_.size());
  }
  // Writes what is buffered; 0 or the first error.
  int Flush() {
    if (error_ == 0) {
      error_ = WriteAll(fd_, std::string_view(pbase(), static_cast<std::size_t>(pptr() - pbase())));
    }
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return error_;
  }

 protected:
  int_type overflow(int_type c) override {
    if (Flush() != 0) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* bytes, std::streamsize count) override {
    if (count > epptr() - pptr()) {  // a large piece goes straight through
      if (Flush() != 0) return 0;
      if (count >= static_cast<std::streamsize>(buffer_.size())) {
        error_ = WriteAll(fd_, std::string_view(bytes, static_cast<std::size_t>(count)));
        return error_ == 0 ? count : 0;
      }
    }
    std::memcpy(pptr(), bytes, static_cast<std::size_t>(count));
    pbump(static_cast<int>(count));
    return count;
  }
  int sync() override { return Flush() == 0 ? 0 : -1; }

 private:
  static constexpr std::size_t kBufferBytes = 256 * 1024;
  int fd_;
  std::vector<char> buffer_;
  int error_ = 0;
};

// Renders into a temporary file beside `path`, then renames it onto `path` once every byte is
// on disk.
std::expected<void, std::string> WriteAndRename(const fs::path& path, const RenderReport& render) {
  const fs::path temporary = TemporaryBeside(path);
  const PendingTemporary pending(temporary);  // before it exists: no moment it could be left
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) return std::unexpected(CannotWrite(path, errno));
  // The first error of the write, the sync or the close (NFS reports some only there).
  int error = 0;
  {
    FdStreamBuf buffer(fd);
    std::ostream out(&buffer);
    render(out);
    error = buffer.Flush();
  }
  if (error == 0 && ::fsync(fd) != 0 && errno != EINVAL) error = errno;
  if (::close(fd) != 0 && error == 0 && errno != EINTR) error = errno;
  if (error == 0 && ::rename(temporary.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temporary.c_str());
    return std::unexpected(CannotWrite(path, error));
  }
  SyncFolder(path.parent_path());
  return {};
}

// Removes what is under `path`, unless it is a folder: a regular file or a link (not its target).
std::expected<void, std::string> RemoveEarlier(const fs::path& path) {
  std::error_code error;
  const fs::file_status status = fs::symlink_status(path, error);
  if (!fs::exists(status)) return {};
  if (fs::is_directory(status)) return std::unexpected(CannotWrite(path, EISDIR));
  if (!fs::remove(path, error) && error) {
    return std::unexpected(
        fmt::format("cannot remove the earlier report '{}': {}", path.string(), error.message()));
  }
  return {};
}

}  // namespace

std::expected<void, std::string> RemoveStaleReports(std::span<const fs::path> paths) {
  for (const fs::path& path : paths) {
    if (auto removed = RemoveEarlier(path); !removed) return removed;
  }
  return {};
}

std::expected<void, std::string> WriteReportFile(const fs::path& path, const RenderReport& render) {
  std::error_code error;
  const fs::file_status name = fs::symlink_status(path, error);
  if (fs::is_symlink(name) || fs::is_other(name)) {  // other: a device, a FIFO, a socket
    // Rendered whole first: a write that fails half-way must not leave half a report there.
    std::ostringstream text;
    render(text);
    return WriteThrough(path, std::move(text).str());
  }
  if (auto removed = RemoveEarlier(path); !removed) return removed;
  return WriteAndRename(path, render);
}

std::expected<std::vector<std::string>, std::string> WriteReportFiles(
    const std::vector<ReportFile>& files) {
  std::vector<std::string> written;
  std::string failures;
  for (const ReportFile& file : files) {
    if (auto done = WriteReportFile(file.path, file.render); !done) {
      failures += (failures.empty() ? "" : "; ") + done.error();
    } else {
      written.push_back(file.path.string());
    }
  }
  if (!failures.empty()) return std::unexpected(failures);
  return written;
}

ExitCode EmitReport(const std::string& output, const RenderReport& render, std::string_view command,
                    std::ostream& out, std::ostream& err) {
  if (output.empty()) {
    render(out);
    return ExitCode::kSuccess;
  }
  if (auto written = WriteReportFile(output, render); !written) {
    err << "faultline " << command << ": " << written.error() << "\n";
    return ExitCode::kReportWriteError;
  }
  return ExitCode::kSuccess;
}

void RemoveReportTemporariesNow() noexcept {
  for (TemporarySlot& slot : g_temporaries) {
    // After the rename the name is gone: unlink fails with ENOENT and the report stays.
    if (slot.state.load(std::memory_order_acquire) == 2) ::unlink(slot.name);
  }
}

PendingTemporary::PendingTemporary(const fs::path& temporary) noexcept {
  const std::string& name = temporary.native();
  if (name.size() >= sizeof(TemporarySlot::name)) return;
  for (int i = 0; i < static_cast<int>(std::size(g_temporaries)); ++i) {
    int free = 0;
    if (!g_temporaries[i].state.compare_exchange_strong(free, 1)) continue;
    std::memcpy(g_temporaries[i].name, name.c_str(), name.size() + 1);
    g_temporaries[i].state.store(2, std::memory_order_release);
    slot_ = i;
    return;
  }
}

PendingTemporary::~PendingTemporary() {
  if (slot_ >= 0) g_temporaries[slot_].state.store(0, std::memory_order_release);
}

std::expected<nlohmann::json, std::string> ReadJsonFile(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return std::unexpected(
        fmt::format("cannot read '{}': {}", path.string(), std::strerror(errno)));
  }
  std::stringstream text;
  text << file.rdbuf();
  if (file.bad()) {
    return std::unexpected(
        fmt::format("cannot read '{}': {}", path.string(), std::strerror(errno)));
  }
  const std::string bytes = text.str();
  if (scenario::NestsDeeperThan(bytes, scenario::kMaxJsonDepth)) {
    return std::unexpected(fmt::format("'{}': arrays and objects nest deeper than {} levels",
                                       path.string(), scenario::kMaxJsonDepth));
  }
  nlohmann::json json = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded())
    return std::unexpected(fmt::format("'{}': not valid JSON", path.string()));
  return json;
}

}  // namespace faultline::cli
