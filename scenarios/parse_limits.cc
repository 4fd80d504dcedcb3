#include "scenarios/parse_limits.h"

#include "fmt/format.h"

namespace faultline::scenario {

bool StructureBudget::Count(std::size_t keys) {
  keys_ += keys;
  if (keys_ <= limits_.max_keys) return true;
  reason_ = fmt::format("the document has more than {} keys and list items", limits_.max_keys);
  return false;
}

bool StructureBudget::CountBytes(std::size_t bytes) {
  bytes_ += bytes;
  if (bytes_ <= limits_.max_bytes) return true;
  reason_ = fmt::format("the document's text is more than {} bytes (counting what aliases repeat)",
                        limits_.max_bytes);
  return false;
}

bool StructureBudget::Open() {
  ++depth_;
  if (depth_ <= limits_.max_depth) return true;
  reason_ = fmt::format("the document nests deeper than {} levels", limits_.max_depth);
  return false;
}

void StructureBudget::Close() {
  if (depth_ > 0) --depth_;
}

bool NestsDeeperThan(std::string_view text, int limit) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > limit) return true;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return false;
}

}  // namespace faultline::scenario
