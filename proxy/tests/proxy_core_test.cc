// The exchange core in virtual time: every fault kind on the fake provider's own streams, in
// every dialect (SSE, Ollama's NDJSON, Bedrock's event stream), judged by the reference client's
// decoders.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "fake_provider/journal.h"
#include "proxy/proxy_journal.h"
#include "proxy/tests/proxy_test_support.h"

namespace faultline::proxy::testing {
namespace {

using scenario::Dialect;
using Kind = Action::Kind;
using ::testing::HasSubstr;

// The body bytes a client got (chunked coding removed), and the events in them.
struct ClientBody {
  std::string bytes;
  std::uint64_t events = 0;
};
ClientBody BodyOf(Dialect dialect, const std::string& client) {
  ref::HttpResponseParser parser;
  ClientBody out;
  ref::HttpFeed feed = parser.Feed(client);
  out.bytes = std::string(feed.body);
  if (!feed.complete) out.bytes += parser.FeedEof().body;
  provider::EventSplitter splitter(RefDialect(dialect));
  splitter.Split(out.bytes);
  out.events = splitter.events();
  return out;
}

std::string DialectName(const ::testing::TestParamInfo<Dialect>& info) {
  std::string name(scenario::ToString(info.param));
  std::erase(name, '-');
  return name;
}

class EveryDialect : public ::testing::TestWithParam<Dialect> {};
INSTANTIATE_TEST_SUITE_P(Proxy, EveryDialect, ::testing::ValuesIn(scenario::AllDialects()),
                         DialectName);

TEST_P(EveryDialect, WithoutRulesTheClientGetsTheUpstreamsBytes) {
  const std::string upstream = ProviderAnswer(GetParam(), LongAnswer());
  for (std::size_t piece : {std::size_t{1}, std::size_t{7}, std::size_t{4096}}) {
    const Simulated run =
        Simulate(Book("faultline: 1\nrules: []\n"), RequestFor(GetParam()), upstream, piece);
    EXPECT_EQ(run.client, upstream) << "pieces of " << piece;
    EXPECT_EQ(run.end, Kind::kFinish);
    EXPECT_EQ(run.record.upstream_bytes, upstream);
    EXPECT_GT(run.record.upstream_events, 10u);
    EXPECT_EQ(ClientVerdict(GetParam(), run).text, LongAnswer().content.text);
  }
}

TEST_P(EveryDialect, ARuleThatAnswersSendsTheFakeProvidersErrorWithoutCallingUpstream) {
  const RuleBook book = Book(R"(faultline: 1
rules:
  - name: throttle
    response: {status: 429, retry_after: {seconds: 2}}
)");
  const Simulated run = Simulate(book, RequestFor(GetParam()), "never sent");
  EXPECT_FALSE(run.upstream_called);
  const Verdict verdict = ClientVerdict(GetParam(), run);
  EXPECT_EQ(verdict.status, 429);
  EXPECT_EQ(verdict.failure, ref::FailureCode::kRateLimit);
  EXPECT_EQ(verdict.retry_after, "2");
  EXPECT_EQ(verdict.retry_after_ms, std::chrono::milliseconds(2000));
  EXPECT_EQ(run.record.rule, "throttle");
  // Byte for byte what the fake provider answers to the same entry.
  scenario::ResponseSpec spec;
  spec.status = 429;
  spec.error = ErrorOf(scenario::ErrorKind::kRateLimit);
  spec.retry_after = scenario::RetryAfter{scenario::RetryAfter::Form::kSeconds, "2"};
  EXPECT_EQ(run.client, ProviderAnswer(GetParam(), spec));
}

TEST_P(EveryDialect, RetryAfterAsAnHttpDateIsInjectedIntoTheUpstreamsOwnAnswer) {
  scenario::ResponseSpec throttled;
  throttled.status = 503;
  throttled.error = ErrorOf(scenario::ErrorKind::kUnavailable);
  const std::string upstream = ProviderAnswer(GetParam(), throttled);
  const RuleBook book = Book(R"(faultline: 1
rules:
  - response: {retry_after: {http_date: 7s}}
)");
  const Simulated run = Simulate(book, RequestFor(GetParam()), upstream, 32);
  const Verdict verdict = ClientVerdict(GetParam(), run);
  EXPECT_EQ(verdict.status, 503);
  ASSERT_TRUE(verdict.retry_after.has_value());
  EXPECT_THAT(*verdict.retry_after, HasSubstr("GMT"));
  // Read against the upstream's Date header, as a client reads it.
  EXPECT_EQ(verdict.retry_after_ms, std::chrono::milliseconds(7000));
  // The body is the upstream's, untouched.
  EXPECT_TRUE(run.client.ends_with(upstream.substr(upstream.find("\r\n\r\n") + 4)));
}

TEST_P(EveryDialect, MalformedEventAfterEventTwoIsAProtocolFailure) {
  const RuleBook book = Book(R"(faultline: 1
rules:
  - response: {content: {faults: [{after_event: 2, inject: invalid_json}]}}
)");
  const Simulated run =
      Simulate(book, RequestFor(GetParam()), ProviderAnswer(GetParam(), LongAnswer()), 50);
  EXPECT_EQ(ClientVerdict(GetParam(), run).failure, ref::FailureCode::kMalformedResponse);
  EXPECT_THAT(run.record.faults, HasSubstr("invalid_json@2"));
  EXPECT_EQ(run.end, Kind::kFinish);  // the rest of the stream still came
}

// The proxy's live injection reads, to the reference client, as the fake provider's scripted
// one: the same failure.
TEST_P(EveryDialect, InStreamErrorAfterEventTwoIsTheDialectsOwn) {
  const bool bedrock = GetParam() == Dialect::kBedrockConverse;
  const bool chat = GetParam() == Dialect::kOpenAiChat;
  const bool ollama = GetParam() == Dialect::kOllama;
  const std::string inject = chat ? "error_envelope" : "provider_error";
  const std::string error = ollama ? "server" : "overloaded";
  const RuleBook book = Book(
      "faultline: 1\nrules:\n  - match: {dialect: " + std::string(scenario::ToString(GetParam())) +
      "}\n    response: {content: {faults: [{after_event: 2, inject: " + inject +
      ", error: " + error + "}]}}\n");
  const Simulated run =
      Simulate(book, RequestFor(GetParam()), ProviderAnswer(GetParam(), LongAnswer()), 50);
  scenario::ResponseSpec scripted = LongAnswer();
  scenario::EventFault fault;
  fault.kind = chat ? scenario::EventFault::Kind::kErrorEnvelope
                    : scenario::EventFault::Kind::kProviderError;
  fault.after_event = 2;
  fault.error.kind = ollama ? scenario::ErrorKind::kServer : scenario::ErrorKind::kOverloaded;
  scripted.content.faults = {fault};
  Simulated reference;
  reference.client = ProviderAnswer(GetParam(), scripted);
  reference.end = Kind::kFinish;
  const Verdict expected = ClientVerdict(GetParam(), reference);
  ASSERT_TRUE(expected.failure.has_value());
  EXPECT_EQ(ClientVerdict(GetParam(), run).failure, expected.failure) << bedrock;
}

TEST_P(EveryDialect, StallForeverAfterEventTwoHoldsTheConnection) {
  const RuleBook book = Book(R"(faultline: 1
rules:
  - response: {content: {faults: [{after_event: 2, stall: forever}]}}
)");
  const Simulated run =
      Simulate(book, RequestFor(GetParam()), ProviderAnswer(GetParam(), LongAnswer()), 3);
  EXPECT_EQ(run.end, Kind::kHold);
  EXPECT_EQ(BodyOf(GetParam(), run.client).events, 2u);
  EXPECT_EQ(run.record.upstream.end, provider::EndKind::kClientClosed);
}

TEST_P(EveryDialect, DelayAfterEventOnePostponesTheRestAndKeepsTheAnswer) {
  const RuleBook book = Book(R"(faultline: 1
rules:
  - response: {headers_delay: 300ms, content: {faults: [{after_event: 1, delay: 2s}]}}
)");
  const Simulated run =
      Simulate(book, RequestFor(GetParam()), ProviderAnswer(GetParam(), LongAnswer()), 40);
  ASSERT_TRUE(run.first_write.has_value());
  EXPECT_GE(*run.first_write, milliseconds(305));  // the head came at 5 ms, then 300 ms more
  EXPECT_GE(run.end_at, milliseconds(2305));
  EXPECT_EQ(ClientVerdict(GetParam(), run).text, LongAnswer().content.text);
}

TEST_P(EveryDialect, CutAtByteKOfTheBody) {
  const RuleBook book = Book(R"(faultline: 1
rules:
  - response: {content: {end: {kind: close, after_event: 0, at_byte: 37}}}
)");
  const Simulated run =
      Simulate(book, RequestFor(GetParam()), ProviderAnswer(GetParam(), LongAnswer()), 5);
  EXPECT_EQ(run.end, Kind::kClose);
  EXPECT_EQ(BodyOf(GetParam(), run.client).bytes.size(), 37u);
  EXPECT_EQ(ClientVerdict(GetParam(), run).failure, ref::FailureCode::kTransport);
}

TEST_P(EveryDialect, CutBeforeTheTerminalEventLeavesItOut) {
  const RuleBook book = Book(R"(faultline: 1
rules:
  - response: {content: {end: no_terminator}}
)");
  const Simulated run =
      Simulate(book, RequestFor(GetParam()), ProviderAnswer(GetParam(), LongAnswer()), 64);
  EXPECT_EQ(run.end, Kind::kFinish);
  EXPECT_EQ(ClientVerdict(GetParam(), run).failure, ref::FailureCode::kStreamTruncated);
}

TEST_P(EveryDialect, NonStreamAnswersTakeByteCutsOnly) {
  const RuleBook book = Book(R"(faultline: 1
rules:
  - response: {content: {end: {kind: reset, after_event: 0, at_byte: 10}}}
)");
  const Simulated run = Simulate(book, RequestFor(GetParam(), false),
                                 ProviderAnswer(GetParam(), LongAnswer(), false), 8);
  EXPECT_EQ(run.end, Kind::kReset);
  EXPECT_EQ(BodyOf(GetParam(), run.client).bytes.size(), 10u);
}

struct CutCase {
  std::string kind;
  Kind end;
  std::optional<ref::FailureCode> failure;  // nullopt: stalled, no verdict
};

class CutAtEventThree : public ::testing::TestWithParam<std::tuple<Dialect, CutCase>> {};

// Each termination kind of the catalogue, at event 3, in each framing.
TEST_P(CutAtEventThree, EndsAsTheKindSays) {
  const auto& [dialect, cut] = GetParam();
  const RuleBook book =
      Book("faultline: 1\nrules:\n  - response: {content: {end: {kind: " + cut.kind +
           ", after_event: 3}}}\n");
  const Simulated run =
      Simulate(book, RequestFor(dialect), ProviderAnswer(dialect, LongAnswer()), 17);
  EXPECT_EQ(run.end, cut.end);
  EXPECT_EQ(BodyOf(dialect, run.client).events, 3u);
  const Verdict verdict = ClientVerdict(dialect, run);
  EXPECT_EQ(verdict.failure, cut.failure);
  EXPECT_EQ(verdict.stalled, !cut.failure.has_value());
  EXPECT_THAT(run.record.faults, HasSubstr("end=" + cut.kind + "@3"));
}

INSTANTIATE_TEST_SUITE_P(
    Proxy, CutAtEventThree,
    ::testing::Combine(
        ::testing::Values(Dialect::kOpenAiChat, Dialect::kAnthropicMessages,
                          Dialect::kOpenAiResponses, Dialect::kGemini, Dialect::kOllama,
                          Dialect::kBedrockConverse),
        ::testing::Values(CutCase{"close", Kind::kClose, ref::FailureCode::kTransport},
                          CutCase{"no_final_chunk", Kind::kClose, ref::FailureCode::kTransport},
                          CutCase{"reset", Kind::kReset, ref::FailureCode::kTransport},
                          CutCase{"no_terminator", Kind::kFinish,
                                  ref::FailureCode::kStreamTruncated},
                          CutCase{"stall", Kind::kHold, std::nullopt})),
    [](const auto& info) {
      std::string name = std::string(scenario::ToString(std::get<0>(info.param))) + "_" +
                         std::get<1>(info.param).kind;
      std::erase(name, '-');
      return name;
    });

TEST(ProxyCoreTest, AStallThatEndsClosesAfterItsWait) {
  const RuleBook book = Book(R"(faultline: 1
rules:
  - response: {content: {end: {kind: stall, after_event: 2, wait: 5s}}}
)");
  const Simulated run = Simulate(book, RequestFor(Dialect::kOpenAiChat),
                                 ProviderAnswer(Dialect::kOpenAiChat, LongAnswer()), 4096);
  EXPECT_EQ(run.end, Kind::kClose);
  EXPECT_GE(run.end_at, milliseconds(5005));
}

TEST(ProxyCoreTest, DoneAfterAnErrorSkipsToTheTerminator) {
  const RuleBook book = Book(R"(faultline: 1
rules:
  - match: {dialect: openai-chat}
    response:
      content:
        faults: [{after_event: 2, inject: error_envelope, error: server}]
        end: {kind: done, after_event: 2}
)");
  const Simulated run = Simulate(book, RequestFor(Dialect::kOpenAiChat),
                                 ProviderAnswer(Dialect::kOpenAiChat, LongAnswer()), 30);
  const ClientBody body = BodyOf(Dialect::kOpenAiChat, run.client);
  EXPECT_EQ(body.events, 4u);  // two events, the error, [DONE]
  EXPECT_TRUE(body.bytes.ends_with("data: [DONE]\n\n"));
  EXPECT_EQ(ClientVerdict(Dialect::kOpenAiChat, run).failure, ref::FailureCode::kServer);
}

TEST(ProxyCoreTest, FaultsBeyondTheStreamAreJournaledAsNotReached) {
  const RuleBook book = Book(R"(faultline: 1
rules:
  - response: {content: {faults: [{after_event: 900, inject: invalid_json}]}}
)");
  const Simulated run = Simulate(book, RequestFor(Dialect::kOpenAiChat),
                                 ProviderAnswer(Dialect::kOpenAiChat, LongAnswer()));
  EXPECT_THAT(run.record.faults, HasSubstr("invalid_json@900(not reached"));
  EXPECT_EQ(ClientVerdict(Dialect::kOpenAiChat, run).text, LongAnswer().content.text);
}

TEST(ProxyCoreTest, BodyFaultsLeaveAnUpstreamErrorAlone) {
  scenario::ResponseSpec error;
  error.status = 500;
  error.error = ErrorOf(scenario::ErrorKind::kServer);
  const std::string upstream = ProviderAnswer(Dialect::kAnthropicMessages, error);
  const RuleBook book = Book(R"(faultline: 1
rules:
  - response: {content: {end: {kind: reset, after_event: 1}}}
)");
  const Simulated run = Simulate(book, RequestFor(Dialect::kAnthropicMessages), upstream);
  EXPECT_EQ(run.client, upstream);
  EXPECT_THAT(run.record.faults, HasSubstr("not applied: the upstream answered 500"));
}

TEST(ProxyCoreTest, AnUnreachableUpstreamIsABadGatewayInTheDialectsWords) {
  ExchangeSetup setup;
  setup.now = FixedNow();
  const RuleBook book = Book("faultline: 1\nrules: []\n");
  ProxyExchange exchange(book, RequestFor(Dialect::kOpenAiChat), setup);
  ASSERT_EQ(exchange.Start().front().kind, Kind::kSendUpstream);
  std::string client;
  for (const Action& action : exchange.OnUpstreamFailed(milliseconds(3), "Connection refused")) {
    if (action.kind == Kind::kWrite) client += action.bytes;
  }
  EXPECT_TRUE(client.starts_with("HTTP/1.1 502 "));
  EXPECT_THAT(exchange.record().faults, HasSubstr("Connection refused"));
  EXPECT_FALSE(exchange.wants_upstream());
}

TEST(ProxyCoreTest, RulesMatchByPathDialectAndRequestIndex) {
  const RuleBook book = Book(R"(faultline: 1
rules:
  - name: third
    match: {requests: [3]}
    response: {status: 500}
  - name: messages
    match: {path: /v1/messages}
    response: {status: 529}
  - name: responses-family
    match: {path: "/v1/resp*", dialect: [openai-responses]}
    response: {status: 503}
)");
  EXPECT_EQ(book.Select("/v1/chat/completions", Dialect::kOpenAiChat, 3, 0).rule->name, "third");
  EXPECT_EQ(book.Select("/v1/chat/completions", Dialect::kOpenAiChat, 4, 0).rule, nullptr);
  EXPECT_EQ(book.Select("/v1/messages", Dialect::kAnthropicMessages, 4, 0).rule->name, "messages");
  EXPECT_EQ(book.Select("/v1/responses", Dialect::kOpenAiResponses, 1, 0).rule->name,
            "responses-family");
  EXPECT_EQ(book.Select("/v1/responses", Dialect::kOpenAiChat, 1, 0).rule, nullptr);
  // An answer needs a dialect to be written in: an unknown path gets none.
  EXPECT_EQ(book.Select("/healthz", std::nullopt, 3, 0).rule, nullptr);
}

std::set<std::uint64_t> Applied(const RuleBook& book, std::uint64_t seed) {
  std::set<std::uint64_t> applied;
  for (std::uint64_t index = 1; index <= 400; ++index) {
    if (book.Select("/v1/chat/completions", Dialect::kOpenAiChat, index, seed).rule != nullptr) {
      applied.insert(index);
    }
  }
  return applied;
}

TEST(ProxyCoreTest, TheSeededProbabilityIsReproducible) {
  const RuleBook book = Book(R"(faultline: 1
rules:
  - name: sometimes
    probability: 0.3
    response: {status: 429}
)");
  const std::set<std::uint64_t> first = Applied(book, 42);
  EXPECT_EQ(Applied(book, 42), first);
  EXPECT_NE(Applied(book, 43), first);
  EXPECT_GT(first.size(), 80u);  // 120 expected of 400
  EXPECT_LT(first.size(), 160u);
  // The exchange follows the draw: the same requests are answered 429, and only those.
  for (std::uint64_t index : {std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{3}}) {
    const Simulated run =
        Simulate(book, RequestFor(Dialect::kOpenAiChat), ProviderAnswer(Dialect::kOpenAiChat), 4096,
                 milliseconds(1), index, 42);
    EXPECT_EQ(ClientVerdict(Dialect::kOpenAiChat, run).status, first.contains(index) ? 429 : 200);
  }
}

TEST(ProxyCoreTest, TheJournalLineHoldsBothSides) {
  const RuleBook book = Book(R"(faultline: 1
rules:
  - name: cut
    response: {content: {end: {kind: close, after_event: 1}}}
)");
  const Simulated run = Simulate(book, RequestFor(Dialect::kBedrockConverse),
                                 ProviderAnswer(Dialect::kBedrockConverse, LongAnswer()));
  const std::string line = JournalLine(run.record);
  EXPECT_THAT(line, HasSubstr(R"("rule":"cut")"));
  EXPECT_THAT(line, HasSubstr(R"("upstream_bytes_base64")"));  // binary event stream
  EXPECT_THAT(line, HasSubstr(R"("target":"/model/)"));
  EXPECT_THAT(line, HasSubstr("Bearer ...[redacted, 14 bytes]"));
  EXPECT_EQ(line.find("sk-test"), std::string::npos);
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace faultline::proxy::testing
