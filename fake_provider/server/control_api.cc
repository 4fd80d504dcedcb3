#include "fake_provider/server/control_api.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <boost/beast/core/string.hpp>
#include <cctype>
#include <charconv>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "fake_provider/journal_json.h"
#include "scenarios/loader.h"

namespace faultline::provider::internal {
namespace {

using nlohmann::json;

std::string Dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

HttpReply JsonReply(int status, const json& value) {
  return HttpReply{status, "application/json", Dump(value), {}};
}

HttpReply MethodNotAllowed(std::string_view allowed) {
  HttpReply reply = JsonError(405, "method_not_allowed", fmt::format("allowed: {}", allowed));
  reply.headers.push_back({"Allow", std::string(allowed)});
  return reply;
}

// The base URL to give an SDK: OpenAI SDKs append the path after /v1, Anthropic's, Google's,
// Ollama's and the AWS SDK's (its endpoint) after the host.
std::string SdkBaseUrl(const SessionState& session) {
  const scenario::Dialect dialect = session.scenario().dialect;
  const bool host_only =
      dialect != scenario::Dialect::kOpenAiChat && dialect != scenario::Dialect::kOpenAiResponses;
  return host_only ? session.base_url() : session.base_url() + "/v1";
}

// A parent session's routes (server_core.h): where each is served.
json RoutesArray(const SessionState& session) {
  json routes = json::array();
  for (const auto& route : session.routes()) {
    routes.push_back({{"id", route->scenario().route_id},
                      {"base_url", route->base_url()},
                      {"dialect", std::string(scenario::ToString(route->scenario().dialect))}});
  }
  return routes;
}

json SessionObject(const SessionState& session, WallTime now) {
  const auto& scenario = session.scenario();
  json listener = {{"dedicated", session.dedicated_port() != 0}};
  if (session.dedicated_port() != 0) {
    listener["port"] = session.dedicated_port();
    listener["down"] = session.ListenerDown(now);
  }
  return {
      {"id", session.id()},
      {"base_url", session.base_url()},
      {"sdk_base_url", SdkBaseUrl(session)},
      {"endpoint", session.base_url() + std::string(WriterFor(scenario.dialect).endpoint_path())},
      {"scenario", scenario.name},
      {"description", scenario.description},
      {"dialect", std::string(scenario::ToString(scenario.dialect))},
      {"source", scenario.source},
      {"seed", session.seed()},
      {"attempts", session.attempts()},
      {"listener", std::move(listener)},
      {"routes", RoutesArray(session)}};
}

json RejectedObject(const StatsSnapshot& stats) {
  json rejected = json::object();
  for (std::size_t i = 0; i < stats.rejected.size(); ++i) {
    rejected[std::string(kRejectionNames[i])] = stats.rejected[i];
  }
  return rejected;
}

json LimitsObject(const StatsSnapshot& stats) {
  json limits = json::object();
  for (const auto& [name, value] : stats.limits) limits[std::string(name)] = value;
  return limits;
}

json StatsObject(const StatsSnapshot& stats) {
  return {{"requests", stats.requests},
          {"session_requests", stats.session_requests},
          {"control_requests", stats.control_requests},
          {"not_found", stats.not_found},
          {"bad_requests", stats.bad_requests},
          {"aborted_requests", stats.aborted_requests},
          {"read_timeouts", stats.read_timeouts},
          {"connections_total", stats.connections_total},
          {"connections_open", stats.connections_open},
          {"pending_body_bytes", stats.pending_body_bytes},
          {"bytes_received", stats.bytes_received},
          {"bytes_sent", stats.bytes_sent},
          {"internal_errors", stats.internal_errors},
          {"rejected", RejectedObject(stats)},
          {"limits", LimitsObject(stats)},
          {"sessions", stats.sessions},
          {"uptime_ms", stats.uptime_ms},
          {"timer_lateness_us",
           {{"count", stats.lateness.count},
            {"p50", stats.lateness.p50_us},
            {"p99", stats.lateness.p99_us},
            {"max", stats.lateness.max_us}}}};
}

struct CreateRequest {
  std::string scenario_text;
  std::string id;
  std::optional<std::uint64_t> seed;
};

std::expected<std::string, std::string> ScenarioText(const json& body) {
  const bool has_scenario = body.contains("scenario");
  const bool has_text = body.contains("scenario_text");
  if (has_scenario == has_text) {
    return std::unexpected(
        "expected exactly one of \"scenario\" (a JSON object, or YAML/JSON text) and "
        "\"scenario_text\" (YAML/JSON text)");
  }
  const json& value = has_scenario ? body["scenario"] : body["scenario_text"];
  if (value.is_string()) return value.get<std::string>();
  if (has_scenario && value.is_object()) return Dump(value);
  return std::unexpected(has_scenario ? "\"scenario\" must be an object or a string"
                                      : "\"scenario_text\" must be a string");
}

// Checks JSON text against ParseLimits from nlohmann's SAX events, without building anything,
// so that a hostile body is refused before the DOM parser and the dump recurse through it.
class JsonBudget {
 public:
  explicit JsonBudget(const scenario::ParseLimits& limits) : budget_(limits) {}

