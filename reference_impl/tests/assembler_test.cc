#include "reference_impl/assembler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "reference_impl/body_decoder.h"
#include "reference_impl/stream_error_class.h"
#include "reference_impl/tests/decode_test_support.h"
#include "reference_impl/tests/wire_fixtures.h"

namespace faultline::ref {
namespace {

struct Fixture {
  Dialect dialect;
  std::string_view sse;
  std::string text;
  bool has_finish_before_terminator;
};

const std::vector<Fixture>& Fixtures() {
  static const std::vector<Fixture> all = {
      {Dialect::kOpenAiChat, fixtures::kChatText, "Hello, world", true},
      {Dialect::kOpenAiChat, fixtures::kChatToolCalls, "", true},
      {Dialect::kOpenAiChat, fixtures::kChatReasoning, "42", true},
      {Dialect::kAnthropicMessages, fixtures::kAnthropicText, "Hello, world", true},
      {Dialect::kAnthropicMessages, fixtures::kAnthropicThinkingAndTool, "Let me check.", true},
      // Responses carries its finish in the terminal event itself.
      {Dialect::kOpenAiResponses, fixtures::kResponsesText, "Hello, world", false},
      {Dialect::kOpenAiResponses, fixtures::kResponsesReasoningAndTool, "", false},
  };
  return all;
}

// The events of an SSE text, each with its terminating blank line.
std::vector<std::string_view> SplitEvents(std::string_view sse) {
  std::vector<std::string_view> events;
  while (!sse.empty()) {
    const std::size_t end = sse.find("\n\n") + 2;
    events.push_back(sse.substr(0, end));
    sse.remove_prefix(end);
  }
  return events;
}

// By value: the outcome is often a temporary.
Failure FailureOf(const AttemptOutcome& outcome) {
  const auto* failure = std::get_if<Failure>(&outcome);
  EXPECT_NE(failure, nullptr) << ::testing::PrintToString(outcome);
  return failure != nullptr ? *failure : Failure{};
}

Completed CompletedOf(const AttemptOutcome& outcome) {
  const auto* done = std::get_if<Completed>(&outcome);
  EXPECT_NE(done, nullptr) << ::testing::PrintToString(outcome);
  return done != nullptr ? *done : Completed{};
}

Failure TransportFailure() {
  Failure failure;
  failure.code = FailureCode::kTransport;
  failure.failure_class = FailureClass::kTransport;
  failure.phase = Phase::kStream;
  failure.retryable = true;
  return failure;
}

AttemptOutcome RunStream(Dialect dialect, std::string_view sse) {
  BodyDecoder decoder(dialect, /*stream=*/true);
  decoder.assembler().SetResponseInfo(200, "req_abc");
  decoder.Feed(sse);
  return decoder.End();
}

// Anthropic/OpenAI events built by hand for the error and edge-case tests.
std::string AnthropicEvent(std::string_view type, std::string_view data) {
  return "event: " + std::string(type) + "\ndata: " + std::string(data) + "\n\n";
}
constexpr std::string_view kAnthropicStart =
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\","
    "\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":9,"
    "\"output_tokens\":1}}}\n\n"
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
    "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
    "\"delta\":{\"type\":\"text_delta\",\"text\":\"Partial\"}}\n\n";

std::string ChatChunk(std::string_view delta, std::string_view finish = "null") {
  return "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
         "\"delta\":" +
         std::string(delta) + ",\"finish_reason\":" + std::string(finish) + "}]}\n\n";
}

// --- commit ------------------------------------------------------------------------------------

TEST(AssemblerTest, CommitsOnlyOnTheTerminator) {
  for (const Fixture& fixture : Fixtures()) {
    BodyDecoder decoder(fixture.dialect, true);
    const auto events = SplitEvents(fixture.sse);
    for (std::size_t i = 0; i + 1 < events.size(); ++i) {
      decoder.Feed(events[i]);
      ASSERT_FALSE(decoder.assembler().outcome()) << fixture.sse << "\nafter event " << i;
    }
    decoder.Feed(events.back());
    ASSERT_TRUE(decoder.assembler().completed()) << fixture.sse;
    EXPECT_EQ(CompletedOf(*decoder.assembler().outcome()).text, fixture.text);
    EXPECT_EQ(decoder.assembler().wasted(), WastedWork{});
  }
}

TEST(AssemblerTest, CompletedCarriesTextToolCallsFinishAndUsage) {
  const Completed chat = CompletedOf(RunStream(Dialect::kOpenAiChat, fixtures::kChatText));
  EXPECT_EQ(chat.text, "Hello, world");
  EXPECT_EQ(chat.finish_reason, "stop");
  EXPECT_EQ(chat.usage, (Usage{12, 4}));
  EXPECT_EQ(chat.terminal, TerminalMarker::kDone);
  EXPECT_TRUE(chat.tool_calls.empty());

  const Completed tools = CompletedOf(RunStream(Dialect::kOpenAiChat, fixtures::kChatToolCalls));
  EXPECT_EQ(tools.tool_calls, (std::vector<ToolCall>{{"call_DdmO9pD3xa9XTPNJ32zg2hcA",
                                                      "get_weather", R"({"city":"Paris"})"},
                                                     {"call_Xy2", "get_time", "{}"}}));
  EXPECT_EQ(tools.finish_reason, "tool_calls");

  const Completed claude =
      CompletedOf(RunStream(Dialect::kAnthropicMessages, fixtures::kAnthropicThinkingAndTool));
  EXPECT_EQ(claude.reasoning, "I should call the weather tool.");
  EXPECT_EQ(claude.tool_calls, (std::vector<ToolCall>{{"toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                                                       "get_weather", R"({"city": "Paris"})"}}));
  EXPECT_EQ(claude.usage, (Usage{572, 89}));  // input from message_start, output from message_delta
  EXPECT_EQ(claude.terminal, TerminalMarker::kMessageStop);

  const Completed responses =
      CompletedOf(RunStream(Dialect::kOpenAiResponses, fixtures::kResponsesReasoningAndTool));
  EXPECT_EQ(responses.tool_calls,
            (std::vector<ToolCall>{{"call_AbC", "get_weather", R"({"city":"Paris"})"}}));
  EXPECT_EQ(responses.reasoning, "Checking the weather.");
  EXPECT_EQ(responses.finish_reason, "completed");
  EXPECT_EQ(responses.usage, (Usage{50, 20}));
}

TEST(AssemblerTest, EverySplitIntoTwoFeedsCommitsTheSameAnswer) {
  // One fixture per dialect: the SSE decoder's own tests split everything at every position.
  for (const Fixture& fixture : {Fixtures()[1], Fixtures()[4], Fixtures()[6]}) {
    const Completed whole = CompletedOf(RunStream(fixture.dialect, fixture.sse));
    for (std::size_t cut = 0; cut <= fixture.sse.size(); ++cut) {
      BodyDecoder decoder(fixture.dialect, true);
      decoder.Feed(fixture.sse.substr(0, cut));
      decoder.Feed(fixture.sse.substr(cut));
      ASSERT_EQ(CompletedOf(decoder.End()), whole) << "cut " << cut;
    }
  }
}

TEST(AssemblerTest, LaterInputDoesNotChangeACommittedAnswer) {
  BodyDecoder decoder(Dialect::kOpenAiChat, true);
  decoder.Feed(fixtures::kChatText);
  decoder.Feed(ChatChunk(R"({"content":" more"})"));
  decoder.Feed("data: {\"error\":{\"type\":\"server_error\",\"message\":\"late\"}}\n\n");
  decoder.assembler().Interrupt(TransportFailure());
  EXPECT_EQ(CompletedOf(decoder.End()).text, "Hello, world");
}

// --- truncation --------------------------------------------------------------------------------

TEST(AssemblerTest, TruncationAtEveryEventBoundaryNeverCompletes) {
  for (const Fixture& fixture : Fixtures()) {
    const auto events = SplitEvents(fixture.sse);
    std::string prefix;
    for (std::size_t kept = 0; kept < events.size(); ++kept) {
      const Failure failure = FailureOf(RunStream(fixture.dialect, prefix));
      EXPECT_EQ(failure.code, FailureCode::kStreamTruncated) << prefix;
      EXPECT_EQ(failure.failure_class, FailureClass::kTruncated);
      EXPECT_TRUE(failure.retryable);
      EXPECT_EQ(failure.status, 200);
      EXPECT_EQ(failure.request_id, "req_abc");
      const DecodedStream decoded = DecodeSse(fixture.dialect, prefix);
      const bool finish_seen = std::ranges::any_of(
          decoded.deltas, [](const Delta& d) { return std::holds_alternative<FinishDelta>(d); });
      const bool text_seen = std::ranges::any_of(decoded.deltas, [](const Delta& d) {
        return std::holds_alternative<TextDelta>(d) || std::holds_alternative<ToolCallDelta>(d);
      });
      EXPECT_EQ(failure.phase, finish_seen ? Phase::kFinish : Phase::kStream) << prefix;
      EXPECT_EQ(failure.partial_output,
                text_seen ? PartialOutput::kUncommitted : PartialOutput::kNone);
      prefix += events[kept];
    }
  }
}

TEST(AssemblerTest, PhaseIsFinishOnlyOnceTheFinishReasonArrived) {
  const auto events = SplitEvents(fixtures::kAnthropicText);
  std::string before_finish;
  for (std::size_t i = 0; i + 2 < events.size(); ++i) before_finish += events[i];
  const std::string after_finish = before_finish + std::string(events[events.size() - 2]);
  EXPECT_EQ(FailureOf(RunStream(Dialect::kAnthropicMessages, before_finish)).phase, Phase::kStream);
  EXPECT_EQ(FailureOf(RunStream(Dialect::kAnthropicMessages, after_finish)).phase, Phase::kFinish);
}

TEST(AssemblerTest, CleanEndAtEveryByteNeverCompletesEarly) {
  for (const Fixture& fixture : Fixtures()) {
    for (std::size_t cut = 0; cut <= fixture.sse.size(); ++cut) {
      const AttemptOutcome outcome = RunStream(fixture.dialect, fixture.sse.substr(0, cut));
      const bool whole = cut == fixture.sse.size();
      ASSERT_EQ(std::holds_alternative<Completed>(outcome), whole) << "cut " << cut;
      if (whole) continue;
      const Failure failure = FailureOf(outcome);
      ASSERT_EQ(failure.code, FailureCode::kStreamTruncated) << "cut " << cut;
    }
  }
}

TEST(AssemblerTest, TransportFailureAtEveryByteReportsUncommittedOutputHonestly) {
  for (const Fixture& fixture : Fixtures()) {
    for (std::size_t cut = 0; cut < fixture.sse.size(); ++cut) {
      BodyDecoder decoder(fixture.dialect, true);
      decoder.Feed(fixture.sse.substr(0, cut));
      const bool had_output = decoder.assembler().has_output();
      const Failure failure = FailureOf(decoder.assembler().Interrupt(TransportFailure()));
      ASSERT_EQ(failure.code, FailureCode::kTransport) << "cut " << cut;
      EXPECT_EQ(failure.partial_output,
                had_output ? PartialOutput::kUncommitted : PartialOutput::kNone);
      EXPECT_EQ(decoder.assembler().wasted().bytes, cut);
    }
  }
}

TEST(AssemblerTest, TruncatedFailureReportsPartialOutputAndWastedWork) {
  const std::string cut = std::string(kAnthropicStart);
  BodyDecoder decoder(Dialect::kAnthropicMessages, true);
  decoder.Feed(cut);
  const Failure failure = FailureOf(decoder.End());
  EXPECT_EQ(failure.partial_output, PartialOutput::kUncommitted);
  EXPECT_EQ(failure.phase, Phase::kStream);
  EXPECT_NE(failure.message.find("message_stop"), std::string::npos);
  EXPECT_EQ(decoder.assembler().text(), "Partial");
  EXPECT_EQ(decoder.assembler().wasted(), (WastedWork{cut.size(), 1}));  // output_tokens 1
  decoder.assembler().CountBytes(100);                                   // the head
  EXPECT_EQ(decoder.assembler().wasted().bytes, cut.size() + 100);
}

TEST(AssemblerTest, WastedTokensAreEstimatedWithoutUsage) {
  BodyDecoder decoder(Dialect::kOpenAiChat, true);
  decoder.Feed(ChatChunk(R"({"content":"0123456789"})"));
  decoder.End();
  EXPECT_EQ(decoder.assembler().wasted().approx_tokens, 3u);  // 10 bytes / 4, rounded up
}

// --- empty -------------------------------------------------------------------------------------

TEST(AssemblerTest, CompletedResponseWithoutContentIsEmpty) {
  const std::vector<std::pair<Dialect, std::string>> empties = {
      {Dialect::kOpenAiChat, ChatChunk(R"({"role":"assistant","content":""})") +
                                 ChatChunk("{}", "\"stop\"") + "data: [DONE]\n\n"},
      {Dialect::kAnthropicMessages,
       AnthropicEvent("message_start",
                      R"({"type":"message_start","message":{"usage":{"input_tokens":3}}})") +
           AnthropicEvent("message_delta",
                          R"({"type":"message_delta","delta":{"stop_reason":"end_turn"}})") +
           AnthropicEvent("message_stop", R"({"type":"message_stop"})")},
      {Dialect::kOpenAiResponses,
       AnthropicEvent("response.completed", R"({"type":"response.completed","sequence_number":0,)"
                                            R"("response":{"status":"completed","output":[]}})")},
      // Reasoning alone is not an answer.
      {Dialect::kOpenAiChat,
       ChatChunk(R"({"reasoning_content":"thinking"})", "\"stop\"") + "data: [DONE]\n\n"},
  };
  for (const auto& [dialect, sse] : empties) {
    const Failure failure = FailureOf(RunStream(dialect, sse));
    EXPECT_EQ(failure.code, FailureCode::kEmptyResponse) << sse;
    EXPECT_EQ(failure.failure_class, FailureClass::kEmpty);
    EXPECT_EQ(failure.phase, Phase::kFinish);
    EXPECT_TRUE(failure.retryable);
    EXPECT_EQ(failure.partial_output, PartialOutput::kNone);
  }
}

TEST(AssemblerTest, ToolCallWithoutTextIsNotEmpty) {
  EXPECT_TRUE(std::holds_alternative<Completed>(
      RunStream(Dialect::kOpenAiResponses, fixtures::kResponsesReasoningAndTool)));
}

// --- in-stream errors --------------------------------------------------------------------------

struct StreamErrorCase {
  Dialect dialect;
  std::string error_event;
  FailureCode code;
  FailureClass failure_class;
  bool retryable;
};

std::string AnthropicError(std::string_view type) {
  return AnthropicEvent(
      "error", R"({"type":"error","error":{"type":")" + std::string(type) + R"(","message":"m"}})");
}
std::string OpenAiError(std::string_view type, std::string_view code) {
  return "data: {\"error\":{\"message\":\"m\",\"type\":\"" + std::string(type) +
         "\",\"param\":null,\"code\":" + (code.empty() ? "null" : "\"" + std::string(code) + "\"") +
         "}}\n\n";
}
std::string ResponsesFailed(std::string_view code) {
  return AnthropicEvent("response.failed",
                        R"({"type":"response.failed","response":{"status":"failed","error":)"
                        R"({"code":")" +
                            std::string(code) + R"(","message":"m"}}})");
}

TEST(AssemblerTest, InStreamErrorsAreClassifiedLikeTheirHttpTwins) {
  using C = FailureCode;
  using K = FailureClass;
  const std::vector<StreamErrorCase> cases = {
      {Dialect::kAnthropicMessages, AnthropicError("overloaded_error"), C::kOverloaded,
       K::kProviderOverloaded, true},
      {Dialect::kAnthropicMessages, AnthropicError("rate_limit_error"), C::kRateLimit,
       K::kRateLimit, true},
      {Dialect::kAnthropicMessages, AnthropicError("api_error"), C::kServer,
       K::kProviderUnavailable, true},
      {Dialect::kAnthropicMessages, AnthropicError("invalid_request_error"), C::kInvalidRequest,
       K::kInvalidRequest, false},
      {Dialect::kAnthropicMessages, AnthropicError("authentication_error"), C::kAuth, K::kAuth,
       false},
      {Dialect::kOpenAiChat, OpenAiError("server_error", ""), C::kServer, K::kProviderUnavailable,
       true},
      {Dialect::kOpenAiChat, OpenAiError("requests", "rate_limit_exceeded"), C::kRateLimit,
       K::kRateLimit, true},
      {Dialect::kOpenAiChat, OpenAiError("insufficient_quota", "insufficient_quota"), C::kQuota,
       K::kQuota, false},
      {Dialect::kOpenAiChat, OpenAiError("invalid_request_error", "context_length_exceeded"),
       C::kContextWindowExceeded, K::kContextOverflow, false},
      {Dialect::kOpenAiChat, OpenAiError("mystery_error", ""), C::kUnknown, K::kUnknown, false},
      {Dialect::kOpenAiResponses, ResponsesFailed("server_error"), C::kServer,
       K::kProviderUnavailable, true},
      {Dialect::kOpenAiResponses,
       AnthropicEvent("error", R"({"type":"error","code":"rate_limit_exceeded","message":"m"})"),
       C::kRateLimit, K::kRateLimit, true},
      {Dialect::kOpenAiResponses,
       AnthropicEvent("error", R"({"type":"error","error":{"type":"invalid_request_error",)"
                               R"("code":"context_length_exceeded","message":"m"}})"),
       C::kContextWindowExceeded, K::kContextOverflow, false},
      {Dialect::kOpenAiResponses,
       AnthropicEvent("error", R"({"type":"error","code":"ERR_SOMETHING","message":"m"})"),
       C::kUnknown, K::kUnknown, false},
  };
  for (const StreamErrorCase& c : cases) {
    const Failure failure = FailureOf(RunStream(c.dialect, c.error_event));
    EXPECT_EQ(failure.code, c.code) << c.error_event;
    EXPECT_EQ(failure.failure_class, c.failure_class) << c.error_event;
    EXPECT_EQ(failure.retryable, c.retryable) << c.error_event;
    EXPECT_EQ(failure.phase, Phase::kStream);
    EXPECT_EQ(failure.status, 200);
    EXPECT_EQ(failure.partial_output, PartialOutput::kNone);
    EXPECT_NE(failure.message.find("m"), std::string::npos);
  }
}

TEST(AssemblerTest, InStreamErrorAfterTextKeepsTheTextUncommitted) {
  BodyDecoder decoder(Dialect::kAnthropicMessages, true);
  decoder.Feed(std::string(kAnthropicStart) + AnthropicError("overloaded_error"));
  const Failure failure = FailureOf(*decoder.assembler().outcome());
  EXPECT_EQ(failure.code, FailureCode::kOverloaded);
  EXPECT_EQ(failure.partial_output, PartialOutput::kUncommitted);
  EXPECT_NE(failure.message.find("overloaded_error"), std::string::npos);
  // A terminator after the error changes nothing.
  decoder.Feed(AnthropicEvent("message_stop", R"({"type":"message_stop"})"));
  EXPECT_EQ(FailureOf(decoder.End()).code, FailureCode::kOverloaded);
}

TEST(AssemblerTest, ErrorBodyOfANonStreamedCallIsClassified) {
  BodyDecoder decoder(Dialect::kAnthropicMessages, /*stream=*/false);
  decoder.Feed(R"({"type":"error","error":{"type":"overloaded_error",)");
  decoder.Feed(R"("message":"Overloaded"}})");
  EXPECT_FALSE(decoder.assembler().outcome());  // a body is judged only when complete
  EXPECT_EQ(FailureOf(decoder.End()).code, FailureCode::kOverloaded);
}

// --- protocol errors ---------------------------------------------------------------------------

TEST(AssemblerTest, MalformedEventsFailTheAttemptAsProtocolErrors) {
  const std::vector<std::pair<Dialect, std::string>> bad = {
      {Dialect::kOpenAiChat, ChatChunk(R"({"content":"ok"})") + "data: {\"choices\":[{\n\n"},
      {Dialect::kOpenAiChat, "data: {\"choices\":[]}{\"choices\":[]}\n\n"},
      {Dialect::kOpenAiChat, "data: {\"unexpected\":true}\n\n"},
      {Dialect::kAnthropicMessages, AnthropicEvent("message_stop", "[1,2]")},
      {Dialect::kOpenAiResponses,
       AnthropicEvent("response.created",
                      R"({"type":"response.created","sequence_number":0,"response":{}})") +
           AnthropicEvent("response.in_progress",
                          R"({"type":"response.in_progress","sequence_number":2,"response":{}})")},
  };
  for (const auto& [dialect, sse] : bad) {
    const Failure failure = FailureOf(RunStream(dialect, sse));
    EXPECT_EQ(failure.code, FailureCode::kMalformedResponse) << sse;
    EXPECT_EQ(failure.failure_class, FailureClass::kProtocol);
    EXPECT_EQ(failure.phase, Phase::kStream);
    EXPECT_TRUE(failure.retryable);
  }
}

TEST(AssemblerTest, ToolCallArgumentsMustBeCompleteJson) {
  const std::string cut_arguments =
      ChatChunk(R"({"tool_calls":[{"index":0,"id":"call_1","type":"function",)"
                R"("function":{"name":"get_weather","arguments":"{\"city\":"}}]})",
                "\"tool_calls\"") +
      "data: [DONE]\n\n";
  const Failure failure = FailureOf(RunStream(Dialect::kOpenAiChat, cut_arguments));
  EXPECT_EQ(failure.code, FailureCode::kMalformedResponse);
  EXPECT_EQ(failure.phase, Phase::kFinish);
  EXPECT_EQ(failure.partial_output, PartialOutput::kUncommitted);

  const std::string nameless =
      ChatChunk(R"({"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]})", "\"tool_calls\"") +
      "data: [DONE]\n\n";
  EXPECT_EQ(FailureOf(RunStream(Dialect::kOpenAiChat, nameless)).code,
            FailureCode::kMalformedResponse);
}

