// Reading a scenario document: the top level, request, chaos, rate limit, outages and expect.
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <exception>
#include <limits>
#include <utility>

#include "fmt/format.h"
#include "scenarios/loader_internal.h"
#include "scenarios/loader_keys.h"

namespace faultline::scenario {
namespace internal {
namespace {

constexpr int kMaxCalls = 10'000;
// The latest a scenario's last call may start (request.call_interval x (calls - 1)).
constexpr Duration kMaxCallSpread = std::chrono::hours(1);
constexpr double kProbabilityTolerance = 1e-9;  // 0.1 + 0.2 + 0.7 must still add up to 1

// [a-z0-9][a-z0-9._/-]*: scenario names and tags, safe in file names, URLs and JUnit.
bool IsValidName(std::string_view name) {
  auto lower_or_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  return !name.empty() && lower_or_digit(name.front()) &&
         std::all_of(name.begin(), name.end(), [&](char c) {
           return lower_or_digit(c) || c == '.' || c == '_' || c == '/' || c == '-';
         });
}

std::optional<std::string> ReadName(Reader& reader, const Field& field, std::string_view what) {
  std::optional<std::string> name = reader.ReadString(field);
  if (name && !IsValidName(*name)) {
    reader.Fail(field, fmt::format("expected a {} made of a-z, 0-9 and . _ / - (starting with a "
                                   "letter or digit), got {}",
                                   what, Describe(field.node)));
    return std::nullopt;
  }
  return name;
}

// `faultline: 1` is checked before anything else, so that a file written for a newer format
// reports its version instead of the keys this build does not know.
void CheckVersion(Reader& reader, const Field& root) {
  if (!root.node.IsMap()) return;
  for (auto it = root.node.begin(); it != root.node.end(); ++it) {
    if (!it->first.IsScalar() || it->first.Scalar() != "faultline") continue;
    Field field{it->second, "faultline",
                it->second.IsNull() ? it->first.Mark() : it->second.Mark()};
    std::optional<std::int64_t> version = reader.ReadInt(field, 1, kMaxInt);
    if (version && *version != kSchemaVersion) {
      reader.Fail(field, fmt::format("unsupported format version {}; this build reads "
                                     "'faultline: {}'",
                                     *version, kSchemaVersion));
    }
    return;
  }
}

void ReadStop(Reader& reader, const Field& field, std::vector<std::string>* out) {
  std::optional<std::vector<Field>> items = reader.ReadList(field);
  if (!items) return;
  if (items->empty() || items->size() > kMaxStopSequences) {
    reader.Fail(field, fmt::format("expected 1 to {} stop sequences, got {}", kMaxStopSequences,
                                   items->size()));
  }
  for (std::size_t i = 0; i < items->size() && reader.ok(); ++i) {
    std::optional<std::string> text = reader.ReadString((*items)[i]);
    if (text && text->empty()) reader.Fail((*items)[i], "expected a non-empty stop sequence");
    if (text) out->push_back(std::move(*text));
  }
}

void ReadRequest(Reader& reader, const Field& field, RequestSpec* out) {
  std::optional<Map> map = reader.ReadMap(field, keys::kRequest);
  if (!map) return;
  reader.Get(*map, "stream", &out->stream);
  reader.Get(*map, "model", &out->model);
  reader.Get(*map, "message", &out->message);
  reader.Get(*map, "max_tokens", &out->max_tokens, 1, kMaxInt);
  reader.Get(*map, "tools", &out->tools);
  reader.Get(*map, "calls", &out->calls, 1, kMaxCalls);
  if (std::optional<Field> interval = reader.Present(*map, "call_interval")) {
    reader.Get(*map, "call_interval", &out->call_interval);
    if (reader.ok() && out->calls < 2 && out->call_interval > Duration{0}) {
      reader.Fail(*interval, "'call_interval' spaces several calls; it needs 'calls' of 2 or more");
    }
    // Divided, not multiplied: a huge interval times many calls would overflow.
    if (reader.ok() && out->calls > 1 && out->call_interval > kMaxCallSpread / (out->calls - 1)) {
      reader.Fail(
          *interval,
          fmt::format("{} calls {} ms apart would spread over more than {} s, "
                      "the most a scenario's calls may",
                      out->calls, out->call_interval.count() / 1000,
                      std::chrono::duration_cast<std::chrono::seconds>(kMaxCallSpread).count()));
    }
  }
  reader.Get(*map, "reasoning", &out->reasoning);
  reader.Get(*map, "image", &out->image);
  reader.Get(*map, "strict_tools", &out->strict_tools);
  if (out->strict_tools) {
    if (map->Has("tools") && !out->tools) {
      reader.Fail(*map->Get("tools"),
                  "'strict_tools: true' marks the offered tool strict; it "
                  "needs 'tools: true' (or leave 'tools' out)");
    }
    out->tools = true;
  }
  if (std::optional<Field> stop = reader.Present(*map, "stop")) ReadStop(reader, *stop, &out->stop);
  if (std::optional<Field> prefill = reader.Present(*map, "prefill")) {
    out->prefill = reader.ReadString(*prefill).value_or("");
    if (reader.ok() && out->prefill.empty()) {
      reader.Fail(*prefill,
                  "expected the assistant's first words, got an empty string (leave "
                  "'prefill' out for none)");
    }
  }
}

// Why `dialect` cannot carry what `request` needs, at which of its keys; nullopt when it can.
std::optional<std::pair<std::string_view, std::string>> Unsendable(Dialect dialect,
                                                                   const RequestSpec& request) {
  if (dialect == Dialect::kOpenAiResponses && !request.stop.empty()) {
    return std::pair{"stop", "the OpenAI Responses API has no stop sequences"};
  }
  if (dialect == Dialect::kGemini && request.strict_tools) {
    return std::pair{"strict_tools", "Gemini's function declarations have no strict mode"};
  }
  if (dialect == Dialect::kOllama && request.strict_tools) {
    return std::pair{"strict_tools", "Ollama's tools have no strict mode"};
  }
  if (dialect == Dialect::kBedrockConverse && request.strict_tools) {
    return std::pair{"strict_tools", "Bedrock's toolSpec has no strict mode"};
  }
  if (dialect != Dialect::kAnthropicMessages) return std::nullopt;
  if (request.reasoning && !request.prefill.empty()) {
    return std::pair{"prefill",
                     "Anthropic's extended thinking cannot be combined with a "
                     "prefilled answer"};
  }
  if (request.reasoning && request.max_tokens <= kAnthropicMinThinkingBudget) {
    return std::pair{"reasoning",
                     fmt::format("Anthropic's extended thinking needs max_tokens above its "
                                 "smallest budget_tokens ({}), got max_tokens {}",
                                 kAnthropicMinThinkingBudget, request.max_tokens)};
  }
  if (!request.prefill.empty() &&
      request.prefill.find_last_not_of(" \t\r\n") + 1 != request.prefill.size()) {
    return std::pair{"prefill", "Anthropic refuses a prefill that ends in whitespace"};
  }
  return std::nullopt;
}

// The request goes out in the scenario's dialect and in every route's: each must be able to say
// what it needs, or the scenario could not be sent as written.
void CheckRequestDialects(Reader& reader, const Field& field, const Scenario& scenario) {
  std::optional<Map> map = reader.ReadMap(field, keys::kRequest);
  if (!map) return;
  std::vector<std::pair<Dialect, std::string>> targets = {{scenario.dialect, ""}};
  for (const Route& route : scenario.routes) targets.emplace_back(route.dialect, route.id);
  for (const auto& [dialect, route] : targets) {
    const auto unsendable = Unsendable(dialect, scenario.request);
    if (!unsendable || !reader.ok()) continue;
    const std::optional<Field> at = map->Get(unsendable->first);
    reader.Fail(at.value_or(field),
                fmt::format("the request cannot be sent in {}{}: {}", ToString(dialect),
                            route.empty() ? " (the scenario's dialect)"
                                          : fmt::format(" (route '{}')", route),
                            unsendable->second));
  }
}

std::optional<Chaos::Choice> ReadChaosChoice(Reader& reader, const Field& field, Dialect dialect) {
  std::optional<Map> map = reader.ReadMap(field, keys::kChaosChoice);
  if (!map) return std::nullopt;
  Chaos::Choice choice;
  if (std::optional<Field> probability = reader.Require(*map, "probability")) {
    choice.probability = reader.ReadNumber(*probability, 0, 1).value_or(0);
  }
  if (std::optional<Field> response = reader.Require(*map, "response")) {
    ReadResponse(reader, *response, dialect, ResponsePlace::kChaos, &choice.response);
  }
  if (!reader.ok()) return std::nullopt;
  return choice;
}

void ReadChaos(Reader& reader, const Field& field, Dialect dialect, Chaos* out) {
  std::optional<Map> map = reader.ReadMap(field, keys::kChaos);
  if (!map) return;
  if (std::optional<Field> seed = reader.Present(*map, "seed")) {
    out->seed = reader.ReadUint64(*seed).value_or(0);
  }
  std::optional<Field> faults = reader.Require(*map, "faults");
  std::optional<std::vector<Field>> items;
  if (faults) items = reader.ReadList(*faults);
  if (items && items->empty()) reader.Fail(*faults, "expected at least one fault");
  double total = 0;
  for (std::size_t i = 0; items && i < items->size() && reader.ok(); ++i) {
    if (std::optional<Chaos::Choice> choice = ReadChaosChoice(reader, (*items)[i], dialect)) {
      total += choice->probability;
      out->faults.push_back(std::move(*choice));
    }
  }
  if (reader.ok() && total > 1 + kProbabilityTolerance) {
    reader.Fail(*faults, fmt::format("the probabilities add up to {}; they must not exceed 1 "
                                     "('otherwise' takes what is left)",
                                     total));
  }
  if (std::optional<Field> otherwise = reader.Present(*map, "otherwise")) {
    ReadResponse(reader, *otherwise, dialect, ResponsePlace::kChaos, &out->otherwise);
  }
}

void ReadRateLimit(Reader& reader, const Field& field, RateLimit* out) {
  std::optional<Map> map = reader.ReadMap(field, keys::kRateLimit);
  if (!map) return;
  reader.Get(*map, "requests", &out->requests, 0, kMaxInt);
  reader.Get(*map, "tokens", &out->tokens, 0, kMaxInt);
  reader.Get(*map, "window", &out->window);
  if (reader.ok() && out->window.count() == 0) {
    reader.Fail(*map->Get("window"), "expected a window longer than 0");
  }
  if (reader.ok() && out->requests == 0 && out->tokens == 0) {
    reader.Fail(field, "a rate limit needs 'requests' or 'tokens' above 0");
  }
}

void ReadListenerOutages(Reader& reader, const Field& field, std::vector<ListenerOutage>* out) {
  std::optional<std::vector<Field>> items = reader.ReadList(field);
  if (!items) return;
  for (const Field& item : *items) {
    std::optional<Map> map = reader.ReadMap(item, keys::kListenerOutage);
    if (!map) return;
    ListenerOutage outage;
    if (std::optional<Field> from = reader.Require(*map, "from")) {
      outage.from = reader.ReadDuration(*from, Sign::kNonNegative).value_or(Duration{0});
    }
    if (std::optional<Field> length = reader.Require(*map, "for")) {
      outage.length = reader.ReadDuration(*length, Sign::kNonNegative).value_or(Duration{0});
      if (reader.ok() && outage.length.count() == 0) {
        reader.Fail(*length, "expected an outage longer than 0");
      }
    }
    out->push_back(outage);
  }
}

// The place of `{dialect}` in a matrix file's name, which each expansion fills with its dialect.
constexpr std::string_view kDialectSlot = "{dialect}";

// A matrix file's name: {dialect} filled in with `dialect`, then checked like any name.
std::string ReadMatrixName(Reader& reader, const Field& name, Dialect dialect) {
  std::string text = reader.ReadString(name).value_or("");
  const std::size_t slot = text.find(kDialectSlot);
  if (!reader.ok()) return {};
  if (slot == std::string::npos) {
    reader.Fail(name, fmt::format("a file with 'dialects' names each of its scenarios: put {} in "
                                  "its name",
                                  kDialectSlot));
    return {};
  }
  text.replace(slot, kDialectSlot.size(), ToString(dialect));
  if (!IsValidName(text)) {
    reader.Fail(name, fmt::format("expected a scenario name made of a-z, 0-9 and . _ / - around "
                                  "{}, got {}",
                                  kDialectSlot, Describe(name.node)));
    return {};
  }
  return text;
}

// `dialects: [...]`: one file, one scenario per listed dialect (`matrix` is the one being read).
void ReadMatrixDialect(Reader& reader, const Map& map, std::optional<Dialect> matrix,
                       Scenario* out) {
  const Field list_field = *map.Get("dialects");
  if (map.Has("dialect")) {
    reader.Fail(*map.GetKey("dialect"),
                "'dialect' names one dialect and 'dialects' several; give one of them");
    return;
  }
  if (!matrix) {
    reader.Fail(list_field,
                "'dialects' expands this file into one scenario per dialect; load it "
                "as a scenario file or folder (faultline run FILE, faultline validate)");
    return;
  }
  std::vector<Dialect> seen;
  for (const Field& item : reader.ReadList(list_field).value_or(std::vector<Field>{})) {
    std::optional<std::size_t> index = reader.ReadName(item, keys::kDialectNames);
    if (!index) return;
    const Dialect dialect =
        ParseDialect(keys::kDialectNames[*index]).value_or(Dialect::kOpenAiChat);
    if (std::ranges::find(seen, dialect) != seen.end()) {
      reader.Fail(item, fmt::format("'{}' is listed twice", ToString(dialect)));
      return;
    }
    seen.push_back(dialect);
  }
  if (reader.ok() && seen.empty()) reader.Fail(list_field, "expected at least one dialect");
  out->dialect = *matrix;
}

void ReadIdentity(Reader& reader, const Map& map, Scenario* out, YAML::Mark* name_mark,
                  std::optional<Dialect> matrix) {
  reader.Require(map, "faultline");  // its value was checked by CheckVersion
  if (std::optional<Field> name = reader.Require(map, "name")) {
    *name_mark = name->mark;
    if (map.Has("dialects")) {
      // Read alone, without a dialect, a matrix file is refused by ReadMatrixDialect.
      if (matrix) out->name = ReadMatrixName(reader, *name, *matrix);
    } else if (std::optional<std::string> text = ReadName(reader, *name, "scenario name")) {
      out->name = *text;
    }
  }
  if (std::optional<Field> description = reader.Require(map, "description")) {
    out->description = reader.ReadString(*description).value_or("");
    if (reader.ok() && out->description.find_first_not_of(" \t\r\n") == std::string::npos) {
      reader.Fail(*description, "expected a description of the failure, got an empty string");
    }
  }
  if (map.Has("dialects")) {
    ReadMatrixDialect(reader, map, matrix, out);
  } else if (std::optional<Field> dialect = reader.Require(map, "dialect")) {
    if (std::optional<std::size_t> index = reader.ReadName(*dialect, keys::kDialectNames)) {
      out->dialect = ParseDialect(keys::kDialectNames[*index]).value_or(Dialect::kOpenAiChat);
    }
  }
  if (std::optional<Field> tags = reader.Present(map, "tags")) {
    for (const Field& tag : reader.ReadList(*tags).value_or(std::vector<Field>{})) {
      if (std::optional<std::string> text = ReadName(reader, tag, "tag")) {
        out->tags.push_back(*text);
      }
    }
  }
  // A matrix file's scenarios are tagged with their dialect, as one-dialect files are by hand.
  const std::string dialect_tag(ToString(out->dialect));
  if (matrix && std::ranges::find(out->tags, dialect_tag) == out->tags.end()) {
    out->tags.push_back(dialect_tag);
  }
}

void ReadBehaviour(Reader& reader, const Map& map, Scenario* out) {
  if (map.Has("responses") && map.Has("chaos")) {
    reader.Fail(*map.GetKey("chaos"), "'chaos' replaces 'responses'; give one of them, not both");
  } else if (map.Has("responses") && map.Has("fleet")) {
    reader.Fail(*map.GetKey("responses"),
                "a fleet's provider model answers every attempt; 'responses' scripts one call "
                "(give per-request faults as 'chaos')");
  } else if (!map.Has("responses") && !map.Has("chaos") && !map.Has("fleet") &&
             !map.Has("routes")) {
    reader.Fail(map.self(), "missing required key 'responses' (or 'chaos', 'fleet' or 'routes')");
  }
  ReadRoutes(reader, map, out);
  if (std::optional<Field> responses = reader.Present(map, "responses")) {
    ReadResponses(reader, *responses, out->dialect, &out->responses);
  }
  if (std::optional<Field> chaos = reader.Present(map, "chaos")) {
    out->chaos.emplace();
    ReadChaos(reader, *chaos, out->dialect, &*out->chaos);
  }
  if (std::optional<Field> rate_limit = reader.Present(map, "rate_limit")) {
    out->rate_limit.emplace();
    ReadRateLimit(reader, *rate_limit, &*out->rate_limit);
  }
  if (std::optional<Field> outages = reader.Present(map, "listener_outages")) {
    ReadListenerOutages(reader, *outages, &out->listener_outages);
  }
  reader.Get(map, "cancel_at", &out->cancel_at);
}

void ReadDocument(Reader& reader, const Field& root, Scenario* out, YAML::Mark* name_mark,
                  std::optional<Dialect> matrix) {
  CheckVersion(reader, root);
  std::optional<Map> map = reader.ReadMap(root, keys::kDocument);
  if (!map) return;
  ReadIdentity(reader, *map, out, name_mark, matrix);
  if (std::optional<Field> request = reader.Present(*map, "request")) {
    ReadRequest(reader, *request, &out->request);
  }
  ReadBehaviour(reader, *map, out);
  if (std::optional<Field> request = reader.Present(*map, "request")) {
    CheckRequestDialects(reader, *request, *out);
  }
  if (std::optional<Field> policy = reader.Present(*map, "policy")) {
    out->policy = ReadPolicy(reader, *policy);
  }
  if (std::optional<Field> fleet = reader.Present(*map, "fleet")) {
    out->fleet.emplace();
    ReadFleet(reader, *fleet, &*out->fleet);
  }
  if (std::optional<Field> expect = reader.Present(*map, "expect")) {
    ReadExpect(reader, *expect, &out->expect);
  }
}

bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// The code unit of a JSON escape "\uXXXX" at `text[at]`, or -1.
int EscapedCodeUnit(std::string_view text, std::size_t at) {
  if (at + 6 > text.size() || text[at] != '\\' || text[at + 1] != 'u') return -1;
  if (!std::all_of(text.begin() + at + 2, text.begin() + at + 6, IsHex)) return -1;
  return std::stoi(std::string(text.substr(at + 2, 4)), nullptr, 16);
}

// A JSON document (its first character, after a BOM and blanks, is '{'). Only for JSON is the
// string scan below exact: YAML has comments, single quotes and plain scalars holding '"'.
bool LooksLikeJson(std::string_view text) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  if (text.starts_with(kBom)) text.remove_prefix(kBom.size());
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '{';
}

// JSON writes characters outside the BMP as a UTF-16 surrogate pair ("\ud83d\ude00", Python's
// default), which yaml-cpp rejects; YAML spells them "\U0001f600". Only escapes inside strings
// are rewritten. Columns after a rewritten pair shift by two.
std::string JoinSurrogatePairs(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!in_string || c != '\\') {
      if (c == '"') in_string = !in_string;
      out += c;
      continue;
    }
    const int high = EscapedCodeUnit(text, i);
    const int low = EscapedCodeUnit(text, i + 6);
    if (high >= 0xD800 && high <= 0xDBFF && low >= 0xDC00 && low <= 0xDFFF) {
      out += fmt::format("\\U{:08x}", 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00));
      i += 11;
    } else {
      out += text.substr(i, 2);  // any other escape, including \" and \\, passes through
      ++i;
    }
  }
  return out;
}

