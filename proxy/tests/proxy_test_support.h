// What the proxy tests share: a realistic upstream answer (the fake provider's own bytes, in any
// dialect), an exchange run in virtual time, and what the reference client makes of the bytes a
// client received.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fake_provider/http_request.h"
#include "fake_provider/plan/plan_compiler.h"
#include "fake_provider/wire/dialect.h"
#include "proxy/fault_rules.h"
#include "proxy/proxy_core.h"
#include "reference_impl/body_decoder.h"
#include "reference_impl/http_response.h"
#include "scenarios/proxy_rules.h"

namespace faultline::proxy::testing {

using std::chrono::milliseconds;

inline scenario::ErrorSpec ErrorOf(scenario::ErrorKind kind) {
  scenario::ErrorSpec error;
  error.kind = kind;
  return error;
}

inline provider::WallTime FixedNow() {
  return provider::WallTime(std::chrono::seconds(1'750'000'000));
}

// The fake provider's whole answer to `spec` (status line, headers, body), as one string.
inline std::string ProviderAnswer(scenario::Dialect dialect, scenario::ResponseSpec spec = {},
                                  bool stream = true) {
  scenario::Scenario upstream;
  upstream.name = "upstream";
  upstream.dialect = dialect;
  upstream.responses = {spec};
  const provider::CompiledScenario compiled(upstream);
  const provider::ResponsePlan plan = compiled.Plan(spec, {1, stream, 0, FixedNow(), 10});
  std::string bytes;
  for (const provider::PlanStep& step : plan.steps) {
    if (step.kind == provider::PlanStep::Kind::kSend) bytes += step.bytes;
  }
  return bytes;
}

// A long enough answer that every test's event N exists: 40 code points, one per event.
inline scenario::ResponseSpec LongAnswer() {
  scenario::ResponseSpec spec;
  spec.content.text = "The quick brown fox jumps over the dog.";
  spec.content.chunk_size = 4;
  return spec;
}

inline provider::HttpRequest RequestFor(scenario::Dialect dialect, bool stream = true) {
  provider::HttpRequest request;
  request.method = "POST";
  request.target = std::string(provider::WriterFor(dialect).endpoint_path());
  request.headers = {{"content-type", "application/json"}, {"authorization", "Bearer sk-test"}};
  request.body =
      stream ? R"({"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]})"
             : R"({"model":"m","stream":false,"messages":[{"role":"user","content":"hi"}]})";
  return request;
}

// A rule book from rule-file text (the test fails on an invalid text).
RuleBook Book(std::string_view yaml);

struct Simulated {
  std::vector<Action> actions;              // every action, in order
  std::string client;                       // the bytes the client was written
  Action::Kind end = Action::Kind::kWrite;  // the last action's kind
  Duration end_at{0};
  std::optional<Duration> first_write;
  ExchangeRecord record;
  bool upstream_called = false;
};

// One exchange in virtual time: the upstream's answer arrives in pieces of `piece` bytes, the
// first 5 ms after the request and then one every `gap`, and ends (FIN) 1 ms after the last.
Simulated Simulate(const RuleBook& book, const provider::HttpRequest& request,
                   std::string_view upstream, std::size_t piece = 64,
                   Duration gap = milliseconds(10), std::uint64_t index = 1,
                   std::uint64_t seed = 0);

// What the reference client concludes from the bytes a client got, ended as `end` says.
struct Verdict {
  int status = 0;
  std::optional<ref::FailureCode> failure;                  // nullopt: the answer committed
  std::string text;                                         // the committed text
  std::optional<std::string> retry_after;                   // the header, as received
  std::optional<std::chrono::milliseconds> retry_after_ms;  // the hint the client reads from it
  bool stalled = false;  // the connection was held: no verdict without a clock
};
Verdict ClientVerdict(scenario::Dialect dialect, const Simulated& simulated, bool stream = true);

}  // namespace faultline::proxy::testing