TEST(AssemblerTest, OversizedSseEventIsAProtocolError) {
  BodyDecoder decoder(Dialect::kOpenAiChat, true);
  const std::string huge = "data: " + std::string(65 * 1024 * 1024, 'x');
  decoder.Feed(huge);
  EXPECT_EQ(FailureOf(decoder.End()).code, FailureCode::kMalformedResponse);
}

// --- safety ------------------------------------------------------------------------------------

TEST(AssemblerTest, ContentFilterFinishesAreSafetyFailures) {
  const std::vector<std::pair<Dialect, std::string>> filtered = {
      {Dialect::kOpenAiChat, ChatChunk(R"({"content":"Some"})") +
                                 ChatChunk("{}", "\"content_filter\"") + "data: [DONE]\n\n"},
      {Dialect::kOpenAiChat,
       ChatChunk(R"({"refusal":"I can't help with that."})", "\"stop\"") + "data: [DONE]\n\n"},
      {Dialect::kAnthropicMessages,
       std::string(kAnthropicStart) +
           AnthropicEvent("message_delta",
                          R"({"type":"message_delta","delta":{"stop_reason":"refusal"}})") +
           AnthropicEvent("message_stop", R"({"type":"message_stop"})")},
      {Dialect::kOpenAiResponses,
       AnthropicEvent("response.output_text.delta",
                      R"({"type":"response.output_text.delta","sequence_number":0,"delta":"x"})") +
           AnthropicEvent(
               "response.incomplete",
               R"({"type":"response.incomplete","sequence_number":1,"response":)"
               R"({"status":"incomplete","incomplete_details":{"reason":"content_filter"}}})")},
  };
  for (const auto& [dialect, sse] : filtered) {
    const Failure failure = FailureOf(RunStream(dialect, sse));
    EXPECT_EQ(failure.code, FailureCode::kContentFilter) << sse;
    EXPECT_EQ(failure.failure_class, FailureClass::kSafety);
    EXPECT_FALSE(failure.retryable);
    EXPECT_EQ(failure.phase, Phase::kFinish);
  }
}

TEST(AssemblerTest, IncompleteForLengthIsACommittedAnswer) {
  const std::string sse =
      AnthropicEvent("response.output_text.delta",
                     R"({"type":"response.output_text.delta","sequence_number":0,"delta":"Hi"})") +
      AnthropicEvent(
          "response.incomplete",
          R"({"type":"response.incomplete","sequence_number":1,"response":)"
          R"({"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}})");
  const Completed done = CompletedOf(RunStream(Dialect::kOpenAiResponses, sse));
  EXPECT_EQ(done.text, "Hi");
  EXPECT_EQ(done.finish_reason, "max_output_tokens");
  EXPECT_EQ(done.terminal, TerminalMarker::kResponseIncomplete);
}

