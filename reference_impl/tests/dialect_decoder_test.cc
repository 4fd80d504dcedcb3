#include "reference_impl/dialect_decoder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reference_impl/tests/decode_test_support.h"
#include "reference_impl/tests/wire_fixtures.h"

namespace faultline::ref {
namespace {

using Deltas = std::vector<Delta>;

// One event through a fresh decoder.
std::expected<Deltas, DecodeError> DecodeOne(Dialect dialect, std::string type, std::string data) {
  DialectDecoder decoder(dialect);
  Deltas out;
  auto weight = decoder.DecodeEvent(SseEvent{std::move(type), std::move(data), ""}, out);
  if (!weight) {
    EXPECT_TRUE(out.empty()) << "a failed event must append nothing";
    return std::unexpected(weight.error());
  }
  return out;
}

std::expected<Deltas, DecodeError> DecodeBody(Dialect dialect, std::string_view body) {
  DialectDecoder decoder(dialect);
  Deltas out;
  auto decoded = decoder.DecodeBody(body, out);
  if (!decoded) return std::unexpected(decoded.error());
  return out;
}

// --- openai-chat ---------------------------------------------------------------------------------

TEST(OpenAiChatDecoderTest, TextStreamWithUsage) {
  DecodedStream out = DecodeSse(Dialect::kOpenAiChat, fixtures::kChatText);
  ASSERT_FALSE(out.error) << out.error->message;
  EXPECT_EQ(out.deltas, (Deltas{TextDelta{"Hello"}, TextDelta{", world"}, FinishDelta{"stop"},
                                UsageDelta{12, 4}, TerminalDelta{TerminalMarker::kDone}}));
  EXPECT_EQ(out.meaningful, 6);
  EXPECT_EQ(out.heartbeats, 0);
}

TEST(OpenAiChatDecoderTest, ParallelToolCallFragments) {
  DecodedStream out = DecodeSse(Dialect::kOpenAiChat, fixtures::kChatToolCalls);
  ASSERT_FALSE(out.error) << out.error->message;
  EXPECT_EQ(out.deltas,
            (Deltas{ToolCallDelta{0, "call_DdmO9pD3xa9XTPNJ32zg2hcA", "get_weather", ""},
                    ToolCallDelta{0, "", "", "{\"ci"}, ToolCallDelta{0, "", "", "ty\":\"Paris\"}"},
                    ToolCallDelta{1, "call_Xy2", "get_time", ""}, ToolCallDelta{1, "", "", "{}"},
                    FinishDelta{"tool_calls"}, TerminalDelta{TerminalMarker::kDone}}));
}

TEST(OpenAiChatDecoderTest, ReasoningContentAndLengthFinish) {
  DecodedStream out = DecodeSse(Dialect::kOpenAiChat, fixtures::kChatReasoning);
  ASSERT_FALSE(out.error) << out.error->message;
  EXPECT_EQ(out.deltas,
            (Deltas{ReasoningDelta{"Let me think."}, TextDelta{"42"}, FinishDelta{"length"},
                    UsageDelta{7, 30}, TerminalDelta{TerminalMarker::kDone}}));
}

TEST(OpenAiChatDecoderTest, GatewayReasoningFieldAndRefusal) {
  auto out = DecodeOne(Dialect::kOpenAiChat, "message",
                       R"({"choices":[{"index":0,"delta":{"reasoning":"hmm","refusal":"No."}}]})");
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (Deltas{ReasoningDelta{"hmm"}, RefusalDelta{"No."}}));
}

TEST(OpenAiChatDecoderTest, OnlyTheFirstChoiceIsDecoded) {
  auto out = DecodeOne(Dialect::kOpenAiChat, "message",
                       R"({"choices":[{"index":1,"delta":{"content":"B"}},)"
                       R"({"index":0,"delta":{"content":"A"}}]})");
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (Deltas{TextDelta{"A"}}));
}

