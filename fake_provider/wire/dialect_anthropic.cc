// The Anthropic Messages writer (POST /v1/messages).
//
// A stream is: message_start (usage.output_tokens 1, as the real API reports before generating),
// one content block per kind of output in order thinking (thinking_delta…, signature_delta),
// text (text_delta…), tool_use (input_json_delta…), each opened by content_block_start and closed
// by content_block_stop; a `ping` right after the first content_block_start; message_delta with
// stop_reason and output usage; message_stop, the terminator. Every event is named (`event:`)
// and its data repeats the name in "type". Empty text gives no text block (an empty completion).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fake_provider/wire/dialect.h"
#include "fake_provider/wire/dialect_internal.h"
#include "hashing/fnv1a.h"
#include "scenarios/scenario.h"

namespace faultline::provider::dialect_internal {
namespace {

using scenario::ErrorKind;

constexpr std::string_view kAnthropicDefaultModel = "claude-sonnet-4-5";

SseEvent Event(std::string_view name, Json data) { return {std::string(name), Dump(data)}; }

// A stand-in for the thinking block's signature: fixed length, derived from the thinking text.
std::string ThinkingSignature(std::string_view thinking) {
  IdSource source(hashing::Fnv1a64(thinking), 0, WallTime{}, "anthropic-signature");
  return "Eq" + source.Base62(94);
}

std::string AnthropicStopReason(const scenario::Content& content) {
  if (content.finish_reason) return *content.finish_reason;
  return content.tool_call ? "tool_use" : "end_turn";
}

Json AnthropicUsage(int input_tokens, int output_tokens) {
  return Json::object({{"input_tokens", input_tokens},
                       {"cache_creation_input_tokens", 0},
                       {"cache_read_input_tokens", 0},
                       {"output_tokens", output_tokens}});
}

// The message object before any content: message_start's payload and the JSON body's head.
Json MessageHead(const ResponseIds& ids) {
  return Json::object({{"id", ids.response_id},
                       {"type", "message"},
                       {"role", "assistant"},
                       {"model", ids.model},
                       {"content", Json::array()}});
}

void OpenBlock(int index, Json start_block, std::vector<SseEvent>& events) {
  events.push_back(Event("content_block_start", {{"type", "content_block_start"},
                                                 {"index", index},
                                                 {"content_block", std::move(start_block)}}));
}

// One content_block_delta per piece, each `{"type": delta_type, delta_field: piece}`.
void AppendDeltas(int index, std::string_view delta_type, std::string_view delta_field,
                  const std::vector<std::string>& pieces, std::vector<SseEvent>& events) {
  for (const std::string& piece : pieces) {
    Json delta = Json::object({{"type", delta_type}, {delta_field, piece}});
    events.push_back(
        Event("content_block_delta",
              {{"type", "content_block_delta"}, {"index", index}, {"delta", std::move(delta)}}));
  }
}

void CloseBlock(int index, std::vector<SseEvent>& events) {
  events.push_back(Event("content_block_stop", {{"type", "content_block_stop"}, {"index", index}}));
}

// The content blocks of a stream, in order; returns how many blocks it opened. `first_output`:
// the first text delta or tool_use start.
int AppendBlocks(const scenario::Content& content, const ResponseIds& ids,
                 std::vector<SseEvent>& events, std::optional<std::size_t>& first_output) {
  int index = 0;
  if (!content.reasoning.empty()) {
    OpenBlock(index, {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}}, events);
    AppendDeltas(index, "thinking_delta", "thinking",
                 SplitCodePoints(content.reasoning, content.chunk_size), events);
    AppendDeltas(index, "signature_delta", "signature", {ThinkingSignature(content.reasoning)},
                 events);
    CloseBlock(index++, events);
  }
  if (!content.text.empty()) {
    OpenBlock(index, {{"type", "text"}, {"text", ""}}, events);
    first_output = events.size();
    AppendDeltas(index, "text_delta", "text", SplitCodePoints(content.text, content.chunk_size),
                 events);
    CloseBlock(index++, events);
  }
  if (content.tool_call) {
    const scenario::ToolCallSpec& call = *content.tool_call;
    if (!first_output) first_output = events.size();
    OpenBlock(
        index,
        {{"type", "tool_use"}, {"id", ids.item_id}, {"name", call.name}, {"input", Json::object()}},
        events);
    // The API opens a tool_use block with an empty partial_json.
    AppendDeltas(index, "input_json_delta", "partial_json", {""}, events);
    AppendDeltas(index, "input_json_delta", "partial_json",
                 SplitBytes(call.arguments, call.chunk_size), events);
    CloseBlock(index++, events);
  }
  return index;
}

StreamEvents MessagesStream(const scenario::Content& content, const ResponseIds& ids,
                            const Usage& usage) {
  StreamEvents out;
  auto& events = out.events;
  Json message = MessageHead(ids);
  message["stop_reason"] = nullptr;
  message["stop_sequence"] = nullptr;
  message["usage"] = AnthropicUsage(usage.input_tokens, 1);
  events.push_back(Event("message_start", {{"type", "message_start"}, {"message", message}}));
  const int blocks = AppendBlocks(content, ids, events, out.first_output);
  const std::size_t ping = blocks > 0 ? 2 : 1;
  events.insert(events.begin() + static_cast<std::ptrdiff_t>(ping),
                Event("ping", {{"type", "ping"}}));
  if (out.first_output && *out.first_output >= ping) ++*out.first_output;
  Json delta =
      Json::object({{"stop_reason", AnthropicStopReason(content)}, {"stop_sequence", nullptr}});
  events.push_back(Event("message_delta", {{"type", "message_delta"},
                                           {"delta", std::move(delta)},
                                           {"usage", {{"output_tokens", usage.output_tokens}}}}));
  out.terminator = events.size();
  events.push_back(Event("message_stop", {{"type", "message_stop"}}));
  SkipToTerminator(content.end, out);
  return out;
}

std::string MessageBody(const scenario::Content& content, const ResponseIds& ids,
                        const Usage& usage) {
  Json message = MessageHead(ids);
  Json& blocks = message["content"];
  if (!content.reasoning.empty()) {
    blocks.push_back({{"type", "thinking"},
                      {"thinking", content.reasoning},
                      {"signature", ThinkingSignature(content.reasoning)}});
  }
  if (!content.text.empty()) blocks.push_back({{"type", "text"}, {"text", content.text}});
  if (content.tool_call) {
    blocks.push_back({{"type", "tool_use"},
                      {"id", ids.item_id},
                      {"name", content.tool_call->name},
                      {"input", ArgumentsObject(content.tool_call->arguments)}});
  }
  message["stop_reason"] = AnthropicStopReason(content);
  message["stop_sequence"] = nullptr;
  message["usage"] = AnthropicUsage(usage.input_tokens, usage.output_tokens);
  return Dump(message);
}

struct AnthropicError {
  std::string_view type;
  std::string_view message;
};

AnthropicError AnthropicErrorWords(const scenario::ErrorSpec& error) {
  switch (error.kind) {
    case ErrorKind::kInvalidRequest:
      return {"invalid_request_error", "messages: at least one message is required"};
    case ErrorKind::kContextWindow:
      return {"invalid_request_error",
              ContextMessage(error.wording, kAnthropicPromptTooLongMessage)};
    case ErrorKind::kAuth:
      return {"authentication_error", "invalid x-api-key"};
    case ErrorKind::kPermission:
      return {"permission_error",
              "Your API key does not have permission to use the specified resource."};
    case ErrorKind::kNotFound:
      return {"not_found_error", "The requested resource could not be found."};
    case ErrorKind::kRequestTimeout:
    case ErrorKind::kGatewayTimeout:
      return {"timeout_error", "Request timed out"};
    case ErrorKind::kConflict:
      return {"invalid_request_error", "A conflicting request is already in progress."};
    case ErrorKind::kTooLarge:
      return {"request_too_large", "Request exceeds the maximum allowed number of bytes."};
    case ErrorKind::kUnprocessable:
      return {"invalid_request_error", "max_tokens: Field required"};
    case ErrorKind::kRateLimit:
      return {"rate_limit_error",
              "Number of requests has exceeded your per-minute rate limit "
              "(https://docs.anthropic.com/en/api/rate-limits); see the response headers for "
              "current usage. Please try again later or contact sales at "
              "https://www.anthropic.com/contact-sales to discuss your options for a rate limit "
              "increase."};
    case ErrorKind::kQuota:
      return {"invalid_request_error",
              "Your credit balance is too low to access the Anthropic API. Please go to Plans & "
              "Billing to upgrade or purchase credits."};
    case ErrorKind::kOverloaded:
      return {"overloaded_error", "Overloaded"};
    case ErrorKind::kBadGateway:
      return {"api_error", "Bad gateway"};
    case ErrorKind::kUnavailable:
      return {"api_error", "Service unavailable"};
    case ErrorKind::kServer:
      break;
  }
  return {"api_error", "Internal server error"};
}

Json ErrorEnvelope(const scenario::ErrorSpec& error) {
  AnthropicError words = AnthropicErrorWords(error);
  Json detail = Json::object(
      {{"type", words.type}, {"message", error.message.value_or(std::string(words.message))}});
  return Json::object({{"type", "error"}, {"error", std::move(detail)}});
}

void AppendLimit(std::string_view resource, int limit, int remaining, std::string reset,
                 std::vector<scenario::Header>& out) {
  const std::string prefix = "anthropic-ratelimit-" + std::string(resource);
  out.push_back({prefix + "-limit", std::to_string(limit)});
  out.push_back({prefix + "-remaining", std::to_string(remaining)});
  out.push_back({prefix + "-reset", std::move(reset)});
}

class MessagesWriter final : public DialectWriter {
 public:
  scenario::Dialect dialect() const override { return scenario::Dialect::kAnthropicMessages; }
  std::string_view endpoint_path() const override { return "/v1/messages"; }
  std::string_view default_model() const override { return kAnthropicDefaultModel; }
  std::string_view request_id_header() const override { return "request-id"; }

