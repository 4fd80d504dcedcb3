// The scenario loader on any text (YAML, or JSON, which it reads as YAML): it answers with a
// scenario or an error, never throws or hangs; the answer is the same when asked again; an
// error points inside the text; an over-limit error appears only under the limits that the text
// exceeds (raising them never turns an answer into one); a scenario never holds more responses
// than the key limit allows, nor more text than the byte limit (what aliases repeat included),
// nor more streamed events than the event limit. The limits are drawn from the input.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "scenarios/loader.h"

namespace faultline::scenario::fuzz {
namespace {

using ref::fuzz::Fail;

std::string Describe(const std::expected<Scenario, LoadError>& parsed) {
  if (parsed)
    return "scenario " + parsed->name + " with " + std::to_string(parsed->responses.size());
  return std::string(parsed.error().over_limit ? "over limit: " : "error: ") +
         parsed.error().ToString();
}

void CheckPosition(const LoadError& error, std::string_view text) {
  const auto lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  if (error.line < 0 || error.line > lines + 1 || error.column < 0) {
    Fail("errors point inside the text", std::to_string(lines), error.ToString());
  }
}

// The bytes of the responses' texts: each was a scalar of the document, or an alias of one.
std::size_t TextBytes(const Scenario& scenario) {
  std::size_t bytes = 0;
  for (const ResponseSpec& response : scenario.responses) {
    bytes += response.content.text.size() + response.content.reasoning.size();
  }
  return bytes;
}

}  // namespace
}  // namespace faultline::scenario::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace faultline::scenario;
  using namespace faultline::scenario::fuzz;
  namespace rf = faultline::ref::fuzz;
  const std::string_view text = rf::AsText(data, size);
  const std::uint64_t hash = rf::Hash(text);
  const ParseLimits tight{.max_depth = 2 + static_cast<int>(hash % 20),
                          .max_keys = 1 + (hash >> 8) % 300,
                          .max_bytes = 16 + (hash >> 16) % 4096,
                          .max_stream_events = 1 + (hash >> 28) % 2000};
  const auto parsed = ParseScenario(text, "fuzz.yaml", tight);
  if (const auto again = ParseScenario(text, "fuzz.yaml", tight);
      Describe(again) != Describe(parsed)) {
    Fail("the loader answers the same twice", Describe(parsed), Describe(again));
  }
  if (!parsed) CheckPosition(parsed.error(), text);
  if (parsed && parsed->responses.size() > tight.max_keys) {
    Fail("responses within the key limit", std::to_string(tight.max_keys), Describe(parsed));
  }
  if (parsed && TextBytes(*parsed) > tight.max_bytes) {
    Fail("texts within the byte limit", std::to_string(tight.max_bytes),
         std::to_string(TextBytes(*parsed)));
  }
  if (parsed || !parsed.error().over_limit) {
    const auto roomy = ParseScenario(text, "fuzz.yaml", ParseLimits{});
    if (Describe(roomy) != Describe(parsed)) {
      Fail("raising the limits changes nothing within them", Describe(parsed), Describe(roomy));
    }
  }
  return 0;
}
