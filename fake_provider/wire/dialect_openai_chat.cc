// The OpenAI Chat Completions writer (POST /v1/chat/completions).
//
// A stream is: a role chunk, `reasoning_content` chunks (DeepSeek's reasoning channel), content
// chunks, a tool call opened with its id and name then fed argument fragments, a chunk carrying
// finish_reason, a usage chunk with an empty `choices` (what `stream_options.include_usage`
// gives), and the `data: [DONE]` terminator. Every chunk repeats id, created, model and
// system_fingerprint, as the real API does.
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fake_provider/wire/dialect.h"
#include "fake_provider/wire/dialect_internal.h"
#include "hashing/fnv1a.h"
#include "scenarios/scenario.h"

namespace faultline::provider::dialect_internal {
namespace {

constexpr std::string_view kDone = "[DONE]";

std::string Fingerprint(std::string_view model) {
  return fmt::format("fp_{:010x}", hashing::Fnv1a64(model) & 0xff'ffff'ffffULL);
}

Json ChatUsage(const Usage& usage) {
  return Json::object({{"prompt_tokens", usage.input_tokens},
                       {"completion_tokens", usage.output_tokens},
                       {"total_tokens", usage.input_tokens + usage.output_tokens}});
}

// The fields every chunk starts with, then `choices`.
Json Chunk(const ResponseIds& ids, Json choices) {
  Json chunk = Json::object({{"id", ids.response_id},
                             {"object", "chat.completion.chunk"},
                             {"created", ids.created},
                             {"model", ids.model},
                             {"system_fingerprint", Fingerprint(ids.model)}});
  chunk["choices"] = std::move(choices);
  return chunk;
}

SseEvent DeltaChunk(const ResponseIds& ids, Json delta, Json finish_reason = nullptr) {
  Json choice = Json::object({{"index", 0},
                              {"delta", std::move(delta)},
                              {"logprobs", nullptr},
                              {"finish_reason", std::move(finish_reason)}});
  return {"", Dump(Chunk(ids, Json::array({std::move(choice)})))};
}

std::string ChatFinishReason(const scenario::Content& content) {
  if (content.finish_reason) return *content.finish_reason;
  return content.tool_call ? "tool_calls" : "stop";
}

void AppendToolCall(const scenario::ToolCallSpec& call, const ResponseIds& ids,
                    std::vector<SseEvent>& events) {
  Json opening = Json::object({{"index", 0},
                               {"id", ids.item_id},
                               {"type", "function"},
                               {"function", {{"name", call.name}, {"arguments", ""}}}});
  events.push_back(DeltaChunk(ids, {{"tool_calls", Json::array({std::move(opening)})}}));
  for (const std::string& piece : SplitBytes(call.arguments, call.chunk_size)) {
    Json fragment = Json::object({{"index", 0}, {"function", {{"arguments", piece}}}});
    events.push_back(DeltaChunk(ids, {{"tool_calls", Json::array({std::move(fragment)})}}));
  }
}

Json MessageObject(const scenario::Content& content, const ResponseIds& ids) {
  Json message = Json::object({{"role", "assistant"}});
  message["content"] =
      content.text.empty() && content.tool_call ? Json(nullptr) : Json(content.text);
  if (!content.reasoning.empty()) message["reasoning_content"] = content.reasoning;
  message["refusal"] = nullptr;
  message["annotations"] = Json::array();
  if (content.tool_call) {
    Json call = Json::object(
        {{"id", ids.item_id},
         {"type", "function"},
         {"function",
          {{"name", content.tool_call->name}, {"arguments", content.tool_call->arguments}}}});
    message["tool_calls"] = Json::array({std::move(call)});
  }
  return message;
}

StreamEvents ChatStream(const scenario::Content& content, const ResponseIds& ids,
                        const Usage& usage) {
  StreamEvents out;
  auto& events = out.events;
  events.push_back(DeltaChunk(ids, {{"role", "assistant"}, {"content", ""}, {"refusal", nullptr}}));
  for (const std::string& piece : SplitCodePoints(content.reasoning, content.chunk_size)) {
    events.push_back(DeltaChunk(ids, {{"content", nullptr}, {"reasoning_content", piece}}));
  }
  if (!content.text.empty() || content.tool_call) out.first_output = events.size();
  for (const std::string& piece : SplitCodePoints(content.text, content.chunk_size)) {
    events.push_back(DeltaChunk(ids, {{"content", piece}}));
  }
  if (content.tool_call) AppendToolCall(*content.tool_call, ids, events);
  events.push_back(DeltaChunk(ids, Json::object(), ChatFinishReason(content)));
  Json usage_chunk = Chunk(ids, Json::array());
  usage_chunk["usage"] = ChatUsage(usage);
  events.push_back({"", Dump(usage_chunk)});
  out.terminator = events.size();
  events.push_back({"", std::string(kDone)});
  SkipToTerminator(content.end, out);
  return out;
}

std::string ChatCompletion(const scenario::Content& content, const ResponseIds& ids,
                           const Usage& usage) {
  Json choice = Json::object({{"index", 0},
                              {"message", MessageObject(content, ids)},
                              {"logprobs", nullptr},
                              {"finish_reason", ChatFinishReason(content)}});
  Json completion = Json::object({{"id", ids.response_id},
                                  {"object", "chat.completion"},
                                  {"created", ids.created},
                                  {"model", ids.model}});
  completion["choices"] = Json::array({std::move(choice)});
  completion["usage"] = ChatUsage(usage);
  completion["service_tier"] = "default";
  completion["system_fingerprint"] = Fingerprint(ids.model);
  return Dump(completion);
}

constexpr std::string_view kChatDefaultModel = "gpt-4o-mini";
constexpr OpenAiErrorWords kChatErrorWords{kChatDefaultModel, kOpenAiContextMessage, "messages"};

class ChatCompletionsWriter final : public DialectWriter {
 public:
  scenario::Dialect dialect() const override { return scenario::Dialect::kOpenAiChat; }
  std::string_view endpoint_path() const override { return "/v1/chat/completions"; }
  std::string_view default_model() const override { return kChatDefaultModel; }
  std::string_view request_id_header() const override { return "x-request-id"; }

