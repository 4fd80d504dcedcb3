#include "harness/cli/serve_command.h"

#include <fmt/format.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>

#include "fake_provider/server/server.h"
#include "scenarios/loader.h"

namespace faultline::cli {
namespace {

constexpr std::string_view kServeFooter = R"(Sessions:
  Every scenario becomes a session with its own base URL,
      http://HOST:PORT/s/<scenario name>
  that counts its own attempts, and answers each attempt as the scenario scripts it.
  Point a client at a session:
      OpenAI SDKs (openai-chat, openai-responses)   base_url = <session base URL>/v1
      Anthropic SDK (anthropic-messages)            base_url = <session base URL>
      Google Gen AI SDK (gemini)                    base_url = <session base URL>
      Ollama clients (ollama)                       host = <session base URL>
      AWS SDKs (bedrock-converse)                   endpoint_url = <session base URL>
      curl   POST <session base URL>/v1/chat/completions   (or /v1/messages, /v1/responses,
             /v1beta/models/MODEL:streamGenerateContent?alt=sse, /api/chat,
             /model/MODEL/converse-stream)
  A scenario with listener outages gets a port of its own (shown in its base URL), so it can
  refuse connections for a while without disturbing the other sessions.

Control API (JSON, same port):
  GET    /_faultline/health                 liveness
  GET    /_faultline/stats                  counters, limits, rejections, timer lateness
  GET    /_faultline/sessions               list the sessions and their base URLs
  POST   /_faultline/sessions               {"scenario": {...}} or {"scenario_text": "<YAML>"},
                                            optional "id" and "seed" -> 201 + the session
  GET    /_faultline/sessions/<id>          one session
  GET    /_faultline/sessions/<id>/journal  every request: arrival, headers, body, attempt,
                                            plan, each write, and how the exchange ended
  POST   /_faultline/sessions/<id>/reset    forget attempts, journal and rate-limit state
  DELETE /_faultline/sessions/<id>
  Any other path answers 404 with the list of session base URLs.

Security:
  The server listens on loopback only. Listening wider (--listen 0.0.0.0:PORT) needs
  --allow-remote, and then every control request needs "Authorization: Bearer <token>": the
  token is printed at start (or given with --control-token / FAULTLINE_CONTROL_TOKEN, which
  also requires it on loopback). Control requests must name this server in Host (localhost,
  its address, or an --allow-host name) and come from no other Origin, so a web page cannot
  drive the control API (cross-site requests, DNS rebinding). Journals redact credentials:
  headers named as one (Authorization, Cookie, x-api-key, Ocp-Apim-Subscription-Key, X-Auth-Key,
  *key*, *token*, *secret*, *auth*, *signature*, *password*) keep the name, 4 characters and the
  length; key-shaped values (sk-..., hf_..., AIza..., eyJ...) in any header, the query string's
  key, token, sig... parameters and the body's api_key, token, secret... fields at any depth
  become [redacted]; --journal-secrets keeps them whole, for debugging.

Limits:
  Each --max-* flag bounds what a client can make the server hold; past one the server
  answers 431 (header and trailer bytes), 413 (body, scenario depth or keys), 429 (sessions,
  listeners) or 503 (connections; health and stats still answer), and counts it under
  "rejected" in GET /_faultline/stats, which also lists the limits in force.

Judging a test suite's calls (docs/testing-your-app.md):
  faultline serve --listen 127.0.0.1:8080 --report faultline-reports --policy openai-node &
  OPENAI_BASE_URL=http://127.0.0.1:8080/s/demo/truncated-no-done/v1 npm test
  kill -INT %1; wait %1     # judged from the journals: exit 0 all passed, 1 a check failed
  Every session a client reached is judged as `faultline run --exec` judges an app; --outcome
  committed|failed says how the calls ended when the suite knows (else those checks are n/a).

Ctrl-C (SIGINT) or SIGTERM stops the server cleanly (exit code 0; with --report, the
judgement's: 0 all passed, 1 a check failed, 3 no session saw a request, 5 a report could
not be written).)";

std::expected<std::vector<scenario::Scenario>, std::string> LoadServeScenarios(
    const std::vector<std::string>& paths) {
  std::vector<std::filesystem::path> files(paths.begin(), paths.end());
  auto loaded = files.empty() ? scenario::LoadBuiltinCatalog() : scenario::LoadScenarios(files);
  if (loaded) return std::move(*loaded);
  std::string message;
  for (const auto& error : loaded.error()) message += error.ToString() + "\n";
  return std::unexpected(message);
}

// One line per finished request on `out`, flushed, serialised across server threads.
std::function<void(const std::string&)> RequestLogger(std::ostream& out) {
  auto mutex = std::make_shared<std::mutex>();
  return [&out, mutex](const std::string& line) {
    std::lock_guard lock(*mutex);
    out << line << std::endl;
  };
}

// The first line names the base URL for this machine; when bound wider than loopback, it also
// says what the listener is really bound to, and the token the control API needs.
void PrintListening(const provider::Server& server, std::ostream& out) {
  out << "faultline serve: listening on " << server.base_url();
  const std::string bound = server.bound_address();
  const bool loopback = bound.starts_with("127.") || bound.starts_with("[::1]");
  if (!server.base_url().ends_with("//" + bound)) {
    out << " (bound to " << bound << (loopback ? ")" : ": reachable from other machines)");
  } else if (!loopback) {
    out << " (reachable from other machines)";
  }
  out << "\n";
  if (!server.control_token().empty()) {
    out << "control API token: " << server.control_token()
        << "  (send \"Authorization: Bearer <token>\" on every control request)\n";
  }
}

void PrintSessions(const provider::Server& server, std::ostream& out) {
  PrintListening(server, out);
  std::size_t width = 0;
  for (const auto& session : server.Sessions()) width = std::max(width, session.id.size());
  const auto sessions = server.Sessions();
  for (const auto& session : sessions) {
    out << fmt::format("  {:<{}}  {:<18}  {}\n", session.id, width, session.dialect,
                       session.base_url);
  }
  if (sessions.empty()) {
    out << "  (no sessions yet: POST " << server.base_url() << "/_faultline/sessions)\n";
  }
  out << "control API: " << server.base_url() << "/_faultline/sessions" << std::endl;
}

// Stops the server on SIGINT/SIGTERM; a second signal exits at once.
class SignalStopper {
 public:
  explicit SignalStopper(provider::Server& server)
      : signals_(context_, SIGINT, SIGTERM), server_(server) {
    Arm();
    thread_ = std::thread([this] { context_.run(); });
  }
  ~SignalStopper() {
    boost::asio::post(context_, [this] { signals_.cancel(); });
    thread_.join();
  }

