// The Gemini writer (the Gemini API's generateContent and streamGenerateContent?alt=sse).
//
// The model and the choice of a stream are in the path, not the body:
//   POST /v1beta/models/{model}:streamGenerateContent?alt=sse   an SSE stream
//   POST /v1beta/models/{model}:generateContent                 one JSON body
// A stream is a sequence of GenerateContentResponse chunks on `data:` lines, without event names
// and without a terminator event: thought parts (`"thought": true`), text parts, a function call
// (whole, in one part: Gemini does not stream argument fragments), then a last chunk that carries
// `finishReason` and the usage totals. That last chunk is the stream's terminator: a stream that
// ends without it was cut. Every chunk repeats `modelVersion` and `responseId`, and carries
// `usageMetadata` with the prompt's tokens, as the real API does.
//
// Errors are google.rpc.Status objects, {"error":{"code","message","status","details"}}, both as
// a non-2xx body and as a `data:` line inside a 200 stream. A rate limit's retry hint is the
// `google.rpc.RetryInfo` detail's `retryDelay` ("37s"), sent when the scenario gives one
// (ErrorSpec::retry_delay); Gemini sends no Retry-After, no request-id and no rate-limit headers.
#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fake_provider/wire/dialect.h"
#include "fake_provider/wire/dialect_internal.h"
#include "scenarios/scenario.h"