  ResponseIds MakeIds(std::uint64_t seed, int attempt, WallTime now,
                      std::string_view model) const override {
    IdSource source(seed, attempt, now, "openai-chat");
    ResponseIds ids;
    ids.response_id = "chatcmpl-" + source.Base62(29);
    ids.item_id = "call_" + source.Base62(24);
    ids.request_id = "req_" + source.Hex(32);
    ids.created = CreatedSeconds(now);
    ids.model = std::string(model.empty() ? kChatDefaultModel : model);
    return ids;
  }

  StreamEvents Stream(const scenario::Content& content, const ResponseIds& ids,
                      const Usage& usage) const override {
    return ChatStream(content, ids, usage);
  }

  Body Json(const scenario::Content& content, const ResponseIds& ids,
            const Usage& usage) const override {
    return {"application/json", ChatCompletion(content, ids, usage)};
  }

  Body Error(const scenario::ErrorSpec& error, int /*status*/) const override {
    return OpenAiErrorBody(error, kChatErrorWords);
  }

  // Chat Completions has a single in-stream error shape: the `{"error":{…}}` envelope.
  SseEvent StreamError(const scenario::ErrorSpec& error, scenario::EventFault::Shape /*shape*/,
                       const ResponseIds& /*ids*/) const override {
    return {"", Dump({{"error", OpenAiErrorObject(error, kChatErrorWords)}})};
  }

  SseEvent WrongShape() const override {
    return {"", R"({"object":"chat.completion.chunk","choices":"not-a-list"})"};
  }

  SseEvent Ping() const override { return {"", ""}; }

  void AppendRateLimitHeaders(const scenario::RateLimitHeaders& limits, WallTime /*now*/,
                              std::vector<scenario::Header>& out) const override {
    AppendOpenAiRateLimitHeaders(limits, out);
  }
};

}  // namespace

const DialectWriter& OpenAiChatWriter() {
  static const ChatCompletionsWriter writer;
  return writer;
}

}  // namespace faultline::provider::dialect_internal