 private:
  void Arm() {
    signals_.async_wait([this](const boost::system::error_code& ec, int) {
      if (ec) return;
      if (stopping_) std::_Exit(130);
      stopping_ = true;
      server_.Stop();
      Arm();
    });
  }

  boost::asio::io_context context_{1};
  boost::asio::signal_set signals_;
  provider::Server& server_;
  bool stopping_ = false;
  std::thread thread_;
};

void AddSecurityOptions(CLI::App& serve, provider::ServerOptions& options) {
  serve.add_flag("--allow-remote", options.allow_remote,
                 "Allow a --listen address beyond loopback (the control API then needs a token)");
  serve
      .add_option("--control-token", options.control_token,
                  "Token the control API requires (Authorization: Bearer TOKEN); generated and "
                  "printed with --allow-remote when not given")
      ->envname("FAULTLINE_CONTROL_TOKEN");
  serve.add_option("--allow-host", options.allowed_hosts,
                   "Another Host name the control API answers to (repeatable), e.g. a DNS name "
                   "for this machine");
  serve.add_flag("--journal-secrets", options.journal_secrets,
                 "Journal credentials in clear: headers, query parameters and body fields "
                 "(debugging)");
}

// What one request and one scenario document may be.
void AddRequestLimitOptions(CLI::App& serve, provider::ServerOptions& options) {
  const auto positive = CLI::Range(std::size_t{1}, std::size_t{1} << 32);
  serve
      .add_option("--max-header-bytes", options.max_header_bytes,
                  "Request line + header + trailer fields, in bytes (more: 431)")
      ->check(CLI::Range(std::size_t{256}, std::size_t{1} << 24))
      ->capture_default_str();
  serve
      .add_option("--max-body-bytes", options.max_body_bytes,
                  "Largest request body accepted (larger: 413)")
      ->check(positive)
      ->capture_default_str();
  serve
      .add_option("--max-pending-body-bytes", options.max_pending_body_bytes,
                  "Body bytes of requests still arriving, over all connections (more: 503)")
      ->check(positive)
      ->capture_default_str();
  serve
      .add_option("--max-scenario-depth", options.scenario_limits.max_depth,
                  "Nesting of mappings and lists in a scenario document (deeper: 413)")
      ->check(CLI::Range(8, 1000))
      ->capture_default_str();
  serve
      .add_option("--max-scenario-keys", options.scenario_limits.max_keys,
                  "Keys plus list items in a scenario document, aliases counted where used "
                  "(more: 413)")
      ->check(CLI::Range(std::size_t{16}, std::size_t{10'000'000}))
      ->capture_default_str();
  serve
      .add_option("--max-scenario-bytes", options.scenario_limits.max_bytes,
                  "Bytes of text in a scenario document's keys and values, aliases counted "
                  "where used (more: 413)")
      ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 30))
      ->capture_default_str();
  serve
      .add_option("--max-scenario-events", options.scenario_limits.max_stream_events,
                  "Events a scenario's responses stream in all, which the plan renders ahead "
                  "of time: content, reasoning and tool-call deltas, injected faults, drip "
                  "writes (more: 413)")
      ->check(CLI::Range(std::size_t{100}, std::size_t{100'000'000}))
      ->capture_default_str();
}

