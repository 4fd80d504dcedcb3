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

#include "fake_provider/server.h"
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
      curl   POST <session base URL>/v1/chat/completions   (or /v1/messages, /v1/responses)
  A scenario with listener outages gets a port of its own (shown in its base URL), so it can
  refuse connections for a while without disturbing the other sessions.

Control API (JSON, same port):
  GET    /_faultline/health                 liveness
  GET    /_faultline/stats                  counters and timer lateness (p50/p99/max, us)
  GET    /_faultline/sessions               list the sessions and their base URLs
  POST   /_faultline/sessions               {"scenario": {...}} or {"scenario_text": "<YAML>"},
                                            optional "id" and "seed" -> 201 + the session
  GET    /_faultline/sessions/<id>          one session
  GET    /_faultline/sessions/<id>/journal  every request: arrival, headers, body, attempt,
                                            plan, each write, and how the exchange ended
  POST   /_faultline/sessions/<id>/reset    forget attempts, journal and rate-limit state
  DELETE /_faultline/sessions/<id>
  Any other path answers 404 with the list of session base URLs.

Ctrl-C (SIGINT) or SIGTERM stops the server cleanly (exit code 0).)";

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

void PrintSessions(const provider::Server& server, const std::vector<scenario::Scenario>& scenarios,
                   std::ostream& out) {
  out << "faultline serve: listening on " << server.base_url() << "\n";
  std::size_t width = 0;
  for (const auto& session : server.Sessions()) width = std::max(width, session.id.size());
  const auto sessions = server.Sessions();
  for (const auto& session : sessions) {
    std::string_view dialect = "?";
    for (const auto& scenario : scenarios) {
      if (scenario.name == session.scenario_name) dialect = scenario::ToString(scenario.dialect);
    }
    out << fmt::format("  {:<{}}  {:<18}  {}\n", session.id, width, dialect, session.base_url);
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
      ->add_option("--max-body-bytes", options.max_body_bytes,
                   "Largest request body accepted (larger: 413)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 32))
      ->capture_default_str();
  serve
      ->add_option("--journal-capacity", options.journal_capacity,
                   "Journal entries kept per session (older ones are dropped and counted)")
      ->capture_default_str();
  serve->footer(std::string(kServeFooter));
  return serve;
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
  provider::ServerOptions server_options;
  server_options.listen_address = listen->host;
  server_options.port = listen->port;
  server_options.threads = options.threads;
  server_options.seed = options.seed;
  server_options.max_body_bytes = options.max_body_bytes;
  server_options.journal_capacity = options.journal_capacity;
  if (!options.quiet) server_options.request_log = RequestLogger(out);
  auto server = provider::Server::Create(std::move(server_options));
  if (!server) {
    err << "faultline serve: " << server.error() << "\n";
    return ExitCode::kUsageError;
  }
  for (const auto& scenario : *scenarios) {
    if (auto added = (*server)->AddSession(scenario); !added) {
      err << "faultline serve: " << scenario.source << ": " << added.error() << "\n";
      return ExitCode::kUsageError;
    }
  }
  SignalStopper stopper(**server);
  PrintSessions(**server, *scenarios, out);
  (*server)->Run();
  out << "faultline serve: stopped" << std::endl;
  return ExitCode::kSuccess;
}

}  // namespace faultline::cli
