// Realistic streamed response bodies for the decoding benchmark, one per dialect, written by hand
// from the providers' published wire formats (not from the fake provider, on purpose): the same
// bytes feed the C++ benchmark (decode_bench.cc) and, through the files written by
// reference_impl_fixtures (write_fixtures.cc), the eventsource-parser benchmark (bench.mjs).
//
// Each body carries `kBenchDeltas` text deltas with the ids, sequence numbers, usage and framing
// events the real APIs send, and ends with its dialect's terminator. Deterministic: same bytes on
// every call. Pure functions; safe from any thread.
#pragma once

#include <fmt/format.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "hashing/crc32.h"
#include "reference_impl/dialect.h"

namespace faultline::ref::bench {

inline constexpr int kBenchDeltas = 2000;
// Both benchmarks feed the body in pieces of this size, as reads from a socket would deliver it.
inline constexpr std::size_t kFeedBytes = 4096;

// The i-th text token, JSON-escaped (as it appears on the wire) and raw (as decoded). Mostly
// words with a leading space, as tokenizers emit them; some newlines, quotes and non-ASCII.
struct Token {
  std::string_view json;
  std::string_view raw;
};

inline Token BenchToken(int i) {
  static constexpr std::array<Token, 16> kTokens = {{
      {" the", " the"},
      {" retry", " retry"},
      {" policy", " policy"},
      {" should", " should"},
      {" back", " back"},
      {" off", " off"},
      {R"(\n\n)", "\n\n"},
      {"**", "**"},
      {" exponential", " exponential"},
      {R"( \"jitter\")", " \"jitter\""},
      {",", ","},
      {" caf\xC3\xA9", " caf\xC3\xA9"},
      {" \xE2\x80\x94", " \xE2\x80\x94"},
      {" deadline", " deadline"},
      {".", "."},
      {" 429", " 429"},
  }};
  return kTokens[static_cast<std::size_t>(i) % kTokens.size()];
}

// The text all kBenchDeltas tokens decode to, and its wire (JSON-escaped) form.
inline std::string BenchText(bool json) {
  std::string text;
  for (int i = 0; i < kBenchDeltas; ++i) {
    text += json ? BenchToken(i).json : BenchToken(i).raw;
  }
  return text;
}

// OpenAI Chat Completions with stream_options.include_usage: a role chunk, content chunks (each
// with "usage":null), a finish chunk, a usage chunk with empty choices, then [DONE].
inline std::string OpenAiChatBody() {
  constexpr std::string_view kHead =
      R"({"id":"chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG","object":"chat.completion.chunk",)"
      R"("created":1741570283,"model":"gpt-4o-2024-08-06","service_tier":"default",)"
      R"("system_fingerprint":"fp_eb9dce56a8","choices":[)";
  std::string body;
  body += fmt::format(
      "data: {}{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null}}"
      ",\"logprobs\":null,\"finish_reason\":null}}],\"usage\":null}}\n\n",
      kHead);
  for (int i = 0; i < kBenchDeltas; ++i) {
    body += fmt::format(
        "data: {}{{\"index\":0,\"delta\":{{\"content\":\"{}\"}},\"logprobs\":null,"
        "\"finish_reason\":null}}],\"usage\":null}}\n\n",
        kHead, BenchToken(i).json);
  }
  body += fmt::format(
      "data: {}{{\"index\":0,\"delta\":{{}},\"logprobs\":null,\"finish_reason\":\"stop\"}}],"
      "\"usage\":null}}\n\n",
      kHead);
  body += fmt::format(
      "data: {}],\"usage\":{{\"prompt_tokens\":812,\"completion_tokens\":{},\"total_tokens\":{},"
      "\"prompt_tokens_details\":{{\"cached_tokens\":0,\"audio_tokens\":0}},"
      "\"completion_tokens_details\":{{\"reasoning_tokens\":0,\"audio_tokens\":0,"
      "\"accepted_prediction_tokens\":0,\"rejected_prediction_tokens\":0}}}}}}\n\n",
      kHead, kBenchDeltas, 812 + kBenchDeltas);
  body += "data: [DONE]\n\n";
  return body;
}

// Anthropic Messages: message_start, one text block of content_block_delta events with a ping
// after the block start and every 500 deltas, message_delta with usage, message_stop.
inline std::string AnthropicBody() {
  std::string body =
      "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":"
      "\"msg_01XFDUDYJgAACzvnptvVoYEL\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],"
      "\"model\":\"claude-sonnet-4-20250514\",\"stop_reason\":null,\"stop_sequence\":null,"
      "\"usage\":{\"input_tokens\":812,\"cache_creation_input_tokens\":0,"
      "\"cache_read_input_tokens\":0,\"output_tokens\":1}}}\n\n"
      "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
      "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n";
  for (int i = 0; i < kBenchDeltas; ++i) {
    if (i % 500 == 0) body += "event: ping\ndata: {\"type\": \"ping\"}\n\n";
    body += fmt::format(
        "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,"
        "\"delta\":{{\"type\":\"text_delta\",\"text\":\"{}\"}}}}\n\n",
        BenchToken(i).json);
  }
  body += "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n";
  body += fmt::format(
      "event: message_delta\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":"
      "\"end_turn\",\"stop_sequence\":null}},\"usage\":{{\"output_tokens\":{}}}}}\n\n",
      kBenchDeltas);
  body += "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
  return body;
}

// OpenAI Responses: created, in_progress, output_item.added, content_part.added, the
// output_text.delta events (sequence numbers, item id, empty logprobs), then the .done events that
// repeat the whole text, and response.completed with the output and usage.
inline std::string OpenAiResponsesBody() {
  constexpr std::string_view kId = "resp_67c9fdcecf488190bdd9a0409de3a1ec";
  constexpr std::string_view kItem = "msg_67c9fdcf37fc8190ba82116e33fb28c5";
  const std::string text = BenchText(/*json=*/true);
  const std::string head = fmt::format(
      R"("id":"{}","object":"response","created_at":1741290958,"model":"gpt-4.1-2025-04-14")", kId);
  int seq = 0;
  std::string body;
  auto event = [&](std::string_view type, const std::string& rest) {
    body += fmt::format("event: {0}\ndata: {{\"type\":\"{0}\",\"sequence_number\":{1},{2}}}\n\n",
                        type, seq++, rest);
  };
  const std::string in_progress = fmt::format(
      R"("response":{{{},"status":"in_progress","error":null,"incomplete_details":null,)"
      R"("output":[],"usage":null}})",
      head);
  event("response.created", in_progress);
  event("response.in_progress", in_progress);
  event("response.output_item.added",
        fmt::format(R"("output_index":0,"item":{{"id":"{}","type":"message",)"
                    R"("status":"in_progress","role":"assistant","content":[]}})",
                    kItem));
  const std::string where =
      fmt::format(R"("item_id":"{}","output_index":0,"content_index":0)", kItem);
  event("response.content_part.added",
        fmt::format(R"({},"part":{{"type":"output_text","text":"","annotations":[]}})", where));
  for (int i = 0; i < kBenchDeltas; ++i) {
    event("response.output_text.delta",
          fmt::format(R"({},"delta":"{}","logprobs":[])", where, BenchToken(i).json));
  }
  const std::string part =
      fmt::format(R"({{"type":"output_text","text":"{}","annotations":[],"logprobs":[]}})", text);
  event("response.output_text.done", fmt::format(R"({},"text":"{}","logprobs":[])", where, text));
  event("response.content_part.done", fmt::format(R"({},"part":{})", where, part));
  const std::string item = fmt::format(
      R"({{"id":"{}","type":"message","status":"completed","role":"assistant","content":[{}]}})",
      kItem, part);
  event("response.output_item.done", fmt::format(R"("output_index":0,"item":{})", item));
  event("response.completed",
        fmt::format(R"("response":{{{},"status":"completed","error":null,)"
                    R"("incomplete_details":null,"output":[{}],"usage":{{"input_tokens":812,)"
                    R"("input_tokens_details":{{"cached_tokens":0}},"output_tokens":{},)"
                    R"("output_tokens_details":{{"reasoning_tokens":0}},"total_tokens":{}}}}})",
                    head, item, kBenchDeltas, 812 + kBenchDeltas));
  return body;
}

// Gemini streamGenerateContent?alt=sse: text chunks that repeat usageMetadata, modelVersion and
// responseId, then the chunk with finishReason and the usage totals (no terminator event).
inline std::string GeminiBody() {
  constexpr std::string_view kTail =
      R"("usageMetadata":{"promptTokenCount":812,"totalTokenCount":812},)"
      R"("modelVersion":"gemini-2.5-flash","responseId":"Rm3OaNvBBPCXz7IPq4Pz2Ao"})";
  std::string body;
  for (int i = 0; i < kBenchDeltas; ++i) {
    body += fmt::format(
        "data: {{\"candidates\":[{{\"content\":{{\"parts\":[{{\"text\":\"{}\"}}],"
        "\"role\":\"model\"}},\"index\":0}}],{}\r\n\r\n",
        BenchToken(i).json, kTail);
  }
  body += fmt::format(
      "data: {{\"candidates\":[{{\"content\":{{\"parts\":[{{\"text\":\"\"}}],\"role\":"
      "\"model\"}},\"finishReason\":\"STOP\",\"index\":0}}],\"usageMetadata\":"
      "{{\"promptTokenCount\":812,\"candidatesTokenCount\":{},\"totalTokenCount\":{}}},"
      "\"modelVersion\":\"gemini-2.5-flash\",\"responseId\":\"Rm3OaNvBBPCXz7IPq4Pz2Ao\"}}\r\n\r\n",
      kBenchDeltas, 812 + kBenchDeltas);
  return body;
}

// Ollama /api/chat: one JSON object per line, then the line with "done": true and the counts.
inline std::string OllamaBody() {
  std::string body;
  for (int i = 0; i < kBenchDeltas; ++i) {
    body += fmt::format(
        R"({{"model":"llama3.2","created_at":"2025-03-06T19:55:58.123456789Z","message":)"
        R"({{"role":"assistant","content":"{}"}},"done":false}})"
        "\n",
        BenchToken(i).json);
  }
  body +=
      fmt::format(R"({{"model":"llama3.2","created_at":"2025-03-06T19:56:02.123456789Z","message":)"
                  R"({{"role":"assistant","content":""}},"done":true,"done_reason":"stop",)"
                  R"("total_duration":4883583458,"prompt_eval_count":812,"eval_count":{}}})"
                  "\n",
                  kBenchDeltas);
  return body;
}

// One AWS event-stream message with string headers, sealed with its two CRCs: written here from
// the published encoding, apart from the fake provider's encoder.
inline std::string EventStreamMessage(
    std::initializer_list<std::pair<std::string_view, std::string_view>> headers,
    std::string_view payload) {
  const auto u32 = [](std::string& out, std::uint32_t value) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(value >> shift));
  };
  std::string block;
  for (const auto& [name, value] : headers) {
    block.push_back(static_cast<char>(name.size()));
    block.append(name);
    block.push_back(7);  // string
    block.push_back(static_cast<char>(value.size() >> 8));
    block.push_back(static_cast<char>(value.size() & 0xFF));
    block.append(value);
  }
  std::string message;
  u32(message, static_cast<std::uint32_t>(12 + block.size() + payload.size() + 4));
  u32(message, static_cast<std::uint32_t>(block.size()));
  u32(message, hashing::Crc32(message));
  message.append(block);
  message.append(payload);
  u32(message, hashing::Crc32(message));
  return message;
}