// What the server holds at once: sessions, listeners, connections, and how long a request may
// take to arrive.
void AddCapacityOptions(CLI::App& serve, provider::ServerOptions& options) {
  const auto positive = CLI::Range(std::size_t{1}, std::size_t{1} << 32);
  serve.add_option("--max-sessions", options.max_sessions, "Sessions held at once (more: 429)")
      ->check(positive)
      ->capture_default_str();
  serve
      .add_option("--max-listeners", options.max_listeners,
                  "Dedicated listeners of sessions with listener outages (more: 429)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{60'000}))
      ->capture_default_str();
  serve
      .add_option("--max-connections", options.max_connections,
                  "Open connections, kept below the descriptor limit (more: 503; health and "
                  "stats still answer)")
      ->check(positive)
      ->capture_default_str();
  serve
      .add_option(
          "--request-timeout-ms",
          [&options](const CLI::results_t& values) {
            options.request_timeout = std::chrono::milliseconds(std::stoll(values.at(0)));
            return true;
          },
          "A request must arrive whole within this time (slow clients are cut off); also the "
          "idle time of a kept-alive connection")
      ->type_name("INT")  // a callback has no type of its own; the config schema reads it
      ->check(CLI::Range(100, 3'600'000))
      ->default_str(std::to_string(options.request_timeout.count()));
}

void AddLimitOptions(CLI::App& serve, provider::ServerOptions& options) {
  AddRequestLimitOptions(serve, options);
  AddCapacityOptions(serve, options);
}

}  // namespace

