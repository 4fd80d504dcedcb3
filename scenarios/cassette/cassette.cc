// Reading and writing cassettes (cassette.h). The reader is strict: every line is checked for its
// type, its keys and their values, because a cassette comes from anywhere (a recording, a HAR
// export, a hand edit) and a silent default would replay something that was never recorded.
#include "scenarios/cassette/cassette.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "scenarios/bytes_text.h"

namespace faultline::scenario {
namespace {

using Json = nlohmann::ordered_json;
using std::chrono::microseconds;

constexpr std::array<std::string_view, 3> kEndNames = {"completed", "closed", "reset"};
// A day: longer than any exchange worth replaying, short enough that no sum overflows.
constexpr std::int64_t kMaxAtUs = std::int64_t{86'400} * 1'000'000;

// One line's reading: its errors carry the file, the line and the field.
class LineReader {
 public:
  LineReader(std::string_view file, int line, const Json& json)
      : file_(file), line_(line), json_(json) {}

  std::expected<void, LoadError> Keys(std::initializer_list<std::string_view> allowed) const {
    for (const auto& [key, value] : json_.items()) {
      if (std::ranges::find(allowed, key) == allowed.end()) {
        return Fail(
            key, fmt::format("unknown key; a line of this type has {}", fmt::join(allowed, ", ")));
      }
    }
    return {};
  }
  std::expected<std::string, LoadError> Text(std::string_view key, bool required = true) const {
    const auto it = json_.find(key);
    if (it == json_.end()) {
      if (!required) return std::string();
      return Fail(key, "missing");
    }
    if (!it->is_string()) return Fail(key, "expected a string");
    return it->get<std::string>();
  }
  // "key" as UTF-8 text or "key_base64" as base64: the bytes either way.
  std::expected<std::string, LoadError> Bytes(std::string_view key) const {
    const std::string base64_key = std::string(key) + "_base64";
    const bool text = json_.contains(key);
    const bool base64 = json_.contains(base64_key);
    if (text && base64)
      return Fail(key, fmt::format("give '{}' or '{}', not both", key, base64_key));
    if (!base64) return Text(key, false);
    auto encoded = Text(base64_key);
    if (!encoded) return std::unexpected(encoded.error());
    std::optional<std::string> bytes = Base64Decode(*encoded);
    if (!bytes) return Fail(base64_key, "expected base64 (RFC 4648, with padding)");
    return *bytes;
  }
  std::expected<microseconds, LoadError> At() const {
    const auto it = json_.find("at_us");
    if (it == json_.end()) return Fail("at_us", "missing");
    if (!it->is_number_integer() || it->get<std::int64_t>() < 0 ||
        it->get<std::int64_t>() > kMaxAtUs) {
      return Fail("at_us", "expected microseconds from the request's arrival, 0 to 86400000000");
    }
    return microseconds(it->get<std::int64_t>());
  }
  std::expected<std::vector<CassetteHeader>, LoadError> Headers() const {
    std::vector<CassetteHeader> headers;
    const auto it = json_.find("headers");
    if (it == json_.end()) return headers;
    if (!it->is_array()) return Fail("headers", "expected a list of [name, value] pairs");
    for (std::size_t i = 0; i < it->size(); ++i) {
      const Json& pair = (*it)[i];
      const bool ok = pair.is_array() && pair.size() == 2 && pair[0].is_string() &&
                      pair[1].is_string() && !pair[0].get<std::string>().empty();
      const std::string field = fmt::format("headers[{}]", i);
      if (!ok) return Fail(field, "expected [name, value], two strings, the name not empty");
      CassetteHeader header{pair[0].get<std::string>(), pair[1].get<std::string>()};
      const auto unsafe = [](std::string_view s) {
        return s.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
      };
      if (unsafe(header.name) || unsafe(header.value) ||
          header.name.find_first_of(" :\t") != std::string::npos) {
        return Fail(field,
                    "a header name or value with a line break, NUL, or a name with ':' "
                    "or a space would break the response's framing");
      }
      headers.push_back(std::move(header));
    }
    return headers;
  }
  LoadError Error(std::string_view field, std::string message) const {
    LoadError error;
    error.file = std::string(file_);
    error.line = line_;
    error.path = std::string(field);
    error.message = std::move(message);
    return error;
  }
  std::unexpected<LoadError> Fail(std::string_view field, std::string message) const {
    return std::unexpected(Error(field, std::move(message)));
  }

 private:
  std::string_view file_;
  int line_;
  const Json& json_;
};

// The expected order of the lines: each type may follow only the ones before it.
enum class Stage { kStart, kHeader, kRequest, kResponse, kEnd };

struct Parser {
  std::string_view file;
  Cassette cassette;
  Stage stage = Stage::kStart;

  std::expected<void, LoadError> Line(int number, const Json& json) {
    if (!json.is_object()) {
      return LineReader(file, number, json).Fail("", "expected a JSON object on every line");
    }
    const LineReader line(file, number, json);
    auto type = line.Text("type");
    if (!type) return std::unexpected(type.error());
    const auto order = [&](Stage before, std::string_view what) -> std::expected<void, LoadError> {
      if (stage == before) return {};
      return line.Fail("type", fmt::format("a '{}' line here is out of order; a cassette is one "
                                           "'cassette' line, one 'request', one 'response', its "
                                           "'write' lines and one 'end'",
                                           what));
    };
    struct Kind {
      std::string_view name;
      Stage after;
    };
    static constexpr Kind kKinds[] = {{"cassette", Stage::kStart},
                                      {"request", Stage::kHeader},
                                      {"response", Stage::kRequest},
                                      {"write", Stage::kResponse},
                                      {"end", Stage::kResponse}};
    const auto kind = std::ranges::find(kKinds, *type, &Kind::name);
    if (kind == std::end(kKinds)) {
      return line.Fail("type", fmt::format("unknown line type \"{}\"; expected cassette, "
                                           "request, response, write or end",
                                           *type));
    }
    if (auto in_order = order(kind->after, *type); !in_order) return in_order;
    if (*type == "cassette") return Header(line, json);
    if (*type == "request") return Request(line);
    if (*type == "response") return Response(line, json);
    if (*type == "write") return Write(line);
    return End(line);
  }

  std::expected<void, LoadError> Header(const LineReader& line, const Json& json) {
    if (auto keys = line.Keys({"type", "version", "dialect", "source"}); !keys) return keys;
    const auto version = json.find("version");
    if (version == json.end() || !version->is_number_integer() || version->get<int>() != 1) {
      return line.Fail("version", "expected 1");
    }
    auto dialect = line.Text("dialect", false);
    if (!dialect) return std::unexpected(dialect.error());
    auto source = line.Text("source", false);
    if (!source) return std::unexpected(source.error());
    cassette.dialect = *dialect;
    cassette.source = *source;
    stage = Stage::kHeader;
    return {};
  }

  std::expected<void, LoadError> Request(const LineReader& line) {
    if (auto keys = line.Keys({"type", "method", "target", "headers", "body", "body_base64"});
        !keys) {
      return keys;
    }
    auto method = line.Text("method");
    if (!method) return std::unexpected(method.error());
    auto target = line.Text("target");
    if (!target) return std::unexpected(target.error());
    auto headers = line.Headers();
    if (!headers) return std::unexpected(headers.error());
    auto body = line.Bytes("body");
    if (!body) return std::unexpected(body.error());
    cassette.method = *method;
    cassette.target = *target;
    cassette.request_headers = std::move(*headers);
    cassette.request_body = std::move(*body);
    stage = Stage::kRequest;
    return {};
  }

  std::expected<void, LoadError> Response(const LineReader& line, const Json& json) {
    if (auto keys = line.Keys({"type", "at_us", "status", "reason", "headers"}); !keys) return keys;
    auto at = line.At();
    if (!at) return std::unexpected(at.error());
    auto reason = line.Text("reason", false);
    if (!reason) return std::unexpected(reason.error());
    auto headers = line.Headers();
    if (!headers) return std::unexpected(headers.error());
    if (reason->find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
      return line.Fail("reason", "a reason phrase with a line break or NUL");
    }
    const auto status = json.find("status");
    if (status == json.end() || !status->is_number_integer() || status->get<std::int64_t>() < 100 ||
        status->get<std::int64_t>() > 599) {
      return line.Fail("status", "expected an HTTP status from 100 to 599");
    }
    cassette.head_at = *at;
    cassette.status = status->get<int>();
    cassette.reason = std::move(*reason);
    cassette.headers = std::move(*headers);
    stage = Stage::kResponse;
    return {};
  }

  std::expected<void, LoadError> Write(const LineReader& line) {
    if (auto keys = line.Keys({"type", "at_us", "bytes", "bytes_base64"}); !keys) return keys;
    auto at = line.At();
    if (!at) return std::unexpected(at.error());
    const microseconds last =
        cassette.writes.empty() ? cassette.head_at : cassette.writes.back().at;
    if (*at < last) {
      return line.Fail("at_us", fmt::format("writes go in time order: {} us is before the "
                                            "previous line's {} us",
                                            at->count(), last.count()));
    }
    if (cassette.writes.size() >= kMaxCassetteWrites) {
      return line.Fail("", fmt::format("more than {} writes", kMaxCassetteWrites));
    }
    auto bytes = line.Bytes("bytes");
    if (!bytes) return std::unexpected(bytes.error());
    cassette.writes.push_back({*at, std::move(*bytes)});
    return {};
  }

  std::expected<void, LoadError> End(const LineReader& line) {
    if (auto keys = line.Keys({"type", "at_us", "kind"}); !keys) return keys;
    auto at = line.At();
    if (!at) return std::unexpected(at.error());
    const microseconds last =
        cassette.writes.empty() ? cassette.head_at : cassette.writes.back().at;
    if (*at < last) {
      return line.Fail("at_us", fmt::format("the end at {} us is before the last write's {} us",
                                            at->count(), last.count()));
    }
    auto kind = line.Text("kind");
    if (!kind) return std::unexpected(kind.error());
    const auto it = std::ranges::find(kEndNames, *kind);
    if (it == kEndNames.end()) return line.Fail("kind", "expected completed, closed or reset");
    cassette.end = static_cast<Cassette::End>(it - kEndNames.begin());
    cassette.end_at = *at;
    stage = Stage::kEnd;
    return {};
  }
};

Json HeadersJson(const std::vector<CassetteHeader>& headers) {
  Json list = Json::array();
  for (const CassetteHeader& header : headers) list.push_back({header.name, header.value});
  return list;
}

void PutBytes(Json& line, const std::string& key, std::string_view bytes) {
  if (IsValidUtf8(bytes)) {
    line[key] = bytes;
  } else {
    line[key + "_base64"] = Base64Encode(bytes);
  }
}

}  // namespace

std::size_t Cassette::body_size() const {
  std::size_t size = 0;
  for (const CassetteWrite& write : writes) size += write.bytes.size();
  return size;
}

std::string_view ToString(Cassette::End end) { return kEndNames[static_cast<std::size_t>(end)]; }

std::expected<Cassette, LoadError> ParseCassette(std::string_view text, std::string_view file) {
  Parser parser{file, {}};
  if (text.size() > kMaxCassetteBytes) {
    return std::unexpected(
        LineReader(file, 0, Json())
            .Error("", fmt::format("a cassette of {} bytes is over the limit of {}", text.size(),
                                   kMaxCassetteBytes)));
  }
  int number = 0;
  while (!text.empty()) {
    ++number;
    const std::size_t newline = text.find('\n');
    std::string_view line_text = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (!line_text.empty() && line_text.back() == '\r') line_text.remove_suffix(1);
    if (line_text.find_first_not_of(" \t") == std::string_view::npos) continue;
    const Json json = Json::parse(line_text, nullptr, false);
    if (json.is_discarded()) {
      return std::unexpected(LineReader(file, number, json).Error("", "not a JSON object"));
    }
    if (parser.stage == Stage::kEnd) {
      return std::unexpected(
          LineReader(file, number, json).Error("", "a line after the 'end' line"));
    }
    if (auto done = parser.Line(number, json); !done) return std::unexpected(done.error());
  }
  if (parser.stage != Stage::kEnd) {
    return std::unexpected(
        LineReader(file, number, Json())
            .Error("",
                   "the cassette ends before its 'end' line (it needs a 'cassette', a 'request', a "
                   "'response' and an 'end' line)"));
  }
  return std::move(parser.cassette);
}

std::string WriteCassette(const Cassette& cassette) {
  std::string out;
  const auto put = [&out](const Json& line) {
    out += line.dump(-1, ' ', false, Json::error_handler_t::replace);
    out += '\n';
  };
  put(Json{{"type", "cassette"},
           {"version", 1},
           {"dialect", cassette.dialect},
           {"source", cassette.source}});
  Json request{{"type", "request"},
               {"method", cassette.method},
               {"target", cassette.target},
               {"headers", HeadersJson(cassette.request_headers)}};
  PutBytes(request, "body", cassette.request_body);
  put(request);
  put(Json{{"type", "response"},
           {"at_us", cassette.head_at.count()},
           {"status", cassette.status},
           {"reason", cassette.reason},
           {"headers", HeadersJson(cassette.headers)}});
  for (const CassetteWrite& write : cassette.writes) {
    Json line{{"type", "write"}, {"at_us", write.at.count()}};
    PutBytes(line, "bytes", write.bytes);
    put(line);
  }
  put(Json{{"type", "end"}, {"at_us", cassette.end_at.count()}, {"kind", ToString(cassette.end)}});
  return out;
}

std::string CassetteFileName(std::uint64_t index, std::string_view dialect) {
  return fmt::format("{:04}-{}.jsonl", index, dialect.empty() ? "exchange" : dialect);
}

}  // namespace faultline::scenario
