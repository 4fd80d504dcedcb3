// Reading what a scenario expects (`expect:`) and the policy it runs the reference client with
// (`policy:`).
#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include "fmt/format.h"
#include "scenarios/loader_internal.h"
#include "scenarios/loader_keys.h"

namespace faultline::scenario::internal {
namespace {

bool IsFailureCode(std::string_view code) {
  return !code.empty() && code.front() >= 'A' && code.front() <= 'Z' &&
         std::all_of(code.begin(), code.end(), [](char c) {
           return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
         });
}

void ReadFailureClass(Reader& reader, const Map& map, std::optional<std::string>* out) {
  if (std::optional<Field> field = reader.Present(map, "failure_class")) {
    if (std::optional<std::size_t> index = reader.ReadName(*field, keys::kFailureClassNames)) {
      *out = std::string(keys::kFailureClassNames[*index]);
    }
  }
}

void ReadFailureCode(Reader& reader, const Map& map, std::optional<std::string>* out) {
  if (std::optional<Field> code = reader.Present(map, "failure_code")) {
    *out = reader.ReadString(*code);
    if (*out && !IsFailureCode(**out)) {
      reader.Fail(*code, fmt::format("expected an upper-case failure code such as RATE_LIMIT, "
                                     "got {}",
                                     Describe(code->node)));
    }
  }
}

std::optional<ExpectFailure> ReadFailureFacts(Reader& reader, const Field& field) {
  std::optional<Map> map = reader.ReadMap(field, keys::kExpectFailure);
  if (!map) return std::nullopt;
  ExpectFailure facts;
  reader.Get(*map, "status", &facts.status, 100, 599);
  if (std::optional<Field> hint = reader.Present(*map, "retry_after")) {
    if (hint->node.IsScalar() && hint->node.Scalar() == "none") {
      facts.no_retry_after = true;
    } else if (!hint->node.IsScalar() || !ParseDuration(hint->node.Scalar())) {
      reader.Fail(*hint, fmt::format("expected a duration such as \"1s\", or none, got {}",
                                     Describe(hint->node)));
    } else {
      facts.retry_after = reader.ReadDuration(*hint, Sign::kNonNegative);
    }
  }
  reader.Get(*map, "request_id", &facts.request_id);
  if (!reader.ok()) return std::nullopt;
  return facts;
}

std::vector<ExpectAttemptFailure> ReadAttemptFailures(Reader& reader, const Field& field) {
  std::vector<ExpectAttemptFailure> out;
  std::optional<std::vector<Field>> items = reader.ReadList(field);
  for (std::size_t i = 0; items && i < items->size() && reader.ok(); ++i) {
    std::optional<Map> map = reader.ReadMap((*items)[i], keys::kExpectAttemptFailure);
    if (!map) break;
    ExpectAttemptFailure failure;
    ReadFailureClass(reader, *map, &failure.failure_class);
    ReadFailureCode(reader, *map, &failure.failure_code);
    out.push_back(std::move(failure));
  }
  return out;
}

std::vector<DelayRange> ReadRetryDelays(Reader& reader, const Field& field) {
  std::vector<DelayRange> out;
  std::optional<std::vector<Field>> items = reader.ReadList(field);
  for (std::size_t i = 0; items && i < items->size() && reader.ok(); ++i) {
    std::optional<Map> map = reader.ReadMap((*items)[i], keys::kDelayRange);
    if (!map) break;
    DelayRange range;
    if (std::optional<Field> min = reader.Require(*map, "min")) {
      range.min = reader.ReadDuration(*min, Sign::kNonNegative).value_or(Duration{0});
    }
    if (std::optional<Field> max = reader.Require(*map, "max")) {
      range.max = reader.ReadDuration(*max, Sign::kNonNegative).value_or(Duration{0});
      if (reader.ok() && range.max < range.min) {
        reader.Fail(*max, "expected 'max' to be at least 'min'");
      }
    }
    out.push_back(range);
  }
  return out;
}

std::vector<std::string> ReadHeaderNames(Reader& reader, const Map& map, std::string_view key) {
  std::vector<std::string> names;
  std::optional<Field> field = reader.Present(map, key);
  if (!field) return names;
  std::optional<std::vector<Field>> items = reader.ReadList(*field);
  for (std::size_t i = 0; items && i < items->size() && reader.ok(); ++i) {
    std::optional<std::string> name = reader.ReadString((*items)[i]);
    if (name && !IsHeaderName(*name)) {
      reader.Fail((*items)[i],
                  fmt::format("expected a header name, got {}", Describe((*items)[i].node)));
    }
    if (name) names.push_back(*name);
  }
  return names;
}

// `thresholds`: a list of expressions (threshold.h), each an error at its own item.
std::vector<Threshold> ReadThresholds(Reader& reader, const Field& field) {
  std::vector<Threshold> out;
  std::optional<std::vector<Field>> items = reader.ReadList(field);
  for (std::size_t i = 0; items && i < items->size() && reader.ok(); ++i) {
    std::optional<std::string> text = reader.ReadString((*items)[i]);
    if (!text) continue;
    auto threshold = ParseThreshold(*text);
    if (!threshold) {
      reader.Fail((*items)[i], fmt::format("bad threshold: {}", threshold.error()));
      continue;
    }
    out.push_back(std::move(*threshold));
  }
  return out;
}

void ReadExpectExtensions(Reader& reader, const Map& map, Expect* out) {
  if (std::optional<Field> failure = reader.Present(map, "failure")) {
    out->failure = ReadFailureFacts(reader, *failure);
  }
  if (std::optional<Field> attempts = reader.Present(map, "attempt_failures")) {
    out->attempt_failures = ReadAttemptFailures(reader, *attempts);
  }
  if (std::optional<Field> delays = reader.Present(map, "retry_delays")) {
    out->retry_delays = ReadRetryDelays(reader, *delays);
  }
  reader.Get(map, "chunks", &out->chunks, 0, kMaxInt);
  reader.Get(map, "requests", &out->requests, 0, kMaxInt);
  if (std::optional<Field> thresholds = reader.Present(map, "thresholds")) {
    out->thresholds = ReadThresholds(reader, *thresholds);
  }
  if (std::optional<Field> headers = reader.Present(map, "request_headers")) {
    if (std::optional<Map> names = reader.ReadMap(*headers, keys::kRequestHeaders)) {
      out->headers_present = ReadHeaderNames(reader, *names, "present");
      out->headers_same = ReadHeaderNames(reader, *names, "same");
    }
  }
}

// A YAML value as JSON, recording each value's position by its JSON path. Scalars resolve by
// the YAML 1.2 core schema, as everywhere in the loader (quoted scalars stay strings).
// `field.path` is the document's ("policy.backoff"); positions are keyed inside the policy, whose
// own path is `root` ("policy" in a scenario, "" in a policy file).
std::optional<nlohmann::json> ToJson(Reader& reader, const Field& field, std::string_view root,
                                     PolicySpec* spec) {
  std::string_view inside = field.path;
  inside.remove_prefix(std::min(inside.size(), root.size()));
  if (inside.starts_with('.')) inside.remove_prefix(1);
  spec->positions.push_back({std::string(inside), field.mark.line + 1, field.mark.column + 1});
  const YAML::Node& node = field.node;
  if (node.IsMap()) {
    nlohmann::json object = nlohmann::json::object();
    for (auto it = node.begin(); it != node.end() && reader.ok(); ++it) {
      const Field key{it->first, field.path, it->first.Mark()};
      std::optional<std::string> name = reader.ReadString(key);
      if (!name) return std::nullopt;
      if (object.contains(*name)) {
        reader.Fail(key, fmt::format("'{}' is given twice", *name));
        return std::nullopt;
      }
      const std::string path = ChildPath(field.path, *name);
      const Field value{it->second, path, it->second.IsNull() ? key.mark : it->second.Mark()};
      std::optional<nlohmann::json> converted = ToJson(reader, value, root, spec);
      if (!converted) return std::nullopt;
      object[*name] = std::move(*converted);
    }
    return object;
  }
  if (node.IsSequence()) {
    nlohmann::json array = nlohmann::json::array();
    for (std::size_t i = 0; i < node.size() && reader.ok(); ++i) {
      std::optional<nlohmann::json> item =
          ToJson(reader, Field{node[i], ItemPath(field.path, i), node[i].Mark()}, root, spec);
      if (!item) return std::nullopt;
      array.push_back(std::move(*item));
    }
    return array;
  }
  switch (Classify(node)) {
    case ScalarType::kNull:
      return nlohmann::json(nullptr);
    case ScalarType::kBool:
      return nlohmann::json(reader.ReadBool(field).value_or(false));
    case ScalarType::kInt:
      if (auto value = reader.ReadInt(field, std::numeric_limits<std::int64_t>::min(),
                                      std::numeric_limits<std::int64_t>::max())) {
        return nlohmann::json(*value);
      }
      return std::nullopt;
    case ScalarType::kFloat:
      if (auto value = reader.ReadNumber(field, -1e300, 1e300)) return nlohmann::json(*value);
      return std::nullopt;
    case ScalarType::kString:
      break;
  }
  return nlohmann::json(node.Scalar());
}

}  // namespace

void ReadExpect(Reader& reader, const Field& field, Expect* out) {
  std::optional<Map> map = reader.ReadMap(field, keys::kExpect);
  if (!map) return;
  if (std::optional<Field> outcome = reader.Present(*map, "outcome")) {
    if (std::optional<std::size_t> index = reader.ReadName(*outcome, keys::kOutcomeNames)) {
      out->outcome = std::string(keys::kOutcomeNames[*index]);
    }
  }
  reader.Get(*map, "attempts", &out->attempts, 1, kMaxInt);
  reader.Get(*map, "text", &out->text);
  ReadFailureClass(reader, *map, &out->failure_class);
  ReadFailureCode(reader, *map, &out->failure_code);
  ReadExpectExtensions(reader, *map, out);
  if (reader.ok() && out->outcome == "committed") {
    constexpr std::string_view kReason = "'{}' describes a failure, but outcome is committed";
    for (std::string_view key : {"failure_class", "failure_code", "failure"}) {
      RejectKey(reader, *map, key, fmt::format(kReason, key));
    }
  }
}

std::optional<PolicySpec> ReadPolicy(Reader& reader, const Field& field) {
  if (!field.node.IsMap()) {
    reader.Fail(field, fmt::format("expected a retry policy (a mapping, docs/policy.md), got {}",
                                   Describe(field.node)));
    return std::nullopt;
  }
  PolicySpec spec;
  std::optional<nlohmann::json> json = ToJson(reader, field, field.path, &spec);
  if (!json) return std::nullopt;
  spec.json = json->dump();
  return spec;
}

}  // namespace faultline::scenario::internal
