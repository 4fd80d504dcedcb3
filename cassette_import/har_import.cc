// HAR 1.2 to cassettes (har_import.h).
#include "cassette_import/har_import.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <variant>

#include "fake_provider/journal.h"
#include "fake_provider/provider_core.h"
#include "fake_provider/wire/dialect.h"
#include "scenarios/bytes_text.h"

namespace faultline::scenario {
namespace {

using cassette_import::Json;
using cassette_import::JsonReader;
using cassette_import::PathOf;
using std::chrono::microseconds;

// Response headers that described the body as it travelled, not content.text (decoded, whole).
constexpr std::string_view kFramingHeaders[] = {"content-length", "content-encoding",
                                                "transfer-encoding", "connection", "keep-alive"};

std::string Lower(std::string_view text) {
  std::string lower(text);
  std::ranges::transform(lower, lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower;
}

// The request target of a URL: its path and query, without scheme, authority and fragment.
struct Target {
  std::string target;
  std::string path;
  std::string query;
};
Target TargetOf(std::string_view url) {
  url = url.substr(0, url.find('#'));
  if (const std::size_t scheme = url.find("://"); scheme != std::string_view::npos) {
    url.remove_prefix(scheme + 3);
    const std::size_t slash = url.find_first_of("/?");
    url = slash == std::string_view::npos ? std::string_view() : url.substr(slash);
  }
  Target target{std::string(url), std::string(url.substr(0, url.find('?'))), ""};
  if (target.path.empty()) target.path = "/";
  if (const std::size_t question = url.find('?'); question != std::string_view::npos) {
    target.query = std::string(url.substr(question + 1));
  }
  if (target.target.empty() || target.target.front() == '?') target.target.insert(0, "/");
  return target;
}

// What one entry became: a cassette, or the reason it was skipped.
struct Converted {
  std::optional<ImportedCassette> cassette;
  std::string skip;
};

class EntryReader {
 public:
  EntryReader(const JsonReader& reader, std::string path) : r_(reader), path_(std::move(path)) {}

  std::expected<Converted, LoadError> Convert(const Json& entry, std::size_t index) const;

 private:
  std::expected<std::vector<CassetteHeader>, LoadError> Headers(const Json& json,
                                                                const std::string& path) const;
  std::expected<microseconds, LoadError> Timing(const Json* timings, std::string_view key) const;
  // The cassette's request: headers, body (credentials redacted), whether it asks for a stream.
  std::expected<void, LoadError> Request(const Json& request, const Target& target, Dialect dialect,
                                         ImportedCassette& out) const;
  // The cassette's response but its status: reason, headers, the body's writes and their times.
  std::expected<void, LoadError> Response(const Json& entry, const Json& response, Dialect dialect,
                                          const std::string& body, Cassette& cassette) const;
  // The response body, or a reason it cannot be replayed as recorded (a skip).
  std::expected<std::variant<std::string, Converted>, LoadError> Body(
      const Json& response, const std::string& path) const;

  const JsonReader& r_;
  std::string path_;  // "log.entries[3]"
};

std::expected<std::vector<CassetteHeader>, LoadError> EntryReader::Headers(
    const Json& json, const std::string& path) const {
  std::vector<CassetteHeader> headers;
  auto list = r_.Array(json, path, "headers", false);
  if (!list) return std::unexpected(list.error());
  if (*list == nullptr) return headers;
  for (std::size_t i = 0; i < (*list)->size(); ++i) {
    const Json& header = (**list)[i];
    const std::string at = fmt::format("{}.headers[{}]", path, i);
    if (!header.is_object()) return r_.Fail(at, "expected an object {name, value}");
    auto name = r_.String(header, at, "name");
    if (!name) return std::unexpected(name.error());
    auto value = r_.String(header, at, "value");
    if (!value) return std::unexpected(value.error());
    if ((*name)->starts_with(':')) continue;  // HTTP/2's :status, :path, ...: no HTTP/1.1 header
    const bool unsafe =
        (*name)->empty() ||
        (*name)->find_first_of(std::string_view(" :\t\r\n\0", 6)) != std::string::npos ||
        (*value)->find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos;
    if (unsafe) {
      return r_.Fail(at,
                     "a header name that is empty or holds ':' or a space, or a name or value "
                     "with a line break or NUL, cannot be sent again");
    }
    headers.push_back({**name, **value});
  }
  return headers;
}

std::expected<microseconds, LoadError> EntryReader::Timing(const Json* timings,
                                                           std::string_view key) const {
  if (timings == nullptr) return microseconds(0);
  const std::string path = path_ + ".timings";
  auto value = r_.Number(*timings, path, key);
  if (!value) return std::unexpected(value.error());
  if (!*value || **value < 0) return microseconds(0);  // HAR's -1: does not apply
  if (!std::isfinite(**value) || **value > 86'400'000.0) {
    return r_.Fail(PathOf(path, key), "expected milliseconds, at most a day");
  }
  return microseconds(std::llround(**value * 1000.0));
}

std::expected<std::variant<std::string, Converted>, LoadError> EntryReader::Body(
    const Json& response, const std::string& path) const {
  using Result = std::variant<std::string, Converted>;
  const auto skip = [](std::string reason) { return Result(Converted{std::nullopt, reason}); };
  auto content = r_.Object(response, path, "content");
  if (!content) return std::unexpected(content.error());
  const std::string at = path + ".content";
  auto text = r_.String(**content, at, "text", false);
  if (!text) return std::unexpected(text.error());
  auto encoding = r_.String(**content, at, "encoding", false);
  if (!encoding) return std::unexpected(encoding.error());
  auto size = r_.Number(**content, at, "size");
  if (!size) return std::unexpected(size.error());
  if (*encoding && !(*encoding)->empty() && **encoding != "base64") {
    return skip(fmt::format("content.encoding \"{}\": only base64 is decoded", **encoding));
  }
  if (!*text) {
    if (*size && **size > 0) {
      return skip(fmt::format("no content.text: the HAR left the body ({} bytes) out", **size));
    }
    return Result(std::string());
  }
  std::string body = **text;
  if (*encoding && **encoding == "base64") {
    std::optional<std::string> decoded = Base64Decode(body);
    if (!decoded) return r_.Fail(at + ".text", "content.encoding is base64, the text is not");
    body = std::move(*decoded);
  }
  if (*size && **size > static_cast<double>(body.size())) {
    return skip(fmt::format("truncated: content.size is {} bytes, content.text holds {}", **size,
                            body.size()));
  }
  return Result(std::move(body));
}

std::expected<void, LoadError> EntryReader::Request(const Json& request, const Target& target,
                                                    Dialect dialect, ImportedCassette& out) const {
  const std::string path = path_ + ".request";
  Cassette& cassette = out.cassette;
  auto headers = Headers(request, path);
  if (!headers) return std::unexpected(headers.error());
  std::vector<Header> redacted;
  for (CassetteHeader& header : *headers) redacted.push_back({header.name, header.value});
  provider::RedactSecretHeaders(redacted);
  for (Header& header : redacted) cassette.request_headers.push_back({header.name, header.value});
  auto post = r_.Object(request, path, "postData", false);
  if (!post) return std::unexpected(post.error());
  if (*post != nullptr) {
    auto text = r_.String(**post, path + ".postData", "text", false);
    if (!text) return std::unexpected(text.error());
    cassette.request_body = text->value_or("");
  }
  out.stream = provider::StreamRequested(
      provider::WriterFor(dialect).ReadTarget(target.path, target.query), cassette.request_body);
  const Json body = Json::parse(cassette.request_body, nullptr, false);
  if (body.is_object() && body.contains("model") && body["model"].is_string()) {
    out.model = body["model"].get<std::string>();
  }
  provider::RedactCassetteRequest(cassette);
  return {};
}

std::expected<void, LoadError> EntryReader::Response(const Json& entry, const Json& response,
                                                     Dialect dialect, const std::string& body,
                                                     Cassette& cassette) const {
  const std::string path = path_ + ".response";
  auto reason = r_.String(response, path, "statusText", false);
  if (!reason) return std::unexpected(reason.error());
  cassette.reason = reason->value_or("");
  if (cassette.reason.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
    return r_.Fail(PathOf(path, "statusText"), "a reason phrase with a line break or NUL");
  }
  auto headers = Headers(response, path);
  if (!headers) return std::unexpected(headers.error());
  std::string content_type;
  for (CassetteHeader& header : *headers) {
    const std::string name = Lower(header.name);
    if (name == "content-type") content_type = header.value;
    if (std::ranges::find(kFramingHeaders, name) == std::end(kFramingHeaders)) {
      cassette.headers.push_back(std::move(header));
    }
  }
  auto timings = r_.Object(entry, path_, "timings", false);
  if (!timings) return std::unexpected(timings.error());
  auto wait = Timing(*timings, "wait");
  if (!wait) return std::unexpected(wait.error());
  auto receive = Timing(*timings, "receive");
  if (!receive) return std::unexpected(receive.error());
  cassette.head_at = *wait;
  cassette.writes = cassette_import::SpreadWrites(
      cassette_import::BodyEvents(dialect, content_type, body), *wait, *wait + *receive);
  if (cassette.writes.size() > 1) {
    cassette.headers.push_back({"transfer-encoding", "chunked"});
  } else {
    cassette.headers.push_back({"content-length", std::to_string(body.size())});
  }
  cassette.end_at = *wait + *receive;
  return {};
}

std::expected<Converted, LoadError> EntryReader::Convert(const Json& entry,
                                                         std::size_t index) const {
  if (!entry.is_object()) return r_.Fail(path_, "expected an object (an entry)");
  auto request = r_.Object(entry, path_, "request");
  if (!request) return std::unexpected(request.error());
  const std::string request_path = path_ + ".request";
  auto method = r_.String(**request, request_path, "method");
  if (!method) return std::unexpected(method.error());
  auto url = r_.String(**request, request_path, "url");
  if (!url) return std::unexpected(url.error());
  const Target target = TargetOf(**url);
  const std::optional<Dialect> dialect = provider::DialectOfTarget(target.path, target.query);
  if (!dialect || **method != "POST") {
    return Converted{std::nullopt,
                     fmt::format("{} {}: not a request faultline speaks (POST to a dialect's path)",
                                 **method, **url)};
  }
  auto response = r_.Object(entry, path_, "response");
  if (!response) return std::unexpected(response.error());
  const std::string response_path = path_ + ".response";
  auto status = r_.Number(**response, response_path, "status");
  if (!status) return std::unexpected(status.error());
  if (*status && **status == 0) {
    return Converted{std::nullopt,
                     fmt::format("{} {}: aborted (status 0: no response)", **method, **url)};
  }
  if (!*status || **status != std::floor(**status) || **status < 100 || **status > 599) {
    return r_.Fail(PathOf(response_path, "status"), "expected an HTTP status from 100 to 599");
  }
  auto body = Body(**response, response_path);
  if (!body) return std::unexpected(body.error());
  if (Converted* skipped = std::get_if<Converted>(&*body)) {
    skipped->skip = fmt::format("{} {}: {}", **method, **url, skipped->skip);
    return std::move(*skipped);
  }
  ImportedCassette out;
  Cassette& cassette = out.cassette;
  cassette.dialect = std::string(ToString(*dialect));
  cassette.source = "har";
  cassette.method = **method;
  cassette.target = target.target;
  cassette.status = static_cast<int>(**status);
  if (auto read = Request(**request, target, *dialect, out); !read)
    return std::unexpected(read.error());
  auto read = Response(entry, **response, *dialect, std::get<std::string>(*body), cassette);
  if (!read) return std::unexpected(read.error());
  out.file = CassetteFileName(index + 1, cassette.dialect);
  return Converted{std::move(out), ""};
}

}  // namespace

std::expected<Import, LoadError> ImportHar(std::string_view text, std::string_view file,
                                           const ImportOptions& options) {
  auto json = cassette_import::ParseJson(text, file);
  if (!json) return std::unexpected(json.error());
  const JsonReader reader(file);
  if (!json->is_object()) return reader.Fail("", "expected a HAR object {\"log\": {...}}");
  auto log = reader.Object(*json, "", "log");
  if (!log) return std::unexpected(log.error());
  auto entries = reader.Array(**log, "log", "entries");
  if (!entries) return std::unexpected(entries.error());
  Import import;
  for (std::size_t i = 0; i < (*entries)->size(); ++i) {
    const std::string path = fmt::format("log.entries[{}]", i);
    auto converted = EntryReader(reader, path).Convert((**entries)[i], i);
    if (!converted) return std::unexpected(converted.error());
    if (converted->cassette) {
      import.cassettes.push_back(std::move(*converted->cassette));
    } else {
      import.skipped.push_back({path, std::move(converted->skip)});
    }
  }
  if (import.cassettes.empty()) {
    return reader.Fail("log.entries",
                       fmt::format("no entry converts into a cassette ({} entries, {} skipped)",
                                   (*entries)->size(), import.skipped.size()));
  }
  const std::string name = std::filesystem::path(file).filename().string();
  cassette_import::AddScenarios(import, file, fmt::format("{} (HAR)", name), options);
  return import;
}

}  // namespace faultline::scenario
