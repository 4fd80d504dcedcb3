// The proxy's rule file on any text: the loader answers with rules or an error, never throws or
// hangs; the answer is the same when asked again; an error points inside the text. Rules that
// load then run: each applies to an exchange over the fake provider's own stream (every request
// index up to 4, so probabilities and matches are exercised), which must end with one final
// action and never write after it.
#include <cstdint>
#include <string>
#include <string_view>

#include "fake_provider/plan/plan_compiler.h"
#include "fuzz/fuzz_support.h"
#include "proxy/fault_rules.h"
#include "proxy/proxy_core.h"
#include "scenarios/proxy_rules.h"

namespace faultline::proxy::fuzz {
namespace {

using ref::fuzz::Fail;

std::string Describe(const std::expected<scenario::ProxyRules, scenario::LoadError>& parsed) {
  if (parsed) return "rules " + std::to_string(parsed->rules.size());
  return "error: " + parsed.error().ToString();
}

std::string Upstream(scenario::Dialect dialect) {
  scenario::Scenario upstream;
  upstream.name = "upstream";
  upstream.dialect = dialect;
  upstream.responses = {scenario::ResponseSpec{}};
  const provider::CompiledScenario compiled(upstream);
  std::string bytes;
  const provider::WallTime now(std::chrono::seconds(1'750'000'000));
  for (const auto& step : compiled.Plan(upstream.responses[0], {1, true, 0, now, 1}).steps) {
    if (step.kind == provider::PlanStep::Kind::kSend) bytes += step.bytes;
  }
  return bytes;
}

void Exercise(const RuleBook& book, std::uint64_t hash) {
  for (scenario::Dialect dialect : scenario::AllDialects()) {
    const std::string upstream = Upstream(dialect);
    for (std::uint64_t index = 1; index <= 4; ++index) {
      provider::HttpRequest request;
      request.method = "POST";
      request.target = std::string(provider::WriterFor(dialect).endpoint_path());
      request.body = R"({"stream":true})";
      ExchangeSetup setup;
      setup.index = index;
      setup.seed = hash;
      ProxyExchange exchange(book, request, setup);
      std::vector<Action> actions = exchange.Start();
      const std::size_t piece = 1 + hash % 97;
      for (std::size_t i = 0; i < upstream.size() && exchange.wants_upstream(); i += piece) {
        for (Action& action :
             exchange.OnUpstreamBytes(std::string_view(upstream).substr(i, piece), Duration(i))) {
          actions.push_back(std::move(action));
        }
      }
      for (Action& action : exchange.OnUpstreamEnd(Duration(upstream.size()), false)) {
        actions.push_back(std::move(action));
      }
      std::size_t finals = 0;
      Duration last{0};
      for (const Action& action : actions) {
        if (finals > 0)
          Fail("nothing follows the final action", "", std::to_string(actions.size()));
        if (action.at < last)
          Fail("actions come in time order", "", std::to_string(action.at.count()));
        last = action.at;
        finals += action.kind != Action::Kind::kWrite && action.kind != Action::Kind::kSendUpstream;
      }
      if (finals != 1) Fail("an exchange ends once", "1", std::to_string(finals));
    }
  }
}

}  // namespace
}  // namespace faultline::proxy::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace faultline;
  namespace rf = faultline::ref::fuzz;
  const std::string_view text = rf::AsText(data, size);
  const scenario::ParseLimits limits{.max_depth = 32, .max_keys = 2000, .max_bytes = 1 << 16};
  const auto parsed = scenario::ParseProxyRules(text, "fuzz.yaml", limits);
  const auto again = scenario::ParseProxyRules(text, "fuzz.yaml", limits);
  if (proxy::fuzz::Describe(again) != proxy::fuzz::Describe(parsed)) {
    rf::Fail("the same text, the same answer", proxy::fuzz::Describe(parsed),
             proxy::fuzz::Describe(again));
  }
  if (!parsed) {
    const auto lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
    if (parsed.error().line < 0 || parsed.error().line > lines + 1) {
      rf::Fail("errors point inside the text", std::to_string(lines), parsed.error().ToString());
    }
    return 0;
  }
  proxy::fuzz::Exercise(proxy::RuleBook(*parsed), rf::Hash(text));
  return 0;
}
