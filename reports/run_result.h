// The run result: everything one `faultline run` found, as plain values. It is the source of truth
// from which every report is rendered (report.h), and its JSON form (schema in
// reports/schema/run-result.schema.json) is what `faultline report render|merge` reads back.
//
// The runner (harness/) fills it; nothing here knows about sockets, scenarios or clients. A
// scenario's trace is kept as the JSON the runner recorded (client lifecycle lines timestamped on
// receipt, merged with the provider's journal) because reports only display it.
//
// Values only; no I/O. Thread-safety: values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <expected>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "nlohmann/json.hpp"
#include "reports/sample_series.h"

namespace faultline::report {

// The run-result format version written into every result ("format": 1).
inline constexpr int kResultFormat = 1;

enum class CheckStatus { kPass, kFail, kNotApplicable };
std::string_view ToString(CheckStatus status);  // "pass" | "fail" | "n/a"
std::optional<CheckStatus> ParseCheckStatus(std::string_view text);

// A violation breaks the contract (the run fails); an advisory is legal under the subject's
// declared policy but harmful to its user or the provider (reported apart; fails the run only
// with `--fail-on advisory`).
enum class Severity { kViolation, kAdvisory };
std::string_view ToString(Severity severity);  // "violation" | "advisory"
std::optional<Severity> ParseSeverity(std::string_view text);

// One invariant (or `expect:` check, or advisory) judged on one scenario run.
struct CheckResult {
  std::string id;         // stable, e.g. "RETRY-003"; expect checks are "EXPECT-OUTCOME", ...
  std::string statement;  // one line: what must hold
  CheckStatus status = CheckStatus::kPass;
  std::string evidence;  // for failures (and n/a): times, attempts, bytes, offending events
  Severity severity = Severity::kViolation;
  friend bool operator==(const CheckResult&, const CheckResult&) = default;
};

// The most of a subject's stderr a result keeps, its last bytes: the runner captures no more
// (harness/worlds/subjects/adapter_process.h) and Merge() cuts a longer tail to it.
inline constexpr std::size_t kMaxStderrTail = 64 * 1024;

// What the runner saw of a subject that broke the protocol (Verdict::kError): never a client
// bug, always its own verdict.
struct SubjectError {
  std::string kind;  // "cannot-start" | "no-hello" | "exited" | "killed" | "not-json" |
                     // "not-protocol" | "line-too-long" | "output-too-large" | "bad-policy"
  std::optional<int> exit_status;  // the exit code
  std::optional<int> signal;       // the signal that ended it
  std::string stderr_tail;         // the last lines of stderr, at most kMaxStderrTail bytes
  friend bool operator==(const SubjectError&, const SubjectError&) = default;
};

// The latency of one call of a scenario that makes several at once (`request.calls`). Times count
// from the scenario's t = 0 (its first request at the provider): the calls start together, so a
// call that waits for a rate limit's window to reopen shows that wait.
struct CallMetrics {
  int call = 0;                            // 0-based
  std::optional<double> first_token_ms{};  // first chunk of the attempt this call committed
  std::optional<double> terminal_ms{};     // this call's terminal event
  int attempts = 0;                        // this call's response/start events
  friend bool operator==(const CallMetrics&, const CallMetrics&) = default;
};

// Latency and cost of one scenario run. Times in milliseconds from the start of the call
// (the first response/start, or the runner's launch of the subject).
struct Metrics {
  std::optional<double> first_token_ms;     // first assistant/chunk of the attempt that committed
  std::optional<double> terminal_ms;        // the terminal event
  std::optional<double> forced_minimum_ms;  // least time the scenario forces (Retry-After, stalls)
  std::optional<double> recovery_overhead_ms;  // terminal_ms - forced_minimum_ms
  int attempts = 0;                            // requests that reached the provider
  std::uint64_t wasted_bytes = 0;              // bytes the provider sent on discarded attempts
  std::uint64_t wasted_tokens = 0;             // approx tokens of those
  // With several calls: one entry per call (calls[0] has call 0's figures, as the fields above);
  // empty for a single call.
  std::vector<CallMetrics> calls{};
  friend bool operator==(const Metrics&, const Metrics&) = default;
};

enum class Verdict {
  kPass,   // every applicable check passed
  kFail,   // at least one check failed
  kError,  // the run itself broke (adapter would not start, timed out, spoke garbage)
};
std::string_view ToString(Verdict verdict);  // "pass" | "fail" | "error"
std::optional<Verdict> ParseVerdict(std::string_view text);

struct ScenarioResult;

// Where a slim run's full form is kept (reports/run_spool.h: a line of runs.jsonl). A long run
// keeps each finished run slimmed in memory (SlimRun) and reads the whole of it back only to
// render it (FullRun).
class RunDetails {
 public:
  virtual ~RunDetails() = default;
  // The run written `size` bytes at `at`, whole; nullopt when it cannot be read back.
  virtual std::optional<ScenarioResult> Read(std::uint64_t at, std::uint64_t size) const = 0;
  // The same run as ToJson(run).dump() wrote it (compact), for a writer that copies it rather
  // than reading it; nullopt when it cannot be read back.
  virtual std::optional<std::string> ReadJson(std::uint64_t at, std::uint64_t size) const = 0;
};
struct DetailsRef {
  std::shared_ptr<const RunDetails> from;
  std::uint64_t at = 0, size = 0;
  friend bool operator==(const DetailsRef&, const DetailsRef&) = default;
};

struct ScenarioResult {
  std::string name;  // scenario name, "category/short-name"
  std::string description;
  std::string source;   // file it came from ("<builtin>/..." for the embedded catalogue)
  int source_line = 0;  // the line of the scenario's `name:` in `source` (0: unknown)
  std::string dialect;  // "openai-chat" | "anthropic-messages" | "openai-responses" | "gemini" |
                        // "ollama"
  std::vector<std::string> tags;
  std::string world;  // "real" | "virtual"
  std::uint64_t seed = 0;
  int repetition = 0;  // 0-based, with --repeat
  Verdict verdict = Verdict::kPass;
  std::string error;                          // for kError: what broke
  std::optional<SubjectError> subject_error;  // for kError caused by the subject
  bool black_box = false;  // the subject reported only its outcome: judged from the journal
  std::vector<CheckResult> checks;
  Metrics metrics;
  std::string fingerprint;  // hex digest of the trace (virtual world: equal seeds, equal prints)
  double wall_ms = 0;       // how long the run took on the runner's clock
  double started_ms = 0;    // when it started, from the start of the whole run (runner's clock)
  // The trace, as recorded:
  //   {"client": [{"t_ms": 12.5, "call": 0, "event": {...adapter line...}}, ...],
  //    "journal": [{"index", "attempt", "connection", "arrived_ms", "status", "plan",
  //                 "bytes_sent", "end", "ended_ms", "writes": [{"t_ms", "bytes"}],
  //                 "body_bytes"}, ...],
  //    "bounds": [...] (harness/judge/timeline_bounds.h: the bands the judge holds times to),
  //    "cancel_ms": 1500.0 (optional), "stderr": "..." (optional)}
  nlohmann::json trace;
  // Set on a slim run (SlimRun): its trace, description, tags, dialect and the checks that did
  // not fail are not here but there. Unset: the run is whole.
  std::optional<DetailsRef> details{};
  friend bool operator==(const ScenarioResult&, const ScenarioResult&) = default;
};

// `run` slimmed, its full form kept at `details`: without its trace, its description, its tags
// and dialect (only a run shown whole shows them) and its checks that did not fail. What every
// report reads of every run stays (verdict, failed checks, metrics, fingerprint, ids, source), so
// counts, folds, percentiles and fingerprints are those of the whole runs.
ScenarioResult SlimRun(ScenarioResult run, DetailsRef details);

// A run whole, for a renderer that shows all of it (a timeline, every check, the JSON): `run`
// itself, or its full form read back from its details. A slim run whose details cannot be read
// back is shown slim (a report is still written; its trace is missing).
class FullRun {
 public:
  explicit FullRun(const ScenarioResult& run);
  const ScenarioResult& operator*() const { return *run_; }
  const ScenarioResult* operator->() const { return run_; }