LoadError YamlError(std::string_view file, const YAML::Mark& mark, std::string message) {
  const bool known = !mark.is_null();
  return LoadError{.file = std::string(file),
                   .line = known ? mark.line + 1 : 0,
                   .column = known ? mark.column + 1 : 0,
                   .path = "",
                   .message = std::move(message)};
}

// The errors after the first, `first`, of `document`: each pass reads it past every error
// found so far and stops at the next one.
void FurtherErrors(const YAML::Node& document, std::string_view file, LoadError first,
                   std::size_t max_errors, std::vector<LoadError>& further,
                   std::optional<Dialect> matrix) {
  std::vector<LoadError> found{std::move(first)};
  while (found.size() < max_errors) {
    Reader reader(file, found);
    ParsedScenario ignored;
    YAML::Mark name_mark = YAML::Mark::null_mark();
    ReadDocument(reader, Field{document, "", document.Mark()}, &ignored.scenario, &name_mark,
                 matrix);
    if (reader.ok()) break;
    found.push_back(*reader.error());
  }
  further.insert(further.end(), std::make_move_iterator(found.begin() + 1),
                 std::make_move_iterator(found.end()));
}

// What a file of one kind holds, for the errors about an empty file or a second document.
struct OneKind {
  std::string_view expected;  // "a scenario (faultline: 1, name: ...)"
  std::string_view holds;     // "a scenario file holds exactly one scenario"
};

