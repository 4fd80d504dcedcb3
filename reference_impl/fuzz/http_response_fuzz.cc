// An HTTP response (the input) fed to one attempt of the call engine (max_attempts 1, no timer
// fires) whole and at cuts derived from the input must get the same verdict in every dialect
// (and byte by byte in one): the committed answer, or the failure's class and code, or still
// waiting; then the same again once the connection closes. Exercises the HTTP parser, the head
// checks, chunked decoding, trailers, error-body classification and the dialect decoders behind
// them.
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "reference_impl/call.h"

namespace faultline::ref::fuzz {
namespace {

const PolicyClock::time_point kNow = PolicyClock::time_point(std::chrono::hours(1));
const std::chrono::system_clock::time_point kWall{std::chrono::seconds(1'767'225'600)};

std::string Verdict(Call& call) {
  std::string out = "waiting";
  for (const LifecycleEvent& event : call.TakeEvents()) {
    if (event.type == EventType::kCommitted) {
      out = "committed: " + event.committed->text + " / " + event.committed->finish_reason;
      for (const ToolCall& tool : event.committed->tool_calls) {
        out += " | " + tool.name + "(" + tool.arguments + ")";
      }
    } else if (event.type == EventType::kFailed) {
      out = "failed: " + std::string(ToString(event.failure->failure_class)) + "/" +
            std::string(ToString(event.failure->code));
    }
  }
  return out;
}

// The verdict after the bytes, and after the connection's end: "<open verdict> => <closed>".
std::string Run(Dialect dialect, bool stream, const std::vector<std::string_view>& pieces) {
  RetryPolicy policy;
  policy.max_attempts = 1;
  CallRequest request{.dialect = dialect,
                      .base_url = {.host = "127.0.0.1", .port = 80, .path = ""},
                      .api_key = "sk-fuzz",
                      .body = R"({"model":"m","stream":true})",
                      .stream = stream,
                      .idempotency_key = std::nullopt,
                      .extra_headers = {},
                      .routes = {}};
  Call call(request, policy, {});
  call.Start(kNow, kWall);
  call.Connected(kNow);
  for (std::string_view piece : pieces) call.BytesReceived(piece, kNow);
  const std::string open = Verdict(call);
  call.ConnectionClosed(kNow);
  const std::string closed = Verdict(call);  // "waiting": nothing new, the verdict stands
  return open + " => " + (closed == "waiting" ? open : closed);
}

}  // namespace
}  // namespace faultline::ref::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace faultline::ref;
  using namespace faultline::ref::fuzz;
  const std::string_view input = AsText(data, size);
  ExpectSameInEveryDialect("HTTP verdict whole vs split", input, {SplitByInput(input)}, Run);
  // Byte by byte costs a feed per byte: once per body shape (a stream, a JSON body) is enough,
  // since the dialect decoders see the same events and bodies whatever the split.
  for (const bool stream : {true, false}) {
    const std::string whole = Run(Dialect::kOpenAiChat, stream, {input});
    if (const std::string other = Run(Dialect::kOpenAiChat, stream, Bytewise(input, 1024));
        other != whole) {
      Fail("HTTP verdict whole vs byte by byte", whole, other);
    }
  }
  return 0;
}
