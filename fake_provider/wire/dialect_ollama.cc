// The Ollama writer (POST /api/chat).
//
// Ollama streams newline-delimited JSON (application/x-ndjson), not Server-Sent Events: one
// object per line, each {"model","created_at","message":{"role":"assistant","content",...},
// "done":false}; thinking arrives in message.thinking (with "think": true), a tool call whole in
// message.tool_calls ({"function":{"name","arguments":{...}}}, no id). The last line has
// "done":true with done_reason and the counts and durations: it is the stream's terminator. A
// request streams unless its body says "stream": false, which gets that last object alone, with
// the whole message.
//
// Errors are {"error":"text"}, a bare string, as the body of a non-2xx status and as a line
// inside a 200 stream; Ollama names no error kinds and sends no Retry-After, request-id or
// rate-limit headers.
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fake_provider/wire/dialect.h"
#include "fake_provider/wire/dialect_internal.h"
#include "scenarios/scenario.h"

namespace faultline::provider::dialect_internal {
namespace {

using scenario::ErrorKind;

constexpr std::string_view kOllamaDefaultModel = "llama3.2";
constexpr std::string_view kOllamaContextMessage = "the input length exceeds the context length";

// Ollama's created_at: RFC 3339 with nanoseconds, always the same length (ids have fixed lengths:
// the time is carried in the response id's place, see MakeIds).
std::string CreatedAt(std::int64_t seconds, std::uint64_t nanos) {
  const std::chrono::sys_seconds instant{std::chrono::seconds(seconds)};
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:09}Z", instant, nanos % 1'000'000'000ULL);
}

std::string DoneReason(const scenario::Content& content) {
  return content.finish_reason.value_or("stop");
}

Json ToolCalls(const scenario::ToolCallSpec& call) {
  return Json::array(
      {{{"function", {{"name", call.name}, {"arguments", ArgumentsObject(call.arguments)}}}}});
}

Json Line(const ResponseIds& ids, Json message, bool done) {
  return Json::object({{"model", ids.model},
                       {"created_at", ids.response_id},
                       {"message", std::move(message)},
                       {"done", done}});
}

Json Message(std::string_view content) {
  return Json::object({{"role", "assistant"}, {"content", content}});
}

// The last object: done, its reason, and the counts and durations Ollama reports.
Json DoneLine(const ResponseIds& ids, Json message, const scenario::Content& content,
              const Usage& usage) {
  Json line = Line(ids, std::move(message), true);
  line["done_reason"] = DoneReason(content);
  line["total_duration"] = 4883583458LL;
  line["load_duration"] = 1334875;
  line["prompt_eval_count"] = usage.input_tokens;
  line["prompt_eval_duration"] = 342546000;
  line["eval_count"] = usage.output_tokens;
  line["eval_duration"] = 4535599000LL;
  return line;
}

StreamEvents OllamaStream(const scenario::Content& content, const ResponseIds& ids,
                          const Usage& usage) {
  StreamEvents out;
  const auto line = [&](Json message) {
    out.events.push_back({"", Dump(Line(ids, std::move(message), false))});
  };
  for (const std::string& piece : SplitCodePoints(content.reasoning, content.chunk_size)) {
    Json message = Message("");
    message["thinking"] = piece;
    line(std::move(message));
  }
  if (!content.text.empty() || content.tool_call) out.first_output = out.events.size();
  for (const std::string& piece : SplitCodePoints(content.text, content.chunk_size)) {
    line(Message(piece));
  }
  if (content.tool_call) {
    Json message = Message("");
    message["tool_calls"] = ToolCalls(*content.tool_call);
    line(std::move(message));
  }
  out.terminator = out.events.size();
  out.events.push_back({"", Dump(DoneLine(ids, Message(""), content, usage))});
  SkipToTerminator(content.end, out);
  return out;
}

std::string OllamaBody(const scenario::Content& content, const ResponseIds& ids,
                       const Usage& usage) {
  Json message = Message(content.text);
  if (!content.reasoning.empty()) message["thinking"] = content.reasoning;
  if (content.tool_call) message["tool_calls"] = ToolCalls(*content.tool_call);
  return Dump(DoneLine(ids, std::move(message), content, usage));
}

// Ollama's own words where it has them (a missing model, a full queue); plain ones elsewhere.
std::string OllamaErrorWords(const scenario::ErrorSpec& error, std::string_view model) {
  switch (error.kind) {
    case ErrorKind::kInvalidRequest:
    case ErrorKind::kUnprocessable:
      return "invalid request: messages must not be empty";
    case ErrorKind::kContextWindow:
      return std::string(ContextMessage(error.wording, kOllamaContextMessage));
    case ErrorKind::kTooLarge:
      return "request body too large";
    case ErrorKind::kAuth:
      return "unauthorized";
    case ErrorKind::kPermission:
      return "forbidden";
    case ErrorKind::kNotFound:
      return fmt::format("model \"{}\" not found, try pulling it first", model);
    case ErrorKind::kRequestTimeout:
    case ErrorKind::kGatewayTimeout:
      return "timed out waiting for the model to respond";
    case ErrorKind::kConflict:
      return "a conflicting request is in progress";
    case ErrorKind::kRateLimit:
      return "too many requests, please slow down";
    case ErrorKind::kQuota:
      return "you have exceeded your current quota, please upgrade your plan";
    case ErrorKind::kOverloaded:
    case ErrorKind::kUnavailable:
      return "server busy, please try again.  maximum pending requests exceeded";
    case ErrorKind::kBadGateway:
    case ErrorKind::kServer:
      break;
  }
  return "an error was encountered while running the model: unexpected EOF";
}

Json ErrorObject(const scenario::ErrorSpec& error) {
  return Json::object(
      {{"error", error.message.value_or(OllamaErrorWords(error, kOllamaDefaultModel))}});
}

class OllamaChatWriter final : public DialectWriter {
 public:
  scenario::Dialect dialect() const override { return scenario::Dialect::kOllama; }
  std::string_view endpoint_path() const override { return "/api/chat"; }
  std::string_view default_model() const override { return kOllamaDefaultModel; }
  std::string_view request_id_header() const override { return ""; }
  std::string_view stream_content_type() const override { return "application/x-ndjson"; }