TEST(OpenAiChatDecoderTest, ErrorEnvelopesInTheStream) {
  struct Case {
    std::string data;
    ProviderErrorDelta expected;
  };
  const std::vector<Case> cases = {
      {R"({"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}})",
       {"server_error", "",
        "The server had an error while processing your request. Sorry about that!"}},
      {R"({"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}})",
       {"insufficient_quota", "insufficient_quota",
        "You exceeded your current quota, please check your plan and billing details."}},
      {R"({"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}})",
       {"invalid_request_error", "context_length_exceeded",
        "This model's maximum context length is 128000 tokens. However, your messages resulted in "
        "130532 tokens."}},
      {R"({"error":{"message":"Rate limit reached for gpt-4o","type":"requests","param":null,"code":"rate_limit_exceeded"}})",
       {"requests", "rate_limit_exceeded", "Rate limit reached for gpt-4o"}},
      {R"({"error":{"message":"busy","type":null,"code":503}})", {"", "503", "busy"}},
  };
  for (const Case& c : cases) {
    auto out = DecodeOne(Dialect::kOpenAiChat, "message", c.data);
    ASSERT_TRUE(out) << out.error().message;
    EXPECT_EQ(*out, (Deltas{c.expected})) << c.data;
  }
}

TEST(OpenAiChatDecoderTest, MalformedChunksAreDecodeErrors) {
  const std::vector<std::string> bad = {
      R"({"choices":[{"index":0,"delta":{"content":"a")",    // cut JSON
      R"({"choices":[]}{"choices":[]})",                     // two objects on one line
      R"(not json)",                                         //
      R"([{"choices":[]}])",                                 // an array
      R"({"object":"chat.completion.chunk"})",               // no choices
      R"({"choices":"Hello"})",                              // choices not an array
      R"({"choices":[{"index":0,"delta":{"content":5}}]})",  // content not a string
      R"({"choices":[{"index":0,"delta":"Hello"}]})",        // delta not an object
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"id":"x"}]}}]})",  // no tool index
      R"({"choices":[{"index":0,"delta":{},"finish_reason":7}]})",         //
      R"({"choices":[],"usage":{"prompt_tokens":"many"}})",                //
      R"({"error":"boom"})",                                               // error not an object
      "",                                                                  // empty data
  };
  for (const std::string& data : bad) {
    auto out = DecodeOne(Dialect::kOpenAiChat, "message", data);
    EXPECT_FALSE(out) << data;
    if (!out) {
      EXPECT_NE(out.error().message.find("openai-chat"), std::string::npos);
    }
  }
}

TEST(OpenAiChatDecoderTest, NonStreamedBody) {
  auto out = DecodeBody(Dialect::kOpenAiChat, fixtures::kChatBody);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, (Deltas{TextDelta{"Checking."},
                          ToolCallDelta{0, "call_1", "get_weather", R"({"city":"Paris"})"},
                          FinishDelta{"tool_calls"}, UsageDelta{9, 12},
                          TerminalDelta{TerminalMarker::kBody}}));
}

TEST(OpenAiChatDecoderTest, ErrorBodyAndMalformedBodies) {
  auto error =
      DecodeBody(Dialect::kOpenAiChat,
                 R"({"error":{"message":"Overloaded","type":"server_error","code":null}})");
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, (Deltas{ProviderErrorDelta{"server_error", "", "Overloaded"}}));
  EXPECT_FALSE(DecodeBody(Dialect::kOpenAiChat, R"({"choices":[{"index":0}]})"));
  EXPECT_FALSE(DecodeBody(Dialect::kOpenAiChat, "<html>502 Bad Gateway</html>"));
}

// --- anthropic-messages --------------------------------------------------------------------------

TEST(AnthropicDecoderTest, TextStreamWithPingHeartbeat) {
  DecodedStream out = DecodeSse(Dialect::kAnthropicMessages, fixtures::kAnthropicText);
  ASSERT_FALSE(out.error) << out.error->message;
  EXPECT_EQ(out.deltas, (Deltas{UsageDelta{25, 1}, TextDelta{"Hello"}, TextDelta{", world"},
                                FinishDelta{"end_turn"}, UsageDelta{std::nullopt, 15},
                                TerminalDelta{TerminalMarker::kMessageStop}}));
  EXPECT_EQ(out.heartbeats, 1);
  EXPECT_EQ(out.meaningful, 7);
}

