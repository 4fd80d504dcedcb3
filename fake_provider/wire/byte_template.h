// Byte templates: response bytes rendered once with placeholder values, filled in per request.
//
// The plan compiler renders bodies and events with sentinel ids, `created` and usage numbers,
// then records where those sentinels landed (holes). Filling a template is a copy of the literal
// bytes with the per-request values spliced into the holes: no JSON is parsed or serialised on
// the request path. Values may differ in length from their placeholders (token counts do).
//
// Immutable after construction; thread-safe for concurrent reads.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace faultline::provider {

// What a hole stands for.
enum class Slot : std::uint8_t {
  kResponseId,   // the part of ResponseIds::response_id after its prefix
  kItemId,       // the part of ResponseIds::item_id after its prefix (derived ids share it)
  kRequestId,    // the part of ResponseIds::request_id after its prefix
  kCreated,      // ResponseIds::created, decimal
  kInputTokens,  // usage input tokens, decimal
  kTotalTokens,  // usage input + output tokens, decimal
};
inline constexpr std::size_t kSlotCount = 6;

// One string per Slot; an empty placeholder means "this slot does not occur".
using SlotValues = std::array<std::string, kSlotCount>;

// Appends `size` bytes to `out` that `write(char* first)` writes in place, not zero-filled first.
// Capacity is reserved before std::string::resize_and_overwrite runs: when that has to grow the
// string, GCC 12's hands its callback the grown capacity instead of the size asked for.
template <typename Write>
void AppendInPlace(std::string& out, std::size_t size, Write write) {
  const std::size_t start = out.size();
  out.reserve(start + size);
  out.resize_and_overwrite(start + size, [&](char* data, std::size_t) {
    write(data + start);
    return start + size;
  });
}

class ByteTemplate {
 public:
  ByteTemplate() = default;
  // A template without holes.
  explicit ByteTemplate(std::string literal) : text_(std::move(literal)) {}
  // Finds every occurrence of each non-empty placeholder in `text`. Numeric slots match whole
  // numbers only (no digit, '.' or '-' next to them).
  static ByteTemplate WithHoles(std::string text, const SlotValues& placeholders);
  // The same for one AWS event-stream message (event_stream_encoder.h): its lengths and
  // checksums cover the values filled in, so every rendering seals it again.
  static ByteTemplate SealedMessage(std::string message, const SlotValues& placeholders);

  const std::string& text() const { return text_; }
  bool has_holes() const { return !holes_.empty(); }
  std::size_t hole_count() const { return holes_.size(); }

  std::size_t RenderedSize(const SlotValues& values) const;
  // Grows `out` once and copies the literal runs and values straight into it: every streamed
  // answer renders each of its events through here.
  void AppendTo(std::string& out, const SlotValues& values) const;
  // The rendering written to `out`, which has room for RenderedSize(values) bytes; returns its
  // end. Only for templates that need no sealing (AppendTo seals).
  char* WriteTo(char* out, const SlotValues& values) const;
  bool sealed() const { return sealed_; }
  std::string Render(const SlotValues& values) const;
  // Where template offset `offset` lands in the rendered bytes (an offset inside a hole maps to
  // the start of its value).
  std::size_t MapOffset(std::size_t offset, const SlotValues& values) const;
  // Calls `visit(offset, slot)` for each hole, in order, with where its value starts in the
  // rendering with `values`: what a rendering must overwrite to hold other values of the same
  // lengths.
  template <typename Visit>
  void ForEachHole(const SlotValues& values, Visit visit) const {
    std::size_t shift = 0;  // rendered minus template offset so far
    for (const Hole& hole : holes_) {
      visit(hole.offset + shift, hole.slot);
      shift += values[static_cast<std::size_t>(hole.slot)].size();
      shift -= hole.length;
    }
  }

 private:
  struct Hole {
    std::size_t offset = 0;
    std::size_t length = 0;
    Slot slot = Slot::kResponseId;
  };
  std::string text_;
  std::vector<Hole> holes_;  // sorted by offset, non-overlapping
  bool sealed_ = false;      // one event-stream message: reseal after filling the holes
};

}  // namespace faultline::provider
