// Writing every byte of a buffer to a file descriptor, and saying why it failed, for the writers of
// report files and of the run spool: a short write is retried, so a disk that fills up mid-file
// reports ENOSPC instead of a silent truncation.
//
// Thread-safety: as write(2).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace faultline::report {

// Every byte of `bytes` to `fd`; 0, or the errno of the write that failed (EIO for a write that
// took nothing).
int WriteAll(int fd, std::string_view bytes);

// How a failed write is said: "cannot write 'o/result.json': No space left on device".
std::string CannotWrite(const std::filesystem::path& path, int error);

}  // namespace faultline::report
