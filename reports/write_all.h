// Writing every byte of a buffer to a file descriptor, for the writers of report files and of the
// run spool: a short write is retried, so a disk that fills up mid-file reports ENOSPC instead of
// a silent truncation.
//
// Thread-safety: as write(2).
#pragma once

#include <string_view>

namespace faultline::report {

// Every byte of `bytes` to `fd`; 0, or the errno of the write that failed (EIO for a write that
// took nothing).
int WriteAll(int fd, std::string_view bytes);

}  // namespace faultline::report