std::expected<ListenAddress, std::string> ParseListenAddress(std::string_view text) {
  std::string_view host = "127.0.0.1";
  std::string_view port_text = text;
  if (text.starts_with('[')) {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return std::unexpected(fmt::format("bad listen address \"{}\" (expected [ADDR]:PORT)", text));
    }
    host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else if (const std::size_t colon = text.rfind(':'); colon != std::string_view::npos) {
    if (text.find(':') != colon) {
      return std::unexpected(
          fmt::format("bad listen address \"{}\" (write IPv6 addresses as [ADDR]:PORT)", text));
    }
    if (colon > 0) host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  unsigned port = 0;
  const auto [end, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() ||
      port > 65535) {
    return std::unexpected(fmt::format("bad port in listen address \"{}\"", text));
  }
  if (host == "localhost") host = "127.0.0.1";
  return ListenAddress{std::string(host), static_cast<std::uint16_t>(port)};
}

CLI::App* AddServeCommand(CLI::App& app, ServeOptions& options) {
  CLI::App* serve = app.add_subcommand(
      "serve", "Run the fake LLM provider: one session per scenario, control API, journal.");
  serve->add_option("--listen", options.listen, "ADDR:PORT to listen on ([::1]:PORT for IPv6)")
      ->capture_default_str();
  serve->add_option("--scenario", options.scenarios,
                    "Scenario file or folder (repeatable); default: the built-in catalogue");
  serve->add_option("--seed", options.seed, "Seed for sessions that do not set one")
      ->capture_default_str();
  serve->add_option("--threads", options.threads, "Event-loop threads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  serve->add_flag("--quiet", options.quiet, "No per-request log lines");
  serve
      ->add_option("--journal-capacity", options.server.journal_capacity,
                   "Journal entries kept per session (older ones are dropped and counted)")
      ->capture_default_str();
  serve
      ->add_option("--max-journal-bytes", options.server.journal_max_bytes,
                   "Request bytes (target, headers, trailers, body) a session's journal keeps; "
                   "past it the oldest entries are dropped and counted")
      ->capture_default_str();
  AddSecurityOptions(*serve, options.server);
  AddLimitOptions(*serve, options.server);
  AddServeReportOptions(*serve, options.report);
  serve->footer(std::string(kServeFooter));
  return serve;
}

// The provider on `listen` with a session for every scenario, not serving yet.
std::expected<std::unique_ptr<provider::Server>, std::string> CreateServer(
    const ServeOptions& options, const ListenAddress& listen,
    const std::vector<scenario::Scenario>& scenarios, std::ostream& out) {
  provider::ServerOptions server_options = options.server;
  server_options.listen_address = listen.host;
  server_options.port = listen.port;
  server_options.threads = options.threads;
  server_options.seed = options.seed;
  if (!options.quiet) server_options.request_log = RequestLogger(out);
  auto server = provider::Server::Create(std::move(server_options));
  if (!server) return std::unexpected(server.error());
  for (const auto& scenario : scenarios) {
    if (auto added = (*server)->AddSession(scenario); !added) {
      return std::unexpected(scenario.source + ": " + added.error());
    }
  }
  return std::move(*server);
}

ExitCode RunServe(const ServeOptions& options, std::ostream& out, std::ostream& err) {
  auto listen = ParseListenAddress(options.listen);
  if (!listen) {
    err << "faultline serve: " << listen.error() << "\n";
    return ExitCode::kUsageError;
  }
  auto scenarios = LoadServeScenarios(options.scenarios);
  if (!scenarios) {
    err << scenarios.error();
    return ExitCode::kUsageError;
  }
  auto report = PlanServeReport(options.report);
  if (!report) {
    err << "faultline serve: " << report.error() << "\n";
    return ExitCode::kUsageError;
  }
  auto server = CreateServer(options, *listen, *scenarios, out);
  if (!server) {
    err << "faultline serve: " << server.error() << "\n";
    return ExitCode::kUsageError;
  }
  {
    SignalStopper stopper(**server);
    PrintSessions(**server, out);
    (*server)->Run();
  }
  out << "faultline serve: stopped" << std::endl;
  if (!*report) return ExitCode::kSuccess;
  return JudgeServedSessions(**server, *scenarios, **report, options.seed, out, err);
}

}  // namespace faultline::cli