// The one document of `text`: YAML, or JSON (YAML's flow subset).
std::expected<YAML::Node, LoadError> OneDocument(std::string_view text, std::string_view file,
                                                 const ParseLimits& limits, OneKind kind) {
  const std::string yaml = LooksLikeJson(text) ? JoinSurrogatePairs(text) : std::string(text);
  auto loaded = LoadDocuments(yaml, limits);
  if (!loaded) {
    LoadError error = YamlError(file, loaded.error().mark, std::move(loaded.error().message));
    error.over_limit = loaded.error().over_limit;
    return std::unexpected(std::move(error));
  }
  std::vector<YAML::Node>& documents = *loaded;
  // Empty documents (a trailing "---") carry nothing; only a second one is an error.
  std::erase_if(documents, [](const YAML::Node& document) { return document.IsNull(); });
  if (documents.empty()) {
    return std::unexpected(YamlError(file, YAML::Mark(),
                                     fmt::format("the file is empty; expected {}", kind.expected)));
  }
  if (documents.size() > 1) {
    return std::unexpected(
        YamlError(file, documents[1].Mark(),
                  fmt::format("a second YAML document starts here; {}", kind.holds)));
  }
  return std::move(documents[0]);
}

// `parse()`, with yaml-cpp's syntax errors (it reports them by throwing) stopped here.
template <typename Parse>
auto CatchingYamlErrors(std::string_view file, Parse parse) -> decltype(parse()) {
  try {
    return parse();
  } catch (const YAML::DeepRecursion& e) {
    return std::unexpected(YamlError(file, e.mark, "invalid YAML: nesting is too deep"));
  } catch (const YAML::Exception& e) {
    return std::unexpected(YamlError(file, e.mark, "invalid YAML: " + e.msg));
  } catch (const std::exception& e) {
    return std::unexpected(
        YamlError(file, YAML::Mark::null_mark(), fmt::format("cannot read: {}", e.what())));
  }
}

