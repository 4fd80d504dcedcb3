// Reading a `faultline proxy` rule file: which requests get which fault. A rule's `response` is
// read by the scenario loader's own ReadResponse, so it means, and is checked, as a scenario's
// response entry; what a proxy cannot do to live traffic is refused here, at its key.
#include <algorithm>
#include <limits>
#include <vector>

#include "fmt/format.h"
#include "scenarios/loader_internal.h"
#include "scenarios/loader_keys.h"

namespace faultline::scenario::internal {
namespace {

// What a rule may do to the upstream's answer as it passes (everything else is the upstream's).
constexpr std::string_view kLiveResponseKeys[] = {"headers_delay", "retry_after", "retry_after_ms",
                                                  "should_retry",  "headers",     "content",
                                                  "stream"};

bool Contains(std::span<const std::string_view> names, std::string_view name) {
  return std::ranges::find(names, name) != names.end();
}

// One item, or a list of them.
std::vector<Field> OneOrMany(Reader& reader, const Field& field) {
  if (!field.node.IsSequence()) return {field};
  return reader.ReadList(field).value_or(std::vector<Field>{});
}

void ReadMatch(Reader& reader, const Field& field, ProxyMatch* out) {
  std::optional<Map> map = reader.ReadMap(field, keys::kProxyMatch);
  if (!map) return;
  if (std::optional<Field> path = reader.Present(*map, "path")) {
    out->path = reader.ReadString(*path);
    if (out->path && !out->path->starts_with('/')) {
      reader.Fail(*path, fmt::format("expected a request path such as \"/v1/chat/completions\" "
                                     "(or a prefix ending in '*'), got {}",
                                     Describe(path->node)));
    }
  }
  if (std::optional<Field> dialect = reader.Present(*map, "dialect")) {
    for (const Field& item : OneOrMany(reader, *dialect)) {
      if (std::optional<std::size_t> index = reader.ReadName(item, keys::kDialectNames)) {
        out->dialects.push_back(static_cast<Dialect>(*index));
      }
    }
  }
  if (std::optional<Field> requests = reader.Present(*map, "requests")) {
    for (const Field& item : OneOrMany(reader, *requests)) {
      if (std::optional<std::int64_t> index =
              reader.ReadInt(item, 1, std::numeric_limits<std::int64_t>::max())) {
        out->requests.push_back(static_cast<std::uint64_t>(*index));
      }
    }
  }
}

// The fault's own keys that live traffic cannot take.
void CheckLiveFaults(Reader& reader, const Field& faults) {
  for (const Field& item : reader.ReadList(faults).value_or(std::vector<Field>{})) {
    std::optional<Map> fault = reader.ReadMap(item, keys::kFault);
    if (!fault) return;
    RejectKey(reader, *fault, "heartbeat",
              "a stall in live traffic sends nothing; the proxy writes no heartbeats");
    if (std::optional<Field> inject = reader.Present(*fault, "inject");
        inject && inject->node.IsScalar() && inject->node.Scalar() == "sequence_gap") {
      reader.Fail(*inject,
                  "the proxy does not renumber the upstream's events, so it cannot "
                  "inject a sequence_gap; use invalid_json or provider_error");
    }
  }
}

// A rule that acts on the upstream's answer: only what the proxy can do to it as it passes.
void CheckLive(Reader& reader, const Map& response) {
  if (response.Has("status")) {
    reader.Fail(*response.GetKey("status"),
                "a rule with a 2xx status acts on the upstream's answer as it passes, whose "
                "status is the upstream's: leave 'status' out, or give a non-2xx status to "
                "answer in the upstream's place");
  }
  for (std::string_view key : keys::kResponse) {
    if (Contains(kLiveResponseKeys, key)) continue;
    RejectKey(reader, response, key,
              fmt::format("'{}' is the upstream's to write: a rule without a non-2xx status acts "
                          "on the upstream's answer as it passes (headers_delay, retry_after, "
                          "retry_after_ms, should_retry, headers, content.faults, content.end)",
                          key));
  }
  std::optional<OverlayContent> content =
      ReadOverlayContent(reader, response, "upstream", "a rule's content");
  if (!content) return;
  const Map* map = &content->map;
  if (std::optional<Field> faults = reader.Present(*map, "faults"))
    CheckLiveFaults(reader, *faults);
  if (std::optional<Field> end = reader.Present(*map, "end"); end && end->node.IsMap()) {
    if (std::optional<Map> end_map = reader.ReadMap(*end, keys::kEnd)) {
      RejectKey(reader, *end_map, "heartbeat",
                "a stall in live traffic sends nothing; the proxy writes no heartbeats");
    }
  }
}

// Whether some dialect takes the entry: then an error in another is that dialect's.
bool ReadsInSomeDialect(const std::string& file, const Field& field) {
  return std::ranges::any_of(AllDialects(), [&](Dialect dialect) {
    Reader probe(file);
    ResponseSpec spec;
    ReadResponse(probe, field, dialect, ResponsePlace::kResponses, &spec);
    return probe.ok();
  });
}

// The response entry as every dialect the rule may meet reads it: what is valid in one dialect
// (an Anthropic `ping`, a Responses error shape) may not be in another.
void ReadRuleResponse(Reader& reader, const Field& field, const ProxyMatch& match,
                      ResponseSpec* out) {
  const std::span<const Dialect> dialects =
      match.dialects.empty() ? AllDialects() : std::span<const Dialect>(match.dialects);
  for (std::size_t i = 0; i < dialects.size() && reader.ok(); ++i) {
    Reader probe(reader.file());
    ResponseSpec spec;
    ReadResponse(probe, field, dialects[i], ResponsePlace::kResponses, &spec);
    if (!probe.ok()) {
      const LoadError& error = *probe.error();
      YAML::Mark mark;
      mark.line = error.line - 1;
      mark.column = error.column - 1;
      std::string message = error.message;
      if (match.dialects.empty() && ReadsInSomeDialect(reader.file(), field)) {
        message += fmt::format(
            " (the rule matches every dialect, {} among them; "
            "'match: {{dialect: ...}}' narrows it)",
            ToString(dialects[i]));
      }
      reader.Fail(Field{YAML::Node(), error.path, mark}, std::move(message));
      return;
    }
    if (i == 0) *out = std::move(spec);
  }
}

void ReadRule(Reader& reader, const Field& field, std::size_t index, ProxyRule* out) {
  std::optional<Map> map = reader.ReadMap(field, keys::kProxyRule);
  if (!map) return;
  out->line = field.mark.is_null() ? 0 : field.mark.line + 1;
  out->name = fmt::format("rule-{}", index + 1);
  reader.Get(*map, "name", &out->name);
  if (std::optional<Field> match = reader.Present(*map, "match")) {
    ReadMatch(reader, *match, &out->match);
  }
  if (std::optional<Field> probability = reader.Present(*map, "probability")) {
    out->probability = reader.ReadNumber(*probability, 0, 1).value_or(0);
  }
  std::optional<Field> response = reader.Require(*map, "response");
  if (!response) return;
  std::optional<Map> response_map = reader.ReadMap(*response, keys::kResponse);
  if (!response_map) return;
  RejectKey(reader, *response_map, "repeat",
            "'repeat' has no meaning in a rule: 'match' and 'probability' say which requests it "
            "answers");
  if (!reader.ok()) return;
  ReadRuleResponse(reader, *response, out->match, &out->response);
  if (!reader.ok()) return;
  const ResponseSpec& spec = out->response;
  out->answers =
      spec.connection != ConnectionFault::kNone || spec.status < 200 || spec.status > 299;
  if (!out->answers) CheckLive(reader, *response_map);
}

}  // namespace

void ReadProxyRules(Reader& reader, const Field& document, ProxyRules* out) {
  std::optional<Map> map = reader.ReadMap(document, keys::kProxyDocument);
  if (!map) return;
  if (std::optional<Field> version = reader.Require(*map, "faultline")) {
    reader.ReadInt(*version, kSchemaVersion, kSchemaVersion);
  }
  std::optional<Field> rules = reader.Require(*map, "rules");
  if (!rules) return;
  std::optional<std::vector<Field>> items = reader.ReadList(*rules);
  if (!items) return;
  for (std::size_t i = 0; i < items->size() && reader.ok(); ++i) {
    ProxyRule rule;
    ReadRule(reader, (*items)[i], i, &rule);
    out->rules.push_back(std::move(rule));
  }
}

}  // namespace faultline::scenario::internal