TEST(AnthropicDecoderTest, ThinkingTextAndToolUse) {
  DecodedStream out = DecodeSse(Dialect::kAnthropicMessages, fixtures::kAnthropicThinkingAndTool);
  ASSERT_FALSE(out.error) << out.error->message;
  EXPECT_EQ(out.deltas,
            (Deltas{UsageDelta{572, 2}, ReasoningDelta{"I should call the weather tool."},
                    TextDelta{"Let me check."},
                    ToolCallDelta{2, "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", ""},
                    ToolCallDelta{2, "", "", ""}, ToolCallDelta{2, "", "", "{\"city\": \"Pa"},
                    ToolCallDelta{2, "", "", "ris\"}"}, FinishDelta{"tool_use"},
                    UsageDelta{std::nullopt, 89}, TerminalDelta{TerminalMarker::kMessageStop}}));
}

TEST(AnthropicDecoderTest, ErrorEvents) {
  auto overloaded = DecodeOne(
      Dialect::kAnthropicMessages, "error",
      R"({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})");
  ASSERT_TRUE(overloaded);
  EXPECT_EQ(*overloaded, (Deltas{ProviderErrorDelta{"overloaded_error", "", "Overloaded"}}));
  for (std::string type : {"rate_limit_error", "api_error", "invalid_request_error"}) {
    auto out = DecodeOne(Dialect::kAnthropicMessages, "error",
                         R"({"type":"error","error":{"type":")" + type + R"(","message":"m"}})");
    ASSERT_TRUE(out);
    EXPECT_EQ(*out, (Deltas{ProviderErrorDelta{type, "", "m"}}));
  }
  auto spend = DecodeOne(Dialect::kAnthropicMessages, "error",
                         R"({"type":"error","error":{"type":"rate_limit_error","message":"limit",)"
                         R"("details":{"error_code":"enforced_spend_limit_reached"}}})");
  ASSERT_TRUE(spend);
  EXPECT_EQ(
      *spend,
      (Deltas{ProviderErrorDelta{"rate_limit_error", "enforced_spend_limit_reached", "limit"}}));
}

TEST(AnthropicDecoderTest, EventsWithoutAnEventLineUseTheDataType) {
  auto out = DecodeOne(Dialect::kAnthropicMessages, "message", R"({"type":"message_stop"})");
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (Deltas{TerminalDelta{TerminalMarker::kMessageStop}}));
}

TEST(AnthropicDecoderTest, UnknownEventTypesAreIgnored) {
  auto out = DecodeOne(Dialect::kAnthropicMessages, "future_event",
                       R"({"type":"future_event","stuff":[1,2,3]})");
  ASSERT_TRUE(out);
  EXPECT_TRUE(out->empty());
}

TEST(AnthropicDecoderTest, ServerToolInputIsNotAClientToolCall) {
  DialectDecoder decoder(Dialect::kAnthropicMessages);
  Deltas out;
  ASSERT_TRUE(decoder.DecodeEvent(
      {"content_block_start",
       R"({"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}})",
       ""},
      out));
  ASSERT_TRUE(decoder.DecodeEvent(
      {"content_block_delta",
       R"({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"x\"}"}})",
       ""},
      out));
  EXPECT_TRUE(out.empty());
}

TEST(AnthropicDecoderTest, ProtocolViolationsAreDecodeErrors) {
  struct Case {
    std::string type;
    std::string data;
  };
  const std::vector<Case> bad = {
      {"content_block_delta", R"({"type":"message_stop"})"},  // event name disagrees
      {"content_block_delta",                                 // block never started
       R"({"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}})"},
      {"message", R"({"no_type":true})"},
      {"message_delta", R"({"type":"message_delta","delta":"end_turn"})"},
      {"message_start", R"({"type":"message_start"})"},
      {"content_block_start", R"({"type":"content_block_start","index":0})"},
      {"error", R"({"type":"error","error":"Overloaded"})"},
      {"ping", R"({"type": "ping"} {"type": "ping"})"},
  };
  for (const Case& c : bad) {
    EXPECT_FALSE(DecodeOne(Dialect::kAnthropicMessages, c.type, c.data)) << c.data;
  }
}

