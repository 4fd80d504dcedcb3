#include "fake_provider/wire/byte_template.h"

#include <algorithm>
#include <utility>

#include "fake_provider/wire/event_stream_encoder.h"

namespace faultline::provider {
namespace {

bool IsNumeric(Slot slot) {
  return slot == Slot::kCreated || slot == Slot::kInputTokens || slot == Slot::kTotalTokens;
}

bool IsNumberChar(char c) { return (c >= '0' && c <= '9') || c == '.' || c == '-'; }

bool WholeNumberAt(std::string_view text, std::size_t at, std::size_t length) {
  if (at > 0 && IsNumberChar(text[at - 1])) return false;
  const std::size_t end = at + length;
  return end >= text.size() || !IsNumberChar(text[end]);
}

}  // namespace

ByteTemplate ByteTemplate::WithHoles(std::string text, const SlotValues& placeholders) {
  ByteTemplate result(std::move(text));
  const std::string_view view = result.text_;
  for (std::size_t index = 0; index < kSlotCount; ++index) {
    const std::string& placeholder = placeholders[index];
    if (placeholder.empty()) continue;
    const auto slot = static_cast<Slot>(index);
    for (std::size_t at = view.find(placeholder); at != std::string_view::npos;
         at = view.find(placeholder, at + 1)) {
      if (IsNumeric(slot) && !WholeNumberAt(view, at, placeholder.size())) continue;
      result.holes_.push_back({at, placeholder.size(), slot});
    }
  }
  std::sort(result.holes_.begin(), result.holes_.end(),
            [](const Hole& a, const Hole& b) { return a.offset < b.offset; });
  // Overlaps cannot happen with distinct sentinels; drop any defensively (keep the first).
  std::vector<Hole> kept;
  for (const Hole& hole : result.holes_) {
    if (!kept.empty() && hole.offset < kept.back().offset + kept.back().length) continue;
    kept.push_back(hole);
  }
  result.holes_ = std::move(kept);
  return result;
}

ByteTemplate ByteTemplate::SealedMessage(std::string message, const SlotValues& placeholders) {
  ByteTemplate result = WithHoles(std::move(message), placeholders);
  result.sealed_ = true;
  return result;
}

std::size_t ByteTemplate::RenderedSize(const SlotValues& values) const {
  std::size_t size = text_.size();
  for (const Hole& hole : holes_) {
    size = size - hole.length + values[static_cast<std::size_t>(hole.slot)].size();
  }
  return size;
}

char* ByteTemplate::WriteTo(char* out, const SlotValues& values) const {
  std::size_t literal_start = 0;
  for (const Hole& hole : holes_) {
    out = std::copy_n(text_.data() + literal_start, hole.offset - literal_start, out);
    const std::string& value = values[static_cast<std::size_t>(hole.slot)];
    out = std::copy_n(value.data(), value.size(), out);
    literal_start = hole.offset + hole.length;
  }
  return std::copy_n(text_.data() + literal_start, text_.size() - literal_start, out);
}

void ByteTemplate::AppendTo(std::string& out, const SlotValues& values) const {
  const std::size_t start = out.size();
  AppendInPlace(out, RenderedSize(values), [&](char* first) { WriteTo(first, values); });
  if (sealed_ && !holes_.empty()) event_stream::Reseal(out, start);
}

std::string ByteTemplate::Render(const SlotValues& values) const {
  std::string out;
  out.reserve(RenderedSize(values));
  AppendTo(out, values);
  return out;
}

std::size_t ByteTemplate::MapOffset(std::size_t offset, const SlotValues& values) const {
  std::size_t mapped = offset;
  for (const Hole& hole : holes_) {
    if (hole.offset >= offset) break;
    const std::size_t value_size = values[static_cast<std::size_t>(hole.slot)].size();
    if (offset < hole.offset + hole.length) return mapped - (offset - hole.offset);
    mapped = mapped - hole.length + value_size;
  }
  return mapped;
}

}  // namespace faultline::provider
