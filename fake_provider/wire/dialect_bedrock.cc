// The Bedrock writer (Amazon Bedrock Runtime's Converse and ConverseStream).
//
// The model and the choice of a stream are in the path, not the body:
//   POST /model/{modelId}/converse-stream   an event stream (application/vnd.amazon.eventstream)
//   POST /model/{modelId}/converse          one JSON body
// The model id may be URL-encoded ("anthropic.claude-3-5-haiku-20241022-v1%3A0"), as the AWS
// SDKs send it. Requests are signed with SigV4 or carry a Bedrock API key as a bearer token; the
// fake provider takes either without checking it.
//
// A stream is binary: one event-stream message per event (the framer encodes them:
// event_stream_encoder.h), each with an `:event-type` and a JSON payload:
//   messageStart {"role":"assistant"}
//   contentBlockDelta {"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"…"}}}   thinking
//   contentBlockStop, then the text block's deltas {"delta":{"text":"Hel"}} and its stop
//   contentBlockStart {"start":{"toolUse":{"toolUseId","name"}}}, {"delta":{"toolUse":
//   {"input":"{\"ci"}}} pieces and contentBlockStop for a tool call
//   messageStop {"stopReason":"end_turn"}   the terminator: the answer is complete
//   metadata {"usage":{…},"metrics":{"latencyMs":…}}
// Every payload carries Bedrock's padding field "p", which a client must ignore.
//
// Errors are modelled exceptions. Over HTTP: the status, `x-amzn-ErrorType: <Type>:<namespace>`
// and {"message":"…"}. Inside a 200 stream: a message of type "exception" whose
// `:exception-type` is the type in lower camel case ("throttlingException") and whose payload is
// {"message":"…"}; the stream ends after it. Bedrock sends `x-amzn-RequestId`, and no
// Retry-After or rate-limit headers.
#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

#include "fake_provider/wire/dialect.h"
#include "fake_provider/wire/dialect_internal.h"
#include "fake_provider/wire/event_stream_encoder.h"
#include "scenarios/scenario.h"