TEST(AnthropicDecoderTest, NonStreamedBodyAndErrorBody) {
  auto out = DecodeBody(Dialect::kAnthropicMessages, fixtures::kAnthropicBody);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, (Deltas{ReasoningDelta{"Hmm."}, TextDelta{"Hi!"},
                          ToolCallDelta{2, "toolu_1", "get_weather", R"({"city":"Paris"})"},
                          FinishDelta{"tool_use"}, UsageDelta{10, 20},
                          TerminalDelta{TerminalMarker::kBody}}));
  auto error = DecodeBody(
      Dialect::kAnthropicMessages,
      R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"})");
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, (Deltas{ProviderErrorDelta{"overloaded_error", "", "Overloaded"}}));
}

// --- openai-responses ----------------------------------------------------------------------------

TEST(OpenAiResponsesDecoderTest, TextStream) {
  DecodedStream out = DecodeSse(Dialect::kOpenAiResponses, fixtures::kResponsesText);
  ASSERT_FALSE(out.error) << out.error->message;
  EXPECT_EQ(out.deltas,
            (Deltas{TextDelta{"Hello"}, TextDelta{", world"}, UsageDelta{37, 11},
                    FinishDelta{"completed"}, TerminalDelta{TerminalMarker::kResponseCompleted}}));
  EXPECT_EQ(out.meaningful, 10);
}

TEST(OpenAiResponsesDecoderTest, ReasoningSummaryAndFunctionCall) {
  DecodedStream out = DecodeSse(Dialect::kOpenAiResponses, fixtures::kResponsesReasoningAndTool);
  ASSERT_FALSE(out.error) << out.error->message;
  EXPECT_EQ(out.deltas,
            (Deltas{ReasoningDelta{"Checking the weather."},
                    ToolCallDelta{1, "call_AbC", "get_weather", ""},
                    ToolCallDelta{1, "", "", "{\"city\":"}, ToolCallDelta{1, "", "", "\"Paris\"}"},
                    UsageDelta{50, 20}, FinishDelta{"completed"},
                    TerminalDelta{TerminalMarker::kResponseCompleted}}));
}