 private:
  std::optional<ScenarioResult> loaded_;
  const ScenarioResult* run_;
};

// Percentiles of one scenario's metrics over its repetitions (with --repeat N > 1) and, for a
// scenario of several calls, over every call of every repetition.
struct LatencySummary {
  std::string name;
  std::string world;  // summaries are per name + world: virtual and real times do not mix
  int runs = 0;  // repetitions summarised; a percentile uses only the samples that have the metric
  int samples = 0;  // calls summarised: runs x calls (first token and terminal are per call;
                    // recovery overhead is per run)
  struct Percentiles {
    double p50 = 0, p95 = 0, p99 = 0;
    friend bool operator==(const Percentiles&, const Percentiles&) = default;
  };
  std::optional<Percentiles> first_token_ms;
  std::optional<Percentiles> terminal_ms;
  std::optional<Percentiles> recovery_overhead_ms;
  friend bool operator==(const LatencySummary&, const LatencySummary&) = default;
};

// One threshold ("ttft.p99<2s", scenarios/threshold.h) judged over every run and call of one
// scenario in one world, as k6 judges its thresholds over a whole test. Shards split by scenario,
// so a shard judges its thresholds whole and a merge only gathers them.
struct ThresholdResult {
  std::string name{};        // the scenario
  std::string world{};       // "real" | "virtual": virtual and real times never mix
  std::string expression{};  // as written
  std::string origin{};      // "expect" (the scenario's expect.thresholds) | "cli" (--threshold)
  CheckStatus status = CheckStatus::kPass;  // fail: crossed; n/a: no sample to aggregate
  std::optional<double> value{};            // the aggregate
  std::string unit{};                       // "ms" for times, "" otherwise
  int samples = 0;                          // the values aggregated
  std::string evidence{};  // "2350 ms over 40 call(s) of 20 run(s); crossed < 2000 ms"
  friend bool operator==(const ThresholdResult&, const ThresholdResult&) = default;
};

// A run stopped early (SIGINT/SIGTERM): `scenarios` holds only the runs that finished; the runs
// cut short and those never started are not judged and not listed.
struct Interruption {
  std::string reason;    // what stopped it: "SIGINT" | "SIGTERM" | ...
  int planned_runs = 0;  // the runs the whole run would have made
  friend bool operator==(const Interruption&, const Interruption&) = default;
};

struct RunResult {
  int format = kResultFormat;
  std::string tool_version;  // "faultline 0.1.0"
  std::string started_at;    // RFC 3339 UTC
  std::string subject;       // "faultline-ref 0.1.0 (in-process)" or the adapter command
  // The command-line words that chose the subject ({"--exec", "node app.mjs", "--policy", "x"}),
  // redacted; what a reproduce command repeats. Empty: `subject` alone says it.
  std::vector<std::string> subject_options;
  std::string world;  // "real" | "virtual" | "mixed" (after a merge)
  std::uint64_t seed = 0;
  std::string shard;  // "" or "I/N"; a merge lists what it combined: "1/2+2/2"
  std::vector<ScenarioResult> scenarios;
  std::vector<LatencySummary> latency;      // filled by Summarize() when a scenario ran > 1 time
  std::vector<ThresholdResult> thresholds;  // in the order of the runs' scenarios
  std::string fingerprint;                  // RunFingerprint(scenarios)
  double wall_ms = 0;
  std::optional<Interruption> interrupted;  // set when the run was stopped before its end
  friend bool operator==(const RunResult&, const RunResult&) = default;