namespace faultline::provider::dialect_internal {
namespace {

using scenario::ErrorKind;

constexpr std::string_view kBedrockDefaultModel = "anthropic.claude-3-5-haiku-20241022-v1:0";
constexpr std::string_view kModelPrefix = "/model/";
constexpr std::string_view kBedrockStreamMethod = "/converse-stream";
constexpr std::string_view kBedrockJsonMethod = "/converse";
constexpr std::string_view kErrorNamespace = "http://internal.amazon.com/coral/com.amazon.bedrock/";
constexpr std::string_view kBedrockContextMessage = "Input is too long for requested model.";
// Bedrock's padding, which varies in length on the real service; fixed here so bytes repeat.
constexpr std::string_view kPadding = "abcdefghijklmnopqrstuvwxyzABCDEFGH";
constexpr int kLatencyMs = 1342;

std::string BedrockStopReason(const scenario::Content& content) {
  if (content.finish_reason) return *content.finish_reason;
  return content.tool_call ? "tool_use" : "end_turn";
}

Json Padded(Json payload) {
  payload["p"] = kPadding;
  return payload;
}

Json BedrockUsage(const Usage& usage) {
  return Json::object({{"inputTokens", usage.input_tokens},
                       {"outputTokens", usage.output_tokens},
                       {"totalTokens", usage.input_tokens + usage.output_tokens}});
}

StreamEvents BedrockStream(const scenario::Content& content, const ResponseIds& ids,
                           const Usage& usage) {
  StreamEvents out;
  const auto event = [&](std::string_view name, Json payload) {
    out.events.push_back({std::string(name), Dump(Padded(std::move(payload)))});
  };
  const auto delta = [&](int block, Json value) {
    event("contentBlockDelta", Json::object({{"contentBlockIndex", block}, {"delta", value}}));
  };
  const auto stop = [&](int block) {
    event("contentBlockStop", Json::object({{"contentBlockIndex", block}}));
  };
  event("messageStart", Json::object({{"role", "assistant"}}));
  int block = 0;
  if (!content.reasoning.empty()) {
    for (const std::string& piece : SplitCodePoints(content.reasoning, content.chunk_size)) {
      delta(block, Json::object({{"reasoningContent", {{"text", piece}}}}));
    }
    stop(block++);
  }
  if (!content.text.empty() || content.tool_call) out.first_output = out.events.size();
  if (!content.text.empty()) {
    for (const std::string& piece : SplitCodePoints(content.text, content.chunk_size)) {
      delta(block, Json::object({{"text", piece}}));
    }
    stop(block++);
  }
  if (content.tool_call) {
    const scenario::ToolCallSpec& call = *content.tool_call;
    event("contentBlockStart",
          Json::object(
              {{"contentBlockIndex", block},
               {"start", {{"toolUse", {{"toolUseId", ids.item_id}, {"name", call.name}}}}}}));
    for (const std::string& piece : SplitBytes(call.arguments, call.chunk_size)) {
      delta(block, Json::object({{"toolUse", {{"input", piece}}}}));
    }
    stop(block++);
  }
  out.terminator = out.events.size();
  event("messageStop", Json::object({{"stopReason", BedrockStopReason(content)}}));
  event("metadata",
        Json::object({{"usage", BedrockUsage(usage)}, {"metrics", {{"latencyMs", kLatencyMs}}}}));
  SkipToTerminator(content.end, out);
  return out;
}

std::string BedrockBody(const scenario::Content& content, const ResponseIds& ids,
                        const Usage& usage) {
  Json blocks = Json::array();
  if (!content.reasoning.empty()) {
    blocks.push_back({{"reasoningContent", {{"reasoningText", {{"text", content.reasoning}}}}}});
  }
  if (!content.text.empty()) blocks.push_back({{"text", content.text}});
  if (content.tool_call) {
    blocks.push_back({{"toolUse",
                       {{"toolUseId", ids.item_id},
                        {"name", content.tool_call->name},
                        {"input", ArgumentsObject(content.tool_call->arguments)}}}});
  }
  return Dump(Json::object(
      {{"output", {{"message", {{"role", "assistant"}, {"content", std::move(blocks)}}}}},
       {"stopReason", BedrockStopReason(content)},
       {"usage", BedrockUsage(usage)},
       {"metrics", {{"latencyMs", kLatencyMs}}}}));
}

// The modelled exception (its type in upper camel case, as x-amzn-ErrorType names it) and
// Bedrock's own words for an error kind.
struct BedrockWords {
  std::string_view type;
  std::string message;
};

BedrockWords BedrockErrorWords(const scenario::ErrorSpec& error) {
  switch (error.kind) {
    case ErrorKind::kInvalidRequest:
    case ErrorKind::kUnprocessable:
      return {"ValidationException",
              "Malformed input request: #: required key [messages] not found, please reformat "
              "your input and try again."};
    case ErrorKind::kContextWindow:
      return {"ValidationException",
              std::string(ContextMessage(error.wording, kBedrockContextMessage))};
    case ErrorKind::kTooLarge:
      return {"ValidationException", "The request payload exceeds the maximum allowed size."};
    case ErrorKind::kAuth:
      return {"UnrecognizedClientException",
              "The security token included in the request is invalid."};
    case ErrorKind::kPermission:
      return {"AccessDeniedException",
              "You don't have access to the model with the specified model ID."};
    case ErrorKind::kNotFound:
      return {"ResourceNotFoundException",
              "Could not resolve the foundation model from the provided model identifier."};
    case ErrorKind::kRequestTimeout:
    case ErrorKind::kGatewayTimeout:
      return {"ModelTimeoutException",
              "Model has timed out in processing the request. Try your request again."};
    case ErrorKind::kConflict:
      return {"ConflictException", "The request could not be completed because of a conflict."};
    case ErrorKind::kRateLimit:
      return {"ThrottlingException", "Too many requests, please wait before trying again."};
    case ErrorKind::kQuota:
      return {"ServiceQuotaExceededException",
              "Your request exceeded the service quota for your account: too many tokens per "
              "day. Request a quota increase or try again tomorrow."};
    case ErrorKind::kOverloaded:
      // Bedrock's answer when the model's capacity is taken: a 503 in these words.
      return {"ServiceUnavailableException",
              "Too many connections, please wait before trying again."};
    case ErrorKind::kUnavailable:
      return {"ServiceUnavailableException", "Bedrock is unable to process your request."};
    case ErrorKind::kBadGateway:
    case ErrorKind::kServer:
      break;
  }
  return {"InternalServerException",
          "The system encountered an unexpected error during processing. Try your request again."};
}

// "ThrottlingException" -> "throttlingException": the member name of the stream's union.
std::string LowerCamel(std::string_view type) {
  std::string out(type);
  if (!out.empty() && out[0] >= 'A' && out[0] <= 'Z')
    out[0] = static_cast<char>(out[0] - 'A' + 'a');
  return out;
}

Json MessageObject(const scenario::ErrorSpec& error, const BedrockWords& words) {
  return Json::object({{"message", error.message.value_or(words.message)}});
}

class ConverseWriter final : public DialectWriter {
 public:
  scenario::Dialect dialect() const override { return scenario::Dialect::kBedrockConverse; }
  // The endpoint for the default model, for a human to call; ReadTarget takes every model.
  std::string_view endpoint_path() const override {
    return "/model/anthropic.claude-3-5-haiku-20241022-v1:0/converse-stream";
  }
  std::string_view endpoint_help() const override {
    return "/model/{modelId}/converse-stream or /model/{modelId}/converse";
  }
  std::string_view default_model() const override { return kBedrockDefaultModel; }
  std::string_view request_id_header() const override { return "x-amzn-requestid"; }
  std::string_view stream_content_type() const override {
    return "application/vnd.amazon.eventstream";
  }

