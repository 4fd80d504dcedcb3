// reference_impl_fixtures: writes the benchmark bodies (stream_fixtures.h) to files so that the
// eventsource-parser benchmark parses exactly the bytes the C++ benchmark decodes.
//
//   reference_impl_fixtures DIR          writes DIR/<dialect>.sse for the three dialects
//   reference_impl_fixtures DIALECT:PATH writes one body to PATH
// Exit status 0 on success, 1 on a bad argument, 2 when a file cannot be written.
#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>

#include "reference_impl/bench/stream_fixtures.h"
#include "reference_impl/dialect.h"

namespace {

using faultline::ref::Dialect;

bool Write(Dialect dialect, const std::string& path) {
  const std::string body = faultline::ref::bench::BenchBody(dialect);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(body.data(), static_cast<std::streamsize>(body.size()));
  out.close();
  if (!out) std::fprintf(stderr, "cannot write %s\n", path.c_str());
  return static_cast<bool>(out);
}

int WriteArg(std::string_view arg) {
  const auto colon = arg.find(':');
  if (colon == std::string_view::npos) {
    for (Dialect d : faultline::ref::AllDialects()) {
      std::string path = fmt::format("{}/{}.sse", arg, faultline::ref::ToString(d));
      if (!Write(d, path)) return 2;
    }
    return 0;
  }
  const auto dialect = faultline::ref::ParseDialect(arg.substr(0, colon));
  if (!dialect) {
    std::fprintf(stderr, "unknown dialect in %.*s\n", static_cast<int>(arg.size()), arg.data());
    return 1;
  }
  return Write(*dialect, std::string(arg.substr(colon + 1))) ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR | DIALECT:PATH...\n", argv[0]);
    return 1;
  }
  for (int i = 1; i < argc; ++i) {
    if (int status = WriteArg(argv[i]); status != 0) return status;
  }
  return 0;
}