  int passed() const;
  int failed() const;
  int errors() const;
  int advisories() const;  // failed advisory checks over all scenarios
  int thresholds_crossed() const;
};

// Whether a failed check of `severity` fails the run (advisories only when asked).
struct FailPolicy {
  bool advisories = false;  // --fail-on advisory
};
// The verdict of a judged run from its checks.
Verdict VerdictOf(const std::vector<CheckResult>& checks, const FailPolicy& fail_on);

// Fills `latency` from the scenarios' metrics (nearest-rank percentiles, sample_series.h: exact
// up to SampleSeries::kExactSamples samples a series), one entry per scenario name + world with
// more than one sample (it ran more than once, or made several calls), in order of first
// appearance. Memory: the series of one scenario name at a time when the runs are in the
// canonical order (RunOrderLess: as RunAll and Merge leave them), else of every name.
void Summarize(RunResult& result);

// The per-call samples of a run: its calls, or the run itself for a single call.
std::vector<CallMetrics> CallSamples(const Metrics& metrics);

// The canonical order of runs, the order the runner makes them in: by name, then repetition,
// then world (virtual before real, then any other). Merge() restores it.
bool RunOrderLess(const ScenarioResult& a, const ScenarioResult& b);

// The run fingerprint: a 16-hex-digit FNV-1a 64 digest over every scenario fingerprint in the
// canonical order (whatever order `scenarios` is in), each followed by '|'. So shards merged in
// any order give the unsharded value. The runner stores it in RunResult::fingerprint; Merge()
// recomputes it.
std::string RunFingerprint(const std::vector<ScenarioResult>& scenarios);

nlohmann::json ToJson(const RunResult& result);
// `compact` (a dump() without indentation, as nlohmann writes it) as dump(2) writes the same value
// nested `depth` levels deep, byte for byte: every line after the first indented by 2 * depth
// more spaces. For copying a run into result.json without parsing it.
std::string IndentJson(std::string_view compact, int depth);
// One run as ToJson(result) lists it under "scenarios" (a slim run whole: FullRun).
nlohmann::json ToJson(const ScenarioResult& run);
// One run back from that form, as strictly as RunResultFromJson reads it.
std::expected<ScenarioResult, std::string> ScenarioResultFromJson(const nlohmann::json& json);
// ToJson(result) as dump(2) writes it (invalid UTF-8 replaced), and a newline, byte for byte,
// but one run at a time: the document of every run is never in memory at once (a result of
// 100,000 runs is a few hundred MB of JSON values beside the result itself).
void WriteJson(const RunResult& result, std::ostream& out);
// Strict: unknown format versions and missing fields are errors naming the JSON path.
std::expected<RunResult, std::string> RunResultFromJson(const nlohmann::json& json);

// Combines shard results (same tool, same subject); scenarios are put in the canonical order
// (RunOrderLess), as an unsharded run lists them; Summarize() is re-run. Errors: no inputs, a
// scenario run (name + world + repetition) twice, parts from different tool versions or subjects.
// The merged result keeps the first part's seed, the earliest started_at and the longest wall_ms
// (shards run side by side); world is "mixed" when the parts disagree; shard lists the parts'
// shards joined by "+"; thresholds are gathered in the canonical order of their scenarios;
// fingerprint is recomputed with RunFingerprint(); it is interrupted when
// any part was (planned_runs adds up what every part planned). A stderr tail over
// kMaxStderrTail (a result not written by a run) keeps its last bytes after a line saying how
// many were cut. An error quotes a differing tool or subject by its first 120 characters and
// its size, never whole (a 50 MB subject made 50 MB of stderr).
std::expected<RunResult, std::string> Merge(const std::vector<RunResult>& parts);

// Merge() one part at a time, for `faultline report merge` of hundreds of shards: each part's
// runs are moved in as it is added, so a caller that reads one file, adds it and drops it holds
// the merged runs and one part, never every part beside the merged copy. The merged result
// itself grows with the runs (every report is rendered from it). Same rules and errors as Merge;
// a part is added whole or not at all (a refused part changes nothing).
//
// Thread-safety: none; one thread adds.
class ResultMerger {
 public:
  std::expected<void, std::string> Add(RunResult part);
  // The merged result; the merger is spent. Error: no part was added.
  std::expected<RunResult, std::string> Finish() &&;

 private:
  RunResult merged_;
  std::size_t parts_ = 0;
  using RunKey = std::tuple<std::string, std::string, int>;  // name, world, repetition
  std::map<RunKey, std::size_t> seen_;  // every run added -> the 1-based part that had it
  int planned_runs_ = 0;                // what every part planned, for an interrupted merge
};

}  // namespace faultline::report
