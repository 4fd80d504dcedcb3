// Dialect writers: what each provider's responses look like, as logical events and bodies.
//
// A writer knows one wire format (OpenAI Chat Completions, Anthropic Messages, OpenAI Responses):
// its endpoint, its ids, its event names and JSON payloads, its usage fields, its error bodies and
// statuses, its request-id and rate-limit headers. It does not know about framing (line endings,
// comments, BOM: sse_framing.h), timing or faults (plan_compiler.h).
//
// Writers are stateless singletons; every method is const and thread-safe. Output is
// deterministic: the same inputs give the same bytes.
//
// Conventions shared by all writers:
// - An SseEvent with an empty `name` and an empty `data` is a heartbeat comment: the framer writes
//   it as the SSE comment line ": keep-alive" (Ping() of OpenAI Chat and Responses returns it).
// - Ids are fixed-length per dialect. Secondary ids that a response needs besides `item_id` (the
//   Responses reasoning item `rs_…`, function call item `fc_…` and its `call_…`) are derived as
//   <prefix> + the part of `item_id` after its "msg_" prefix, so substituting that suffix in the
//   rendered bytes renews them all.
// - Event payloads are compact one-line JSON with keys in the providers' own order.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/scenario.h"

namespace faultline::provider {

using WallTime = std::chrono::sys_time<std::chrono::microseconds>;

// Per-response identity. Ids have fixed lengths per dialect (see MakeIds), so that a response can
// be rendered once with placeholder ids and filled in per request by overwriting bytes.
struct ResponseIds {
  std::string response_id;   // chatcmpl-…, msg_…, resp_…
  std::string item_id;       // Responses output item id (msg_…), Anthropic/OpenAI tool call id
  std::string request_id;    // req_…
  std::int64_t created = 0;  // unix seconds, always 10 digits
  std::string model;
};

struct Usage {
  int input_tokens = 0;
  int output_tokens = 0;
};

// One SSE event before framing. `name` empty = no `event:` line (OpenAI Chat). `data` is one line
// of JSON (or, for faults, whatever the data line must carry).
struct SseEvent {
  std::string name;
  std::string data;
  friend bool operator==(const SseEvent&, const SseEvent&) = default;
};

// A successful stream: events in wire order. `terminator` is the index of the event that marks a
// complete response ([DONE], message_stop, response.completed); events from it on are dropped by
// Termination::kNoTerminator. Fault positions (`after_event`) index into `events`. Responses
// numbers its events from 0; a kSequenceGap fault at after_event N skips one number before
// events[N], and each kProviderError fault at N keeps one number free there (StreamErrorFor).
struct StreamEvents {
  std::vector<SseEvent> events;
  std::size_t terminator = 0;
  // The first event that shows the caller output (a text delta, or the start of a tool call):
  // a client that retries a stream only "before any output" may retry a failure before it.
  // nullopt when the stream has neither text nor a tool call.
  std::optional<std::size_t> first_output;
};

struct Body {
  std::string content_type;
  std::string bytes;
  // Headers that come with this body: Bedrock names an error's type in x-amzn-ErrorType.
  std::vector<scenario::Header> headers{};
};

class DialectWriter {
 public:
  virtual ~DialectWriter() = default;

  virtual scenario::Dialect dialect() const = 0;
  // The endpoint a person calls: "/v1/chat/completions", ..., Gemini's for its default model.
  virtual std::string_view endpoint_path() const = 0;
  // The endpoints in words, for a 404's message; endpoint_path() unless the path varies.
  virtual std::string_view endpoint_help() const { return endpoint_path(); }
  virtual std::string_view default_model() const = 0;
  // "x-request-id" | "request-id"; "" when the provider sends none (Gemini, Ollama).
  virtual std::string_view request_id_header() const = 0;
  // The media type of a stream: Server-Sent Events, or Ollama's newline-delimited JSON (whose
  // events the framer then writes one JSON object per line: sse_framing.h).
  virtual std::string_view stream_content_type() const {
    return "text/event-stream; charset=utf-8";
  }

