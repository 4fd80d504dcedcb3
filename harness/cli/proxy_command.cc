#include "harness/cli/proxy_command.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>

#include "harness/cli/interrupt.h"
#include "harness/cli/serve_command.h"
#include "proxy/proxy_cassette.h"
#include "proxy/server/proxy_server.h"
#include "scenarios/proxy_rules.h"

namespace faultline::cli {
namespace {

constexpr std::string_view kProxyFooter = R"(What it does:
  Every request to the proxy goes to the upstream (its URL's path before the request's), and the
  answer comes back byte for byte, unless a rule of --faults applies. The proxy knows the six
  dialects by their paths and reads their streams as they pass (SSE, Ollama's NDJSON, Bedrock's
  event stream), so a rule can act at event N or byte K of a live stream.

A rule file (docs/proxy.md):
  faultline: 1
  rules:
    - name: throttle-every-third           # what the journal calls it
      match: {path: /v1/chat/completions, requests: [3, 6, 9]}
      response: {status: 429, retry_after: {seconds: 2}}   # answered by the proxy
    - name: cut-streams
      probability: 0.5                     # drawn per request from --seed
      response:                            # acts on the upstream's 200 as it passes
        headers_delay: 300ms
        content:
          faults: [{after_event: 2, inject: provider_error, error: overloaded}]
          end: {kind: reset, after_event: 3, at_byte: 10}
  A rule's `response` is a scenario response entry: a non-2xx status (or a connection fault) is
  answered in the dialect's own words without calling the upstream; otherwise headers_delay,
  retry_after, retry_after_ms, should_retry, headers, content.faults and content.end act on the
  upstream's answer.

Example:
  faultline serve --listen 127.0.0.1:8080 &
  faultline proxy --upstream http://127.0.0.1:8080/s/basic/hello --faults rules.yaml \
      --journal proxy.jsonl
  OPENAI_BASE_URL=http://127.0.0.1:PORT/v1 your-app     # PORT: printed at start

Ctrl-C (SIGINT) or SIGTERM stops the proxy (exit code 0).)";

}  // namespace

CLI::App* AddProxyCommand(CLI::App& app, ProxyCommandOptions& options) {
  CLI::App* proxy = app.add_subcommand(
      "proxy", "Run a reverse proxy that applies fault rules to a real provider's live traffic.");
  proxy
      ->add_option("--upstream", options.upstream,
                   "http://HOST:PORT[/PATH] of the provider (or gateway) behind the proxy")
      ->required();
  proxy->add_option("--listen", options.listen, "ADDR:PORT to listen on ([::1]:PORT for IPv6)")
      ->capture_default_str();
  proxy->add_option("--faults", options.faults,
                    "Rule file (YAML or JSON): which requests get which fault; none: pass all");
  proxy->add_option("--seed", options.seed, "Seed of the rules' probability draws")
      ->capture_default_str();
  proxy->add_option("--journal", options.journal,
                    "Write both sides of every exchange to FILE, one JSON line each");
  proxy->add_option("--record", options.record,
                    "Write a cassette of every exchange into DIR (docs/cassettes.md), one file "
                    "each, to play back as a scenario: responses: [{cassette: FILE}]");
  proxy->add_flag("--allow-remote", options.allow_remote,
                  "Allow a --listen address beyond loopback");
  proxy->add_flag("--quiet", options.quiet, "No per-request log lines");
  proxy->footer(std::string(kProxyFooter));
  return proxy;
}

ExitCode RunProxy(const ProxyCommandOptions& options, std::ostream& out, std::ostream& err) {
  auto listen = ParseListenAddress(options.listen);
  if (!listen) {
    err << "faultline proxy: " << listen.error() << "\n";
    return ExitCode::kUsageError;
  }
  proxy::ProxyOptions proxy_options;
  proxy_options.listen_address = listen->host;
  proxy_options.port = listen->port;
  proxy_options.allow_remote = options.allow_remote;
  proxy_options.upstream = options.upstream;
  proxy_options.seed = options.seed;
  if (!options.faults.empty()) {
    auto rules = scenario::LoadProxyRules(options.faults);
    if (!rules) {
      err << "faultline proxy: " << rules.error().ToString() << "\n";
      return ExitCode::kUsageError;
    }
    proxy_options.rules = std::move(*rules);
  }
  auto journal = std::make_shared<std::ofstream>();
  if (!options.journal.empty()) {
    journal->open(options.journal, std::ios::out | std::ios::trunc);
    if (!*journal) {
      err << "faultline proxy: cannot write " << options.journal << "\n";
      return ExitCode::kUsageError;
    }
    proxy_options.journal = [journal](const std::string& line) { *journal << line << std::endl; };
  }
  if (!options.record.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.record, ec);
    if (ec) {
      err << "faultline proxy: cannot create " << options.record << ": " << ec.message() << "\n";
      return ExitCode::kUsageError;
    }
    proxy_options.exchange = [folder = std::filesystem::path(options.record),
                              &err](const proxy::ExchangeRecord& record) {
      const std::uint64_t index = record.client.index + 1;
      auto cassette = proxy::CassetteOf(record);
      if (!cassette) {
        err << "faultline proxy: #" << index << " not recorded: " << cassette.error() << "\n";
        return;
      }
      const std::filesystem::path file = folder / proxy::CassetteFileName(index, record.dialect);
      std::ofstream stream(file, std::ios::binary | std::ios::trunc);
      stream << scenario::WriteCassette(*cassette);
      if (!stream) err << "faultline proxy: cannot write " << file.string() << "\n";
    };
  }
  if (!options.quiet) {
    proxy_options.request_log = [&out](const std::string& line) { out << line << std::endl; };
  }
  const std::size_t rule_count = proxy_options.rules.rules.size();
  auto server = proxy::ProxyServer::Create(std::move(proxy_options));
  if (!server) {
    err << "faultline proxy: " << server.error() << "\n";
    return ExitCode::kUsageError;
  }
  {
    InterruptGuard guard([&server](const std::string&) { (*server)->Stop(); });
    out << "faultline proxy: listening on " << (*server)->base_url() << " -> " << options.upstream
        << " (" << rule_count << (rule_count == 1 ? " rule" : " rules") << ", seed " << options.seed
        << ")" << std::endl;
    (*server)->Run();
  }
  out << "faultline proxy: stopped after " << (*server)->exchanges() << " exchanges" << std::endl;
  return ExitCode::kSuccess;
}

}  // namespace faultline::cli