// A ConverseStream event message.
inline std::string BedrockEvent(std::string_view type, std::string_view payload) {
  return EventStreamMessage(
      {{":event-type", type}, {":content-type", "application/json"}, {":message-type", "event"}},
      payload);
}

inline std::string BedrockBody() {
  std::string body = BedrockEvent("messageStart", R"({"role":"assistant","p":"abcdefghijk"})");
  for (int i = 0; i < kBenchDeltas; ++i) {
    body += BedrockEvent(
        "contentBlockDelta",
        fmt::format(R"({{"contentBlockIndex":0,"delta":{{"text":"{}"}},"p":"abcdefghijklmnopqr"}})",
                    BenchToken(i).json));
  }
  body += BedrockEvent("contentBlockStop", R"({"contentBlockIndex":0,"p":"abcdefghijklmnopq"})");
  body += BedrockEvent("messageStop", R"({"stopReason":"end_turn","p":"abcdefghijklmnopqrs"})");
  body +=
      BedrockEvent("metadata", fmt::format(R"({{"usage":{{"inputTokens":812,"outputTokens":{},)"
                                           R"("totalTokens":{}}},"metrics":{{"latencyMs":5213}}}})",
                                           kBenchDeltas, 812 + kBenchDeltas));
  return body;
}

inline std::string BenchBody(Dialect dialect) {
  switch (dialect) {
    case Dialect::kOpenAiChat:
      return OpenAiChatBody();
    case Dialect::kAnthropicMessages:
      return AnthropicBody();
    case Dialect::kOpenAiResponses:
      return OpenAiResponsesBody();
    case Dialect::kGemini:
      return GeminiBody();
    case Dialect::kOllama:
      return OllamaBody();
    case Dialect::kBedrockConverse:
      return BedrockBody();
  }
  return {};
}

}  // namespace faultline::ref::bench
