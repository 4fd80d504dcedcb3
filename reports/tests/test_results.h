// Results shared by the reports tests: a small hand-built one with every field populated, the
// realistic fixture in tests/data/sample-result.json, and a minimal XML well-formedness checker
// for the JUnit and SVG outputs.
#pragma once

#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "reports/run_result.h"

namespace faultline::report::testing {

inline CheckResult Check(const std::string& id, CheckStatus status, std::string evidence = "") {
  return CheckResult{.id = id,
                     .statement = "statement of " + id,
                     .status = status,
                     .evidence = std::move(evidence)};
}

// A failed advisory check.
inline CheckResult Advisory(const std::string& id, std::string evidence) {
  CheckResult check = Check(id, CheckStatus::kFail, std::move(evidence));
  check.severity = Severity::kAdvisory;
  return check;
}

inline ScenarioResult Scenario(std::string name, Verdict verdict, std::vector<CheckResult> checks) {
  ScenarioResult s;
  s.name = std::move(name);
  s.description = "what " + s.name + " does";
  s.source = "<builtin>/" + s.name + ".yaml";
  s.source_line = 2;
  s.dialect = "openai-chat";
  s.tags = {"tag-a", "tag-b"};
  s.world = "virtual";
  s.seed = 7;
  s.verdict = verdict;
  s.checks = std::move(checks);
  s.metrics.attempts = 1;
  s.fingerprint = "00112233aabbccdd";
  s.wall_ms = 1.5;
  s.started_ms = 0.25;
  s.trace = nlohmann::json::object();
  return s;
}

// Three runs of rate-limit/x failing RETRY-004 (EXPECT-OUTCOME in the second too) with ADV-001 in
// each (seeds 100-102), server-error/y passing twice with ADV-004, and two clean passes (seven
// runs: an HTML report of collapsible sections, as a real run's).
inline RunResult FailuresAndAdvisories() {
  RunResult result;
  result.subject = "faultline-ref 0.1.0 (in-process)";
  result.world = "virtual";
  result.seed = 42;
  for (int repetition = 0; repetition < 3; ++repetition) {
    std::vector<CheckResult> checks = {Check("RETRY-004", CheckStatus::kFail,
                                             "early by " + std::to_string(10 + repetition) + " ms"),
                                       Advisory("ADV-001", "waited less than the Retry-After")};
    if (repetition == 1) checks.push_back(Check("EXPECT-OUTCOME", CheckStatus::kFail, "gave up"));
    ScenarioResult run = Scenario("rate-limit/x", Verdict::kFail, checks);
    run.repetition = repetition;
    run.seed = 100 + static_cast<std::uint64_t>(repetition);
    result.scenarios.push_back(run);
  }
  for (int repetition = 0; repetition < 2; ++repetition) {
    ScenarioResult run = Scenario(
        "server-error/y", Verdict::kPass,
        {Check("LIFE-001", CheckStatus::kPass), Advisory("ADV-004", "gave up after one 503")});
    run.repetition = repetition;
    result.scenarios.push_back(run);
  }
  result.scenarios.push_back(Scenario("demo/w", Verdict::kPass, {}));
  result.scenarios.push_back(Scenario("demo/z", Verdict::kPass, {}));
  return result;
}

// Every field set, including every optional one, values that stress number formatting, and a
// trace with client events and journal entries.
inline RunResult FullResult() {
  RunResult result;
  result.tool_version = "faultline 0.1.0";
  result.started_at = "2025-01-15T10:24:07Z";
  result.subject = "python adapter.py --flag \"quoted\"";
  result.subject_options = {"--adapter", "python adapter.py --flag \"quoted\""};
  result.world = "virtual";
  result.seed = std::numeric_limits<std::uint64_t>::max();
  result.shard = "1/2";
  result.fingerprint = "5c1d0e9f3a7b2468";
  result.wall_ms = 0.1 + 0.2;  // not representable exactly: the round trip must keep every bit
  result.interrupted = Interruption{.reason = "SIGINT", .planned_runs = 9};

  ScenarioResult pass = Scenario("rate-limit/retry-after", Verdict::kPass,
                                 {Check("RETRY-004", CheckStatus::kPass),
                                  Check("TIME-001", CheckStatus::kNotApplicable, "no stall")});
  pass.metrics = Metrics{.first_token_ms = 2012.9,
                         .terminal_ms = 2126.0,
                         .forced_minimum_ms = 2000.0,
                         .recovery_overhead_ms = 126.0,
                         .attempts = 2,
                         .wasted_bytes = 312,
                         .wasted_tokens = 4};
  pass.metrics.calls = {
      CallMetrics{.call = 0, .first_token_ms = 2012.9, .terminal_ms = 2126.0, .attempts = 2},
      CallMetrics{.call = 1, .terminal_ms = 4126.5, .attempts = 3}};
  pass.black_box = true;
  pass.repetition = 3;
  pass.trace = nlohmann::json::parse(R"({
    "client": [{"t_ms": 0.3, "call": 0, "event": {"type": "response/start", "attempt": 1}},
               {"t_ms": 1.3, "call": 0, "event": {"type": "response/interrupted", "attempt": 1,
                "failure": {"code": "RATE_LIMIT", "class": "rate-limit"},
                "scheduled_retry_ms": 2000, "delay_source": "retry-after"}},
               {"t_ms": 2126.0, "call": 0, "event": {"type": "response/committed", "text": "hi"}}],
    "journal": [{"index": 0, "attempt": 1, "connection": 1, "arrived_ms": 0.4, "status": 429,
                 "plan": "429", "bytes_sent": 312, "end": "completed", "ended_ms": 1.0,
                 "writes": [{"t_ms": 0.9, "bytes": 312}], "body_bytes": 140}],
    "cancel_ms": 1500.5, "stderr": "warning: x"})");

