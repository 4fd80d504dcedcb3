#include "scenarios/load_error.h"

#include "fmt/format.h"

namespace faultline::scenario {

std::string LoadError::ToString() const {
  std::string location = file;
  if (line > 0) location += fmt::format(":{}:{}", line, column);
  if (path.empty()) return fmt::format("{}: {}", location, message);
  return fmt::format("{}: at {}: {}", location, path, message);
}

}  // namespace faultline::scenario