TEST(OpenAiResponsesDecoderTest, IncompleteAndRefusal) {
  auto incomplete = DecodeOne(
      Dialect::kOpenAiResponses, "response.incomplete",
      R"({"type":"response.incomplete","sequence_number":5,"response":{"id":"resp_3","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":3,"output_tokens":16}}})");
  ASSERT_TRUE(incomplete);
  EXPECT_EQ(*incomplete, (Deltas{UsageDelta{3, 16}, FinishDelta{"max_output_tokens"},
                                 TerminalDelta{TerminalMarker::kResponseIncomplete}}));
  auto refusal = DecodeOne(
      Dialect::kOpenAiResponses, "response.refusal.delta",
      R"({"type":"response.refusal.delta","sequence_number":4,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"I can't help with that."})");
  ASSERT_TRUE(refusal);
  EXPECT_EQ(*refusal, (Deltas{RefusalDelta{"I can't help with that."}}));
}

TEST(OpenAiResponsesDecoderTest, EveryErrorShape) {
  auto failed = DecodeOne(
      Dialect::kOpenAiResponses, "response.failed",
      R"({"type":"response.failed","sequence_number":3,"response":{"id":"resp_1","object":"response","status":"failed","error":{"code":"server_error","message":"The model failed to generate a response."},"output":[],"usage":null}})");
  ASSERT_TRUE(failed);
  EXPECT_EQ(
      *failed,
      (Deltas{ProviderErrorDelta{"", "server_error", "The model failed to generate a response."}}));
  auto flat = DecodeOne(
      Dialect::kOpenAiResponses, "error",
      R"({"type":"error","code":"rate_limit_exceeded","message":"Rate limit reached","param":null,"sequence_number":2})");
  ASSERT_TRUE(flat);
  EXPECT_EQ(*flat, (Deltas{ProviderErrorDelta{"", "rate_limit_exceeded", "Rate limit reached"}}));
  auto nested = DecodeOne(
      Dialect::kOpenAiResponses, "error",
      R"({"type":"error","sequence_number":2,"error":{"type":"invalid_request_error","code":"context_length_exceeded","message":"Your input exceeds the context window of this model.","param":"input"}})");
  ASSERT_TRUE(nested);
  EXPECT_EQ(*nested,
            (Deltas{ProviderErrorDelta{"invalid_request_error", "context_length_exceeded",
                                       "Your input exceeds the context window of this model."}}));
  auto bare = DecodeOne(Dialect::kOpenAiResponses, "response.failed",
                        R"({"type":"response.failed","response":{"status":"failed"}})");
  ASSERT_TRUE(bare);
  EXPECT_EQ(*bare, (Deltas{ProviderErrorDelta{"", "", "response.failed without an error"}}));
}

std::string Event(int sequence) {
  return "event: response.in_progress\ndata: "
         "{\"type\":\"response.in_progress\",\"sequence_number\":" +
         std::to_string(sequence) + ",\"response\":{}}\n\n";
}

TEST(OpenAiResponsesDecoderTest, SequenceNumbersMustIncreaseByOne) {
  EXPECT_FALSE(DecodeSse(Dialect::kOpenAiResponses, Event(5) + Event(6) + Event(7)).error);
  DecodedStream gap = DecodeSse(Dialect::kOpenAiResponses, Event(0) + Event(1) + Event(3));
  ASSERT_TRUE(gap.error);
  EXPECT_NE(gap.error->message.find("gap"), std::string::npos) << gap.error->message;
  EXPECT_EQ(gap.meaningful, 2);
  DecodedStream repeat = DecodeSse(Dialect::kOpenAiResponses, Event(0) + Event(1) + Event(1));
  ASSERT_TRUE(repeat.error);
  EXPECT_NE(repeat.error->message.find("not increasing"), std::string::npos);
  EXPECT_TRUE(DecodeSse(Dialect::kOpenAiResponses, Event(4) + Event(2)).error);
}

TEST(OpenAiResponsesDecoderTest, GapIsDetectedInTheRealStream) {
  std::string stream(fixtures::kResponsesText);
  const std::string from = "\"sequence_number\":5,";
  stream.replace(stream.find(from), from.size(), "\"sequence_number\":6,");
  DecodedStream out = DecodeSse(Dialect::kOpenAiResponses, stream);
  ASSERT_TRUE(out.error);
  EXPECT_EQ(out.deltas, (Deltas{TextDelta{"Hello"}}));  // decoded up to the gap
}

TEST(OpenAiResponsesDecoderTest, ProtocolViolationsAreDecodeErrors) {
  struct Case {
    std::string type;
    std::string data;
  };
  const std::vector<Case> bad = {
      {"response.output_text.delta", R"({"type":"response.completed","response":{}})"},
      {"message", R"({"sequence_number":1})"},
      {"response.output_text.delta", R"({"type":"response.output_text.delta","delta":7})"},
      {"response.completed", R"({"type":"response.completed"})"},
      {"response.output_text.delta",
       R"({"type":"response.output_text.delta","sequence_number":"1","delta":"x"})"},
      {"response.function_call_arguments.delta",
       R"({"type":"response.function_call_arguments.delta","delta":"{"})"},
      {"response.output_item.added",
       R"({"type":"response.output_item.added","output_index":0,"item":{"type":"function_call"}})"},
  };
  for (const Case& c : bad) {
    EXPECT_FALSE(DecodeOne(Dialect::kOpenAiResponses, c.type, c.data)) << c.data;
  }
}

TEST(OpenAiResponsesDecoderTest, NonStreamedBodies) {
  auto out = DecodeBody(Dialect::kOpenAiResponses, fixtures::kResponsesBody);
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, (Deltas{ReasoningDelta{"Thinking."}, TextDelta{"Hi!"},
                          ToolCallDelta{2, "call_1", "get_weather", R"({"city":"Paris"})"},
                          FinishDelta{"completed"}, UsageDelta{5, 7},
                          TerminalDelta{TerminalMarker::kBody}}));
  auto failed = DecodeBody(
      Dialect::kOpenAiResponses,
      R"({"id":"resp_1","object":"response","status":"failed","error":{"code":"server_error","message":"boom"},"output":[]})");
  ASSERT_TRUE(failed);
  EXPECT_EQ(*failed, (Deltas{ProviderErrorDelta{"", "server_error", "boom"}}));
  EXPECT_FALSE(DecodeBody(Dialect::kOpenAiResponses, R"({"status":"in_progress","output":[]})"));
  EXPECT_FALSE(DecodeBody(Dialect::kOpenAiResponses, R"({"status":"completed","output":{}})"));
}

// --- gemini
// ---------------------------------------------------------------------------------------

TEST(GeminiDecoderTest, TextThoughtsAndTheFinishChunkAsTerminal) {
  DialectDecoder decoder(Dialect::kGemini);
  Deltas out;
  const auto feed = [&](std::string data) {
    auto weight = decoder.DecodeEvent(SseEvent{"", std::move(data), ""}, out);
    ASSERT_TRUE(weight) << weight.error().message;
  };
  feed(
      R"({"candidates":[{"content":{"parts":[{"text":"Plan.","thought":true}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":9,"totalTokenCount":9}})");
  feed(R"({"candidates":[{"content":{"parts":[{"text":"Hel"}],"role":"model"},"index":0}]})");
  feed(
      R"({"candidates":[{"content":{"parts":[{"text":"lo"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":2,"totalTokenCount":11}})");
  EXPECT_EQ(out, (Deltas{ReasoningDelta{"Plan."}, UsageDelta{9, std::nullopt}, TextDelta{"Hel"},
                         TextDelta{"lo"}, UsageDelta{9, 2}, FinishDelta{"STOP"},
                         TerminalDelta{TerminalMarker::kFinishReason}}));
}