// --- non-streamed bodies and heartbeats --------------------------------------------------------

TEST(AssemblerTest, NonStreamedBodiesCommitWhenComplete) {
  const std::vector<std::pair<Dialect, std::string_view>> bodies = {
      {Dialect::kOpenAiChat, fixtures::kChatBody},
      {Dialect::kAnthropicMessages, fixtures::kAnthropicBody},
      {Dialect::kOpenAiResponses, fixtures::kResponsesBody},
  };
  for (const auto& [dialect, body] : bodies) {
    BodyDecoder decoder(dialect, /*stream=*/false);
    decoder.Feed(body.substr(0, 10));
    decoder.Feed(body.substr(10));
    const Completed done = CompletedOf(decoder.End());
    EXPECT_EQ(done.terminal, TerminalMarker::kBody);
    ASSERT_EQ(done.tool_calls.size(), 1u);
    EXPECT_EQ(done.tool_calls[0].name, "get_weather");
    BodyDecoder cut(dialect, false);
    cut.Feed(body.substr(0, body.size() - 1));
    EXPECT_EQ(FailureOf(cut.End()).code, FailureCode::kMalformedResponse);
  }
}

TEST(AssemblerTest, HeartbeatsAreCountedApartFromProgress) {
  BodyDecoder decoder(Dialect::kAnthropicMessages, true);
  auto beat = decoder.Feed(": keep-alive\n\n" + AnthropicEvent("ping", R"({"type": "ping"})"));
  EXPECT_EQ(beat.heartbeats, 2u);
  EXPECT_EQ(beat.meaningful_events, 0u);
  EXPECT_TRUE(beat.deltas.empty());
  auto progress = decoder.Feed(kAnthropicStart);
  EXPECT_EQ(progress.heartbeats, 0u);
  EXPECT_EQ(progress.meaningful_events, 3u);
  EXPECT_EQ(progress.deltas.size(), 2u);  // usage, text
}

