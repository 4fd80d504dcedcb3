// What the cassette import tests share: the files of cassette_import/tests/data/ and a cassette's
// body.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "scenarios/cassette/cassette.h"

namespace faultline::scenario::testing {

// cassette_import/tests/data/NAME, whole (FAULTLINE_SOURCE_DIR: cassette_import/CMakeLists.txt).
inline std::string DataFile(std::string_view name) {
  std::ifstream file(
      std::filesystem::path(FAULTLINE_SOURCE_DIR) / "cassette_import/tests/data" / name,
      std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// The body the cassette plays: its writes' bytes in order.
inline std::string Body(const Cassette& cassette) {
  std::string body;
  for (const CassetteWrite& write : cassette.writes) body += write.bytes;
  return body;
}

}  // namespace faultline::scenario::testing
