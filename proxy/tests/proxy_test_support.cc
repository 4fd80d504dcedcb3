#include "proxy/tests/proxy_test_support.h"

#include <gtest/gtest.h>

#include <variant>

#include "reference_impl/classify.h"

namespace faultline::proxy::testing {

RuleBook Book(std::string_view yaml) {
  auto rules = scenario::ParseProxyRules(yaml, "rules.yaml");
  EXPECT_TRUE(rules.has_value()) << (rules ? "" : rules.error().ToString());
  return RuleBook(rules ? std::move(*rules) : scenario::ProxyRules{});
}

Simulated Simulate(const RuleBook& book, const provider::HttpRequest& request,
                   std::string_view upstream, std::size_t piece, Duration gap, std::uint64_t index,
                   std::uint64_t seed) {
  ExchangeSetup setup;
  setup.index = index;
  setup.seed = seed;
  setup.now = FixedNow();
  setup.upstream = {"upstream.test:80", ""};
  ProxyExchange exchange(book, request, setup);
  Simulated out;
  const auto take = [&out](std::vector<Action> actions) {
    for (Action& action : actions) out.actions.push_back(std::move(action));
  };
  take(exchange.Start());
  out.upstream_called =
      !out.actions.empty() && out.actions.front().kind == Action::Kind::kSendUpstream;
  Duration at = milliseconds(5);
  for (std::size_t i = 0; out.upstream_called && i < upstream.size() && exchange.wants_upstream();
       i += piece, at += gap) {
    take(exchange.OnUpstreamBytes(upstream.substr(i, piece), at));
  }
  if (out.upstream_called && exchange.wants_upstream()) {
    take(exchange.OnUpstreamEnd(at + milliseconds(1), false));
  }
  for (const Action& action : out.actions) {
    if (action.kind == Action::Kind::kSendUpstream) continue;
    out.end = action.kind;
    out.end_at = action.at;
    if (action.kind == Action::Kind::kWrite) {
      out.client += action.bytes;
      if (!out.first_write) out.first_write = action.at;
      exchange.Wrote(action.at, action.at, action.bytes.size());
    }
  }
  exchange.Ended(provider::EndKind::kCompleted, out.end_at);
  out.record = exchange.record();
  return out;
}

Verdict ClientVerdict(scenario::Dialect dialect, const Simulated& simulated, bool stream) {
  Verdict verdict;
  if (simulated.end == Action::Kind::kHold) verdict.stalled = true;
  ref::HttpResponseParser parser;
  const ref::Dialect ref_dialect = RefDialect(dialect);
  ref::HttpFeed feed = parser.Feed(simulated.client);
  if (!parser.has_head()) return verdict;
  const ref::HttpResponseHead& head = parser.head();
  verdict.status = head.status;
  if (auto retry_after = head.headers.Find("retry-after"))
    verdict.retry_after = std::string(*retry_after);
  const bool ok = head.status >= 200 && head.status <= 299;
  ref::BodyDecoder decoder(ref_dialect, stream && ok);
  decoder.assembler().SetResponseInfo(head.status, std::nullopt);
  std::string body(feed.body);
  if (!feed.complete && !feed.failure && simulated.end != Action::Kind::kHold) {
    feed = parser.FeedEof();  // the proxy closed or reset the connection
    body += feed.body;
  }
  if (!ok) {  // classified as the reference client classifies an error answer
    const ref::ClassifiedResponse classified =
        ref::ClassifyHttpError({head.status, head.headers, body, ref_dialect}, FixedNow());
    verdict.failure = classified.failure.code;
    verdict.retry_after_ms = classified.failure.retry_after;
    return verdict;
  }
  decoder.Feed(body);
  const std::optional<ref::AttemptOutcome>& decided = decoder.assembler().outcome();
  if (!decided && simulated.end == Action::Kind::kHold) return verdict;
  if (!decided && (feed.failure || simulated.end == Action::Kind::kReset)) {
    verdict.failure = ref::FailureCode::kTransport;
    return verdict;
  }
  const ref::AttemptOutcome& outcome = decided ? *decided : decoder.End();
  if (const auto* failure = std::get_if<ref::Failure>(&outcome)) {
    verdict.failure = failure->code;
  } else {
    verdict.text = std::get<ref::Completed>(outcome).text;
  }
  return verdict;
}

}  // namespace faultline::proxy::testing
