// The fast path of the dialect decoders (decode_fast_path*.cc) against nlohmann alone: the
// input's lines are the data of consecutive events, decoded in every dialect by a decoder with the
// fast path and one without, all named "message" and then all named as the dialect's delta events
// are. They must agree event by event, on the deltas and on acceptance; consecutive lines that
// share a shape exercise the recorded-shape shortcut.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "reference_impl/dialect_decoder.h"

namespace faultline::ref::fuzz {
namespace {

std::vector<std::string_view> Lines(std::string_view input) {
  std::vector<std::string_view> lines;
  for (std::size_t at = 0; at <= input.size();) {
    const std::size_t newline = std::min(input.find('\n', at), input.size());
    lines.push_back(input.substr(at, newline - at));
    at = newline + 1;
  }
  return lines;
}

// The SSE name (or event-stream :event-type) of a dialect's delta events.
std::string_view DeltaEventName(Dialect dialect) {
  switch (dialect) {
    case Dialect::kAnthropicMessages:
      return "content_block_delta";
    case Dialect::kOpenAiResponses:
      return "response.output_text.delta";
    case Dialect::kBedrockConverse:
      return "contentBlockDelta";
    case Dialect::kOpenAiChat:
    case Dialect::kGemini:
    case Dialect::kOllama:
      break;
  }
  return "message";
}

void ExpectFastPathAgrees(Dialect dialect, std::string_view name,
                          const std::vector<std::string_view>& lines) {
  DialectDecoder fast(dialect);
  DialectDecoder full(dialect, DialectDecoder::Options{.fast_path = false});
  for (std::string_view line : lines) {
    const SseEventView event{name, line, ""};
    std::vector<Delta> fast_deltas;
    std::vector<Delta> full_deltas;
    const bool fast_ok = fast.DecodeEvent(event, fast_deltas).has_value();
    const bool full_ok = full.DecodeEvent(event, full_deltas).has_value();
    if (fast_ok != full_ok || fast_deltas != full_deltas) {
      const auto describe = [&](bool ok, const std::vector<Delta>& deltas) {
        return std::string(ToString(dialect)) + " " + std::string(name) + " " +
               (ok ? "accepted, " : "refused, ") + std::to_string(deltas.size()) +
               " deltas: " + std::string(line);
      };
      Fail("fast path vs nlohmann", describe(full_ok, full_deltas), describe(fast_ok, fast_deltas));
    }
  }
}

}  // namespace
}  // namespace faultline::ref::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace faultline::ref::fuzz;
  const std::vector<std::string_view> lines = Lines(AsText(data, size));
  for (const faultline::ref::Dialect dialect : faultline::ref::AllDialects()) {
    ExpectFastPathAgrees(dialect, "message", lines);
    ExpectFastPathAgrees(dialect, DeltaEventName(dialect), lines);
  }
  return 0;
}