  // What a request target (its path, and its query without the '?') asks this dialect for.
  // Default: endpoint_path() is served, and the body's `stream` flag decides. Gemini puts the
  // model and the choice of a stream in the path.
  // kBodyDecidesStreamByDefault: the body's "stream": false asks for one body (Ollama's rule).
  enum class TargetKind { kNotServed, kBodyDecides, kBodyDecidesStreamByDefault, kStream, kJson };
  virtual TargetKind ReadTarget(std::string_view path, std::string_view query) const;

  // Deterministic ids for the attempt: a function of (seed, attempt, now) only.
  virtual ResponseIds MakeIds(std::uint64_t seed, int attempt, WallTime now,
                              std::string_view model) const = 0;

  // Honours `content.end`'s skip to the terminator (kDone with after_event, SkipToTerminator in
  // dialect_internal.h); numbered dialects number the terminator after the last event sent.
  virtual StreamEvents Stream(const scenario::Content& content, const ResponseIds& ids,
                              const Usage& usage) const = 0;
  virtual Body Json(const scenario::Content& content, const ResponseIds& ids,
                    const Usage& usage) const = 0;

  // The error body for a non-2xx status, in the provider's shape and words. 502 is text/plain.
  virtual Body Error(const scenario::ErrorSpec& error, int status) const = 0;
  // The in-stream error event (Anthropic `event: error`, Responses `response.failed` / `error`,
  // OpenAI Chat `{"error":…}` envelope).
  virtual SseEvent StreamError(const scenario::ErrorSpec& error, scenario::EventFault::Shape shape,
                               const ResponseIds& ids) const = 0;
  // The event injected for `content.faults[fault_index]` right after `after_event` events of
  // Stream(content, …). kErrorEnvelope: the OpenAI-style `{"error":{…}}` data line (no event
  // name) in every dialect. kProviderError: StreamError(), except that the Responses writer
  // numbers it to fit the stream's `sequence_number`s (Stream() leaves that number free for it,
  // so the numbers stay strictly increasing after it).
  virtual SseEvent StreamErrorFor(const scenario::Content& content, std::size_t fault_index,
                                  const ResponseIds& ids) const;
  // Same as Error(), with the request id in the body where the provider puts one there too
  // (Anthropic's top-level "request_id"); other dialects return Error().
  virtual Body ErrorWithIds(const scenario::ErrorSpec& error, int status,
                            const ResponseIds& ids) const;
  // Valid JSON that is not an event of this dialect.
  virtual SseEvent WrongShape() const = 0;
  // Anthropic `ping`; other dialects return an SSE comment heartbeat (name "", data ""), which
  // the framer writes as ": keep-alive".
  virtual SseEvent Ping() const = 0;

  // `x-ratelimit-*` (Go-style durations) or `anthropic-ratelimit-*` (RFC 3339 instants).
  virtual void AppendRateLimitHeaders(const scenario::RateLimitHeaders& limits, WallTime now,
                                      std::vector<scenario::Header>& out) const = 0;
};

const DialectWriter& WriterFor(scenario::Dialect dialect);

// The dialect a request target speaks (its path, and its query without the '?'), as the writers
// read their targets (DialectWriter::ReadTarget); nullopt for a path no dialect serves. The one
// table of which path is which dialect: the proxy and the cassette importers ask it.
std::optional<scenario::Dialect> DialectOfTarget(std::string_view path, std::string_view query);

// The event a malformed injection (kInvalidJson, kWrongShape, kTwoObjects) sends: it imitates
// `neighbour`, a JSON event of the same stream (null when there is none), so that only its
// payload is wrong. The one home of these shapes: the plan compiler injects them into scripted
// streams, the proxy (proxy/proxy_core.h) into live ones.
SseEvent MalformedEvent(scenario::EventFault::Kind kind, const SseEvent* neighbour,
                        const DialectWriter& writer);

// Rough token estimate used for default usage and stateful token limits (~4 bytes a token).
int EstimateTokens(std::string_view text);

}  // namespace faultline::provider
