// The provider-side admission step, shared by both worlds: where a request goes (its target),
// and, for a session request, the plan that answers it and the journal entry that records it.
//
// The real server (server/http_connection.cc) and the virtual world
// (harness/worlds/virtual_world.cc) both read a request with RequestReader (http_request.h),
// resolve its target here, find the session it names, and call Admit(); so whatever a request means
// to the provider (a session, a route of a session, the plan it gets, what the journal keeps of it)
// is written once, here.
//
// Sans-I/O: no clock, no socket; `now` is passed in. Thread-safety: the caller serialises access
// to a ProviderSession (the server holds its session lock around Admit()); Journal locks itself.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "fake_provider/http_request.h"
#include "fake_provider/journal.h"
#include "fake_provider/plan/plan.h"
#include "fake_provider/provider_core.h"

namespace faultline::provider {

// Requests under this prefix are the server's control API (server/control_api.h).
inline constexpr std::string_view kControlPrefix = "/_faultline";

// The first path segment of every API faultline serves: /v1/ (OpenAI, Anthropic), /v1beta/
// (Gemini), /api/ (Ollama), /model/ (Bedrock). A session id ends where one of them starts, so
// none may appear inside an id.
inline constexpr std::string_view kApiRootSegments[] = {"/v1/", "/v1beta/", "/api/", "/model/"};

// Where a request target goes: /_faultline/... is the control API, /s/<id>/v1/... a session
// (the id is everything between "/s/" and the first API root segment, percent-decoded: see
// kApiRootSegments), anything else is
// unknown (the server answers it with a 404 hint). A session id ending in "/call/<n>" names call
// n of a scenario with several concurrent calls (CallBaseUrl): the request goes to the session,
// and the journal records the call, so every request is attributed to the call that sent it.
struct Destination {
  enum class Kind { kSession, kControl, kUnknown };
  Kind kind = Kind::kUnknown;
  std::string session_id;
  std::string_view path;  // relative to the session's base URL, without the query
  int call = -1;          // the call the base URL names; -1 when it names none
};
Destination ResolveTarget(std::string_view target);

// The base URL call `call` of a scenario with `calls` concurrent calls is given: the session's
// own for a single call, else "<session base URL>/call/<call>" (all onto the same session state).
std::string CallBaseUrl(std::string_view session_base_url, int call, int calls);

// Decodes %XX escapes; invalid escapes are kept verbatim.
std::string PercentDecode(std::string_view text);

// What the journal keeps of a request admitted into a session (credentials redacted unless
// `keep_secrets`); Admit() adds the rest.
JournalEntry JournalEntryFor(const HttpRequest& request, bool keep_secrets);
// The same, taking the request's headers, trailers and body instead of copying them (its method
// and target stay: a Destination's path points into the target).
JournalEntry JournalEntryFrom(HttpRequest& request, bool keep_secrets);

struct AdmissionInput {
  // Its headers, trailers and body are moved into the journal entry (JournalEntryFrom): every
  // session request is journalled, and nothing reads them after admission.
  HttpRequest& request;
  std::string_view path;  // Destination::path
  std::uint64_t connection = 0;
  bool keep_secrets = false;
  WallTime now;            // the request's arrival
  WallTime session_start;  // journal times are offsets from here
};

struct Admitted {
  ResponsePlan plan;  // its truth moved into the journal entry, the one place it is read
  std::uint64_t entry_index = 0;  // in `journal`
};

// Plans the answer to one session request and journals it (arrival, attempt, route, status,
// plan summary, truth), in that order, so that journal order is attempt order.
Admitted Admit(ProviderSession& session, Journal& journal, const AdmissionInput& input);

}  // namespace faultline::provider
