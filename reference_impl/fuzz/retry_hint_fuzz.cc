// Retry hints from hostile values: the input's lines are header fields ("name: value") up to the
// first line without a colon, the rest is the error body. Every hint any parser returns must lie
// within [0, kMaxRetryHint] (one day), and so must the one the classifier attaches to the
// failure; nothing may overflow (UBSan) or read an empty optional (ASan).
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "reference_impl/classify.h"
#include "reference_impl/retry_after.h"

namespace faultline::ref::fuzz {
namespace {

using std::chrono::milliseconds;

void CheckBounds(const char* parser, std::optional<milliseconds> hint, std::string_view input) {
  if (hint && (*hint < milliseconds(0) || *hint > kMaxRetryHint)) {
    Fail(parser, std::string(input.substr(0, 200)), std::to_string(hint->count()) + " ms");
  }
}

// Header fields from the leading "name: value" lines; returns where the body starts.
std::size_t ReadHeaders(std::string_view input, HttpHeaders& headers) {
  std::size_t at = 0;
  while (at < input.size()) {
    const std::size_t end = std::min(input.find('\n', at), input.size());
    const std::string_view line = input.substr(at, end - at);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) break;
    headers.Append(std::string(line.substr(0, colon)), std::string(line.substr(colon + 1)));
    at = end + 1;
  }
  return std::min(at, input.size());
}

}  // namespace
}  // namespace faultline::ref::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace faultline::ref;
  using namespace faultline::ref::fuzz;
  const std::string_view input = AsText(data, size);
  // The receiver's clock: 2024-11-29, or a time drawn from the input between 1970 and ~2200.
  const std::uint64_t hash = Hash(input);
  const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(
      hash & 1 ? 1'732'881'600 : static_cast<std::int64_t>(hash % 7'258'118'400)));
  CheckBounds("ParseRetryAfterMs", ParseRetryAfterMs(input), input);
  CheckBounds("ParseDelaySeconds", ParseDelaySeconds(input), input);
  CheckBounds("ParseGoDuration", ParseGoDuration(input), input);
  CheckBounds("ParseBodyRetryHint", ParseBodyRetryHint(input), input);
  (void)ParseHttpDate(input, now);
  HttpHeaders headers;
  const std::string_view body = input.substr(ReadHeaders(input, headers));
  for (const int status : {429, 503, 529}) {
    const auto hint = FindRetryHint({headers, body, status, now});
    CheckBounds("FindRetryHint", hint ? std::optional(hint->delay) : std::nullopt, input);
    const ClassifiedResponse classified = ClassifyHttpError(
        {.status = status, .headers = headers, .body = body, .dialect = Dialect::kOpenAiChat}, now);
    CheckBounds("ClassifyHttpError", classified.failure.retry_after, input);
  }
  return 0;
}
