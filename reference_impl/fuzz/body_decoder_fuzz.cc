// A response body (the input) through the body decoding pipeline of every dialect, streamed
// (SSE -> dialect decoder -> assembler) and not (one JSON body): fed whole and at cuts derived
// from the input it must show the same deltas and end in the same outcome.
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "reference_impl/body_decoder.h"

namespace faultline::ref::fuzz {
namespace {

std::string Describe(const AttemptOutcome& outcome) {
  if (const auto* done = std::get_if<Completed>(&outcome)) {
    std::string out = "completed: " + done->text + " / " + done->finish_reason;
    for (const ToolCall& tool : done->tool_calls)
      out += " | " + tool.name + "(" + tool.arguments + ")";
    return out;
  }
  const Failure& failure = std::get<Failure>(outcome);
  return "failed: " + std::string(ToString(failure.failure_class)) + "/" +
         std::string(ToString(failure.code));
}

// The text of every delta shown, then the outcome (decided early, or at the end of the body).
std::string Run(Dialect dialect, bool stream, const std::vector<std::string_view>& pieces) {
  BodyDecoder decoder(dialect, stream);
  std::string shown;
  for (std::string_view piece : pieces) {
    for (const Delta& delta : decoder.Feed(piece).deltas) {
      if (const auto* text = std::get_if<TextDelta>(&delta)) shown += text->text;
      if (const auto* tool = std::get_if<ToolCallDelta>(&delta))
        shown += "{" + tool->arguments + "}";
    }
  }
  return shown + " => " + Describe(decoder.End());
}

}  // namespace
}  // namespace faultline::ref::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace faultline::ref::fuzz;
  const std::string_view input = AsText(data, size);
  ExpectSameInEveryDialect("body outcome whole vs split", input, {SplitByInput(input)}, Run);
  return 0;
}