// The events every scripted response streams, in all, within ParseLimits::max_stream_events:
// the plan renders each ahead of time. The error when they are more (over_limit), else nullopt.
std::optional<LoadError> OverStreamEvents(std::string_view file, const YAML::Node& document,
                                          const Scenario& scenario, const ParseLimits& limits) {
  std::size_t events = 0;
  const auto add = [&](const ResponseSpec& response) { events += StreamEvents(response.content); };
  std::ranges::for_each(scenario.responses, add);
  if (scenario.chaos) {
    for (const Chaos::Choice& choice : scenario.chaos->faults) add(choice.response);
    add(scenario.chaos->otherwise);
  }
  for (const Route& route : scenario.routes) std::ranges::for_each(route.responses, add);
  if (events <= limits.max_stream_events) return std::nullopt;
  YAML::Mark at = document.Mark();
  for (const char* key : {"routes", "chaos", "responses"}) {
    if (document[key].IsDefined()) at = document[key].Mark();
  }
  LoadError error = YamlError(
      file, at,
      fmt::format("the responses stream {} events in all (content, reasoning and tool-call "
                  "deltas, injected faults, drip writes); at most {} (a larger "
                  "chunk_size or a shorter text)",
                  events, limits.max_stream_events));
  error.over_limit = true;
  return error;
}

