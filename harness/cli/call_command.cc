#include "harness/cli/call_command.h"

#include <fmt/format.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <chrono>
#include <csignal>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>

#include "fake_provider/journal_json.h"
#include "fleet/policy_file.h"
#include "harness/trace/protocol.h"
#include "harness/worlds/request_body.h"
#include "reference_impl/call.h"
#include "reference_impl/client_state.h"
#include "reference_impl/driver.h"
#include "reference_impl/policy_json.h"
#include "reference_impl/route_json.h"
#include "scenarios/parse_limits.h"

namespace faultline::cli {
namespace {

using nlohmann::json;
namespace ref = faultline::ref;

// Room for a whole short answer from a real provider (Anthropic requires max_tokens).
constexpr int kCallMaxTokens = 1024;

// The request for one user message, in the dialect's shape: the body `faultline run` sends too
// (harness/worlds/request_body.h), with the model, message and stream flag of the flags.
json RequestBody(ref::Dialect dialect, const CallCommandOptions& options) {
  scenario::RequestSpec request;
  request.model = options.model;
  request.message = options.message;
  request.stream = !options.no_stream;
  request.max_tokens = kCallMaxTokens;
  return harness::RequestBody(*scenario::ParseDialect(ref::ToString(dialect)), request);
}

// The options that end up in JSON (the request body, the retry log, response ids) must be UTF-8:
// an error naming the first one that is not, else nullopt.
std::optional<std::string> NonUtf8Option(const CallCommandOptions& options) {
  for (const auto& [flag, value] :
       {std::pair<std::string_view, const std::string&>{"--message", options.message},
        {"--model", options.model},
        {"--call-id", options.call_id}}) {
    if (!provider::IsValidUtf8(value)) return fmt::format("{} must be valid UTF-8", flag);
  }
  return std::nullopt;
}

// The retry RNG's seed: the given one, else a random one (a fleet of processes started with the
// same seed would draw the same jitter and retry in lockstep, which jitter exists to prevent).
std::uint64_t SeedOf(const CallCommandOptions& options) {
  if (options.seed) return *options.seed;
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

std::string FailureText(const ref::Failure& failure) {
  std::string out = fmt::format("{} ({}, phase {}", ToString(failure.code),
                                ToString(failure.failure_class), ToString(failure.phase));
  if (failure.status) out += fmt::format(", status {}", *failure.status);
  out += fmt::format(", {})", failure.retryable ? "retryable" : "not retryable");
  if (!failure.message.empty()) out += ": " + failure.message;
  return out;
}

// One readable line per event, prefixed with the time since the call started.
std::string HumanLine(const ref::LifecycleEvent& event, std::chrono::milliseconds since) {
  const std::string at = fmt::format("[{:>7.3f}s]", since.count() / 1000.0);
  switch (event.type) {
    case ref::EventType::kHello:
      return fmt::format("{} client {} {}, policy {}", at, event.name, event.version,
                         ref::DumpJson(event.policy));
    case ref::EventType::kStart:
      return fmt::format("{} attempt {} started ({})", at, event.attempt, event.response_id);
    case ref::EventType::kChunk:
      if (event.text) return fmt::format("{} chunk {}", at, ref::DumpJson(*event.text));
      return fmt::format("{} tool-call fragment #{} {} {}", at, event.tool_call->index,
                         event.tool_call->name, ref::DumpJson(event.tool_call->arguments));
    case ref::EventType::kInterrupted:
      return fmt::format("{} attempt {} interrupted: {}; retry in {} ms ({})", at, event.attempt,
                         FailureText(*event.failure), event.scheduled_retry.count(),
                         ToString(event.delay_source));
    case ref::EventType::kCommitted:
      return fmt::format("{} committed attempt {} (finish {}, {} tool calls): {}", at,
                         event.attempt, event.committed->finish_reason,
                         event.committed->tool_calls.size(), ref::DumpJson(event.committed->text));
    case ref::EventType::kFailed:
      return fmt::format("{} failed: {}", at, FailureText(*event.failure));
  }
  return at;
}

// Lets the stdin reader cancel the call while (and only while) the io_context is alive.
struct CancelGate {
  std::mutex mutex;
  std::shared_ptr<ref::CallDriver> driver;  // guarded by mutex
  bool closed = false;                      // guarded by mutex
  bool requested = false;                   // guarded by mutex: a cancel came before the driver

  void Cancel() {
    std::lock_guard lock(mutex);
    requested = true;
    if (!closed && driver) driver->Cancel();
  }
  void Attach(std::shared_ptr<ref::CallDriver> launched) {
    std::lock_guard lock(mutex);
    driver = std::move(launched);
    if (requested) driver->Cancel();
  }
  void Close() {
    std::lock_guard lock(mutex);
    closed = true;
    driver.reset();
  }
};

// A stdin line as JSON: discarded when it is not JSON or nests deeper than any outside JSON may
// (its fields are dumped and compared later, which recurses as deep as it nests).
json ParseStdinLine(std::string_view line) {
  if (scenario::NestsDeeperThan(line, scenario::kMaxJsonDepth)) return json::value_t::discarded;
  return json::parse(line, nullptr, /*allow_exceptions=*/false);
}

// Reads stdin lines after the call line; a {"type":"cancel"} line cancels. Detached: it may stay
// blocked in a read until the process exits.
void WatchForCancel(std::istream& in, std::shared_ptr<CancelGate> gate) {
  std::thread([&in, gate] {
    std::string line;
    while (std::getline(in, line)) {
      const json message = ParseStdinLine(line);
      if (message.is_object() && message.value("type", "") == "cancel") {
        gate->Cancel();
        return;
      }
    }
  }).detach();
}

struct Outcome {
  bool committed = false;
};

// `message[key]` if it is a string, else `fallback` (the call line is untrusted input).
std::string StringField(const json& message, const char* key, const std::string& fallback) {
  const auto it = message.find(key);
  return it != message.end() && it->is_string() ? it->get<std::string>() : fallback;
}

// Opens the durable retry log at `path` (if any) and fills in what a restart recovers from it.
// `log` keeps the log alive for the call.
std::expected<void, std::string> AttachRetryLog(const std::string& path,
                                                std::unique_ptr<ref::RetryLog>& log,
                                                ref::CallOptions& options) {
  if (path.empty()) return {};
  auto storage = ref::FileRetryLogStorage::Open(path, /*fsync=*/true);
  if (!storage) return std::unexpected(fmt::format("--retry-log {}: {}", path, storage.error()));
  log = std::make_unique<ref::RetryLog>(std::move(*storage));
  auto recovered = log->Recover(options.call_id);
  if (!recovered) {
    return std::unexpected(fmt::format("--retry-log {}: {}", path, recovered.error()));
  }
  if (recovered->records > 0) options.recovered = *recovered;
  options.retry_log = log.get();
  return {};
}

using SteadyTime = std::chrono::steady_clock::time_point;

// One adapter-protocol line, stamped with the time since `start` (harness::protocol::kAtMs).
void WriteJsonLine(const ref::LifecycleEvent& event, SteadyTime start, std::ostream& out) {
  const double at_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  out << harness::protocol::StampedLine(event.ToJson(), at_ms) << std::endl;
}

// An event as it comes: a protocol line (`json`) or a line for people.
void PrintEvent(const ref::LifecycleEvent& event, bool json, SteadyTime start, std::ostream& out) {
  if (json) {
    WriteJsonLine(event, start, out);
    return;
  }
  const auto since = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  out << HumanLine(event, since) << std::endl;
}

// Runs the call on this thread, printing every event as it comes, timed from `start`. One
// thread runs `io`, so the signal set may be cancelled from the call's strand.
Outcome Execute(ref::CallRequest request, ref::RetryPolicy policy, ref::CallOptions options,
                bool json, SteadyTime start, std::ostream& out,
                const std::shared_ptr<CancelGate>& gate) {
  // The process is a client of this one call: its budget and breakers serve the call. Declared
  // before the io_context, so that it outlives any handler that still holds the call.
  const ref::ClientState client(policy);
  options = client.Share(std::move(options));
  boost::asio::io_context io;
  Outcome outcome;
  ref::DriverCallbacks callbacks;
  callbacks.on_event = [&](const ref::LifecycleEvent& event) {
    if (event.type == ref::EventType::kCommitted) outcome.committed = true;
    PrintEvent(event, json, start, out);
  };
  // Ctrl-C / SIGTERM cancel the call (it then ends with ABORTED, as a runner's cancel would).
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  callbacks.on_done = [&signals] { signals.cancel(); };
  auto driver = ref::CallDriver::Launch(io, std::move(request), std::move(policy),
                                        std::move(options), std::move(callbacks));
  signals.async_wait([driver](const boost::system::error_code& ec, int) {
    if (!ec) driver->Cancel();
  });
  if (gate) gate->Attach(driver);
  io.run();
  if (gate) gate->Close();
  return outcome;
}

// Whether `call` has the shape of a call line: a base URL and a request object.
bool IsCallLine(const json& call) {
  return call.is_object() && call.value("type", "") == "call" && call.contains("request") &&
         call["request"].is_object() && call.contains("base_url") && call["base_url"].is_string();
}

// The request the call line asks for, with every route of the logical model when it carries them
// (the client fails over).
std::expected<ref::CallRequest, std::string> CallLineRequest(const json& call,
                                                             const CallCommandOptions& options) {
  const auto dialect = ref::ParseDialect(call.value("dialect", "openai-chat"));
  auto url = ref::ParseBaseUrl(call["base_url"].get<std::string>());
  if (!dialect || !url) return std::unexpected(url ? "unknown dialect" : url.error());
  const json& body = call["request"];
  ref::CallRequest request{.dialect = *dialect,
                           .base_url = std::move(*url),
                           .api_key = StringField(call, "api_key", options.api_key),
                           .body = ref::DumpJson(body),
                           .stream = body.value("stream", false),
                           .idempotency_key = std::nullopt,
                           .extra_headers = {},
                           .routes = {}};
  if (const auto routes = call.find("routes"); routes != call.end()) {
    auto read = ref::RoutesFromJson(*routes);
    if (!read) return std::unexpected("the call line's " + read.error());
    request.routes = std::move(*read);
  }
  return request;
}

// The call's id and seed: the runner's seed for this call, so that a run reproduces; else
// --seed or a random one.
ref::CallOptions CallLineOptions(const json& call, const CallCommandOptions& options) {
  const auto seed = call.find("seed");
  return ref::CallOptions{.call_id = StringField(call, "call_id", options.call_id),
                          .seed = seed != call.end() && seed->is_number_unsigned()
                                      ? seed->get<std::uint64_t>()
                                      : SeedOf(options)};
}

// What a call line asks for, with the retry log it names kept open for the call.
struct AdapterCall {
  ref::RetryPolicy policy;
  ref::CallRequest request;
  ref::CallOptions options;
  std::unique_ptr<ref::RetryLog> log;
};

// The call line's call: with `policy` (--policy's, else the defaults) unless the line carries
// the scenario's and no --policy overrides it.
std::expected<AdapterCall, std::string> AdapterCallOf(const json& call,
                                                      const CallCommandOptions& options,
                                                      ref::RetryPolicy policy) {
  if (const auto asked = call.find("policy"); asked != call.end() && options.policy_file.empty()) {
    auto scenario_policy = ref::PolicyFromJson(*asked);
    if (!scenario_policy) {
      return std::unexpected("the call line's policy is invalid " +
                             scenario_policy.error().ToString());
    }
    policy = std::move(*scenario_policy);
  }
  auto request = CallLineRequest(call, options);
  if (!request) return std::unexpected(request.error());
  AdapterCall adapter_call{std::move(policy), std::move(*request), CallLineOptions(call, options),
                           nullptr};
  if (auto attached = AttachRetryLog(StringField(call, "retry_log", options.retry_log),
                                     adapter_call.log, adapter_call.options);
      !attached) {
    return std::unexpected(attached.error());
  }
  return adapter_call;
}

// Says `message` on `err` as `command`'s usage error.
ExitCode UsageError(std::ostream& err, std::string_view command, std::string_view message) {
  err << command << ": " << message << "\n";
  return ExitCode::kUsageError;
}

// `faultline call --adapter --session`: one client serves every call of a scenario run
// (docs/adapter-protocol.md, "Session mode"). The first call line settles the policy (as in
// RunAdapter) and the hello declares session mode; every call line starts a call of that one
// client, so its breakers and retry budget serve them all; every event carries its call; a
// cancel ends the call it names. The hello declares `reset`: after a run's last call, a reset line
// drops the client (its breakers and budget) once every call has ended and is answered with
// adapter/reset; the next call line starts a new client, with a hello of its own, as a new process
// would. Stdin is read on a thread of its own, whose lines are carried onto the one thread that
// runs the calls. Ends when stdin ends and every call has ended.
class SessionAdapter {
 public:
  SessionAdapter(const CallCommandOptions& options, ref::RetryPolicy policy, SteadyTime start,
                 std::ostream& out)
      : options_(options), base_policy_(std::move(policy)), start_(start), out_(out) {}

  // Runs until stdin (`in`) ends and every call has ended; the exit code.
  ExitCode Run(const json& first, std::istream& in) {
    Start(first);
    // Joined below: the loop ends only once the reader has posted the end of stdin, its last act.
    std::thread reader([this, &in] { ReadLines(in); });
    // Ctrl-C / SIGTERM cancel every call; the process still ends with its stdin.
    boost::asio::signal_set signals(io_, SIGINT, SIGTERM);
    signals.async_wait([this](const boost::system::error_code& ec, int) {
      if (ec) return;
      for (auto& [call, driver] : drivers_) driver->Cancel();
    });
    auto work = boost::asio::make_work_guard(io_);  // the reader's next line may still come
    while (!(input_ended_ && running_ == 0)) io_.run_one();
    reader.join();
    work.reset();
    signals.cancel();
    io_.run();  // let the drivers finish closing
    return failed_ == 0 ? ExitCode::kSuccess : ExitCode::kChecksFailed;
  }

 private:
  void ReadLines(std::istream& in) {
    std::string line;
    while (std::getline(in, line)) {
      boost::asio::post(io_, [this, message = ParseStdinLine(line)] {
        if (message.is_object() && message.value("type", "") == "cancel") {
          const auto found = drivers_.find(message.value("call", 0));
          if (found != drivers_.end()) found->second->Cancel();
        } else if (message.is_object() && message.value("type", "") == "reset") {
          reset_due_ = true;
          ResetWhenIdle();
        } else if (IsCallLine(message)) {
          Start(message);
        }
      });
    }
    boost::asio::post(io_, [this] { input_ended_ = true; });
  }

  // A call of the session's client; one the line does not describe well is skipped, saying why.
  void Start(const json& line) {
    const int call = line.value("call", 0);
    auto adapter_call = AdapterCallOf(line, options_, base_policy_);
    if (!adapter_call) {
      std::cerr << "faultline call --adapter --session: call " << call << ": "
                << adapter_call.error() << "\n";
      return;
    }
    if (client_ == nullptr) {  // the first call's policy is the client's
      policy_ = adapter_call->policy;
      client_ = clients_.emplace_back(std::make_unique<ref::ClientState>(policy_)).get();
      json hello = ref::HelloEvent(policy_).ToJson();
      hello["mode"] = "session";
      hello["reset"] = true;
      Write(std::move(hello));
    }
    ref::DriverCallbacks callbacks;
    callbacks.on_event = [this, call](const ref::LifecycleEvent& event) {
      json line = event.ToJson();
      line["call"] = call;
      Write(std::move(line));
      if (event.type == ref::EventType::kFailed) ++failed_;
    };
    callbacks.on_done = [this] {
      --running_;
      ResetWhenIdle();
    };
    ++running_;
    logs_.push_back(std::move(adapter_call->log));
    drivers_[call] = ref::CallDriver::Launch(io_, std::move(adapter_call->request), policy_,
                                             client_->Share(std::move(adapter_call->options)),
                                             std::move(callbacks));
  }

  // A reset line came: once no call runs, the client is dropped (kept alive, unused, for handlers
  // that may still hold it) and the reset answered.
  void ResetWhenIdle() {
    if (!reset_due_ || running_ > 0) return;
    reset_due_ = false;
    client_ = nullptr;
    drivers_.clear();
    Write({{"type", "adapter/reset"}});
  }

  void Write(json line) {
    const double at_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
            .count();
    out_ << harness::protocol::StampedLine(std::move(line), at_ms) << std::endl;
  }

  const CallCommandOptions& options_;
  const ref::RetryPolicy base_policy_;  // --policy's, or the default, before a call line's
  ref::RetryPolicy policy_;             // the run's client's: its first call line's
  const SteadyTime start_;
  std::ostream& out_;
  // Before the io_context, so that they outlive any handler that still holds a call.
  std::vector<std::unique_ptr<ref::ClientState>> clients_;  // one per run; the last is current
  ref::ClientState* client_ = nullptr;  // nullptr: the next call line starts a run
  std::vector<std::unique_ptr<ref::RetryLog>> logs_;
  boost::asio::io_context io_;
  std::map<int, std::shared_ptr<ref::CallDriver>> drivers_;
  int running_ = 0;
  int failed_ = 0;
  bool input_ended_ = false;
  bool reset_due_ = false;
};

// `faultline call --adapter`: reads the call line, runs its call and writes the events as
// protocol lines (until a {"type":"cancel"} line on stdin cancels it).
ExitCode RunAdapter(const CallCommandOptions& options, std::istream& in, std::ostream& out,
                    std::ostream& err) {
  auto policy = fleet::PolicyOption(options.policy_file);
  if (!policy) return UsageError(err, "faultline call", policy.error());
  constexpr std::string_view kCommand = "faultline call --adapter";
  std::string line;
  if (!std::getline(in, line)) {
    return UsageError(err, kCommand, "expected a {\"type\":\"call\",...} line on stdin");
  }
  const SteadyTime start = std::chrono::steady_clock::now();  // at_ms counts from the call line
  const json call = ParseStdinLine(line);
  if (!IsCallLine(call)) {
    return UsageError(err, kCommand,
                      "the first line must be "
                      "{\"type\":\"call\",\"base_url\":..,\"dialect\":..,\"request\":{..}}");
  }
  if (options.session) return SessionAdapter(options, std::move(*policy), start, out).Run(call, in);
  auto adapter_call = AdapterCallOf(call, options, std::move(*policy));
  if (!adapter_call) return UsageError(err, kCommand, adapter_call.error());
  WriteJsonLine(ref::HelloEvent(adapter_call->policy), start, out);
  auto gate = std::make_shared<CancelGate>();
  WatchForCancel(in, gate);
  const Outcome outcome =
      Execute(std::move(adapter_call->request), std::move(adapter_call->policy),
              std::move(adapter_call->options), /*json=*/true, start, out, gate);
  return outcome.committed ? ExitCode::kSuccess : ExitCode::kChecksFailed;
}

// The request the command line asks for.
std::expected<ref::CallRequest, std::string> OptionsRequest(const CallCommandOptions& options) {
  const auto dialect = ref::ParseDialect(options.dialect);
  if (!dialect) {
    return std::unexpected("unknown dialect '" + options.dialect + "' (" +
                           scenario::DialectNames() + ")");
  }
  auto url = ref::ParseBaseUrl(options.base_url);
  if (!url) return std::unexpected(url.error());
  return ref::CallRequest{.dialect = *dialect,
                          .base_url = std::move(*url),
                          .api_key = options.api_key,
                          .body = ref::DumpJson(RequestBody(*dialect, options)),
                          .stream = !options.no_stream,
                          .idempotency_key = std::nullopt,
                          .extra_headers = {},
                          .routes = {}};
}

}  // namespace

CLI::App* AddCallCommand(CLI::App& app, CallCommandOptions& options) {
  CLI::App* call = app.add_subcommand(
      "call", "One LLM call with the reference recovery client, printing its lifecycle events.");
  call->add_option("--base-url", options.base_url,
                   "http://HOST:PORT[/PATH] of the provider (plain HTTP)");
  call->add_option("--dialect", options.dialect, scenario::DialectNames())->capture_default_str();
  call->add_option("--message", options.message, "the user message")->capture_default_str();
  call->add_option("--model", options.model, "model name (default: per dialect)");
  call->add_option("--api-key", options.api_key, "API key sent in the dialect's header");
  call->add_flag("--no-stream", options.no_stream, "ask for a whole JSON body, not a stream");
  call->add_option("--policy", options.policy_file,
                   "retry policy: a preset's name or a JSON or YAML file (docs/policy.md)");
  call->add_option("--seed", options.seed,
                   "seed of the retry RNG (default: random, so that concurrent calls spread "
                   "their retries)");
  call->add_flag("--json", options.json, "print the adapter protocol's JSON lines");
  call->add_flag("--adapter", options.adapter,
                 "speak the adapter protocol on stdin/stdout (docs/adapter-protocol.md)");
  call->add_flag("--session", options.session,
                 "with --adapter: serve every call of a scenario run in this one process, as "
                 "one client whose breakers and retry budget they share, and runs one after "
                 "another, a new client for each (the protocol's session mode, with reset)");
  call->add_option("--retry-log", options.retry_log,
                   "durable retry log (JSONL): each retry is logged before its wait; a restart "
                   "with the same file and --call-id continues the attempt count");
  call->add_option("--call-id", options.call_id, "the call's key in the retry log")
      ->capture_default_str();
  call->footer("Exit code: 0 committed, 1 failed, 2 usage or input error.");
  return call;
}

ExitCode RunCall(const CallCommandOptions& options, std::istream& in, std::ostream& out,
                 std::ostream& err) {
  constexpr std::string_view kCommand = "faultline call";
  if (auto bad = NonUtf8Option(options)) return UsageError(err, kCommand, *bad);
  if (options.adapter) return RunAdapter(options, in, out, err);
  if (options.base_url.empty()) {
    return UsageError(err, kCommand, "--base-url is required (or --adapter)");
  }
  auto request = OptionsRequest(options);
  if (!request) return UsageError(err, kCommand, request.error());
  auto policy = fleet::PolicyOption(options.policy_file);
  if (!policy) return UsageError(err, kCommand, policy.error());
  ref::CallOptions call_options{.call_id = options.call_id, .seed = SeedOf(options)};
  std::unique_ptr<ref::RetryLog> log;
  if (auto attached = AttachRetryLog(options.retry_log, log, call_options); !attached) {
    return UsageError(err, kCommand, attached.error());
  }
  const SteadyTime start = std::chrono::steady_clock::now();
  if (options.json) WriteJsonLine(ref::HelloEvent(*policy), start, out);
  const Outcome outcome = Execute(std::move(*request), std::move(*policy), std::move(call_options),
                                  options.json, start, out, nullptr);
  return outcome.committed ? ExitCode::kSuccess : ExitCode::kChecksFailed;
}

}  // namespace faultline::cli