  ResponseIds MakeIds(std::uint64_t seed, int attempt, WallTime now,
                      std::string_view model) const override {
    IdSource source(seed, attempt, now, "anthropic-messages");
    ResponseIds ids;
    ids.response_id = "msg_01" + source.Base62(22);
    ids.item_id = "toolu_01" + source.Base62(22);
    ids.request_id = "req_011C" + source.Base62(20);
    ids.created = CreatedSeconds(now);
    ids.model = std::string(model.empty() ? kAnthropicDefaultModel : model);
    return ids;
  }

  StreamEvents Stream(const scenario::Content& content, const ResponseIds& ids,
                      const Usage& usage) const override {
    return MessagesStream(content, ids, usage);
  }

  Body Json(const scenario::Content& content, const ResponseIds& ids,
            const Usage& usage) const override {
    return {"application/json", MessageBody(content, ids, usage)};
  }

  Body Error(const scenario::ErrorSpec& error, int /*status*/) const override {
    if (error.kind == ErrorKind::kBadGateway) return GatewayBody(error);
    return {"application/json", Dump(ErrorEnvelope(error))};
  }

  Body ErrorWithIds(const scenario::ErrorSpec& error, int /*status*/,
                    const ResponseIds& ids) const override {
    if (error.kind == ErrorKind::kBadGateway) return GatewayBody(error);
    dialect_internal::Json envelope = ErrorEnvelope(error);
    envelope["request_id"] = ids.request_id;
    return {"application/json", Dump(envelope)};
  }

