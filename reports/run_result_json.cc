// ToJson / RunResultFromJson. The writer and the strict reader list the same keys in the same
// order; reports/schema/run-result.schema.json describes them and a test keeps the three in step.
#include <ostream>
#include <string>
#include <string_view>

#include "fmt/format.h"
#include "reports/json_reader.h"
#include "reports/run_result.h"

namespace faultline::report {
namespace {

using internal::IndexPath;
using internal::JoinPath;
using internal::ObjectReader;
using nlohmann::json;

void PutOptional(json& out, const char* key, const std::optional<double>& value) {
  if (value) out[key] = *value;
}

json CheckToJson(const CheckResult& check) {
  return {{"id", check.id},
          {"statement", check.statement},
          {"status", ToString(check.status)},
          {"evidence", check.evidence},
          {"severity", ToString(check.severity)}};
}

json SubjectErrorToJson(const SubjectError& error) {
  json out = {{"kind", error.kind}};
  if (error.exit_status) out["exit_status"] = *error.exit_status;
  if (error.signal) out["signal"] = *error.signal;
  out["stderr_tail"] = error.stderr_tail;
  return out;
}

json MetricsToJson(const Metrics& metrics) {
  json out = json::object();
  PutOptional(out, "first_token_ms", metrics.first_token_ms);
  PutOptional(out, "terminal_ms", metrics.terminal_ms);
  PutOptional(out, "forced_minimum_ms", metrics.forced_minimum_ms);
  PutOptional(out, "recovery_overhead_ms", metrics.recovery_overhead_ms);
  out["attempts"] = metrics.attempts;
  out["wasted_bytes"] = metrics.wasted_bytes;
  out["wasted_tokens"] = metrics.wasted_tokens;
  if (!metrics.calls.empty()) {
    json calls = json::array();
    for (const CallMetrics& call : metrics.calls) {
      json item = {{"call", call.call}};
      PutOptional(item, "first_token_ms", call.first_token_ms);
      PutOptional(item, "terminal_ms", call.terminal_ms);
      item["attempts"] = call.attempts;
      calls.push_back(std::move(item));
    }
    out["calls"] = std::move(calls);
  }
  return out;
}

json ScenarioToJson(const ScenarioResult& slim) {
  const FullRun full(slim);
  const ScenarioResult& scenario = *full;
  json checks = json::array();
  for (const CheckResult& check : scenario.checks) checks.push_back(CheckToJson(check));
  json out = {{"name", scenario.name},
              {"description", scenario.description},
              {"source", scenario.source},
              {"source_line", scenario.source_line},
              {"dialect", scenario.dialect},
              {"tags", scenario.tags},
              {"world", scenario.world},
              {"seed", scenario.seed},
              {"repetition", scenario.repetition},
              {"verdict", ToString(scenario.verdict)}};
  if (!scenario.error.empty()) out["error"] = scenario.error;
  if (scenario.subject_error) out["subject_error"] = SubjectErrorToJson(*scenario.subject_error);
  out["black_box"] = scenario.black_box;
  out["checks"] = std::move(checks);
  out["metrics"] = MetricsToJson(scenario.metrics);
  out["fingerprint"] = scenario.fingerprint;
  out["wall_ms"] = scenario.wall_ms;
  out["started_ms"] = scenario.started_ms;
  out["trace"] = scenario.trace;
  return out;
}

json PercentilesToJson(const LatencySummary::Percentiles& p) {
  return {{"p50", p.p50}, {"p95", p.p95}, {"p99", p.p99}};
}

json LatencyToJson(const LatencySummary& summary) {
  json out = {{"name", summary.name},
              {"world", summary.world},
              {"runs", summary.runs},
              {"samples", summary.samples}};
  if (summary.first_token_ms) out["first_token_ms"] = PercentilesToJson(*summary.first_token_ms);
  if (summary.terminal_ms) out["terminal_ms"] = PercentilesToJson(*summary.terminal_ms);
  if (summary.recovery_overhead_ms) {
    out["recovery_overhead_ms"] = PercentilesToJson(*summary.recovery_overhead_ms);
  }
  return out;
}

json ThresholdToJson(const ThresholdResult& threshold) {
  json out = {{"name", threshold.name},
              {"world", threshold.world},
              {"expression", threshold.expression},
              {"origin", threshold.origin},
              {"status", ToString(threshold.status)}};
  PutOptional(out, "value", threshold.value);
  out["unit"] = threshold.unit;
  out["samples"] = threshold.samples;
  out["evidence"] = threshold.evidence;
  return out;
}

json InterruptionToJson(const Interruption& interruption) {
  return {{"reason", interruption.reason}, {"planned_runs", interruption.planned_runs}};
}

// ---- reading ----

// Calls `read(element, path)` for every element of the array at `key`.
template <typename Read>
void ReadArray(ObjectReader& reader, std::string_view key, Read read) {
  const json* array = reader.Field(key);
  if (array == nullptr) return;
  if (!array->is_array()) {
    return reader.Fail(key, fmt::format("expected an array, got {}", internal::TypeName(*array)));
  }
  const std::string path = JoinPath(reader.path(), key);
  for (std::size_t i = 0; i < array->size() && reader.ok(); ++i) {
    read((*array)[i], IndexPath(path, i));
  }
}

template <typename Enum>
void ReadEnum(ObjectReader& reader, std::string_view key, Enum& out,
              std::optional<Enum> (*parse)(std::string_view), std::string_view choices) {
  std::string text;
  reader.Read(key, text);
  if (!reader.ok()) return;
  auto value = parse(text);
  if (!value) return reader.Fail(key, fmt::format("expected one of {}, got \"{}\"", choices, text));
  out = *value;
}

CheckResult ReadCheck(const json& in, std::string path, std::string& error) {
  CheckResult check;
  ObjectReader reader(in, std::move(path), error);
  reader.Read("id", check.id);
  reader.Read("statement", check.statement);
  ReadEnum(reader, "status", check.status, &ParseCheckStatus, "pass|fail|n/a");
  reader.Read("evidence", check.evidence);
  if (reader.OptionalField("severity") != nullptr) {
    ReadEnum(reader, "severity", check.severity, &ParseSeverity, "violation|advisory");
  }
  reader.Finish();
  return check;
}

SubjectError ReadSubjectError(const json& in, std::string path, std::string& error) {
  SubjectError subject;
  ObjectReader reader(in, std::move(path), error);
  reader.Read("kind", subject.kind);
  if (const json* status = reader.OptionalField("exit_status"); status && status->is_number()) {
    subject.exit_status = status->get<int>();
  }
  if (const json* signal = reader.OptionalField("signal"); signal && signal->is_number()) {
    subject.signal = signal->get<int>();
  }
  reader.Read("stderr_tail", subject.stderr_tail);
  reader.Finish();
  return subject;
}

Metrics ReadMetrics(const json& in, std::string path, std::string& error) {
  Metrics metrics;
  ObjectReader reader(in, std::move(path), error);
  reader.ReadOptional("first_token_ms", metrics.first_token_ms);
  reader.ReadOptional("terminal_ms", metrics.terminal_ms);
  reader.ReadOptional("forced_minimum_ms", metrics.forced_minimum_ms);
  reader.ReadOptional("recovery_overhead_ms", metrics.recovery_overhead_ms);
  reader.Read("attempts", metrics.attempts);
  reader.Read("wasted_bytes", metrics.wasted_bytes);
  reader.Read("wasted_tokens", metrics.wasted_tokens);
  if (reader.OptionalField("calls") != nullptr) {
    ReadArray(reader, "calls", [&](const json& item, std::string item_path) {
      CallMetrics call;
      ObjectReader call_reader(item, std::move(item_path), error);
      call_reader.Read("call", call.call);
      call_reader.ReadOptional("first_token_ms", call.first_token_ms);
      call_reader.ReadOptional("terminal_ms", call.terminal_ms);
      call_reader.Read("attempts", call.attempts);
      call_reader.Finish();
      metrics.calls.push_back(call);
    });
  }
  reader.Finish();
  return metrics;
}

void ReadTrace(ObjectReader& reader, nlohmann::json& out) {
  const json* trace = reader.Field("trace");
  if (trace == nullptr) return;
  if (!trace->is_object() && !trace->is_null()) {
    return reader.Fail(
        "trace", fmt::format("expected an object or null, got {}", internal::TypeName(*trace)));
  }
  out = *trace;
}

ScenarioResult ReadScenario(const json& in, std::string path, std::string& error) {
  ScenarioResult s;
  ObjectReader reader(in, std::move(path), error);
  reader.Read("name", s.name);
  reader.Read("description", s.description);
  reader.Read("source", s.source);
  if (reader.OptionalField("source_line") != nullptr) reader.Read("source_line", s.source_line);
  reader.Read("dialect", s.dialect);
  reader.Read("tags", s.tags);
  reader.Read("world", s.world);
  reader.Read("seed", s.seed);
  reader.Read("repetition", s.repetition);
  ReadEnum(reader, "verdict", s.verdict, &ParseVerdict, "pass|fail|error");
  reader.ReadOptional("error", s.error);
  if (const json* subject = reader.OptionalField("subject_error")) {
    s.subject_error = ReadSubjectError(*subject, JoinPath(reader.path(), "subject_error"), error);
  }
  reader.Read("black_box", s.black_box);
  ReadArray(reader, "checks", [&](const json& item, std::string item_path) {
    s.checks.push_back(ReadCheck(item, std::move(item_path), error));
  });
  if (const json* metrics = reader.Field("metrics")) {
    s.metrics = ReadMetrics(*metrics, JoinPath(reader.path(), "metrics"), error);
  }
  reader.Read("fingerprint", s.fingerprint);
  reader.Read("wall_ms", s.wall_ms);
  if (reader.OptionalField("started_ms") != nullptr) reader.Read("started_ms", s.started_ms);
  ReadTrace(reader, s.trace);
  reader.Finish();
  return s;
}

void ReadInterruption(ObjectReader& parent, std::optional<Interruption>& out, std::string& error) {
  const json* value = parent.OptionalField("interrupted");
  if (value == nullptr) return;
  Interruption interruption;
  ObjectReader reader(*value, JoinPath(parent.path(), "interrupted"), error);
  reader.Read("reason", interruption.reason);
  reader.Read("planned_runs", interruption.planned_runs);
  if (reader.Finish()) out = std::move(interruption);
}

void ReadPercentiles(ObjectReader& parent, std::string_view key,
                     std::optional<LatencySummary::Percentiles>& out, std::string& error) {
  const json* value = parent.OptionalField(key);
  if (value == nullptr) return;
  LatencySummary::Percentiles p;
  ObjectReader reader(*value, JoinPath(parent.path(), key), error);
  reader.Read("p50", p.p50);
  reader.Read("p95", p.p95);
  reader.Read("p99", p.p99);
  if (reader.Finish()) out = p;
}

LatencySummary ReadLatency(const json& in, std::string path, std::string& error) {
  LatencySummary summary;
  ObjectReader reader(in, std::move(path), error);
  reader.Read("name", summary.name);
  reader.Read("world", summary.world);
  reader.Read("runs", summary.runs);
  summary.samples = summary.runs;  // results written before per-call samples: one per run
  if (reader.OptionalField("samples") != nullptr) reader.Read("samples", summary.samples);
  ReadPercentiles(reader, "first_token_ms", summary.first_token_ms, error);
  ReadPercentiles(reader, "terminal_ms", summary.terminal_ms, error);
  ReadPercentiles(reader, "recovery_overhead_ms", summary.recovery_overhead_ms, error);
  reader.Finish();
  return summary;
}

ThresholdResult ReadThreshold(const json& in, std::string path, std::string& error) {
  ThresholdResult threshold;
  ObjectReader reader(in, std::move(path), error);
  reader.Read("name", threshold.name);
  reader.Read("world", threshold.world);
  reader.Read("expression", threshold.expression);
  reader.Read("origin", threshold.origin);
  ReadEnum(reader, "status", threshold.status, &ParseCheckStatus, "pass|fail|n/a");
  reader.ReadOptional("value", threshold.value);
  reader.Read("unit", threshold.unit);
  reader.Read("samples", threshold.samples);
  reader.Read("evidence", threshold.evidence);
  reader.Finish();
  return threshold;
}

// `format` is read first: a result from a newer tool fails on its version, not on a new field.
void ReadFormat(ObjectReader& reader, int& format) {
  reader.Read("format", format);
  if (reader.ok() && format != kResultFormat) {
    reader.Fail("format", fmt::format("unsupported result format {} (this build reads format {})",
                                      format, kResultFormat));
  }
}

// `summary` is derived from the scenarios; when present it must agree with them.
void CheckSummary(ObjectReader& parent, const RunResult& result, std::string& error) {
  const json* value = parent.OptionalField("summary");
  if (value == nullptr || !parent.ok()) return;
  ObjectReader reader(*value, "summary", error);
  const std::pair<const char*, int> expected[] = {
      {"total", static_cast<int>(result.scenarios.size())},
      {"passed", result.passed()},
      {"failed", result.failed()},
      {"errors", result.errors()}};
  for (const auto& [key, count] : expected) {
    int stated = 0;
    reader.Read(key, stated);
    if (reader.ok() && stated != count) {
      reader.Fail(key, fmt::format("says {} but the scenarios give {}", stated, count));
    }
  }
  reader.Finish();
}

}  // namespace

namespace {

// The result document; its "scenarios" left empty unless `with_scenarios` (WriteJson writes them
// one at a time).
json Document(const RunResult& result, bool with_scenarios) {
  json scenarios = json::array();
  if (with_scenarios) {
    for (const ScenarioResult& scenario : result.scenarios) {
      scenarios.push_back(ScenarioToJson(scenario));
    }
  }
  json latency = json::array();
  for (const LatencySummary& summary : result.latency) latency.push_back(LatencyToJson(summary));
  json thresholds = json::array();
  for (const ThresholdResult& threshold : result.thresholds) {
    thresholds.push_back(ThresholdToJson(threshold));
  }
  json out = {{"format", result.format},
              {"tool_version", result.tool_version},
              {"started_at", result.started_at},
              {"subject", result.subject},
              {"world", result.world},
              {"seed", result.seed},
              {"shard", result.shard},
              {"summary",
               {{"total", result.scenarios.size()},
                {"passed", result.passed()},
                {"failed", result.failed()},
                {"errors", result.errors()}}},
              {"fingerprint", result.fingerprint},
              {"wall_ms", result.wall_ms},
              {"scenarios", std::move(scenarios)},
              {"latency", std::move(latency)},
              {"thresholds", std::move(thresholds)}};
  if (result.interrupted) out["interrupted"] = InterruptionToJson(*result.interrupted);
  if (!result.subject_options.empty()) out["subject_options"] = result.subject_options;
  return out;
}

// dump(2) with a stray invalid byte in evidence replaced: it must not make a report unwritable.
std::string Dump(const json& value) {
  return value.dump(2, ' ', false, json::error_handler_t::replace);
}

}  // namespace

nlohmann::json ToJson(const RunResult& result) { return Document(result, true); }

nlohmann::json ToJson(const ScenarioResult& run) { return ScenarioToJson(run); }

std::expected<ScenarioResult, std::string> ScenarioResultFromJson(const nlohmann::json& json) {
  std::string error;
  ScenarioResult run = ReadScenario(json, "", error);
  if (!error.empty()) return std::unexpected(error);
  return run;
}

std::string IndentJson(std::string_view compact, int depth) {
  std::string out;
  out.reserve(compact.size() + compact.size() / 4);
  const auto newline = [&](int level) {
    out += '\n';
    out.append(static_cast<std::size_t>(2 * level), ' ');
  };
  int level = depth;
  bool in_string = false;
  for (std::size_t i = 0; i < compact.size(); ++i) {
    const char c = compact[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < compact.size()) {
        out += compact[++i];  // an escaped character, a quote included, stays in the string
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        out += c;
        break;
      case '{':
      case '[':
        out += c;
        // dump(2) writes an empty object or array as "{}" or "[]", on one line.
        if (i + 1 < compact.size() && (compact[i + 1] == '}' || compact[i + 1] == ']')) {
          out += compact[++i];
        } else {
          newline(++level);
        }
        break;
      case '}':
      case ']':
        newline(--level);
        out += c;
        break;
      case ',':
        out += c;
        newline(level);
        break;
      case ':':
        out += ": ";
        break;
      default:
        out += c;
    }
  }
  return out;
}

void WriteJson(const RunResult& result, std::ostream& out) {
  const std::string head = Dump(Document(result, false));
  // Where the empty array stands: a raw newline occurs in a dump only between its tokens (never
  // inside a string, where it is escaped), so this text is the top-level key and nothing else.
  constexpr std::string_view kEmpty = "\n  \"scenarios\": []";
  const std::size_t at = head.find(kEmpty);
  if (result.scenarios.empty() || at == std::string::npos) {
    out << head << '\n';
    return;
  }
  out << std::string_view(head).substr(0, at) << "\n  \"scenarios\": [";
  for (std::size_t i = 0; i < result.scenarios.size(); ++i) {
    out << (i == 0 ? "\n    " : ",\n    ");
    // A slim run is copied from its spool, indented as dump(2) nests it, never parsed.
    const std::optional<DetailsRef>& details = result.scenarios[i].details;
    if (details && details->from) {
      if (auto compact = details->from->ReadJson(details->at, details->size)) {
        out << IndentJson(*compact, 2);
        continue;
      }
    }
    // Each run as dump(2) nests it: two levels deeper, so every line gains four spaces.
    const std::string run = Dump(ScenarioToJson(result.scenarios[i]));
    std::size_t start = 0;
    for (std::size_t newline = run.find('\n'); newline != std::string::npos;
         start = newline + 1, newline = run.find('\n', start)) {
      out << std::string_view(run).substr(start, newline + 1 - start) << "    ";
    }
    out << std::string_view(run).substr(start);
  }
  out << "\n  ]" << std::string_view(head).substr(at + kEmpty.size()) << '\n';
}

std::expected<RunResult, std::string> RunResultFromJson(const nlohmann::json& in) {
  std::string error;
  RunResult result;
  ObjectReader reader(in, "", error);
  ReadFormat(reader, result.format);
  reader.Read("tool_version", result.tool_version);
  reader.Read("started_at", result.started_at);
  reader.Read("subject", result.subject);
  reader.Read("world", result.world);
  reader.Read("seed", result.seed);
  reader.Read("shard", result.shard);
  reader.Read("fingerprint", result.fingerprint);
  reader.Read("wall_ms", result.wall_ms);
  ReadArray(reader, "scenarios", [&](const json& item, std::string path) {
    result.scenarios.push_back(ReadScenario(item, std::move(path), error));
  });
  ReadArray(reader, "latency", [&](const json& item, std::string path) {
    result.latency.push_back(ReadLatency(item, std::move(path), error));
  });
  if (reader.OptionalField("thresholds") != nullptr) {  // results written before thresholds
    ReadArray(reader, "thresholds", [&](const json& item, std::string path) {
      result.thresholds.push_back(ReadThreshold(item, std::move(path), error));
    });
  }
  ReadInterruption(reader, result.interrupted, error);
  if (reader.OptionalField("subject_options") != nullptr) {
    reader.Read("subject_options", result.subject_options);
  }
  CheckSummary(reader, result, error);
  if (!reader.Finish()) return std::unexpected(error);
  return result;
}

}  // namespace faultline::report
