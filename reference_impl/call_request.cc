// What a call sends, apart from when: base URLs, each dialect's request path, the wire body of a
// call line's request (ToWire) and the HTTP/1.1 request text (call.h declares them).
#include <fmt/format.h>

#include <charconv>
#include <string>
#include <string_view>

#include "nlohmann/json.hpp"
#include "reference_impl/call.h"

namespace faultline::ref {
namespace {

std::string_view DialectPath(Dialect dialect) {
  switch (dialect) {
    case Dialect::kOpenAiChat:
      return "/v1/chat/completions";
    case Dialect::kAnthropicMessages:
      return "/v1/messages";
    case Dialect::kOpenAiResponses:
      return "/v1/responses";
    case Dialect::kGemini:
      return "/v1beta/models/";
    case Dialect::kOllama:
      return "/api/chat";
    case Dialect::kBedrockConverse:
      return "/model/";
  }
  return "/";
}

// A model id as one path segment, the way the AWS SDKs send it: everything but the unreserved
// characters percent-encoded (Bedrock's ids carry ':', inference profile ARNs '/' as well).
std::string PathSegment(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += c;
    } else {
      out += fmt::format("%{:02X}", u);
    }
  }
  return out;
}

// Whether the model and the choice of a stream are in the path rather than in the body.
bool PathCarriesModel(Dialect dialect) {
  return dialect == Dialect::kGemini || dialect == Dialect::kBedrockConverse;
}

std::expected<std::uint16_t, std::string> ParsePort(std::string_view text) {
  unsigned value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value == 0 || value > 65535) {
    return std::unexpected(fmt::format("invalid port '{}'", text));
  }
  return static_cast<std::uint16_t>(value);
}

}  // namespace

std::expected<BaseUrl, std::string> ParseBaseUrl(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (!url.starts_with(kScheme)) {
    return std::unexpected(
        fmt::format("base URL '{}' must start with http:// (plain HTTP only)", url));
  }
  std::string_view rest = url.substr(kScheme.size());
  const std::size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  BaseUrl out;
  if (slash != std::string_view::npos) out.path = std::string(rest.substr(slash));
  while (!out.path.empty() && out.path.back() == '/') out.path.pop_back();
  std::size_t colon = authority.rfind(':');
  if (authority.starts_with('[')) {  // [IPv6]:port
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return std::unexpected("unterminated '[' in base URL");
    out.host = std::string(authority.substr(1, close - 1));
    colon = authority.size() > close + 1 && authority[close + 1] == ':' ? close + 1
                                                                        : std::string_view::npos;
  } else {
    out.host = std::string(authority.substr(0, colon));
  }
  if (colon != std::string_view::npos) {
    auto port = ParsePort(authority.substr(colon + 1));
    if (!port) return std::unexpected(port.error());
    out.port = *port;
  }
  if (out.host.empty()) return std::unexpected(fmt::format("base URL '{}' has no host", url));
  return out;
}

std::string RequestPath(Dialect dialect, std::string_view base_path, std::string_view model,
                        bool stream) {
  if (dialect == Dialect::kGemini) {
    if (base_path.ends_with("/v1beta")) base_path.remove_suffix(7);
    return fmt::format("{}{}{}{}", base_path, DialectPath(dialect),
                       model.empty() ? "{model}" : model,
                       stream ? ":streamGenerateContent?alt=sse" : ":generateContent");
  }
  if (dialect == Dialect::kBedrockConverse) {
    return fmt::format("{}{}{}{}", base_path, DialectPath(dialect),
                       model.empty() ? "{modelId}" : PathSegment(model),
                       stream ? "/converse-stream" : "/converse");
  }
  std::string_view path = DialectPath(dialect);
  if (base_path.ends_with("/v1") && path.starts_with("/v1/")) path.remove_prefix(3);
  return fmt::format("{}{}", base_path, path);
}

WireRequest ToWire(Dialect dialect, std::string_view base_path, std::string_view request) {
  if (!PathCarriesModel(dialect)) return {RequestPath(dialect, base_path), std::string(request)};
  nlohmann::json body = nlohmann::json::parse(request, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) return {RequestPath(dialect, base_path), std::string(request)};
  std::string model;
  if (auto it = body.find("model"); it != body.end() && it->is_string()) model = *it;
  bool stream = true;
  if (auto it = body.find("stream"); it != body.end() && it->is_boolean()) stream = *it;
  body.erase("model");
  body.erase("stream");
  return {RequestPath(dialect, base_path, model, stream), body.dump()};
}

std::string BuildHttpRequest(const CallRequest& request) {
  const BaseUrl& url = request.base_url;
  const bool v6 = url.host.find(':') != std::string::npos;
  std::string host = v6 ? fmt::format("[{}]", url.host) : url.host;
  if (url.port != 80) host += fmt::format(":{}", url.port);
  const WireRequest wire = ToWire(request.dialect, url.path, request.body);
  std::string out = fmt::format(
      "POST {} HTTP/1.1\r\nHost: {}\r\nuser-agent: faultline-ref/0.1\r\n"
      "content-type: application/json\r\ncontent-length: {}\r\n",
      wire.path, host, wire.body.size());
  if (request.dialect == Dialect::kAnthropicMessages) {
    out += fmt::format("x-api-key: {}\r\nanthropic-version: 2023-06-01\r\n", request.api_key);
  } else if (request.dialect == Dialect::kGemini) {
    out += fmt::format("x-goog-api-key: {}\r\n", request.api_key);
  } else {  // Bedrock takes its API keys as bearer tokens too

    out += fmt::format("Authorization: Bearer {}\r\n", request.api_key);
  }
  out += fmt::format("accept: {}\r\n",
                     request.stream ? StreamMediaType(request.dialect) : "application/json");
  if (request.idempotency_key) {
    out += fmt::format("idempotency-key: {}\r\n", *request.idempotency_key);
  }
  for (const auto& [name, value] : request.extra_headers)
    out += fmt::format("{}: {}\r\n", name, value);
  out += "\r\n";
  out += wire.body;
  return out;
}

}  // namespace faultline::ref
