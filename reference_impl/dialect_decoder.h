// Dialect decoders: provider SSE events (and non-streamed JSON bodies) to normalized deltas.
//
// The wire dialects say the same few things in different shapes. A decoder turns each event
// of one attempt into deltas: text, reasoning, tool-call fragments, refusal text, the finish
// reason, token usage, the terminal marker, and in-stream provider errors. What the deltas mean
// for the attempt (commit, truncation, emptiness, classification) is the assembler's business
// (assembler.h); the decoder only says what the provider said, and refuses what breaks the
// dialect's protocol (malformed JSON, wrong shapes, Responses sequence-number gaps).
//
//   openai-chat         data: {chat.completion.chunk} ... data: [DONE]
//                       in-stream error: data: {"error":{"message","type","code"}}
//   anthropic-messages  event: message_start / content_block_* / message_delta / message_stop,
//                       `ping` heartbeats; in-stream error: event: error {"error":{"type",...}}
//   openai-responses    event: response.* with sequence_number; terminal response.completed or
//                       response.incomplete; errors response.failed {response.error} and `error`
//                       (flat {"code","message"} or nested {"error":{...}})
//   gemini              data: {GenerateContentResponse} ...; no terminator event: the chunk with
//                       `finishReason` ends the answer; error: data: {"error":{google.rpc.Status}}
//   ollama              one JSON object per line (NDJSON, each handed over as an event's data):
//                       {"message":{...},"done":false} ... {"done":true,"done_reason"}; error:
//                       {"error":"text"}
//   bedrock-converse    binary event-stream messages (each handed over as an event named by its
//                       :event-type): messageStart, contentBlock*, messageStop, metadata; error:
//                       an exception message ("exception:throttlingException" {"message"})
//
// Tool-call fragments carry an `index` that is stable within one attempt (the chat tool_calls
// index, the Anthropic content-block index, the Responses output_index); id and name come with a
// call's first fragment. Only the first choice of a chat completion is decoded (n = 1).
//
// Events are parsed with nlohmann::json, except the few shapes that make up nearly all of a
// stream (text, argument and reasoning deltas), which an allocation-free scanner reads first; it
// hands anything unusual to nlohmann, so the results are the same (a differential test checks).
// A delta event is usually the previous one with a new text (and sequence number): the scanner
// remembers the last one it read and then only compares the bytes around the new values.
//
// One decoder per attempt (the Responses decoder tracks sequence numbers); not thread-safe.
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "reference_impl/dialect.h"
#include "reference_impl/json_cursor.h"
#include "reference_impl/sse_decoder.h"