namespace faultline::provider::dialect_internal {
namespace {

using scenario::ErrorKind;

constexpr std::string_view kGeminiDefaultModel = "gemini-2.5-flash";
constexpr std::string_view kModelsPrefix = "/v1beta/models/";
constexpr std::string_view kGeminiStreamMethod = ":streamGenerateContent";
constexpr std::string_view kGeminiJsonMethod = ":generateContent";
constexpr std::string_view kGeminiContextMessage =
    "The input token count (1048577) exceeds the maximum number of tokens allowed (1048576).";

std::string GeminiFinishReason(const scenario::Content& content) {
  return content.finish_reason.value_or("STOP");
}

Json GeminiUsage(const Usage& usage, const scenario::Content& content, bool final) {
  Json out = Json::object({{"promptTokenCount", usage.input_tokens}});
  if (!final) {
    out["totalTokenCount"] = usage.input_tokens;
    return out;
  }
  out["candidatesTokenCount"] = usage.output_tokens;
  out["totalTokenCount"] = usage.input_tokens + usage.output_tokens;
  if (!content.reasoning.empty()) out["thoughtsTokenCount"] = EstimateTokens(content.reasoning);
  return out;
}

// One GenerateContentResponse: a candidate with `parts` (and `finishReason` on the last one).
Json Response(const ResponseIds& ids, Json parts, const std::optional<std::string>& finish,
              Json usage) {
  Json candidate =
      Json::object({{"content", Json::object({{"parts", std::move(parts)}, {"role", "model"}})}});
  if (finish) candidate["finishReason"] = *finish;
  candidate["index"] = 0;
  return Json::object({{"candidates", Json::array({std::move(candidate)})},
                       {"usageMetadata", std::move(usage)},
                       {"modelVersion", ids.model},
                       {"responseId", ids.response_id}});
}

Json FunctionCallPart(const scenario::ToolCallSpec& call) {
  return Json::object(
      {{"functionCall", {{"name", call.name}, {"args", ArgumentsObject(call.arguments)}}}});
}

StreamEvents GeminiStream(const scenario::Content& content, const ResponseIds& ids,
                          const Usage& usage) {
  StreamEvents out;
  const Json running_usage = GeminiUsage(usage, content, false);
  const auto chunk = [&](Json part) {
    out.events.push_back(
        {"", Dump(Response(ids, Json::array({std::move(part)}), std::nullopt, running_usage))});
  };
  for (const std::string& piece : SplitCodePoints(content.reasoning, content.chunk_size)) {
    chunk(Json::object({{"text", piece}, {"thought", true}}));
  }
  if (!content.text.empty() || content.tool_call) out.first_output = out.events.size();
  for (const std::string& piece : SplitCodePoints(content.text, content.chunk_size)) {
    chunk(Json::object({{"text", piece}}));
  }
  if (content.tool_call) chunk(FunctionCallPart(*content.tool_call));
  out.terminator = out.events.size();
  out.events.push_back(
      {"", Dump(Response(ids, Json::array({Json::object({{"text", ""}})}),
                         GeminiFinishReason(content), GeminiUsage(usage, content, true)))});
  SkipToTerminator(content.end, out);
  return out;
}

std::string GeminiBody(const scenario::Content& content, const ResponseIds& ids,
                       const Usage& usage) {
  Json parts = Json::array();
  if (!content.reasoning.empty()) parts.push_back({{"text", content.reasoning}, {"thought", true}});
  if (!content.text.empty()) parts.push_back({{"text", content.text}});
  if (content.tool_call) parts.push_back(FunctionCallPart(*content.tool_call));
  return Dump(Response(ids, std::move(parts), GeminiFinishReason(content),
                       GeminiUsage(usage, content, true)));
}

// The google.rpc code name and the Gemini API's own message for an error kind.
struct GoogleWords {
  std::string_view status;
  std::string message;
};

GoogleWords GeminiErrorWords(const scenario::ErrorSpec& error) {
  switch (error.kind) {
    case ErrorKind::kInvalidRequest:
    case ErrorKind::kUnprocessable:
      return {"INVALID_ARGUMENT", "Request contains an invalid argument."};
    case ErrorKind::kContextWindow:
      return {"INVALID_ARGUMENT",
              std::string(ContextMessage(error.wording, kGeminiContextMessage))};
    case ErrorKind::kTooLarge:
      return {"INVALID_ARGUMENT", "Request payload size exceeds the limit: 20971520 bytes."};
    case ErrorKind::kAuth:
      return {"UNAUTHENTICATED",
              "Request had invalid authentication credentials. Expected OAuth 2 access token, "
              "login cookie or other valid authentication credential."};
    case ErrorKind::kPermission:
      return {"PERMISSION_DENIED", "The caller does not have permission"};
    case ErrorKind::kNotFound:
      return {"NOT_FOUND",
              "models/gemini-0.0-missing is not found for API version v1beta, or is not "
              "supported for generateContent. Call ListModels to see the list of available "
              "models and their supported methods."};
    case ErrorKind::kRequestTimeout:
    case ErrorKind::kGatewayTimeout:
      return {"DEADLINE_EXCEEDED", "Deadline expired before operation could complete."};
    case ErrorKind::kConflict:
      return {"ABORTED", "The operation was aborted."};
    case ErrorKind::kRateLimit:
      return {"RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."};
    case ErrorKind::kQuota:
      return {"RESOURCE_EXHAUSTED",
              "You exceeded your current quota, please check your plan and billing details. For "
              "more information on this error, head to: "
              "https://ai.google.dev/gemini-api/docs/rate-limits."};
    case ErrorKind::kOverloaded:
      return {"UNAVAILABLE", "The model is overloaded. Please try again later."};
    case ErrorKind::kUnavailable:
      return {"UNAVAILABLE", "The service is currently unavailable."};
    case ErrorKind::kBadGateway:
    case ErrorKind::kServer:
      break;
  }
  return {"INTERNAL",
          "An internal error has occurred. Please retry or report in "
          "https://developers.generativeai.google/guide/troubleshooting"};
}

// The per-window quota a 429 names: per minute for a rate limit (it ends on its own), per day
// for an exhausted quota (it does not end within a call).
Json QuotaFailure(const scenario::ErrorSpec& error, std::string_view model) {
  const bool daily = error.kind == ErrorKind::kQuota;
  Json violation = Json::object(
      {{"quotaMetric", "generativelanguage.googleapis.com/generate_content_free_tier_requests"},
       {"quotaId", daily ? "GenerateRequestsPerDayPerProjectPerModel-FreeTier"
                         : "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"},
       {"quotaDimensions", {{"location", "global"}, {"model", model}}},
       {"quotaValue", daily ? "250" : "10"}});
  return Json::object({{"@type", "type.googleapis.com/google.rpc.QuotaFailure"},
                       {"violations", Json::array({std::move(violation)})}});
}

// The google.rpc.Status object; `code` is the HTTP status it stands for (in a stream, the one
// its kind is sent with).
Json StatusObject(const scenario::ErrorSpec& error, int code) {
  GoogleWords words = GeminiErrorWords(error);
  Json status = Json::object({{"code", code},
                              {"message", error.message.value_or(words.message)},
                              {"status", words.status}});
  Json details = Json::array();
  if (error.kind == ErrorKind::kRateLimit || error.kind == ErrorKind::kQuota) {
    details.push_back(QuotaFailure(error, kGeminiDefaultModel));
  }
  if (error.retry_delay) {
    details.push_back(Json::object({{"@type", "type.googleapis.com/google.rpc.RetryInfo"},
                                    {"retryDelay", *error.retry_delay}}));
  }
  if (!details.empty()) status["details"] = std::move(details);
  return Json::object({{"error", std::move(status)}});
}

class GenerateContentWriter final : public DialectWriter {
 public:
  scenario::Dialect dialect() const override { return scenario::Dialect::kGemini; }
  // The endpoint for the default model, for a human to call; ReadTarget takes every model.
  std::string_view endpoint_path() const override {
    return "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse";
  }
  std::string_view endpoint_help() const override {
    return "/v1beta/models/{model}:streamGenerateContent?alt=sse or "
           "/v1beta/models/{model}:generateContent";
  }
  std::string_view default_model() const override { return kGeminiDefaultModel; }
  std::string_view request_id_header() const override { return ""; }

