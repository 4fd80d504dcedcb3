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
#include <string_view>

namespace faultline::scenario {

struct ParseLimits {
  // Mappings and lists nested in one another; the document's own mapping is level 1. The
  // deepest valid scenario nests about ten levels.
  int max_depth = 64;
  // Mapping keys plus list items in the whole document, counting again what an alias repeats.
  std::size_t max_keys = 10'000;
  // Bytes of the document's scalars (keys and values), counting again what an alias repeats: a
  // 1 MiB anchor named by 2,400 aliases is 2.4 GB of strings once built, from a 1.1 MB file.
  std::size_t max_bytes = 8 * 1024 * 1024;
  // Events the scripted responses stream, over every response of the document (content, reasoning
  // and tool-call deltas, injected faults; a drip write counts as one): the plan renders each
  // ahead of time, and a 1 MiB text in 4-character chunks renders into about 300 MB.
  std::size_t max_stream_events = 100'000;
};

class StructureBudget {
 public:
  explicit StructureBudget(const ParseLimits& limits) : limits_(limits) {}

  // Counts `keys` mapping keys or list items (one, or what an alias repeats). False once the
  // count is over the limit.
  bool Count(std::size_t keys = 1);
  // Counts `bytes` bytes of scalar text (one scalar, or what an alias repeats). False once the
  // count is over the limit.
  bool CountBytes(std::size_t bytes);
  // A mapping or list opens / closes. False once the nesting is deeper than the limit.
  bool Open();
  void Close();

  std::size_t keys() const { return keys_; }
  std::size_t bytes() const { return bytes_; }
  int depth() const { return depth_; }
  // Why the last false was returned: "the document nests deeper than 64 levels".
  const std::string& reason() const { return reason_; }

 private:
  ParseLimits limits_;
  std::size_t keys_ = 0;
  std::size_t bytes_ = 0;
  int depth_ = 0;
  std::string reason_;
};

// Whether the arrays and objects of JSON text nest deeper than `limit`, from its bytes alone
// (brackets inside strings do not count): one pass, no allocation, and the text need not be
// JSON. Every JSON text that comes from outside (adapter lines, call lines, result files, request
// bodies the judge reads) is checked with it against ParseLimits{}.max_depth before it is
// parsed, since nlohmann's dump, comparison and copy recurse as deep as the value nests.
bool NestsDeeperThan(std::string_view text, int limit);

// The one depth limit for JSON from outside (the scenario documents' own: ParseLimits).
inline constexpr int kMaxJsonDepth = ParseLimits{}.max_depth;

}  // namespace faultline::scenario
