#include "reports/write_all.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace faultline::report {

int WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return 0;
}

std::string CannotWrite(const std::filesystem::path& path, int error) {
  return fmt::format("cannot write '{}': {}", path.string(),
                     std::error_code(error, std::generic_category()).message());
}

}  // namespace faultline::report