  bool null() { return Item(); }
  bool boolean(bool) { return Item(); }
  bool number_integer(json::number_integer_t) { return Item(); }
  bool number_unsigned(json::number_unsigned_t) { return Item(); }
  bool number_float(json::number_float_t, const json::string_t&) { return Item(); }
  bool string(json::string_t&) { return Item(); }
  bool binary(json::binary_t&) { return Item(); }
  bool start_object(std::size_t) { return Item() && Open(false); }
  bool key(json::string_t&) { return budget_.Count(); }
  bool end_object() { return Close(); }
  bool start_array(std::size_t) { return Item() && Open(true); }
  bool end_array() { return Close(); }
  bool parse_error(std::size_t, const std::string&, const json::exception&) { return false; }

  const std::string& over_limit() const { return budget_.reason(); }

 private:
  // A value counts as an item inside a list; inside an object its key was counted.
  bool Item() { return in_list_.empty() || !in_list_.back() || budget_.Count(); }
  bool Open(bool list) {
    in_list_.push_back(list);
    return budget_.Open();
  }
  bool Close() {
    in_list_.pop_back();
    budget_.Close();
    return true;
  }

  scenario::StructureBudget budget_;
  std::vector<bool> in_list_;
};

constexpr std::string_view kScenarioLimitFlags =
    " (faultline serve --max-scenario-depth, --max-scenario-keys, --max-scenario-bytes, "
    "--max-scenario-events)";

struct BodyError {
  std::string message;
  bool over_limit = false;
};

// The create request's own object and its "scenario" object add a level and four keys.
scenario::ParseLimits BodyLimits(scenario::ParseLimits limits) {
  limits.max_depth += 1;
  limits.max_keys += 4;
  return limits;
}

std::expected<json, BodyError> ParseBody(std::string_view text,
                                         const scenario::ParseLimits& limits) {
  JsonBudget budget(BodyLimits(limits));
  const bool fits = json::sax_parse(text, &budget);
  if (!budget.over_limit().empty()) {
    return std::unexpected(BodyError{budget.over_limit() + std::string(kScenarioLimitFlags), true});
  }
  json body = fits ? json::parse(text, nullptr, /*allow_exceptions=*/false) : json();
  if (!fits || body.is_discarded() || !body.is_object()) {
    // A YAML or empty body is the usual slip: say what the body is.
    return std::unexpected(
        BodyError{"the request body must be a JSON object: {\"scenario\": {...}} or "
                  "{\"scenario_text\": \"<YAML>\"}, with optional \"id\" and \"seed\"",
                  false});
  }
  return body;
}

std::expected<CreateRequest, std::string> ParseCreateRequest(json body) {
  for (const auto& [key, value] : body.items()) {
    if (key != "scenario" && key != "scenario_text" && key != "id" && key != "seed") {
      return std::unexpected(
          fmt::format("unknown key \"{}\" (expected scenario | scenario_text, id, seed)", key));
    }
  }
  CreateRequest request;
  auto scenario_text = ScenarioText(body);
  if (!scenario_text) return std::unexpected(scenario_text.error());
  request.scenario_text = std::move(*scenario_text);
  if (body.contains("id")) {
    if (!body["id"].is_string()) return std::unexpected("\"id\" must be a string");
    request.id = body["id"].get<std::string>();
  }
  if (body.contains("seed")) {
    if (!body["seed"].is_number_unsigned()) {
      return std::unexpected("\"seed\" must be a non-negative integer");
    }
    request.seed = body["seed"].get<std::uint64_t>();
  }
  return request;
}

HttpReply ScenarioTooLarge(SessionHost& host, std::string message) {
  host.Reject(Rejection::kScenario);
  return JsonError(413, "scenario_too_large", message);
}

HttpReply AddSessionFailure(const AddSessionError& error) {
  switch (error.code) {
    case AddSessionError::Code::kDuplicate:
      return JsonError(409, "conflict", error.message);
    case AddSessionError::Code::kInvalid:
      return JsonError(400, "invalid_request", error.message);
    case AddSessionError::Code::kLimit:
      return JsonError(429, "limit_exceeded", error.message);
    case AddSessionError::Code::kListener:
      break;
  }
  return JsonError(500, "listener_error", error.message);
}

HttpReply CreateSession(SessionHost& host, std::string_view text) {
  auto body = ParseBody(text, host.scenario_limits());
  if (!body && body.error().over_limit) return ScenarioTooLarge(host, body.error().message);
  if (!body) return JsonError(400, "invalid_request", body.error().message);
  auto request = ParseCreateRequest(std::move(*body));
  if (!request) return JsonError(400, "invalid_request", request.error());
  auto scenario =
      scenario::ParseScenario(request->scenario_text, "<control-api>", host.scenario_limits());
  if (!scenario && scenario.error().over_limit) {
    return ScenarioTooLarge(host, scenario.error().ToString() + std::string(kScenarioLimitFlags));
  }
  if (!scenario) return JsonError(400, "invalid_scenario", scenario.error().ToString());
  auto session = host.CreateSession(std::move(*scenario), request->id, request->seed);
  if (!session) return AddSessionFailure(session.error());
  return JsonReply(201, SessionObject(**session, host.Now()));
}

HttpReply ListSessions(const SessionHost& host) {
  json sessions = json::array();
  const WallTime now = host.Now();
  for (const auto& session : host.ListSessions()) sessions.push_back(SessionObject(*session, now));
  return JsonReply(200, {{"sessions", std::move(sessions)}});
}

std::uint64_t SinceParameter(std::string_view query) {
  std::uint64_t since = 0;
  for (std::size_t pos = 0; pos < query.size();) {
    const std::size_t end = std::min(query.find('&', pos), query.size());
    const std::string_view pair = query.substr(pos, end - pos);
    if (pair.starts_with("since=")) {
      const auto digits = pair.substr(6);
      std::from_chars(digits.data(), digits.data() + digits.size(), since);
    }
    pos = end + 1;
  }
  return since;
}

HttpReply JournalReply(const SessionState& session, std::string_view query) {
  const auto journal = session.journal();
  auto entries = journal->Snapshot();
  const std::uint64_t since = SinceParameter(query);
  std::erase_if(entries, [since](const JournalEntry& entry) { return entry.index < since; });
  return HttpReply{
      200, "application/json", JournalToJson(session.id(), entries, journal->dropped()), {}};
}

HttpReply UnknownSession(std::string_view id) {
  return JsonError(404, "not_found", fmt::format("no session with id \"{}\"", id));
}

// GET /_faultline/sessions/<id>[/journal]; the id may itself contain '/', so an exact session
// match wins over the suffix reading.
HttpReply GetSessionResource(const SessionHost& host, std::string_view rest,
                             std::string_view query) {
  if (auto session = host.FindSession(rest))
    return JsonReply(200, SessionObject(*session, host.Now()));
  constexpr std::string_view kJournal = "/journal";
  if (rest.ends_with(kJournal)) {
    const auto id = rest.substr(0, rest.size() - kJournal.size());
    if (auto session = host.FindSession(id)) return JournalReply(*session, query);
    return UnknownSession(id);
  }
  return UnknownSession(rest);
}

HttpReply SessionResource(SessionHost& host, std::string_view method, std::string_view rest,
                          std::string_view query) {
  if (method == "GET") return GetSessionResource(host, rest, query);
  if (method == "DELETE") {
    if (!host.DeleteSession(rest)) return UnknownSession(rest);
    return JsonReply(200, {{"deleted", std::string(rest)}});
  }
  constexpr std::string_view kReset = "/reset";
  if (method == "POST" && rest.ends_with(kReset)) {
    const auto id = rest.substr(0, rest.size() - kReset.size());
    auto session = host.ResetSession(id);
    if (!session) return UnknownSession(id);
    return JsonReply(200, SessionObject(*session, host.Now()));
  }
  if (method == "POST") return JsonError(404, "not_found", "POST is only for .../<id>/reset");
  return MethodNotAllowed("GET, POST, DELETE");
}

json ControlIndex(const SessionHost& host) {
  const std::string base = host.base_url() + std::string(kControlPrefix);
  return json::array({"GET " + base + "/health", "GET " + base + "/stats",
                      "GET " + base + "/sessions", "POST " + base + "/sessions",
                      "GET " + base + "/sessions/<id>", "GET " + base + "/sessions/<id>/journal",
                      "POST " + base + "/sessions/<id>/reset",
                      "DELETE " + base + "/sessions/<id>"});
}

struct HostPort {
  std::string host;  // lower case, without brackets
  std::optional<std::uint16_t> port;
};

// "host", "host:port", "[v6]" or "[v6]:port" (RFC 9110 §7.2), or nullopt.
std::optional<HostPort> ParseHostPort(std::string_view text) {
  std::string_view host = text;
  std::optional<std::string_view> port;
  if (text.starts_with('[')) {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = text.substr(1, close - 1);
    const std::string_view rest = text.substr(close + 1);
    if (!rest.empty() && !rest.starts_with(':')) return std::nullopt;
    if (!rest.empty()) port = rest.substr(1);
  } else if (const std::size_t colon = text.find(':'); colon != std::string_view::npos) {
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (host.empty()) return std::nullopt;
  HostPort out;
  std::transform(host.begin(), host.end(), std::back_inserter(out.host),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (port) {
    std::uint16_t value = 0;
    const auto [end, ec] = std::from_chars(port->data(), port->data() + port->size(), value);
    if (port->empty() || ec != std::errc() || end != port->data() + port->size()) {
      return std::nullopt;
    }
    out.port = value;
  }
  return out;
}

// localhost, a loopback address, the bound address (any address when bound to all of them: an
// address literal cannot be rebound), or a name the operator allowed.
bool HostIsOurs(const ControlAccess& access, const std::string& host) {
  if (host == "localhost") return true;
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(host, ec);
  if (!ec) {
    const auto bound = boost::asio::ip::make_address(access.bound_host, ec);
    return address.is_loopback() || (!ec && (bound.is_unspecified() || bound == address));
  }
  return std::ranges::any_of(access.allowed_hosts, [&](const std::string& allowed) {
    return boost::beast::iequals(allowed, host);
  });
}

bool SameSecret(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char difference = 0;
  for (std::size_t i = 0; i < a.size(); ++i) difference |= static_cast<unsigned char>(a[i] ^ b[i]);
  return difference == 0;
}

std::optional<std::string> ForeignRequestReason(const ControlAccess& access,
                                                const HttpRequest& request, std::uint16_t port) {
  if (!request.HasHeader("host")) return "a control request needs a Host header";
  const auto host = ParseHostPort(request.Header("host"));
  if (!host || !HostIsOurs(access, host->host) || (host->port && *host->port != port)) {
    return "the Host header does not name this server (use localhost or its address; faultline "
           "serve --allow-host adds names)";
  }
  if (request.HasHeader("origin")) {
    constexpr std::string_view kScheme = "http://";
    const std::string_view origin = request.Header("origin");
    const auto from = origin.size() > kScheme.size() &&
                              boost::beast::iequals(origin.substr(0, kScheme.size()), kScheme)
                          ? ParseHostPort(origin.substr(kScheme.size()))
                          : std::nullopt;
    if (!from || !HostIsOurs(access, from->host) || from->port.value_or(80) != port) {
      return "a control request from another origin (a web page) is refused";
    }
  }
  const std::string_view site = request.Header("sec-fetch-site");
  if (boost::beast::iequals(site, "cross-site") || boost::beast::iequals(site, "same-site")) {
    return "a control request from another site (a web page) is refused";
  }
  return std::nullopt;
}

}  // namespace

std::optional<HttpReply> ControlAccessDenied(const ControlAccess& access,
                                             const HttpRequest& request, std::uint16_t port) {
  if (auto reason = ForeignRequestReason(access, request, port)) {
    return JsonError(403, "forbidden", *reason);
  }
  if (access.token.empty()) return std::nullopt;
  constexpr std::string_view kBearer = "bearer ";
  const std::string_view authorization = request.Header("authorization");
  const bool bearer = authorization.size() > kBearer.size() &&
                      boost::beast::iequals(authorization.substr(0, kBearer.size()), kBearer);
  if (bearer && SameSecret(authorization.substr(kBearer.size()), access.token)) {
    return std::nullopt;
  }
  HttpReply reply = JsonError(401, "unauthorized",
                              "the control API needs \"Authorization: Bearer <token>\" with the "
                              "token faultline serve printed (or was given)");
  reply.headers.push_back({"WWW-Authenticate", "Bearer realm=\"faultline\""});
  return reply;
}

bool IsMonitoringRequest(std::string_view method, std::string_view target) {
  const std::string_view path = target.substr(0, target.find('?'));
  return method == "GET" && (path == "/_faultline/health" || path == "/_faultline/stats");
}

HttpReply JsonError(int status, std::string_view type, std::string_view message) {
  json body = {{"error", {{"type", std::string(type)}, {"message", std::string(message)}}}};
  return JsonReply(status, body);
}

std::string SessionJson(const SessionState& session, WallTime now) {
  return Dump(SessionObject(session, now));
}

HttpReply HandleControlRequest(SessionHost& host, std::string_view method, std::string_view target,
                               std::string_view body) {
  const std::size_t query_start = target.find('?');
  const std::string_view query =
      query_start == std::string_view::npos ? std::string_view{} : target.substr(query_start + 1);
  const std::string path = PercentDecode(target.substr(0, query_start));
  const std::string_view route = std::string_view(path).substr(kControlPrefix.size());
  if (route == "/health") {
    if (method != "GET") return MethodNotAllowed("GET");
    return JsonReply(200, {{"status", "ok"}, {"sessions", host.ListSessions().size()}});
  }
  if (route == "/stats") {
    if (method != "GET") return MethodNotAllowed("GET");
    return JsonReply(200, StatsObject(host.Stats()));
  }
  if (route == "/sessions" || route == "/sessions/") {
    if (method == "GET") return ListSessions(host);
    if (method == "POST") return CreateSession(host, body);
    return MethodNotAllowed("GET, POST");
  }
  constexpr std::string_view kSessions = "/sessions/";
  if (route.starts_with(kSessions)) {
    return SessionResource(host, method, route.substr(kSessions.size()), query);
  }
  json error = {{"error",
                 {{"type", "not_found"},
                  {"message", fmt::format("unknown control API path \"{}\"", path)},
                  {"endpoints", ControlIndex(host)}}}};
  return JsonReply(404, error);
}

HttpReply NotFoundHint(const SessionHost& host, std::string_view target) {
  constexpr std::size_t kMaxListed = 200;
  json sessions = json::array();
  const auto all = host.ListSessions();
  for (std::size_t i = 0; i < all.size() && i < kMaxListed; ++i) {
    sessions.push_back({{"id", all[i]->id()},
                        {"dialect", std::string(scenario::ToString(all[i]->scenario().dialect))},
                        {"base_url", all[i]->base_url()},
                        {"sdk_base_url", SdkBaseUrl(*all[i])}});
  }
  json error = {
      {"type", "not_found"},
      {"message",
       fmt::format("no faultline session at \"{}\": requests go to <session base_url>/v1/..., "
                   "see `sessions` (or GET {}/_faultline/sessions)",
                   target, host.base_url())},
      {"sessions", std::move(sessions)},
      {"control_api", ControlIndex(host)}};
  if (all.size() > kMaxListed) error["sessions_not_listed"] = all.size() - kMaxListed;
  return JsonReply(404, {{"error", std::move(error)}});
}

}  // namespace faultline::provider::internal