  SseEvent StreamError(const scenario::ErrorSpec& error, scenario::EventFault::Shape /*shape*/,
                       const ResponseIds& /*ids*/) const override {
    return Event("error", ErrorEnvelope(error));
  }

  SseEvent WrongShape() const override {
    return {"content_block_delta", R"({"type":"content_block_delta","index":0,"delta":"oops"})"};
  }

  SseEvent Ping() const override { return Event("ping", {{"type", "ping"}}); }

  void AppendRateLimitHeaders(const scenario::RateLimitHeaders& limits, WallTime now,
                              std::vector<scenario::Header>& out) const override {
    const std::string tokens_reset = Rfc3339(now + limits.tokens_reset);
    AppendLimit("requests", limits.requests_limit, limits.requests_remaining,
                Rfc3339(now + limits.requests_reset), out);
    AppendLimit("input-tokens", limits.tokens_limit, limits.tokens_remaining, tokens_reset, out);
    AppendLimit("output-tokens", limits.tokens_limit, limits.tokens_remaining, tokens_reset, out);
    AppendLimit("tokens", limits.tokens_limit, limits.tokens_remaining, tokens_reset, out);
  }

 private:
  static Body GatewayBody(const scenario::ErrorSpec& error) {
    Body body = BadGatewayBody();
    if (error.message) body.bytes = *error.message;
    return body;
  }
};

}  // namespace

const DialectWriter& AnthropicWriter() {
  static const MessagesWriter writer;
  return writer;
}

}  // namespace faultline::provider::dialect_internal
