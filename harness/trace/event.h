// One line a subject wrote (an adapter-protocol event, docs/adapter-protocol.md), typed.
//
// Every stdout line is parsed and validated once, at receipt (protocol.h ParseLine), and held
// from then on as a ClientEvent: the judge, the metrics, the policy twin and the reports read its
// fields, never a JSON key. Only the declared `policy` of adapter/hello stays JSON: it is read
// by its own strict loader (judge/declared_policy.h). Fields the protocol does not define are
// refused at receipt, so nothing a subject writes reaches the trace untyped.
//
// Values only. Thread-safety: values.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nlohmann/json.hpp"

namespace faultline::harness {

class JsonOut;

enum class EventKind { kHello, kStart, kChunk, kInterrupted, kCommitted, kFailed };

// "adapter/hello", "response/start", ... (protocol.h holds the same names as constants).
std::string_view ToString(EventKind kind);
std::optional<EventKind> ParseEventKind(std::string_view name);

// The `failure` object of response/interrupted and response/failed (docs/failure-taxonomy.md).
struct ReportedFailure {
  std::string code;
  std::string failure_class;  // "class"
  std::string phase;
  bool retryable = false;
  std::string partial_output;
  std::string message;
  std::optional<int> status;
  std::optional<double> retry_after_ms;
  std::optional<std::string> request_id;
  std::string route_id;  // "" absent
  friend bool operator==(const ReportedFailure&, const ReportedFailure&) = default;
};

// A tool call fragment of a chunk, or a whole tool call of a committed answer.
struct ReportedToolCall {
  std::optional<int> index;  // fragments only
  std::string id;            // "" absent
  std::string name;          // "" absent
  std::string arguments;
  friend bool operator==(const ReportedToolCall&, const ReportedToolCall&) = default;
};

// The work of discarded attempts so far (`wasted`).
struct ReportedWaste {
  std::int64_t bytes = 0;
  std::int64_t approx_tokens = 0;
  friend bool operator==(const ReportedWaste&, const ReportedWaste&) = default;
};

struct ReportedUsage {
  std::optional<std::int64_t> input_tokens;   // null or absent: unknown
  std::optional<std::int64_t> output_tokens;  // null or absent: unknown
  friend bool operator==(const ReportedUsage&, const ReportedUsage&) = default;
};

// A JSON value with its compact text, shared by the copies of an event and compared by value. A
// declared policy: a subject declares the same one run after run and every trace keeps a copy,
// so a copy costs no tree, the fingerprint no dump and the judge's reading no hash (SameAs).
class SharedJson {
 public:
  SharedJson(nlohmann::json value);  // NOLINT(google-explicit-constructor): it is the value
  const nlohmann::json& operator*() const { return shared_->value; }
  const nlohmann::json* operator->() const { return &shared_->value; }
  // As nlohmann's dump(-1, ' ', false, error_handler_t::replace) writes it.
  const std::string& text() const { return shared_->text; }
  // Whether `other` is a copy of this very value (not only an equal one).
  bool SameAs(const SharedJson& other) const { return shared_ == other.shared_; }
  friend bool operator==(const SharedJson& a, const SharedJson& b) {
    return a.SameAs(b) || *a == *b;
  }

 private:
  struct Shared {
    nlohmann::json value;
    std::string text;
  };
  std::shared_ptr<const Shared> shared_;
};

struct ClientEvent {
  EventKind kind = EventKind::kStart;
  // Every event: when the subject wrote it (its own clock, for people; the runner judges by its
  // receipt time) and the route of the attempt ("" absent).
  std::optional<double> at_ms;
  std::string route_id;
  // Every event but the hello.
  std::optional<int> call;  // a session-mode adapter's call (absent: call 0); the runner files
                            // the event under it (ClientRecord::call) and clears it
  std::string response_id;  // "" absent
  std::optional<int> attempt;
  // assistant/chunk: text or a tool call fragment; response/committed: the answer's text.
  std::optional<std::string> text;
  std::optional<ReportedToolCall> tool_call;
  bool uncommitted = false;  // a chunk's `commitment: "uncommitted"`
  // response/interrupted and response/failed.
  std::optional<ReportedFailure> failure;
  std::optional<ReportedWaste> wasted;
  // response/interrupted.
  std::optional<double> scheduled_retry_ms;
  std::string delay_source;   // "" absent
  std::string next_route_id;  // "" absent
  // response/committed.
  std::optional<std::vector<ReportedToolCall>> tool_calls;
  bool has_finish_reason = false;  // `finish_reason` present (it may be null)
  std::optional<std::string> finish_reason;
  std::optional<ReportedUsage> usage;
  std::optional<std::string> reasoning;
  // response/failed: the reference client's own account of why it gave up, and each route's last
  // failure when every route was down.
  std::string give_up;
  std::vector<ReportedFailure> route_failures;
  // adapter/hello.
  std::string name;
  std::string version;
  std::optional<SharedJson> policy;
  bool session = false;  // `mode: "session"`: one process serves every call of the run
  bool reset = false;    // `reset: true` (session mode): it serves more runs, after a reset line

  bool terminal() const { return kind == EventKind::kCommitted || kind == EventKind::kFailed; }
  // The route of the event, else of its failure ("" when neither names one).
  std::string_view route() const;
  friend bool operator==(const ClientEvent&, const ClientEvent&) = default;
};

// The event of a validated protocol object (protocol.h ParseLine). Never throws: a field of the
// wrong JSON type reads as absent (ParseLine has refused such a line already).
ClientEvent EventFromJson(const nlohmann::json& line);

// The event as its protocol line: EventFromJson(EventToJson(e)) == e.
nlohmann::json EventToJson(const ClientEvent& event);
// The same line written to `out` (json_out.h): EventToJson's one description, which the trace's
// fingerprint hashes as text.
void WriteEvent(const ClientEvent& event, JsonOut& out);

}  // namespace faultline::harness