namespace faultline::ref {

struct TextDelta {
  std::string text;
  friend bool operator==(const TextDelta&, const TextDelta&) = default;
};

// Reasoning / thinking text (chat `reasoning_content`, Anthropic thinking_delta, Responses
// reasoning summary and reasoning text deltas). Never part of the committed answer's text.
struct ReasoningDelta {
  std::string text;
  friend bool operator==(const ReasoningDelta&, const ReasoningDelta&) = default;
};

// The model declined in words (chat `delta.refusal`, Responses `response.refusal.delta`).
struct RefusalDelta {
  std::string text;
  friend bool operator==(const RefusalDelta&, const RefusalDelta&) = default;
};

struct ToolCallDelta {
  int index = 0;
  std::string id;         // set on the call's first fragment
  std::string name;       // set on the call's first fragment
  std::string arguments;  // a fragment of the JSON arguments; concatenate in order
  friend bool operator==(const ToolCallDelta&, const ToolCallDelta&) = default;
};

// The provider's own words: "stop", "length", "tool_calls", "content_filter" (chat); "end_turn",
// "max_tokens", "tool_use", "refusal", ... (Anthropic); "completed", or the incomplete_details
// reason such as "max_output_tokens" / "content_filter" (Responses).
struct FinishDelta {
  std::string reason;
  friend bool operator==(const FinishDelta&, const FinishDelta&) = default;
};

// The latest totals the provider reported; a missing field means "not reported here".
struct UsageDelta {
  std::optional<std::int64_t> input_tokens;
  std::optional<std::int64_t> output_tokens;
  friend bool operator==(const UsageDelta&, const UsageDelta&) = default;
};

enum class TerminalMarker {
  kDone,                // openai-chat `data: [DONE]`
  kMessageStop,         // anthropic-messages `message_stop`
  kResponseCompleted,   // openai-responses `response.completed`
  kResponseIncomplete,  // openai-responses `response.incomplete`
  kFinishReason,        // gemini: the chunk that carries `finishReason` (no terminator event)
  kDoneLine,            // ollama: the line with "done": true
  kMessageStopEvent,    // bedrock-converse: the `messageStop` event
  kBody,                // a complete non-streamed JSON body
};
std::string_view ToString(TerminalMarker marker);

// The dialect's committing terminal event.
struct TerminalDelta {
  TerminalMarker marker = TerminalMarker::kDone;
  friend bool operator==(const TerminalDelta&, const TerminalDelta&) = default;
};

// An error the provider reported inside the response (a 200 stream, or an error-shaped body).
struct ProviderErrorDelta {
  std::string type;  // Anthropic/OpenAI error.type ("overloaded_error", "server_error", ...)
  std::string code;  // OpenAI/Responses error.code ("rate_limit_exceeded", ...), may be empty
  std::string message;
  friend bool operator==(const ProviderErrorDelta&, const ProviderErrorDelta&) = default;
};

using Delta = std::variant<TextDelta, ReasoningDelta, RefusalDelta, ToolCallDelta, FinishDelta,
                           UsageDelta, TerminalDelta, ProviderErrorDelta>;

// The response broke the dialect's protocol: MALFORMED_RESPONSE.
struct DecodeError {
  std::string message;
  friend bool operator==(const DecodeError&, const DecodeError&) = default;
};

// Whether an event is progress (it resets an idle watchdog) or keep-alive (Anthropic `ping`).
// SSE comment lines never reach the decoder; the SSE decoder counts them.
enum class EventWeight { kMeaningful, kHeartbeat };

class DialectDecoder {
 public:
  struct Options {
    // Decode the commonest delta events with an allocation-free scanner (several times faster)
    // and everything else with nlohmann::json. Off: nlohmann only (differential tests).
    bool fast_path = true;
  };

  explicit DialectDecoder(Dialect dialect) : dialect_(dialect) {}
  DialectDecoder(Dialect dialect, Options options) : dialect_(dialect), options_(options) {}

  // Decodes one SSE event, appending its deltas to `out` (nothing is appended on error).
  std::expected<EventWeight, DecodeError> DecodeEvent(const SseEventView& event,
                                                      std::vector<Delta>& out);
  // Decodes a complete non-streamed JSON body (success or error shaped); on success the deltas
  // end with TerminalDelta{kBody} unless the body is an error.
  std::expected<void, DecodeError> DecodeBody(std::string_view body, std::vector<Delta>& out);

  Dialect dialect() const { return dialect_; }

  // Per-attempt protocol state, exposed for the per-dialect decoders.
  struct State {
    std::optional<std::int64_t> last_sequence_number;  // openai-responses
    int whole_calls = 0;  // gemini, ollama: tool calls so far (each comes whole, not in pieces)
    struct Block {
      int index = 0;
      bool tool_use = false;  // a client tool call (not text, thinking or a server tool)
    };
    std::vector<Block> blocks;  // anthropic: the content blocks started so far
    // The last delta event the fast path read in full (decode_fast_path.cc). A cache of the
    // decoder's own reading, not protocol state: forgetting it never changes a result.
    internal::JsonShape last_delta;
  };

  const State& state() const { return state_; }

 private:
  Dialect dialect_;
  Options options_;
  State state_;
};

}  // namespace faultline::ref