  ScenarioResult fail =
      Scenario("truncation/closed-mid-line", Verdict::kFail,
               {Check("COMMIT-004", CheckStatus::kFail, "committed \"Hello, wor\"")});
  fail.metrics.terminal_ms = 1e-9;
  ScenarioResult error = Scenario("malformed/invalid-json", Verdict::kError, {});
  error.error = "adapter exited with status 1";
  error.subject_error = SubjectError{"exited", 1, 9, "Traceback (most recent call last):\n"};
  error.trace = nullptr;

  result.scenarios = {pass, fail, error};
  LatencySummary latency;
  latency.name = "rate-limit/retry-after";
  latency.world = "virtual";
  latency.runs = 5;
  latency.samples = 10;
  latency.first_token_ms = LatencySummary::Percentiles{.p50 = 1, .p95 = 2.5, .p99 = 3};
  latency.terminal_ms = LatencySummary::Percentiles{.p50 = 10, .p95 = 20, .p99 = 30};
  latency.recovery_overhead_ms = LatencySummary::Percentiles{.p50 = 0.1, .p95 = 0.2, .p99 = 0.3};
  result.latency = {latency};
  result.thresholds = {
      ThresholdResult{.name = "rate-limit/retry-after",
                      .world = "virtual",
                      .expression = "ttft.p99 < 2s",
                      .origin = "expect",
                      .status = CheckStatus::kFail,
                      .value = 2012.9,
                      .unit = "ms",
                      .samples = 2,
                      .evidence = "2012.9 ms over 2 call(s) of 1 run(s); crossed < 2000 ms"},
      ThresholdResult{.name = "rate-limit/retry-after",
                      .world = "virtual",
                      .expression = "ttft.count>=1",
                      .origin = "cli",
                      .status = CheckStatus::kNotApplicable,
                      .samples = 0,
                      .evidence = "no sample in 1 run(s): nothing to aggregate"}};
  return result;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// The fixture also used by tests/screenshot.sh (written by tests/data/make_sample_result.py).
inline RunResult SampleResult() {
  const auto json = nlohmann::json::parse(
      ReadFile(std::string(FAULTLINE_REPORTS_TEST_DATA) + "/sample-result.json"));
  auto result = RunResultFromJson(json);
  EXPECT_TRUE(result.has_value()) << result.error();
  return result.value_or(RunResult{});
}

inline int CountOccurrences(std::string_view text, std::string_view needle) {
  int count = 0;
  for (std::size_t at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + needle.size())) {
    ++count;
  }
  return count;
}