std::expected<ParsedScenario, LoadError> ParseDocuments(
    std::string_view text, std::string_view file, const ParseLimits& limits,
    std::vector<LoadError>* further, std::size_t max_errors, std::optional<Dialect> matrix) {
  auto document = OneDocument(
      text, file, limits,
      {"a scenario (faultline: 1, name: ...)", "a scenario file holds exactly one scenario"});
  if (!document) return std::unexpected(std::move(document.error()));
  const std::vector<YAML::Node> documents{std::move(*document)};
  Reader reader(file);
  ParsedScenario parsed;
  YAML::Mark name_mark = YAML::Mark::null_mark();
  ReadDocument(reader, Field{documents[0], "", documents[0].Mark()}, &parsed.scenario, &name_mark,
               matrix);
  if (reader.ok()) {
    if (auto over = OverStreamEvents(file, documents[0], parsed.scenario, limits)) {
      return std::unexpected(std::move(*over));
    }
  }
  if (!reader.ok()) {
    if (further != nullptr && max_errors > 1) {
      FurtherErrors(documents[0], file, *reader.error(), max_errors, *further, matrix);
    }
    return std::unexpected(*reader.error());
  }
  parsed.scenario.source = std::string(file);
  parsed.name_line = name_mark.is_null() ? 0 : name_mark.line + 1;
  parsed.name_column = name_mark.is_null() ? 0 : name_mark.column + 1;
  parsed.scenario.source_line = parsed.name_line;
  return parsed;
}

}  // namespace