  TargetKind ReadTarget(std::string_view path, std::string_view /*query*/) const override {
    return path == endpoint_path() ? TargetKind::kBodyDecidesStreamByDefault
                                   : TargetKind::kNotServed;
  }

  // Ollama has no response id: the response id's fixed-length slot carries created_at, so that
  // every attempt renders its own time by the same byte substitution.
  ResponseIds MakeIds(std::uint64_t seed, int attempt, WallTime now,
                      std::string_view model) const override {
    IdSource source(seed, attempt, now, "ollama");
    ResponseIds ids;
    const auto since_epoch = now.time_since_epoch();
    const std::int64_t seconds = CreatedSeconds(now);
    const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(since_epoch).count();
    const auto nanos = static_cast<std::uint64_t>(micros % 1'000'000) * 1000 +
                       std::stoull(source.Hex(3), nullptr, 16) % 1000;
    ids.response_id = CreatedAt(seconds, nanos);
    ids.item_id = "call_" + source.Base62(24);  // never on the wire: Ollama calls have no id
    ids.request_id = "req_" + source.Hex(32);   // never on the wire: no request-id header
    ids.created = seconds;
    ids.model = std::string(model.empty() ? kOllamaDefaultModel : model);
    return ids;
  }

  StreamEvents Stream(const scenario::Content& content, const ResponseIds& ids,
                      const Usage& usage) const override {
    return OllamaStream(content, ids, usage);
  }

  Body Json(const scenario::Content& content, const ResponseIds& ids,
            const Usage& usage) const override {
    return {"application/json; charset=utf-8", OllamaBody(content, ids, usage)};
  }

  Body Error(const scenario::ErrorSpec& error, int /*status*/) const override {
    return {"application/json; charset=utf-8", Dump(ErrorObject(error))};
  }

  SseEvent StreamError(const scenario::ErrorSpec& error, scenario::EventFault::Shape /*shape*/,
                       const ResponseIds& /*ids*/) const override {
    return {"", Dump(ErrorObject(error))};
  }

  SseEvent WrongShape() const override {
    return {"", R"({"message":"not-an-object","done":false})"};
  }

  // No keep-alive in NDJSON (the loader refuses heartbeats for this dialect).
  SseEvent Ping() const override { return {"", ""}; }

  void AppendRateLimitHeaders(const scenario::RateLimitHeaders& /*limits*/, WallTime /*now*/,
                              std::vector<scenario::Header>& /*out*/) const override {}
};

}  // namespace

const DialectWriter& OllamaWriter() {
  static const OllamaChatWriter writer;
  return writer;
}

}  // namespace faultline::provider::dialect_internal