TEST(AssemblerTest, ContentTypeMustMatchTheCall) {
  EXPECT_FALSE(CheckContentType(true, "text/event-stream"));
  EXPECT_FALSE(CheckContentType(true, "Text/Event-Stream; charset=utf-8"));
  EXPECT_FALSE(CheckContentType(false, "application/json"));
  EXPECT_FALSE(CheckContentType(false, "application/problem+json"));
  EXPECT_FALSE(CheckContentType(true, std::nullopt));
  auto wrong = CheckContentType(true, "application/json");
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->code, FailureCode::kMalformedResponse);
  EXPECT_EQ(wrong->phase, Phase::kResponseHeaders);
  EXPECT_TRUE(CheckContentType(false, "text/html"));
}

// --- the shared classification table ------------------------------------------------------------

// An in-stream error has no status: its words refine the table's class as a body refines one.
TEST(StreamErrorClassTest, InStreamWordsRefineTheTableLikeAnHttpBody) {
  const auto code_of = [](std::string_view type, std::string_view message) {
    auto known = ClassifyStreamError(Dialect::kGemini, type, "503", message);
    return known ? known->code : FailureCode::kUnknown;
  };
  EXPECT_EQ(code_of("UNAVAILABLE", "The model is overloaded. Please try again later."),
            FailureCode::kOverloaded);
  EXPECT_EQ(code_of("INTERNAL", "That model is currently overloaded"), FailureCode::kOverloaded);
  EXPECT_EQ(code_of("UNAVAILABLE", "The service is currently unavailable."),
            FailureCode::kUnavailable);
  EXPECT_EQ(code_of("RESOURCE_EXHAUSTED", "You exceeded your current quota, please check"),
            FailureCode::kQuota);
  EXPECT_EQ(code_of("RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
            FailureCode::kRateLimit);
  // Words never turn an invalid request or an unknown error into something else.
  EXPECT_EQ(code_of("INVALID_ARGUMENT", "The model is overloaded"), FailureCode::kInvalidRequest);
  EXPECT_EQ(code_of("", "The model is overloaded"), FailureCode::kUnknown);
  // Ollama's error line names no kind: the server failed, like its 500.
  EXPECT_EQ(ClassifyStreamError(Dialect::kOllama, "", "", "unexpected EOF")->code,
            FailureCode::kServer);
  EXPECT_FALSE(ClassifyStreamError(Dialect::kOpenAiChat, "", "", "unexpected EOF"));
}

TEST(StreamErrorClassTest, CodeWinsOverTypeAndUnknownIsNullopt) {
  EXPECT_EQ(ClassifyProviderError(Dialect::kOpenAiChat, "invalid_request_error",
                                  "context_length_exceeded")
                ->code,
            FailureCode::kContextWindowExceeded);
  EXPECT_EQ(ClassifyProviderError(Dialect::kOpenAiChat, "invalid_request_error", "")->code,
            FailureCode::kInvalidRequest);
  EXPECT_EQ(ClassifyProviderError(Dialect::kOpenAiChat, "server_error", "weird_code")->code,
            FailureCode::kServer);
  EXPECT_FALSE(ClassifyProviderError(Dialect::kOpenAiChat, "", ""));
  EXPECT_FALSE(ClassifyProviderErrorString(Dialect::kAnthropicMessages, "teapot_error"));
  EXPECT_EQ(
      ClassifyProviderErrorString(Dialect::kAnthropicMessages, "overloaded_error"),
      (ProviderErrorClass{FailureCode::kOverloaded, FailureClass::kProviderOverloaded, true}));
  EXPECT_EQ(ClassifyProviderError(Dialect::kAnthropicMessages, "rate_limit_error",
                                  "enforced_spend_limit_reached")
                ->code,
            FailureCode::kQuota);
  EXPECT_FALSE(
      ClassifyProviderErrorString(Dialect::kAnthropicMessages, "billing_error")->retryable);
}

}  // namespace
}  // namespace faultline::ref
