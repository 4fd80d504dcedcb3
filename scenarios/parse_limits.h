// Bounds on the structure of one document (a scenario, or a control-API request that carries
// one), checked while a parser reports the structure and before anything is built from it, so
// that hostile text costs bounded time, memory and stack.
//
// StructureBudget is fed by a parser's events (yaml-cpp's for scenarios, nlohmann's SAX events
// for control-API JSON), so both formats count the same things with the same words.
//
// Thread-safety: plain values; a StructureBudget belongs to one parse.
#pragma once

#include <cstddef>
#include <string>

namespace faultline::scenario {

struct ParseLimits {
  // Mappings and lists nested in one another; the document's own mapping is level 1. The
  // deepest valid scenario nests about ten levels.
  int max_depth = 64;
  // Mapping keys plus list items in the whole document, counting again what an alias repeats.
  std::size_t max_keys = 10'000;
};

class StructureBudget {
 public:
  explicit StructureBudget(const ParseLimits& limits) : limits_(limits) {}

  // Counts `keys` mapping keys or list items (one, or what an alias repeats). False once the
  // count is over the limit.
  bool Count(std::size_t keys = 1);
  // A mapping or list opens / closes. False once the nesting is deeper than the limit.
  bool Open();
  void Close();

  std::size_t keys() const { return keys_; }
  int depth() const { return depth_; }
  // Why the last false was returned: "the document nests deeper than 64 levels".
  const std::string& reason() const { return reason_; }

 private:
  ParseLimits limits_;
  std::size_t keys_ = 0;
  int depth_ = 0;
  std::string reason_;
};

}  // namespace faultline::scenario