TEST(GeminiDecoderTest, FunctionCallsAreWholeAndNumberedAcrossChunks) {
  DialectDecoder decoder(Dialect::kGemini);
  Deltas out;
  for (
      const char* data :
      {R"({"candidates":[{"content":{"parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}}}],"role":"model"},"index":0}]})",
       R"({"candidates":[{"content":{"parts":[{"functionCall":{"name":"get_time","args":{}}}],"role":"model"},"index":0}]})"}) {
    ASSERT_TRUE(decoder.DecodeEvent(SseEvent{"", data, ""}, out));
  }
  EXPECT_EQ(out, (Deltas{ToolCallDelta{0, "", "get_weather", R"({"city":"Paris"})"},
                         ToolCallDelta{1, "", "get_time", "{}"}}));
}

TEST(GeminiDecoderTest, ErrorsAreGoogleRpcStatusesOrEnvelopes) {
  auto status = DecodeOne(
      Dialect::kGemini, "",
      R"({"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}})");
  ASSERT_TRUE(status);
  EXPECT_EQ(*status,
            (Deltas{ProviderErrorDelta{"UNAVAILABLE", "503", "The model is overloaded."}}));
  auto envelope = DecodeOne(Dialect::kGemini, "",
                            R"({"error":{"message":"boom","type":"server_error","code":null}})");
  ASSERT_TRUE(envelope);
  EXPECT_EQ(*envelope, (Deltas{ProviderErrorDelta{"server_error", "", "boom"}}));
}

TEST(GeminiDecoderTest, BlockedPromptAndMalformedChunks) {
  auto blocked = DecodeOne(Dialect::kGemini, "", R"({"promptFeedback":{"blockReason":"SAFETY"}})");
  ASSERT_TRUE(blocked);
  EXPECT_EQ(*blocked,
            (Deltas{FinishDelta{"SAFETY"}, TerminalDelta{TerminalMarker::kFinishReason}}));
  EXPECT_FALSE(DecodeOne(Dialect::kGemini, "", R"({"candidates":"not-a-list"})"));
  EXPECT_FALSE(DecodeOne(Dialect::kGemini, "", R"({"usageMetadata":{}})"));
  EXPECT_FALSE(DecodeOne(Dialect::kGemini, "", "not json"));
  EXPECT_FALSE(
      DecodeOne(Dialect::kGemini, "",
                R"({"candidates":[{"content":{"parts":[{"functionCall":{"args":{}}}]}}]})"));
}

TEST(GeminiDecoderTest, NonStreamedBody) {
  auto body = DecodeBody(
      Dialect::kGemini,
      R"({"candidates":[{"content":{"parts":[{"text":"Hello"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":1}})");
  ASSERT_TRUE(body) << body.error().message;
  EXPECT_EQ(*body, (Deltas{TextDelta{"Hello"}, UsageDelta{3, 1}, FinishDelta{"STOP"},
                           TerminalDelta{TerminalMarker::kBody}}));
}

// --- ollama
// ---------------------------------------------------------------------------------------

