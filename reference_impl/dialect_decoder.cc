#include "reference_impl/dialect_decoder.h"

#include <fmt/format.h>

#include "reference_impl/dialect_decoder_internal.h"

namespace faultline::ref {
namespace internal {

Json ParseObject(std::string_view text, std::string_view what) {
  Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    throw ShapeError{fmt::format("{} is not valid JSON: {}", what, Excerpt(text))};
  }
  if (!parsed.is_object()) {
    throw ShapeError{fmt::format("{} is not a JSON object: {}", what, Excerpt(text))};
  }
  return parsed;
}

const Json* Member(const Json& object, std::string_view key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

const Json& RequireObject(const Json& object, std::string_view key) {
  const Json* member = Member(object, key);
  if (member == nullptr || !member->is_object()) {
    throw ShapeError{fmt::format("`{}` must be an object", key)};
  }
  return *member;
}

const Json& RequireArray(const Json& object, std::string_view key) {
  const Json* member = Member(object, key);
  if (member == nullptr || !member->is_array()) {
    throw ShapeError{fmt::format("`{}` must be an array", key)};
  }
  return *member;
}

std::string_view OptString(const Json& object, std::string_view key) {
  const Json* member = Member(object, key);
  if (member == nullptr) return {};
  if (!member->is_string()) throw ShapeError{fmt::format("`{}` must be a string", key)};
  return member->get_ref<const std::string&>();
}

std::string_view RequireString(const Json& object, std::string_view key) {
  const Json* member = Member(object, key);
  if (member == nullptr || !member->is_string()) {
    throw ShapeError{fmt::format("`{}` must be a string", key)};
  }
  return member->get_ref<const std::string&>();
}

std::optional<std::int64_t> OptInt(const Json& object, std::string_view key) {
  const Json* member = Member(object, key);
  if (member == nullptr) return std::nullopt;
  if (!member->is_number_integer()) throw ShapeError{fmt::format("`{}` must be an integer", key)};
  return member->get<std::int64_t>();
}

std::int64_t RequireInt(const Json& object, std::string_view key) {
  auto value = OptInt(object, key);
  if (!value) throw ShapeError{fmt::format("`{}` must be an integer", key)};
  return *value;
}

std::string CodeText(const Json& object, std::string_view key) {
  const Json* member = Member(object, key);
  if (member == nullptr) return {};
  if (member->is_string()) return member->get<std::string>();
  if (member->is_number()) return member->dump();
  throw ShapeError{fmt::format("`{}` must be a string or a number", key)};
}

std::string WholeCallArguments(const Json* arguments) {
  if (arguments == nullptr) return "{}";
  return arguments->is_string() ? arguments->get<std::string>() : arguments->dump();
}

ProviderErrorDelta ErrorFrom(const Json& error) {
  if (!error.is_object()) throw ShapeError{"the error must be an object"};
  return ProviderErrorDelta{std::string(OptString(error, "type")), CodeText(error, "code"),
                            std::string(OptString(error, "message"))};
}

const Json* OpenAiEnvelope(const SseEventView& event, const Json& data) {
  if (event.type != "message" || data.contains("type")) return nullptr;
  const Json* error = Member(data, "error");
  return error != nullptr && error->is_object() ? error : nullptr;
}

std::string Excerpt(std::string_view text) {
  constexpr std::size_t kMax = 120;
  if (text.size() <= kMax) return std::string(text);
  return fmt::format("{}... ({} bytes)", text.substr(0, kMax), text.size());
}

}  // namespace internal

std::string_view ToString(TerminalMarker marker) {
  switch (marker) {
    case TerminalMarker::kDone:
      return "[DONE]";
    case TerminalMarker::kMessageStop:
      return "message_stop";
    case TerminalMarker::kResponseCompleted:
      return "response.completed";
    case TerminalMarker::kResponseIncomplete:
      return "response.incomplete";
    case TerminalMarker::kFinishReason:
      return "finishReason";
    case TerminalMarker::kDoneLine:
      return "done";
    case TerminalMarker::kMessageStopEvent:
      return "messageStop";
    case TerminalMarker::kBody:
      return "body";
  }
  return "body";
}

std::expected<EventWeight, DecodeError> DialectDecoder::DecodeEvent(const SseEventView& event,
                                                                    std::vector<Delta>& out) {
  if (options_.fast_path && internal::TryDecodeFast(dialect_, event, state_, out)) {
    return EventWeight::kMeaningful;
  }
  const std::size_t before = out.size();
  try {
    switch (dialect_) {
      case Dialect::kOpenAiChat:
        return internal::DecodeOpenAiChatEvent(event, out);
      case Dialect::kAnthropicMessages:
        return internal::DecodeAnthropicEvent(event, state_, out);
      case Dialect::kOpenAiResponses:
        return internal::DecodeOpenAiResponsesEvent(event, state_, out);
      case Dialect::kGemini:
        return internal::DecodeGeminiEvent(event, state_, out);
      case Dialect::kOllama:
        return internal::DecodeOllamaEvent(event, state_, out);
      case Dialect::kBedrockConverse:
        return internal::DecodeBedrockEvent(event, out);
    }
    return EventWeight::kMeaningful;
  } catch (const internal::ShapeError& error) {
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(before), out.end());
    return std::unexpected(DecodeError{
        fmt::format("{} event `{}`: {}", ToString(dialect_), event.type, error.message)});
  } catch (const nlohmann::json::exception& error) {
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(before), out.end());
    return std::unexpected(DecodeError{
        fmt::format("{} event `{}`: {}", ToString(dialect_), event.type, error.what())});
  }
}

std::expected<void, DecodeError> DialectDecoder::DecodeBody(std::string_view body,
                                                            std::vector<Delta>& out) {
  const std::size_t before = out.size();
  try {
    const internal::Json json = internal::ParseObject(body, "the response body");
    switch (dialect_) {
      case Dialect::kOpenAiChat:
        internal::DecodeOpenAiChatBody(json, out);
        break;
      case Dialect::kAnthropicMessages:
        internal::DecodeAnthropicBody(json, out);
        break;
      case Dialect::kOpenAiResponses:
        internal::DecodeOpenAiResponsesBody(json, out);
        break;
      case Dialect::kGemini:
        internal::DecodeGeminiBody(json, out);
        break;
      case Dialect::kOllama:
        internal::DecodeOllamaBody(json, out);
        break;
      case Dialect::kBedrockConverse:
        internal::DecodeBedrockBody(json, out);
        break;
    }
    return {};
  } catch (const internal::ShapeError& error) {
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(before), out.end());
    return std::unexpected(
        DecodeError{fmt::format("{} body: {}", ToString(dialect_), error.message)});
  } catch (const nlohmann::json::exception& error) {
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(before), out.end());
    return std::unexpected(
        DecodeError{fmt::format("{} body: {}", ToString(dialect_), error.what())});
  }
}

}  // namespace faultline::ref