void ReadResponses(Reader& reader, const Field& field, Dialect dialect,
                   std::vector<ResponseSpec>* out) {
  std::optional<std::vector<Field>> items = reader.ReadList(field);
  if (!items) return;
  if (items->empty()) reader.Fail(field, "expected at least one response");
  for (std::size_t i = 0; i < items->size() && reader.ok(); ++i) {
    if (i > 0 && out->back().repeat == 0) {
      reader.Fail((*items)[i],
                  fmt::format("this response is never sent: responses[{}] has 'repeat: 0' and "
                              "answers every remaining attempt",
                              i - 1));
      return;
    }
    ResponseSpec response;
    ReadResponse(reader, (*items)[i], dialect, ResponsePlace::kResponses, &response);
    out->push_back(std::move(response));
  }
}

std::expected<ParsedScenario, LoadError> ParseScenarioWithPosition(
    std::string_view text, std::string_view file, const ParseLimits& limits,
    std::vector<LoadError>* further, std::size_t max_errors, std::optional<Dialect> matrix) {
  return CatchingYamlErrors(
      file, [&] { return ParseDocuments(text, file, limits, further, max_errors, matrix); });
}

std::vector<Dialect> MatrixDialects(std::string_view text, const ParseLimits& limits) {
  std::vector<Dialect> dialects;
  // Nearly every file has no such key: skip parsing it twice (the parse proper follows).
  if (text.find("dialects") == std::string_view::npos) return dialects;
  try {
    auto document = OneDocument(text, "", limits, {"", ""});
    if (!document || !document->IsMap()) return dialects;
    const YAML::Node list = (*document)["dialects"];
    if (!list) return dialects;
    // A list that is not valid is read once, so that the parse reports what is wrong with it.
    const std::vector<Dialect> invalid{Dialect::kOpenAiChat};
    if (!list.IsSequence() || list.size() == 0) return invalid;
    for (const YAML::Node& item : list) {
      const std::optional<Dialect> dialect =
          item.IsScalar() ? ParseDialect(item.Scalar()) : std::nullopt;
      if (!dialect || std::ranges::find(dialects, *dialect) != dialects.end()) return invalid;
      dialects.push_back(*dialect);
    }
  } catch (const YAML::Exception&) {
    return {};
  }
  return dialects;
}

}  // namespace internal

