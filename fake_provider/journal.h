// The request journal: the ground truth about what reached the provider and what it sent back.
//
// The runner judges clients from it, so a request is journaled even when the client vanishes at
// any point, and every entry says how the exchange ended. Times are offsets from the session's
// start (microseconds), so journals from the real and the virtual world compare directly.
//
// Thread-safety: Journal is internally synchronised (the real server appends from several
// threads); snapshots are copies.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fake_provider/plan/plan.h"
#include "scenarios/cassette/cassette.h"
#include "scenarios/scenario.h"

namespace faultline::provider {

struct WriteRecord {
  Duration at{0};       // when the bytes were handed to the socket (session offset)
  Duration planned{0};  // when the plan wanted them written (session offset)
  std::size_t size = 0;
};

enum class EndKind {
  kInProgress,           // still running (a snapshot taken mid-response)
  kCompleted,            // the whole plan was sent; connection kept or closed as planned
  kClosedByServer,       // the plan closed the connection (FIN) before or after the body
  kResetByServer,        // the plan reset the connection (RST)
  kClientClosed,         // the client closed or reset while the plan still had bytes to send
  kStalledClientGaveUp,  // the client closed while the server was stalling or heart-beating
  kServerShutdown,       // the server stopped while the exchange was in progress
  kWriteFailed,          // a write failed for another reason (errno in `detail`)
};
std::string_view ToString(EndKind kind);

struct JournalEntry {
  std::uint64_t index = 0;       // 0-based, in arrival order within the session
  int attempt = 0;               // 0 for requests that did not count (wrong path, 404)
  std::string route;             // the route that answered; "" for a scenario without routes
  int call = -1;                 // the call that sent it (admission.h); -1 when none was named
  std::uint64_t connection = 0;  // server-wide connection id
  Duration arrived{0};
  std::string method;
  std::string target;                      // as sent, including the session prefix (and the
                                           // query: JournalToJson redacts its keys)
  std::vector<scenario::Header> headers;   // credentials redacted unless told otherwise
  std::vector<scenario::Header> trailers;  // a chunked body's trailer fields (never headers)
  std::string body;                        // exact bytes (JournalToJson redacts its keys)
  // --journal-secrets: JournalToJson writes target and body as sent. Without it the entry still
  // keeps them exact, because judging reads them (bodies compared across attempts, routes);
  // only the copy that leaves the provider is redacted.
  bool secrets_in_clear = false;
  int status = 0;
  std::string plan_summary;
  PlanTruth truth;  // what a correct client must make of the response (plan.h)
  std::vector<WriteRecord> writes;
  std::size_t bytes_sent = 0;
  EndKind end = EndKind::kInProgress;
  Duration ended{0};   // when `end` happened (session offset)
  std::string detail;  // e.g. the socket error text
  // When bytes of a further request reached this connection while this response was still in
  // progress: the client sent another request on it before reading this one to its end (HTTP/1.1
  // allows a connection to be reused only once its response is read; a client that gave up on a
  // stalled stream must open a new one). Blank lines do not count. nullopt: none did.
  std::optional<Duration> further_request_at;
};

// What a journal keeps of a credential: its scheme, its first 4 characters when it is long
// enough for that to give nothing away, and its length:
// "Bearer sk-proj-abc...xyz" -> "Bearer sk-p...[redacted, 51 bytes]".
std::string RedactedSecret(std::string_view value);
// Redacts header values in place: a header named as a credential's (scenario::SecretName:
// Authorization, Cookie, x-api-key, Ocp-Apim-Subscription-Key, X-Auth-Key, ...) keeps only
// RedactedSecret of its value; any other keeps its value but for the secrets in it
// (scenario::RedactSecrets: key-shaped tokens, ...).
void RedactSecretHeaders(std::vector<scenario::Header>& headers);
// What a cassette keeps of its request (a `faultline proxy --record` recording, a HAR import):
// its headers as a journal keeps them (RedactSecretHeaders, done once: the proxy's record has
// them so already), and the target's query (Gemini's `key=`) and the body with their secrets
// redacted (scenario::RedactSecrets, which this applies; idempotent).
void RedactCassetteRequest(scenario::Cassette& cassette);

// How much one journal keeps. Load tests send millions of requests to one session, and each
// entry keeps its request's body and headers whole: past either bound the oldest entries are
// dropped (and counted), never the newest.
struct JournalLimits {
  std::size_t entries = 100'000;
  std::size_t bytes = 64 * 1024 * 1024;  // request bytes kept: target, headers, trailers, body
};

class Journal {
 public:
  explicit Journal(JournalLimits limits = {})
      : capacity_(limits.entries), max_bytes_(limits.bytes) {}

  // Appends an entry and returns its index.
  std::uint64_t Begin(JournalEntry entry);
  void RecordWrite(std::uint64_t index, WriteRecord write);
  void End(std::uint64_t index, EndKind end, Duration at, std::string detail = {});
  // The first time only (JournalEntry::further_request_at).
  void RecordFurtherRequest(std::uint64_t index, Duration at);

  std::vector<JournalEntry> Snapshot() const;
  std::uint64_t dropped() const;
  void Clear();

 private:
  JournalEntry* Find(std::uint64_t index);  // requires mu_
  void DropOldest();                        // requires mu_ and an entry to drop
  mutable std::mutex mu_;
  std::size_t capacity_;
  std::size_t max_bytes_;
  std::size_t bytes_ = 0;  // EntryBytes of the entries kept
  std::uint64_t next_index_ = 0;
  std::uint64_t first_index_ = 0;      // index of entries_.front()
  std::vector<JournalEntry> entries_;  // ring trimmed from the front
  std::uint64_t dropped_ = 0;
};

}  // namespace faultline::provider
