// The importers' shared pieces (import.h).
#include "cassette_import/import.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "fake_provider/wire/event_splitter.h"

namespace faultline::scenario::cassette_import {
namespace {

bool StreamMedia(std::string_view content_type) {
  std::string type(content_type.substr(0, content_type.find(';')));
  std::ranges::transform(type, type.begin(), [](unsigned char c) { return std::tolower(c); });
  return type.starts_with("text/event-stream") || type.starts_with("application/x-ndjson") ||
         type.starts_with("application/vnd.amazon.eventstream");
}

// A scenario name made of what the loader takes: a-z, 0-9 and . _ / -, starting with a letter.
std::string NameOf(std::string_view text) {
  std::string name;
  for (const char c : text) {
    const auto lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const bool kept = (lower >= 'a' && lower <= 'z') || (lower >= '0' && lower <= '9') ||
                      lower == '.' || lower == '_' || lower == '-';
    name += kept ? lower : '-';
  }
  if (name.empty() || name.front() < 'a' || name.front() > 'z') name = "x" + name;
  return name;
}

std::string ContentType(const Cassette& cassette) {
  for (const CassetteHeader& header : cassette.headers) {
    std::string name = header.name;
    std::ranges::transform(name, name.begin(), [](unsigned char c) { return std::tolower(c); });
    if (name == "content-type") return header.value;
  }
  return "";
}

std::string Quoted(std::string_view text) { return Json(std::string(text)).dump(); }

std::string ScenarioText(const std::vector<const ImportedCassette*>& cassettes, Dialect dialect,
                         std::string_view name, std::string_view source) {
  const ImportedCassette& first = *cassettes.front();
  std::string text = fmt::format(
      "# Made by `faultline cassette import` from {}:\n"
      "# its {} exchanges, played back in order (docs/cassettes.md). The judge reads what a\n"
      "# correct client makes of each answer from the bytes played: no truth is written here.\n"
      "faultline: 1\nname: {}\ndescription: {}\ndialect: {}\nrequest: {{stream: {}",
      source, ToString(dialect), Quoted(name),
      Quoted(fmt::format("The {} exchanges of {}, replayed with their timing", ToString(dialect),
                         source)),
      ToString(dialect), first.stream ? "true" : "false");
  if (!first.model.empty()) text += fmt::format(", model: {}", Quoted(first.model));
  text += "}\nresponses:\n";
  for (const ImportedCassette* cassette : cassettes) {
    text += fmt::format("  - cassette: {}\n", Quoted(cassette->file));
  }
  // The first answer commits when it is a whole 2xx: then the call ends there, whatever follows.
  const Cassette& answer = first.cassette;
  std::string body;
  for (const CassetteWrite& write : answer.writes) body += write.bytes;
  if (answer.status >= 200 && answer.status <= 299 &&
      Complete(dialect, ContentType(answer), body)) {
    text += "expect: {outcome: committed, attempts: 1}\n";
  }
  return text;
}

}  // namespace

std::expected<Json, LoadError> ParseJson(std::string_view text, std::string_view file) {
  const JsonReader reader(file);
  if (text.size() > kMaxCassetteBytes) {
    return reader.Fail("", fmt::format("a file of {} bytes is over the limit of {}", text.size(),
                                       kMaxCassetteBytes));
  }
  try {
    return Json::parse(text);
  } catch (const Json::exception& error) {
    LoadError load = reader.Error("", "not JSON: " + std::string(error.what()));
    if (const auto* parse = dynamic_cast<const nlohmann::json::parse_error*>(&error)) {
      const std::string_view before = text.substr(0, std::min(parse->byte, text.size()));
      load.line = static_cast<int>(std::ranges::count(before, '\n')) + 1;
      const std::size_t newline = before.rfind('\n');
      load.column =
          static_cast<int>(before.size() - (newline == std::string_view::npos ? 0 : newline + 1));
      load.column = std::max(load.column, 1);
    }
    return std::unexpected(std::move(load));
  }
}

LoadError JsonReader::Error(std::string_view path, std::string message) const {
  LoadError error;
  error.file = file_;
  error.path = std::string(path);
  error.message = std::move(message);
  return error;
}

std::string PathOf(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

JsonReader::Found JsonReader::Typed(const Json& json, std::string_view path, std::string_view key,
                                    bool required, Json::value_t type,
                                    std::string_view what) const {
  const auto it = json.find(key);
  if (it == json.end()) {
    if (!required) return nullptr;
    return Fail(PathOf(path, key), fmt::format("missing; expected {}", what));
  }
  const bool number = type == Json::value_t::number_float && it->is_number();
  if (it->type() != type && !number) {
    return Fail(PathOf(path, key), fmt::format("expected {}, got {}", what, it->type_name()));
  }
  return &*it;
}

JsonReader::Found JsonReader::Object(const Json& json, std::string_view path, std::string_view key,
                                     bool required) const {
  return Typed(json, path, key, required, Json::value_t::object, "an object");
}

JsonReader::Found JsonReader::Array(const Json& json, std::string_view path, std::string_view key,
                                    bool required) const {
  return Typed(json, path, key, required, Json::value_t::array, "a list");
}

std::expected<std::optional<std::string>, LoadError> JsonReader::String(const Json& json,
                                                                        std::string_view path,
                                                                        std::string_view key,
                                                                        bool required) const {
  auto found = Typed(json, path, key, required, Json::value_t::string, "a string");
  if (!found) return std::unexpected(found.error());
  if (*found == nullptr) return std::nullopt;
  return (*found)->get<std::string>();
}

std::expected<std::optional<double>, LoadError> JsonReader::Number(const Json& json,
                                                                   std::string_view path,
                                                                   std::string_view key) const {
  auto found = Typed(json, path, key, false, Json::value_t::number_float, "a number");
  if (!found) return std::unexpected(found.error());
  if (*found == nullptr) return std::nullopt;
  return (*found)->get<double>();
}

std::vector<std::string> BodyEvents(Dialect dialect, std::string_view content_type,
                                    std::string_view body) {
  if (body.empty()) return {};
  if (!StreamMedia(content_type)) return {std::string(body)};
  provider::EventSplitter splitter(provider::RefDialect(dialect));
  std::vector<std::string> events;
  std::string current;
  std::size_t at = 0;
  for (const provider::EventSplitter::Piece& piece : splitter.Split(body)) {
    current.append(body.substr(at, piece.size));
    at += piece.size;
    if (piece.event_end) events.push_back(std::exchange(current, {}));
  }
  if (!current.empty()) {
    if (events.empty()) {
      events.push_back(std::move(current));
    } else {
      events.back() += current;
    }
  }
  return events;
}

std::vector<CassetteWrite> SpreadWrites(std::vector<std::string> pieces,
                                        std::chrono::microseconds from,
                                        std::chrono::microseconds to) {
  std::vector<CassetteWrite> writes;
  const auto n = static_cast<std::int64_t>(pieces.size());
  const std::int64_t span = std::max<std::int64_t>(0, (to - from).count());
  for (std::int64_t i = 0; i < n; ++i) {
    writes.push_back({from + std::chrono::microseconds(span * (i + 1) / n),
                      std::move(pieces[static_cast<std::size_t>(i)])});
  }
  return writes;
}

bool Complete(Dialect dialect, std::string_view content_type, std::string_view body) {
  if (!StreamMedia(content_type)) return true;
  provider::EventSplitter splitter(provider::RefDialect(dialect));
  bool terminal = false;
  for (const provider::EventSplitter::Piece& piece : splitter.Split(body)) {
    terminal = terminal || piece.terminal;
  }
  return terminal && !splitter.malformed() && !splitter.broken();
}

void AddScenarios(Import& import, std::string_view input_file, std::string_view source,
                  const ImportOptions& options) {
  std::vector<Dialect> order;
  std::map<Dialect, std::vector<const ImportedCassette*>> by_dialect;
  for (const ImportedCassette& cassette : import.cassettes) {
    const Dialect dialect = ParseDialect(cassette.cassette.dialect).value_or(Dialect::kOpenAiChat);
    if (!by_dialect.contains(dialect)) order.push_back(dialect);
    by_dialect[dialect].push_back(&cassette);
  }
  const std::filesystem::path file(options.scenario_file);
  const std::string base =
      options.name.empty() ? "imported/" + NameOf(std::filesystem::path(input_file).stem().string())
                           : options.name;
  for (const Dialect dialect : order) {
    ImportedScenario scenario;
    scenario.dialect = dialect;
    std::string name = base;
    scenario.file = file.string();
    if (order.size() > 1) {
      name += fmt::format("-{}", ToString(dialect));
      scenario.file =
          (file.parent_path() / fmt::format("{}-{}{}", file.stem().string(), ToString(dialect),
                                            file.extension().string()))
              .string();
    }
    scenario.text = ScenarioText(by_dialect[dialect], dialect, name, source);
    import.scenarios.push_back(std::move(scenario));
  }
}

}  // namespace faultline::scenario::cassette_import