std::expected<Scenario, LoadError> ParseScenario(std::string_view text, std::string_view file,
                                                 const ParseLimits& limits) {
  auto parsed = internal::ParseScenarioWithPosition(text, file, limits);
  if (!parsed) return std::unexpected(std::move(parsed.error()));
  return std::move(parsed->scenario);
}

std::expected<PolicySpec, LoadError> ParsePolicyDocument(std::string_view text,
                                                         std::string_view file,
                                                         const ParseLimits& limits) {
  return internal::CatchingYamlErrors(file, [&]() -> std::expected<PolicySpec, LoadError> {
    auto document = internal::OneDocument(
        text, file, limits,
        {"a retry policy (docs/policy.md)", "a policy file holds exactly one policy"});
    if (!document) return std::unexpected(std::move(document.error()));
    internal::Reader reader(file);
    std::optional<PolicySpec> spec =
        internal::ReadPolicy(reader, internal::Field{*document, "", document->Mark()});
    if (!reader.ok()) return std::unexpected(*reader.error());
    return std::move(*spec);
  });
}

std::expected<ProxyRules, LoadError> ParseProxyRules(std::string_view text, std::string_view file,
                                                     const ParseLimits& limits) {
  return internal::CatchingYamlErrors(file, [&]() -> std::expected<ProxyRules, LoadError> {
    auto document = internal::OneDocument(
        text, file, limits,
        {"proxy fault rules (faultline: 1, rules: [...])", "a rule file holds exactly one list"});
    if (!document) return std::unexpected(std::move(document.error()));
    internal::Reader reader(file);
    ProxyRules rules;
    internal::ReadProxyRules(reader, internal::Field{*document, "", document->Mark()}, &rules);
    if (!reader.ok()) return std::unexpected(*reader.error());
    rules.source = std::string(file);
    return rules;
  });
}

}  // namespace faultline::scenario