  TargetKind ReadTarget(std::string_view path, std::string_view /*query*/) const override {
    if (!path.starts_with(kModelPrefix)) return TargetKind::kNotServed;
    const std::string_view rest = path.substr(kModelPrefix.size());
    const std::size_t slash = rest.find('/');
    if (slash == 0 || slash == std::string_view::npos) return TargetKind::kNotServed;
    const std::string_view method = rest.substr(slash);
    if (method == kBedrockStreamMethod) return TargetKind::kStream;
    if (method == kBedrockJsonMethod) return TargetKind::kJson;
    return TargetKind::kNotServed;
  }

  ResponseIds MakeIds(std::uint64_t seed, int attempt, WallTime now,
                      std::string_view model) const override {
    IdSource source(seed, attempt, now, "bedrock");
    ResponseIds ids;
    ids.response_id = "msg_bdrk_" + source.Base62(24);  // never on the wire: no response id
    ids.item_id = "tooluse_" + source.Base62(22);
    // x-amzn-RequestId is a UUID; its first group starts with a digit so that the whole id
    // varies per request (a first group of letters would be kept as a literal prefix).
    const std::string hex = source.Hex(32);
    ids.request_id =
        fmt::format("{}{}-{}-4{}-a{}-{}", 1 + hex[0] % 9, hex.substr(1, 7), hex.substr(8, 4),
                    hex.substr(13, 3), hex.substr(17, 3), hex.substr(20, 12));
    ids.created = CreatedSeconds(now);
    ids.model = std::string(model.empty() ? kBedrockDefaultModel : model);
    return ids;
  }

  StreamEvents Stream(const scenario::Content& content, const ResponseIds& ids,
                      const Usage& usage) const override {
    return BedrockStream(content, ids, usage);
  }

  Body Json(const scenario::Content& content, const ResponseIds& ids,
            const Usage& usage) const override {
    return {"application/json", BedrockBody(content, ids, usage), {}};
  }

  Body Error(const scenario::ErrorSpec& error, int /*status*/) const override {
    if (error.kind == ErrorKind::kBadGateway) {
      Body body = BadGatewayBody();
      if (error.message) body.bytes = *error.message;
      return body;
    }
    const BedrockWords words = BedrockErrorWords(error);
    return {"application/json",
            Dump(MessageObject(error, words)),
            {{"x-amzn-ErrorType", fmt::format("{}:{}", words.type, kErrorNamespace)}}};
  }

  // The exception message of the stream's union; a server failure mid-answer is Bedrock's
  // modelStreamErrorException.
  SseEvent StreamError(const scenario::ErrorSpec& error, scenario::EventFault::Shape /*shape*/,
                       const ResponseIds& /*ids*/) const override {
    BedrockWords words = BedrockErrorWords(error);
    if (error.kind == ErrorKind::kServer || error.kind == ErrorKind::kBadGateway) {
      words = {"ModelStreamErrorException",
               "An error occurred while streaming the response. Retry your request."};
    }
    return {std::string(event_stream::kExceptionPrefix) + LowerCamel(words.type),
            Dump(MessageObject(error, words))};
  }

  // A known event whose payload has the wrong shape: a delta that is not an object.
  SseEvent WrongShape() const override {
    return {"contentBlockDelta", R"({"contentBlockIndex":0,"delta":"not-an-object"})"};
  }

  // No keep-alive in an event stream (the loader refuses heartbeats for this dialect).
  SseEvent Ping() const override { return {"", ""}; }

  // Bedrock sends no rate-limit headers (the loader refuses them for this dialect).
  void AppendRateLimitHeaders(const scenario::RateLimitHeaders& /*limits*/, WallTime /*now*/,
                              std::vector<scenario::Header>& /*out*/) const override {}
};

}  // namespace

const DialectWriter& BedrockWriter() {
  static const ConverseWriter writer;
  return writer;
}

}  // namespace faultline::provider::dialect_internal
