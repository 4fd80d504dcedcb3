// Internal to the real server: the control API under /_faultline/ (see server.h for the routes)
// with its access checks, and the 404 hint; targets are resolved by fake_provider/admission.h.
// Pure request -> reply functions over a SessionHost, no sockets, so the connection code only moves
// bytes and the fuzz targets (fake_provider/fuzz/) run the same code. Thread-safe as the
// SessionHost is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fake_provider/admission.h"
#include "fake_provider/http_request.h"
#include "fake_provider/server/server_core.h"
#include "scenarios/scenario.h"

namespace faultline::provider::internal {

struct HttpReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<scenario::Header> headers;  // extra headers (e.g. Allow)
};

// Who may use the control API (server.h, "Security").
struct ControlAccess {
  std::string token;       // "" = none needed
  std::string bound_host;  // the listener's address: "127.0.0.1", "::1", "0.0.0.0", "::"
  std::vector<std::string> allowed_hosts;  // more Host names that are ours
};

// The answer to a control request that may not proceed, nullopt when it may: 403 for a Host that
// is not ours (DNS rebinding) or an Origin that is not ours (a cross-site page), 401 without the
// token. `port` is the port the request arrived on. Checked on every control request.
std::optional<HttpReply> ControlAccessDenied(const ControlAccess& access,
                                             const HttpRequest& request, std::uint16_t port);

// Whether the control request is GET /_faultline/health or /_faultline/stats: cheap, answered
// on the event loop, and even when the server holds all the connections it may.
bool IsMonitoringRequest(std::string_view method, std::string_view target);

// `target` is the request target as sent ("/_faultline/sessions?x=y").
HttpReply HandleControlRequest(SessionHost& host, std::string_view method, std::string_view target,
                               std::string_view body);

// The answer to a path that names no session: 404 with the session base URLs.
HttpReply NotFoundHint(const SessionHost& host, std::string_view target);

// {"error": {"type": type, "message": message}} with `status`.
HttpReply JsonError(int status, std::string_view type, std::string_view message);

// The session as the control API shows it.
std::string SessionJson(const SessionState& session, WallTime now);

}  // namespace faultline::provider::internal