  TargetKind ReadTarget(std::string_view path, std::string_view query) const override {
    if (!path.starts_with(kModelsPrefix)) return TargetKind::kNotServed;
    const std::string_view model_and_method = path.substr(kModelsPrefix.size());
    const std::size_t colon = model_and_method.find(':');
    if (colon == 0 || colon == std::string_view::npos ||
        model_and_method.substr(0, colon).find('/') != std::string_view::npos) {
      return TargetKind::kNotServed;
    }
    const std::string_view method = model_and_method.substr(colon);
    if (method == kGeminiJsonMethod) return TargetKind::kJson;
    // Without alt=sse the API streams one JSON array instead of SSE events; faultline serves
    // the SSE form, which is the one the SDKs ask for.
    if (method == kGeminiStreamMethod && HasAltSse(query)) return TargetKind::kStream;
    return TargetKind::kNotServed;
  }

  ResponseIds MakeIds(std::uint64_t seed, int attempt, WallTime now,
                      std::string_view model) const override {
    IdSource source(seed, attempt, now, "gemini");
    ResponseIds ids;
    ids.response_id = source.Base62(23);
    ids.item_id = "call_" + source.Base62(24);  // never on the wire: Gemini calls have no id
    ids.request_id = "req_" + source.Hex(32);   // never on the wire: no request-id header
    ids.created = CreatedSeconds(now);
    ids.model = std::string(model.empty() ? kGeminiDefaultModel : model);
    return ids;
  }

  StreamEvents Stream(const scenario::Content& content, const ResponseIds& ids,
                      const Usage& usage) const override {
    return GeminiStream(content, ids, usage);
  }

  Body Json(const scenario::Content& content, const ResponseIds& ids,
            const Usage& usage) const override {
    return {"application/json; charset=UTF-8", GeminiBody(content, ids, usage)};
  }

  Body Error(const scenario::ErrorSpec& error, int status) const override {
    if (error.kind == ErrorKind::kBadGateway) {
      Body body = BadGatewayBody();
      if (error.message) body.bytes = *error.message;
      return body;
    }
    return {"application/json; charset=UTF-8", Dump(StatusObject(error, status))};
  }

  // The same google.rpc.Status as a `data:` line: what the API sends when a stream fails.
  SseEvent StreamError(const scenario::ErrorSpec& error, scenario::EventFault::Shape /*shape*/,
                       const ResponseIds& /*ids*/) const override {
    const int code =
        error.kind == ErrorKind::kOverloaded ? 503 : scenario::DefaultStatus(error.kind);
    return {"", Dump(StatusObject(error, code))};
  }

  SseEvent WrongShape() const override { return {"", R"({"candidates":"not-a-list"})"}; }

  SseEvent Ping() const override { return {"", ""}; }

  // Gemini sends no rate-limit headers (the loader refuses them for this dialect).
  void AppendRateLimitHeaders(const scenario::RateLimitHeaders& /*limits*/, WallTime /*now*/,
                              std::vector<scenario::Header>& /*out*/) const override {}

 private:
  static bool HasAltSse(std::string_view query) {
    while (!query.empty()) {
      const std::size_t amp = query.find('&');
      if (query.substr(0, amp) == "alt=sse") return true;
      if (amp == std::string_view::npos) break;
      query.remove_prefix(amp + 1);
    }
    return false;
  }
};

}  // namespace

const DialectWriter& GeminiWriter() {
  static const GenerateContentWriter writer;
  return writer;
}

}  // namespace faultline::provider::dialect_internal
