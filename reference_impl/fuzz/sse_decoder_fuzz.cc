// The SSE decoder fed an input whole, at cuts derived from the input, and byte by byte must
// produce the same events (type, data, id), the same comment count, the same error (or none)
// and the same end-of-stream report. The event size limit is drawn from the input too, so the
// limit's edge is explored as well.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "reference_impl/sse_decoder.h"

namespace faultline::ref::fuzz {
namespace {

struct Decoded {
  std::vector<SseEvent> events;
  std::size_t comments = 0;
  bool failed = false;
  SseFinishResult finish;
  std::string last_event_id;

  std::string Describe() const {
    std::string out = failed ? "error; " : "ok; ";
    out += std::to_string(events.size()) + " events, " + std::to_string(comments) + " comments";
    for (const SseEvent& event : events) out += " [" + event.type + "|" + event.data + "]";
    if (!failed) {
      out += " finish " + std::to_string(finish.discarded_event) + "/" +
             std::to_string(finish.discarded_bytes);
    }
    return out;
  }
  bool operator==(const Decoded& other) const {
    return events == other.events && comments == other.comments && failed == other.failed &&
           last_event_id == other.last_event_id &&
           (failed || (finish.discarded_event == other.finish.discarded_event &&
                       finish.discarded_bytes == other.finish.discarded_bytes));
  }
};

Decoded Decode(const std::vector<std::string_view>& pieces, std::size_t limit) {
  SseDecoder decoder(SseDecoder::Options{.max_event_bytes = limit});
  Decoded out;
  for (std::string_view piece : pieces) {
    const SseFeedResult fed = decoder.Feed(piece);
    for (const SseEventView& event : fed.events) out.events.emplace_back(event);
    out.comments += fed.comments;
    if (fed.error) {
      out.failed = true;
      break;
    }
  }
  out.last_event_id = decoder.last_event_id();
  if (!out.failed) out.finish = decoder.Finish();
  return out;
}

}  // namespace
}  // namespace faultline::ref::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace faultline::ref::fuzz;
  const std::string_view input = AsText(data, size);
  const std::size_t limit = 16 + Hash(input) % 2048;
  const Decoded whole = Decode({input}, limit);
  const Decoded split = Decode(SplitByInput(input), limit);
  if (!(split == whole)) Fail("SSE whole vs split", whole.Describe(), split.Describe());
  const Decoded bytes = Decode(Bytewise(input), limit);
  if (!(bytes == whole)) Fail("SSE whole vs byte by byte", whole.Describe(), bytes.Describe());
  return 0;
}
