// aimock fixtures to cassettes (aimock_import.h). The JSON of every chunk is written as aimock's
// JSON.stringify writes it (key order, escapes, UTF-16 slices that may split a surrogate pair),
// so the bytes are aimock's.
#include "cassette_import/aimock_import.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <numeric>
#include <variant>

#include "fake_provider/wire/dialect.h"
#include "hashing/fnv1a.h"
#include "scenarios/bytes_text.h"

namespace faultline::scenario {
namespace {

using cassette_import::Json;
using cassette_import::JsonReader;
using std::chrono::microseconds;

constexpr std::int64_t kCreated = 1'767'225'600;

// UTF-8 (valid: nlohmann checked it) as UTF-16 code units, as JavaScript holds strings.
std::u16string Utf16(std::string_view text) {
  std::u16string out;
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const int length = byte < 0x80 ? 1 : byte < 0xE0 ? 2 : byte < 0xF0 ? 3 : 4;
    char32_t code = length == 1 ? byte : byte & (0x3F >> (length - 1));
    for (int k = 1; k < length && i + k < text.size(); ++k) {
      code = (code << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    }
    i += length;
    if (code >= 0x10000) {
      code -= 0x10000;
      out += static_cast<char16_t>(0xD800 + (code >> 10));
      out += static_cast<char16_t>(0xDC00 + (code & 0x3FF));
    } else {
      out += static_cast<char16_t>(code);
    }
  }
  return out;
}

void AppendUtf8(std::string& out, char32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

// JSON.stringify of a string: \" \\ \b \f \n \r \t, \u00xx for other controls, \udxxx for a
// lone surrogate, everything else as it is (UTF-8).
std::string JsString(std::u16string_view units) {
  std::string out = "\"";
  for (std::size_t i = 0; i < units.size(); ++i) {
    const char16_t unit = units[i];
    const bool high = unit >= 0xD800 && unit <= 0xDBFF;
    const bool low = unit >= 0xDC00 && unit <= 0xDFFF;
    if (high && i + 1 < units.size() && units[i + 1] >= 0xDC00 && units[i + 1] <= 0xDFFF) {
      AppendUtf8(out, 0x10000 + ((unit - 0xD800) << 10) + (units[i + 1] - 0xDC00));
      ++i;
      continue;
    }
    switch (unit) {
      case u'"':
        out += "\\\"";
        continue;
      case u'\\':
        out += "\\\\";
        continue;
      case u'\b':
        out += "\\b";
        continue;
      case u'\f':
        out += "\\f";
        continue;
      case u'\n':
        out += "\\n";
        continue;
      case u'\r':
        out += "\\r";
        continue;
      case u'\t':
        out += "\\t";
        continue;
      default:
        break;
    }
    if (unit < 0x20 || high || low) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(unit));
    } else {
      AppendUtf8(out, unit);
    }
  }
  return out + "\"";
}

std::string JsString(std::string_view text) { return JsString(Utf16(text)); }

// `text` sliced every `size` UTF-16 code units, each slice as a JSON string.
std::vector<std::string> Slices(std::string_view text, int size) {
  const std::u16string units = Utf16(text);
  std::vector<std::string> slices;
  for (std::size_t i = 0; i < units.size(); i += static_cast<std::size_t>(size)) {
    slices.push_back(
        JsString(std::u16string_view(units).substr(i, static_cast<std::size_t>(size))));
  }
  return slices;
}

// An id as aimock draws one (prefix + base64url of 12 bytes), from the fixture instead of chance.
std::string IdOf(std::string_view prefix, const std::string& seed) {
  const std::uint64_t a = hashing::Fnv1a64(seed);
  const std::uint64_t b = hashing::Fnv1a64(seed, a);
  std::string bytes;
  for (int i = 0; i < 8; ++i) bytes += static_cast<char>(a >> (8 * i));
  for (int i = 0; i < 4; ++i) bytes += static_cast<char>(b >> (8 * i));
  std::string id = Base64Encode(bytes);
  std::ranges::replace(id, '+', '-');
  std::ranges::replace(id, '/', '_');
  return std::string(prefix) + id;
}

// The headers aimock's server sends before a handler's own (its request id and CORS); the Date
// Node adds is left out.
std::vector<CassetteHeader> ServerHeaders(const std::string& seed) {
  return {{"X-Request-Id", IdOf("req-", seed + "/request")},
          {"Access-Control-Allow-Origin", "*"},
          {"Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS"},
          {"Access-Control-Allow-Headers", "*"},
          {"Access-Control-Expose-Headers", "X-Total-Count, X-Request-Id"}};
}

struct ToolCall {
  std::string name;
  std::string arguments;  // JSON text, as the fixture gave it or stringified
  std::string id;         // "" = drawn
};

// What a fixture answers, read from its response (the kinds the import renders).
struct Answer {
  std::string content;
  std::vector<ToolCall> tool_calls;
  bool tools = false;
  const Json* error = nullptr;  // an error response's `error`
  int status = 200;
  const Json* retry_after = nullptr;  // its Retry-After, as the fixture wrote it
  const Json* response = nullptr;     // for the overrides
};

// A value of the response's overrides, as JSON text (JSON.stringify); `fallback` when absent.
std::string Override(const Json& response, std::string_view key, std::string fallback) {
  const auto it = response.find(key);
  return it == response.end() || it->is_null() ? fallback : it->dump();
}

// The JSON text of `value` as the fixture loader holds it: a string, or an object it stringified.
std::string Stringified(const Json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// `json[key]` when it is a number (aimock reads what it can and drops the rest).
std::optional<double> NumberAt(const Json& json, std::string_view key) {
  const auto it = json.find(key);
  if (it == json.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

class Renderer {
 public:
  Renderer(const Answer& answer, std::string model, std::string seed, int chunk_size)
      : answer_(answer), model_(std::move(model)), seed_(std::move(seed)), size_(chunk_size) {}

  std::vector<std::string> OpenAiChunks() const;
  std::vector<std::string> AnthropicEvents() const;

 private:
  std::string Usage(std::string_view primary, std::string_view secondary) const;

  const Answer& answer_;
  std::string model_;
  std::string seed_;
  int size_;
};

std::vector<std::string> Renderer::OpenAiChunks() const {
  const Json& response = *answer_.response;
  const std::string id = Override(response, "id", JsString(IdOf("chatcmpl-", seed_)));
  const std::string head = fmt::format(
      R"({{"id":{},"object":"chat.completion.chunk","created":{},"model":{},"choices":[{{"index":0,"delta":)",
      id, Override(response, "created", std::to_string(kCreated)),
      Override(response, "model", JsString(model_)));
  const std::string fingerprint =
      response.contains("systemFingerprint")
          ? fmt::format(R"(,"system_fingerprint":{})", response["systemFingerprint"].dump())
          : "";
  const auto chunk = [&](std::string_view delta, std::string_view finish) {
    return fmt::format(R"({}{},"logprobs":null,"finish_reason":{}}}]{}}})", head, delta, finish,
                       fingerprint);
  };
  const std::string role = Override(response, "role", "\"assistant\"");
  std::vector<std::string> chunks;
  if (!answer_.tools) {
    chunks.push_back(chunk(fmt::format(R"({{"role":{},"content":""}})", role), "null"));
    for (const std::string& slice : Slices(answer_.content, size_)) {
      chunks.push_back(chunk(fmt::format(R"({{"content":{}}})", slice), "null"));
    }
    chunks.push_back(chunk("{}", Override(response, "finishReason", "\"stop\"")));
    return chunks;
  }
  chunks.push_back(chunk(fmt::format(R"({{"role":{},"content":null}})", role), "null"));
  for (std::size_t k = 0; k < answer_.tool_calls.size(); ++k) {
    const ToolCall& call = answer_.tool_calls[k];
    const std::string call_id =
        call.id.empty() ? IdOf("call_", fmt::format("{}/{}", seed_, k)) : call.id;
    chunks.push_back(chunk(
        fmt::format(
            R"({{"tool_calls":[{{"index":{},"id":{},"type":"function","function":{{"name":{},"arguments":""}}}}]}})",
            k, JsString(call_id), JsString(call.name)),
        "null"));
    for (const std::string& slice : Slices(call.arguments, size_)) {
      chunks.push_back(
          chunk(fmt::format(R"({{"tool_calls":[{{"index":{},"function":{{"arguments":{}}}}}]}})", k,
                            slice),
                "null"));
    }
  }
  chunks.push_back(chunk("{}", Override(response, "finishReason", "\"tool_calls\"")));
  return chunks;
}

// claudeUsage: usage.PRIMARY, else usage.SECONDARY, else 0.
std::string Renderer::Usage(std::string_view primary, std::string_view secondary) const {
  const Json& response = *answer_.response;
  const auto usage = response.find("usage");
  if (usage == response.end() || !usage->is_object()) return "0";
  for (std::string_view key : {primary, secondary}) {
    const auto it = usage->find(key);
    if (it != usage->end() && !it->is_null()) return it->dump();
  }
  return "0";
}

std::string ClaudeStopReason(const Json& response, std::string_view fallback) {
  const auto it = response.find("finishReason");
  if (it == response.end() || !it->is_string() || it->get<std::string>().empty()) {
    return JsString(fallback);
  }
  const std::string reason = it->get<std::string>();
  if (reason == "stop") return JsString("end_turn");
  if (reason == "tool_calls") return JsString("tool_use");
  if (reason == "length") return JsString("max_tokens");
  return JsString(reason);
}

std::vector<std::string> Renderer::AnthropicEvents() const {
  const Json& response = *answer_.response;
  const std::string output = Usage("output_tokens", "completion_tokens");
  std::vector<std::string> events = {fmt::format(
      R"({{"type":"message_start","message":{{"id":{},"type":"message","role":{},"content":[],"model":{},"stop_reason":null,"stop_sequence":null,"usage":{{"input_tokens":{},"output_tokens":{}}}}}}})",
      Override(response, "id", JsString(IdOf("msg_", seed_))),
      Override(response, "role", "\"assistant\""), Override(response, "model", JsString(model_)),
      Usage("input_tokens", "prompt_tokens"), output)};
  const auto block = [&](std::size_t index, std::string_view start, std::string_view delta_type,
                         std::string_view field, std::string_view text) {
    events.push_back(fmt::format(
        R"({{"type":"content_block_start","index":{},"content_block":{}}})", index, start));
    for (const std::string& slice : Slices(text, size_)) {
      events.push_back(fmt::format(
          R"({{"type":"content_block_delta","index":{},"delta":{{"type":"{}","{}":{}}}}})", index,
          delta_type, field, slice));
    }
    events.push_back(fmt::format(R"({{"type":"content_block_stop","index":{}}})", index));
  };
  if (!answer_.tools) {
    block(0, R"({"type":"text","text":""})", "text_delta", "text", answer_.content);
  }
  for (std::size_t k = 0; answer_.tools && k < answer_.tool_calls.size(); ++k) {
    const ToolCall& call = answer_.tool_calls[k];
    // JSON.stringify(JSON.parse(arguments || "{}")), {} when it does not parse.
    const Json parsed = Json::parse(call.arguments.empty() ? "{}" : call.arguments, nullptr, false);
    const std::string id =
        call.id.empty() ? IdOf("toolu_", fmt::format("{}/{}", seed_, k)) : call.id;
    block(k,
          fmt::format(R"({{"type":"tool_use","id":{},"name":{},"input":{{}}}})", JsString(id),
                      JsString(call.name)),
          "input_json_delta", "partial_json", parsed.is_discarded() ? "{}" : parsed.dump());
  }
  events.push_back(fmt::format(
      R"({{"type":"message_delta","delta":{{"stop_reason":{},"stop_sequence":null}},"usage":{{"output_tokens":{}}}}})",
      ClaudeStopReason(response, answer_.tools ? "tool_use" : "end_turn"), output));
  events.push_back(R"({"type":"message_stop"})");
  return events;
}

class FixtureReader {
 public:
  FixtureReader(const JsonReader& reader, const AimockOptions& options, std::string_view file)
      : r_(reader), options_(options), file_(file) {}

  // A cassette, or the reason the fixture was skipped.
  std::expected<std::variant<ImportedCassette, std::string>, LoadError> Convert(
      const Json& fixture, std::size_t index) const;

 private:
  std::expected<std::variant<Answer, std::string>, LoadError> ReadAnswer(
      const Json& response, const std::string& path) const;
  std::vector<microseconds> Delays(const Json& fixture, std::size_t chunks) const;

  const JsonReader& r_;
  const AimockOptions& options_;
  std::string file_;
};

std::expected<std::variant<Answer, std::string>, LoadError> FixtureReader::ReadAnswer(
    const Json& response, const std::string& path) const {
  using Result = std::variant<Answer, std::string>;
  Answer answer;
  answer.response = &response;
  const auto error = response.find("error");
  if (error != response.end() && error->is_object() && error->contains("message") &&
      (*error)["message"].is_string()) {
    answer.error = &*error;
    auto status = r_.Number(response, path, "status");
    if (!status) return std::unexpected(status.error());
    const double code = status->value_or(500);
    if (code != std::floor(code) || code < 100 || code > 599) {
      return r_.Fail(path + ".status", "expected an HTTP status from 100 to 599");
    }
    answer.status = static_cast<int>(code);
    auto retry = r_.Number(response, path, "retryAfter");
    if (!retry) return std::unexpected(retry.error());
    if (*retry) answer.retry_after = &response["retryAfter"];
    return Result(std::move(answer));
  }
  for (std::string_view key : {"blocks", "reasoning", "webSearches", "redactedThinking"}) {
    const auto it = response.find(key);
    if (it != response.end() && !it->is_null() && !(it->is_string() && it->empty())) {
      return Result(fmt::format("'{}' is not rendered by the import yet", key));
    }
  }
  const auto content = response.find("content");
  const bool text = content != response.end() && (content->is_string() || content->is_object());
  const auto calls = response.find("toolCalls");
  answer.tools = calls != response.end() && calls->is_array();
  if (text && answer.tools) return Result("content with tool calls is not rendered yet");
  if (text) {
    answer.content = Stringified(*content);
    return Result(std::move(answer));
  }
  if (!answer.tools) {
    return Result(
        "not a text, tool-call or error response (aimock's other kinds: embeddings, "
        "images, audio, ...)");
  }
  for (std::size_t k = 0; k < calls->size(); ++k) {
    const Json& call = (*calls)[k];
    const std::string at = fmt::format("{}.toolCalls[{}]", path, k);
    if (!call.is_object()) return r_.Fail(at, "expected an object {name, arguments}");
    auto name = r_.String(call, at, "name");
    if (!name) return std::unexpected(name.error());
    auto id = r_.String(call, at, "id", false);
    if (!id) return std::unexpected(id.error());
    const auto arguments = call.find("arguments");
    answer.tool_calls.push_back(
        {**name, arguments == call.end() ? "" : Stringified(*arguments), id->value_or("")});
  }
  return Result(std::move(answer));
}

// calculateDelay for each chunk (sse-writer.ts), without the profile's random jitter.
std::vector<microseconds> FixtureReader::Delays(const Json& fixture, std::size_t chunks) const {
  const auto number = NumberAt;
  const double latency = number(fixture, "latency").value_or(options_.latency_ms);
  double speed = number(fixture, "replaySpeed").value_or(1.0);
  if (speed <= 0) speed = 1.0;  // aimock ignores a speed that is not positive
  const auto profile = fixture.find("streamingProfile");
  const auto recorded = fixture.find("recordedTimings");
  std::vector<double> gaps;
  if (recorded != fixture.end() && recorded->is_object()) {
    const auto list = recorded->find("interChunkDelaysMs");
    if (list != recorded->end() && list->is_array()) {
      for (const Json& gap : *list) {
        if (gap.is_number() && std::isfinite(gap.get<double>()) && gap.get<double>() >= 0) {
          gaps.push_back(gap.get<double>());
        }
      }
    }
  }
  std::vector<microseconds> delays;
  for (std::size_t i = 0; i < chunks; ++i) {
    double ms = latency;
    if (profile != fixture.end() && profile->is_object()) {
      const std::optional<double> ttft = number(*profile, "ttft");
      const std::optional<double> tps = number(*profile, "tps");
      if (i == 0 && ttft) {
        ms = *ttft;
      } else if (tps && *tps > 0) {
        ms = 1000.0 / *tps;
      }
    } else if (recorded != fixture.end() && recorded->is_object()) {
      const double ttft = number(*recorded, "ttftMs").value_or(0);
      const double mean =
          gaps.empty() ? 0 : std::accumulate(gaps.begin(), gaps.end(), 0.0) / gaps.size();
      ms = i == 0 ? (std::isfinite(ttft) && ttft >= 0 ? ttft : 0)
                  : (i - 1 < gaps.size() ? gaps[i - 1] : mean);
    }
    ms = std::isfinite(ms) ? std::clamp(ms, 0.0, 3'600'000.0) : 0;
    delays.push_back(microseconds(std::llround(ms / speed * 1000.0)));
  }
  return delays;
}

std::expected<std::variant<ImportedCassette, std::string>, LoadError> FixtureReader::Convert(
    const Json& fixture, std::size_t index) const {
  using Result = std::variant<ImportedCassette, std::string>;
  const std::string path = fmt::format("fixtures[{}]", index);
  if (!fixture.is_object()) return r_.Fail(path, "expected an object {match, response}");
  auto response = r_.Object(fixture, path, "response");
  if (!response) return std::unexpected(response.error());
  auto match = r_.Object(fixture, path, "match", false);
  if (!match) return std::unexpected(match.error());
  for (std::string_view key : {"truncateAfterChunks", "disconnectAfterMs", "chaos"}) {
    if (fixture.contains(key)) {
      return Result(
          fmt::format("aimock's own fault '{}' is not imported: overlay content.end or "
                      "content.faults on the cassette instead",
                      key));
    }
  }
  auto read = ReadAnswer(**response, path + ".response");
  if (!read) return std::unexpected(read.error());
  if (std::string* skip = std::get_if<std::string>(&*read)) return Result(std::move(*skip));
  const Answer& answer = std::get<Answer>(*read);
  const provider::DialectWriter& writer = provider::WriterFor(options_.dialect);
  const bool anthropic = options_.dialect == Dialect::kAnthropicMessages;
  ImportedCassette out;
  out.stream = answer.error == nullptr;
  std::string model = options_.model.empty() ? std::string(writer.default_model()) : options_.model;
  if (*match != nullptr && (*match)->contains("model") && (**match)["model"].is_string()) {
    model = (**match)["model"].get<std::string>();
  }
  out.model = model;
  Cassette& cassette = out.cassette;
  cassette.dialect = std::string(ToString(options_.dialect));
  cassette.source = "aimock";
  cassette.method = "POST";
  cassette.target = std::string(writer.endpoint_path());
  cassette.request_headers = {{"content-type", "application/json"}};
  Json request{{"model", model}, {"stream", out.stream}, {"messages", Json::array()}};
  if (*match != nullptr && (*match)->contains("userMessage") &&
      (**match)["userMessage"].is_string()) {
    request["messages"].push_back({{"role", "user"}, {"content", (**match)["userMessage"]}});
  }
  cassette.request_body = request.dump();
  out.file = CassetteFileName(index + 1, cassette.dialect);
  const std::string seed = fmt::format("{}#{}", file_, index);
  if (answer.error != nullptr) {
    const Json& error = *answer.error;
    const auto field = [&](std::string_view key, std::string fallback) {
      const auto it = error.find(key);
      return it == error.end() || it->is_null() ? fallback : it->dump();
    };
    const std::string body =
        anthropic ? fmt::format(R"({{"type":"error","error":{{"type":{},"message":{}}}}})",
                                field("type", "\"api_error\""), error["message"].dump())
                  : fmt::format(R"({{"error":{{"message":{},"type":{},"param":{},"code":{}}}}})",
                                error["message"].dump(), field("type", "\"server_error\""),
                                field("param", "null"), field("code", "null"));
    cassette.status = answer.status;
    cassette.headers = ServerHeaders(seed);
    cassette.headers.push_back({"Content-Type", "application/json"});
    if (answer.status == 429) {
      cassette.headers.push_back(
          {"Retry-After", answer.retry_after ? answer.retry_after->dump() : "1"});
      for (const auto& [name, value] : {std::pair{"x-ratelimit-limit-requests", "60"},
                                        {"x-ratelimit-limit-tokens", "150000"},
                                        {"x-ratelimit-remaining-requests", "0"},
                                        {"x-ratelimit-remaining-tokens", "0"},
                                        {"x-ratelimit-reset-requests", "1s"},
                                        {"x-ratelimit-reset-tokens", "6m0s"}}) {
        cassette.headers.push_back({name, value});
      }
    }
    for (const auto& [name, value] : {std::pair{"Connection", "keep-alive"},
                                      {"Keep-Alive", "timeout=5"},
                                      {"Transfer-Encoding", "chunked"}}) {
      cassette.headers.push_back({name, value});
    }
    cassette.writes.push_back({microseconds(0), body});
    return Result(std::move(out));
  }
  const double chunk_size = NumberAt(fixture, "chunkSize").value_or(options_.chunk_size);
  const Renderer renderer(answer, model, seed, static_cast<int>(std::clamp(chunk_size, 1.0, 1e9)));
  const std::vector<std::string> events =
      anthropic ? renderer.AnthropicEvents() : renderer.OpenAiChunks();
  const std::vector<microseconds> delays = Delays(fixture, events.size());
  cassette.headers = ServerHeaders(seed);
  for (const auto& [name, value] : {std::pair{"Content-Type", "text/event-stream"},
                                    {"Cache-Control", "no-cache"},
                                    {"Connection", "keep-alive"},
                                    {"Transfer-Encoding", "chunked"}}) {
    cassette.headers.push_back({name, value});
  }
  microseconds at{0};
  for (std::size_t i = 0; i < events.size(); ++i) {
    at += delays[i];
    if (i == 0) cassette.head_at = at;
    // Every Anthropic event starts {"type":"NAME", and aimock names the SSE event after it.
    const std::string name =
        anthropic ? fmt::format("event: {}\n", events[i].substr(9, events[i].find('"', 9) - 9))
                  : "";
    cassette.writes.push_back({at, fmt::format("{}data: {}\n\n", name, events[i])});
  }
  if (!anthropic) cassette.writes.push_back({at, "data: [DONE]\n\n"});
  cassette.end_at = at;
  return Result(std::move(out));
}

}  // namespace

std::expected<Import, LoadError> ImportAimock(std::string_view text, std::string_view file,
                                              const AimockOptions& aimock,
                                              const ImportOptions& options) {
  const JsonReader reader(file);
  if (aimock.dialect != Dialect::kOpenAiChat && aimock.dialect != Dialect::kAnthropicMessages) {
    return reader.Fail("", fmt::format("the aimock import renders openai-chat and "
                                       "anthropic-messages, not {} (yet)",
                                       ToString(aimock.dialect)));
  }
  auto json = cassette_import::ParseJson(text, file);
  if (!json) return std::unexpected(json.error());
  if (!json->is_object())
    return reader.Fail("", "expected an aimock fixture file {\"fixtures\": [...]}");
  auto fixtures = reader.Array(*json, "", "fixtures");
  if (!fixtures) return std::unexpected(fixtures.error());
  Import import;
  const FixtureReader fixture_reader(reader, aimock,
                                     std::filesystem::path(file).filename().string());
  for (std::size_t i = 0; i < (*fixtures)->size(); ++i) {
    auto converted = fixture_reader.Convert((**fixtures)[i], i);
    if (!converted) return std::unexpected(converted.error());
    if (auto* cassette = std::get_if<ImportedCassette>(&*converted)) {
      import.cassettes.push_back(std::move(*cassette));
    } else {
      import.skipped.push_back({fmt::format("fixtures[{}]", i), std::get<std::string>(*converted)});
    }
  }
  if (import.cassettes.empty()) {
    return reader.Fail("fixtures", fmt::format("no fixture converts into a cassette ({} fixtures, "
                                               "{} skipped)",
                                               (*fixtures)->size(), import.skipped.size()));
  }
  cassette_import::AddScenarios(
      import, file,
      fmt::format("{} (aimock fixtures)", std::filesystem::path(file).filename().string()),
      options);
  return import;
}

}  // namespace faultline::scenario