TEST(OllamaDecoderTest, LinesThinkingToolCallsAndTheDoneLine) {
  DialectDecoder decoder(Dialect::kOllama);
  Deltas out;
  for (
      const char* line :
      {R"({"model":"llama3.2","message":{"role":"assistant","content":"","thinking":"Plan."},"done":false})",
       R"({"model":"llama3.2","message":{"role":"assistant","content":"Hi"},"done":false})",
       R"({"model":"llama3.2","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Paris"}}}]},"done":false})",
       R"({"model":"llama3.2","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":26,"eval_count":3})"}) {
    auto weight = decoder.DecodeEvent(SseEvent{"message", line, ""}, out);
    ASSERT_TRUE(weight) << weight.error().message;
  }
  EXPECT_EQ(out,
            (Deltas{ReasoningDelta{"Plan."}, TextDelta{"Hi"},
                    ToolCallDelta{0, "", "get_weather", R"({"city":"Paris"})"}, UsageDelta{26, 3},
                    FinishDelta{"stop"}, TerminalDelta{TerminalMarker::kDoneLine}}));
}

TEST(OllamaDecoderTest, ErrorsAreBareStringsOrEnvelopes) {
  auto bare = DecodeOne(Dialect::kOllama, "message", R"({"error":"unexpected EOF"})");
  ASSERT_TRUE(bare);
  EXPECT_EQ(*bare, (Deltas{ProviderErrorDelta{"", "", "unexpected EOF"}}));
  auto envelope = DecodeOne(Dialect::kOllama, "message",
                            R"({"error":{"message":"boom","type":"server_error"}})");
  ASSERT_TRUE(envelope);
  EXPECT_EQ(*envelope, (Deltas{ProviderErrorDelta{"server_error", "", "boom"}}));
  EXPECT_FALSE(
      DecodeOne(Dialect::kOllama, "message", R"({"message":"not-an-object","done":false})"));
  EXPECT_FALSE(DecodeOne(Dialect::kOllama, "message", R"({"message":{"content":"x"}})"));
  EXPECT_FALSE(DecodeOne(Dialect::kOllama, "message", "{\"done\":false}{\"done\":false}"));
}

TEST(OllamaDecoderTest, NonStreamedBodyMustBeDone) {
  auto body = DecodeBody(
      Dialect::kOllama,
      R"({"message":{"role":"assistant","content":"Hello"},"done":true,"done_reason":"length","eval_count":1})");
  ASSERT_TRUE(body) << body.error().message;
  EXPECT_EQ(*body, (Deltas{TextDelta{"Hello"}, UsageDelta{std::nullopt, 1}, FinishDelta{"length"},
                           TerminalDelta{TerminalMarker::kBody}}));
  EXPECT_FALSE(DecodeBody(Dialect::kOllama, R"({"message":{"content":"Hel"},"done":false})"));
}

// A gateway's OpenAI-style envelope on an unnamed data line is the stream's error in every SSE
// dialect, not a malformed event (Anthropic's and Responses' own events all have a type).
TEST(DialectDecoderTest, AnOpenAiEnvelopeIsAnErrorInEverySseDialect) {
  for (Dialect dialect : {Dialect::kAnthropicMessages, Dialect::kOpenAiResponses}) {
    SCOPED_TRACE(ToString(dialect));
    const DecodedStream decoded = DecodeSse(
        dialect, "data: {\"error\":{\"message\":\"boom\",\"type\":\"server_error\"}}\n\n");
    ASSERT_FALSE(decoded.error);
    EXPECT_EQ(decoded.deltas, (Deltas{ProviderErrorDelta{"server_error", "", "boom"}}));
    // A named event is the dialect's own and must have its type.
    EXPECT_TRUE(DecodeSse(dialect, "event: error\ndata: {\"error\":{\"type\":\"x\"}}\n\n").error);
  }
}

TEST(DialectTest, NamesRoundTrip) {
  for (Dialect dialect : AllDialects()) EXPECT_EQ(ParseDialect(ToString(dialect)), dialect);
  EXPECT_EQ(AllDialects().size(), 6u);
  EXPECT_EQ(ToString(Dialect::kAnthropicMessages), "anthropic-messages");
  EXPECT_FALSE(ParseDialect("openai"));
}

}  // namespace
}  // namespace faultline::ref