// A minimal XML 1.0 well-formedness check: balanced tags, quoted attributes, only the five
// predefined entities or character references, no raw control characters. Counts elements by
// name. Enough to catch broken escaping; not a full parser (no DTD, no CDATA).
struct XmlCheck {
  bool ok = true;
  std::string error;
  std::map<std::string, int> elements;
};

inline bool ValidEntityAt(std::string_view text, std::size_t amp) {
  for (std::string_view entity : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;", "&#"}) {
    if (text.substr(amp, entity.size()) == entity) {
      if (entity != "&#") return true;
      const std::size_t end = text.find(';', amp);
      return end != std::string_view::npos && end > amp + 2 && end - amp < 10;
    }
  }
  return false;
}

inline bool CheckCharacters(std::string_view text, XmlCheck& check) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
      check = {false, "raw control character " + std::to_string(c), {}};
      return false;
    }
    if (c == '&' && !ValidEntityAt(text, i)) {
      check = {false, "bare & at: " + std::string(text.substr(i, 12)), {}};
      return false;
    }
    if (c == '<') {
      check = {false, "bare < in text", {}};
      return false;
    }
  }
  return true;
}

// The end of the tag starting at `open` (the '>'), skipping quoted attribute values.
inline std::size_t TagEnd(std::string_view xml, std::size_t open) {
  char quote = 0;
  for (std::size_t i = open + 1; i < xml.size(); ++i) {
    if (quote != 0) {
      if (xml[i] == quote) quote = 0;
    } else if (xml[i] == '"' || xml[i] == '\'') {
      quote = xml[i];
    } else if (xml[i] == '>') {
      return i;
    }
  }
  return std::string_view::npos;
}

inline XmlCheck CheckXml(std::string_view xml) {
  XmlCheck check;
  std::vector<std::string> stack;
  std::size_t i = 0;
  while (i < xml.size()) {
    const std::size_t open = xml.find('<', i);
    const std::string_view text =
        xml.substr(i, open == std::string_view::npos ? xml.npos : open - i);
    if (!CheckCharacters(text, check)) return check;
    if (open == std::string_view::npos) break;
    const std::size_t close = TagEnd(xml, open);
    if (close == std::string_view::npos) return {false, "unterminated tag", {}};
    std::string_view tag = xml.substr(open + 1, close - open - 1);
    i = close + 1;
    if (tag.starts_with("?") || tag.starts_with("!")) continue;
    const bool closing = tag.starts_with("/");
    const bool self_closing = tag.ends_with("/");
    const std::string_view body = tag.substr(closing ? 1 : 0);
    const std::string name(body.substr(0, body.find_first_of(" \t\n/")));
    // Attribute values: quotes balance (TagEnd), characters as in text except '<'.
    if (tag.find('<') != std::string_view::npos) return {false, "< inside a tag: " + name, {}};
    for (std::size_t k = 0; k < tag.size(); ++k) {
      if (tag[k] == '&' && !ValidEntityAt(tag, k)) return {false, "bare & in tag " + name, {}};
    }
    if (closing) {
      if (stack.empty() || stack.back() != name) return {false, "mismatched </" + name + ">", {}};
      stack.pop_back();
      continue;
    }
    ++check.elements[name];
    if (!self_closing) stack.push_back(name);
  }
  if (!stack.empty()) return {false, "unclosed <" + stack.back() + ">", {}};
  return check;
}

}  // namespace faultline::report::testing
