// `faultline call`: the built binary, run as a user (or the runner) would run it, against an
// in-process fake provider serving inline scenarios.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fake_provider/server/server.h"
#include "harness/tests/faultline_process.h"
#include "harness/trace/protocol.h"
#include "reference_impl/retry_log.h"
#include "scenarios/loader.h"

namespace faultline::cli {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

using Child = test_support::FaultlineProcess;

// The child's stdout as JSON lines.
std::vector<json> JsonLines(const test_support::FaultlineProcess& child) {
  std::vector<json> lines;
  std::istringstream in(child.out());
  std::string line;
  while (std::getline(in, line)) lines.push_back(json::parse(line, nullptr, false));
  return lines;
}

// An in-process fake provider with inline scenarios, served on its own thread.
class Provider {
 public:
  Provider() {
    auto server = provider::Server::Create({});
    EXPECT_TRUE(server.has_value());
    server_ = std::move(*server);
    thread_ = std::thread([this] { server_->Run(); });
  }
  ~Provider() {
    server_->Stop();
    thread_.join();
  }
  // Adds a scenario (the `responses:` block as YAML) and returns its session base URL.
  std::string Session(std::string_view name, std::string_view dialect, std::string_view responses) {
    const std::string yaml =
        "faultline: 1\nname: " + std::string(name) +
        "\ndescription: an inline test scenario\ndialect: " + std::string(dialect) +
        "\nrequest: {stream: true}\nresponses:\n" + std::string(responses);
    auto scenario = scenario::ParseScenario(yaml, "<test>");
    if (!scenario) {
      ADD_FAILURE() << scenario.error().ToString();
      return "http://127.0.0.1:1";
    }
    auto session = server_->AddSession(std::move(*scenario));
    if (!session) {
      ADD_FAILURE() << session.error();
      return "http://127.0.0.1:1";
    }
    return session->base_url;
  }

 private:
  std::unique_ptr<provider::Server> server_;
  std::thread thread_;
};

constexpr std::string_view kRateLimitThenOk = R"(  - status: 429
    error: rate_limit
    retry_after: {seconds: 1}
  - content:
      text: "Hello, world"
      chunk_size: 4
)";

constexpr std::string_view kTruncatedThenOk = R"(  - content:
      text: "Hello, world"
      chunk_size: 4
      end: no_terminator
  - content:
      text: "Hello, world"
      chunk_size: 4
)";

constexpr std::string_view kBadRequest = R"(  - status: 400
    error: invalid_request
)";

std::vector<std::string> Types(const std::vector<json>& lines) {
  std::vector<std::string> types;
  for (const json& line : lines) types.push_back(line.value("type", "<not json>"));
  return types;
}

TEST(CallCliTest, RateLimitThenSuccessAsJsonLines) {
  Provider provider;
  const std::string url = provider.Session("cli/rate", "openai-chat", kRateLimitThenOk);
  const auto started = Clock::now();
  Child child({"call", "--base-url", url, "--dialect", "openai-chat", "--json", "--seed", "3"});
  ASSERT_EQ(child.Wait(), 0) << child.err();
  EXPECT_GE(Clock::now() - started, 1s);  // Retry-After: 1 was honoured
  const auto lines = JsonLines(child);
  EXPECT_THAT(Types(lines),
              ::testing::ElementsAre("adapter/hello", "response/start", "response/interrupted",
                                     "response/start", "assistant/chunk", "assistant/chunk",
                                     "assistant/chunk", "response/committed"));
  EXPECT_EQ(lines[2]["failure"]["code"], "RATE_LIMIT");
  EXPECT_EQ(lines[2]["failure"]["status"], 429);
  EXPECT_EQ(lines[2]["delay_source"], "retry-after");
  EXPECT_GE(lines[2]["scheduled_retry_ms"].get<int>(), 1000);
  EXPECT_EQ(lines.back()["text"], "Hello, world");
  EXPECT_EQ(lines.back()["attempt"], 2);
  // Every line carries its time since the call began (protocol::kAtMs), never decreasing, and
  // each is a valid protocol line; the retry waited out Retry-After: 1.
  double previous = 0;
  for (const json& line : lines) {
    ASSERT_TRUE(line.contains("at_ms")) << line.dump();
    EXPECT_GE(line["at_ms"].get<double>(), previous) << line.dump();
    previous = line["at_ms"].get<double>();
    EXPECT_TRUE(harness::protocol::ParseLine(line.dump()).has_value()) << line.dump();
  }
  EXPECT_GE(lines[3]["at_ms"].get<double>() - lines[2]["at_ms"].get<double>(), 990);
}

TEST(CallCliTest, AtMsIsParsedInOnePlaceForEveryEvent) {
  using harness::protocol::ParseLine;
  EXPECT_TRUE(ParseLine(R"({"type":"response/start","response_id":"a","attempt":1,"at_ms":0})")
                  .has_value());
  EXPECT_TRUE(
      ParseLine(R"({"type":"adapter/hello","name":"x","version":"1","at_ms":12.5})").has_value());
  for (const char* bad : {R"({"type":"response/start","response_id":"a","attempt":1,"at_ms":-1})",
                          R"({"type":"response/start","response_id":"a","attempt":1,"at_ms":"5"})",
                          R"({"type":"adapter/hello","name":"x","version":"1","at_ms":null})"}) {
    auto parsed = ParseLine(bad);
    ASSERT_FALSE(parsed.has_value()) << bad;
    EXPECT_EQ(parsed.error().kind, "not-protocol");
    EXPECT_THAT(parsed.error().message, HasSubstr("at at_ms: expected"));
  }
}

TEST(CallCliTest, TruncatedThenSuccessForPeople) {
  Provider provider;
  const std::string url = provider.Session("cli/truncated", "openai-chat", kTruncatedThenOk);
  const std::filesystem::path policy =
      std::filesystem::temp_directory_path() / ("call_cli_policy_" + std::to_string(::getpid()));
  std::ofstream(policy) << R"({"max_attempts": 2, "backoff": {"base_ms": 10, "cap_ms": 50}})";
  Child child({"call", "--base-url", url, "--policy", policy.string()});
  ASSERT_EQ(child.Wait(), 0) << child.err();
  std::filesystem::remove(policy);
  EXPECT_THAT(child.out(), HasSubstr("attempt 1 started"));
  EXPECT_THAT(child.out(), HasSubstr("attempt 1 interrupted: STREAM_TRUNCATED"));
  EXPECT_THAT(child.out(), HasSubstr("committed attempt 2 (finish stop, 0 tool calls): "
                                     "\"Hello, world\""));
}

TEST(CallCliTest, BadRequestFailsWithExitCode1) {
  Provider provider;
  const std::string url = provider.Session("cli/bad", "anthropic-messages", kBadRequest);
  Child child({"call", "--base-url", url, "--dialect", "anthropic-messages", "--json"});
  ASSERT_EQ(child.Wait(), 1) << child.err();
  const auto lines = JsonLines(child);
  EXPECT_THAT(Types(lines),
              ::testing::ElementsAre("adapter/hello", "response/start", "response/failed"));
  EXPECT_EQ(lines.back()["failure"]["code"], "INVALID_REQUEST");
  EXPECT_EQ(lines.back()["failure"]["retryable"], false);
}

TEST(CallCliTest, UsageErrors) {
  Child no_url({"call"});
  EXPECT_EQ(no_url.Wait(), 2);
  EXPECT_THAT(no_url.err(), HasSubstr("--base-url"));
  Child bad_dialect({"call", "--base-url", "http://127.0.0.1:1", "--dialect", "nope"});
  EXPECT_EQ(bad_dialect.Wait(), 2);
  Child https({"call", "--base-url", "https://api.openai.com/v1"});
  EXPECT_EQ(https.Wait(), 2);
}

TEST(CallCliTest, AdapterModeSpeaksTheProtocol) {
  Provider provider;
  const std::string url = provider.Session("cli/adapter", "openai-chat", kTruncatedThenOk);
  Child child({"call", "--adapter"});
  const json call = {{"type", "call"},
                     {"base_url", url},
                     {"api_key", "sk-x"},
                     {"dialect", "openai-chat"},
                     {"request",
                      {{"model", "gpt-4o-mini"},
                       {"stream", true},
                       {"messages", json::array({{{"role", "user"}, {"content", "hi"}}})}}},
                     {"scenario", "cli/adapter"}};
  child.Write(call.dump() + "\n");
  ASSERT_EQ(child.Wait(), 0) << child.err();
  const auto lines = JsonLines(child);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front()["type"], "adapter/hello");
  EXPECT_TRUE(lines.front()["policy"].contains("max_retries"));
  EXPECT_EQ(lines.back()["type"], "response/committed");
  EXPECT_EQ(lines.back()["text"], "Hello, world");
}

TEST(CallCliTest, AdapterModeHonoursCancel) {
  Provider provider;
  const std::string url = provider.Session("cli/stall", "openai-chat", R"(  - content:
      text: "Hello, world"
      chunk_size: 4
      faults:
        - {after_event: 2, stall: forever}
)");
  Child child({"call", "--adapter"});
  const json call = {{"type", "call"},
                     {"base_url", url},
                     {"dialect", "openai-chat"},
                     {"request", {{"model", "m"}, {"stream", true}, {"messages", json::array()}}}};
  child.Write(call.dump() + "\n");
  ASSERT_TRUE(child.WaitForOutput("assistant/chunk")) << child.out() << child.err();
  child.Write("{\"type\":\"cancel\"}\n");
  ASSERT_EQ(child.Wait(10s), 1) << child.err();
  const auto lines = JsonLines(child);
  EXPECT_EQ(lines.back()["type"], "response/failed");
  EXPECT_EQ(lines.back()["failure"]["code"], "ABORTED");
  EXPECT_EQ(lines.back()["failure"]["phase"], "stream");
}

TEST(CallCliTest, InterruptCancelsTheCall) {
  Provider provider;
  const std::string url = provider.Session("cli/sigint", "openai-chat", R"(  - content:
      text: "Hello, world"
      chunk_size: 4
      faults:
        - {after_event: 2, stall: forever}
)");
  Child child({"call", "--base-url", url, "--json"});
  ASSERT_TRUE(child.WaitForOutput("assistant/chunk")) << child.out() << child.err();
  child.Signal(SIGINT);
  ASSERT_EQ(child.Wait(10s), 1) << child.err();
  EXPECT_EQ(JsonLines(child).back()["failure"]["code"], "ABORTED");
}

// A file in the temp directory, removed when the test ends.
class TempFile {
 public:
  explicit TempFile(std::string_view name, std::string_view contents = {})
      : path_(std::filesystem::temp_directory_path() /
              (std::string(name) + "_" + std::to_string(::getpid()))) {
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << contents;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  std::string path() const { return path_.string(); }
  std::string Read() const {
    std::ifstream file(path_, std::ios::binary);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  }

 private:
  std::filesystem::path path_;
};

constexpr std::string_view kFastPolicy =
    R"({"max_attempts": 3, "backoff": {"base_ms": 10, "cap_ms": 50}})";

std::int64_t WallMsFromNow(std::chrono::milliseconds offset) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             (std::chrono::system_clock::now() + offset).time_since_epoch())
      .count();
}

std::string LogLine(std::string_view call_id, int attempt, std::int64_t scheduled_at_ms) {
  return json{{"call_id", call_id},
              {"attempt", attempt},
              {"scheduled_at_ms", scheduled_at_ms},
              {"delay_ms", 10},
              {"delay_source", "backoff"},
              {"failure_code", "UNAVAILABLE"}}
             .dump() +
         "\n";
}

std::vector<json> OfType(const std::vector<json>& lines, std::string_view type) {
  std::vector<json> out;
  for (const json& line : lines) {
    if (line.value("type", "") == type) out.push_back(line);
  }
  return out;
}

TEST(CallCliTest, RetryLogIsWrittenBeforeTheWait) {
  Provider provider;
  const std::string url = provider.Session("cli/log", "openai-chat", R"(  - status: 503
    error: unavailable
    retry_after: {seconds: 1}
  - content:
      text: "Hello, world"
      chunk_size: 4
)");
  TempFile log("call_cli_retry_log");
  Child child({"call", "--base-url", url, "--json", "--retry-log", log.path(), "--call-id", "c-1"});
  ASSERT_TRUE(child.WaitForOutput("response/interrupted")) << child.out() << child.err();
  // Still inside the one-second wait: the record is already in the file.
  const std::string during = log.Read();
  EXPECT_EQ(child.out().find("response/committed"), std::string::npos);
  const ref::RecoveredCall seen = ref::RecoverFromLog(during, "c-1");
  EXPECT_EQ(seen.records, 2u);  // attempt 1 before it was sent, its retry before the wait
  EXPECT_EQ(seen.retries, 1);
  ASSERT_EQ(child.Wait(), 0) << child.err();
  ASSERT_FALSE(during.empty());
  EXPECT_EQ(during.back(), '\n');
  const std::size_t first_end = during.find('\n');
  const json started = json::parse(during.substr(0, first_end), nullptr, false);
  EXPECT_EQ(started["attempt"], 1);
  EXPECT_TRUE(started.contains("started_at_ms"));
  const json record = json::parse(during.substr(first_end + 1), nullptr, false);
  EXPECT_EQ(record["call_id"], "c-1");
  EXPECT_EQ(record["attempt"], 1);
  EXPECT_EQ(record["failure_code"], "UNAVAILABLE");
  EXPECT_EQ(record["delay_source"], "retry-after");
  EXPECT_GE(record["delay_ms"].get<int>(), 1000);
  // The successful attempt 2 logs its start, nothing more.
  const std::string after = log.Read();
  ASSERT_TRUE(after.starts_with(during)) << after;
  const json second = json::parse(after.substr(during.size()), nullptr, false);
  EXPECT_EQ(second["attempt"], 2);
  EXPECT_TRUE(second.contains("started_at_ms"));
  EXPECT_EQ(JsonLines(child).back()["attempt"], 2);
}

TEST(CallCliTest, RestartRecoversTheAttemptCountAndWaitsForTheLoggedTime) {
  Provider provider;
  const std::string url = provider.Session("cli/restart", "openai-chat", R"(  - status: 503
    error: unavailable
  - status: 503
    error: unavailable
)");
  TempFile policy("call_cli_restart_policy", kFastPolicy);
  // Two retries already scheduled; the second one is due in a second.
  const std::string before = LogLine("c-2", 1, WallMsFromNow(-5s)) +
                             LogLine("other", 1, WallMsFromNow(-5s)) +
                             LogLine("c-2", 2, WallMsFromNow(1s));
  TempFile log("call_cli_restart_log", before);
  const auto started = Clock::now();
  Child child({"call", "--base-url", url, "--json", "--policy", policy.path(), "--retry-log",
               log.path(), "--call-id", "c-2"});
  ASSERT_EQ(child.Wait(), 1) << child.err();
  EXPECT_GE(Clock::now() - started, 900ms);  // not before the logged retry time
  const auto lines = JsonLines(child);
  const auto starts = OfType(lines, "response/start");
  ASSERT_EQ(starts.size(), 1u);  // max_attempts 3, 2 already made: one more
  EXPECT_EQ(starts[0]["attempt"], 3);
  EXPECT_TRUE(OfType(lines, "response/interrupted").empty());
  EXPECT_EQ(lines.back()["type"], "response/failed");
  EXPECT_EQ(lines.back()["failure"]["code"], "UNAVAILABLE");
  // No retry was scheduled: only attempt 3's start was logged.
  const ref::RecoveredCall after = ref::RecoverFromLog(log.Read(), "c-2");
  EXPECT_TRUE(log.Read().starts_with(before));
  EXPECT_EQ(after.records, 3u);
  EXPECT_EQ(after.retries, 2);
  EXPECT_EQ(after.attempts_started, 3);
}

TEST(CallCliTest, RetryLogToleratesATornLastLine) {
  Provider provider;
  const std::string url = provider.Session("cli/torn", "openai-chat", R"(  - status: 503
    error: unavailable
  - content:
      text: "Hello, world"
      chunk_size: 4
)");
  TempFile policy("call_cli_torn_policy", kFastPolicy);
  const std::string before =
      LogLine("c-3", 1, WallMsFromNow(-5s)) + R"({"call_id":"c-3","attempt":2,"sched)";
  TempFile log("call_cli_torn_log", before);
  Child child({"call", "--base-url", url, "--json", "--policy", policy.path(), "--retry-log",
               log.path(), "--call-id", "c-3"});
  ASSERT_EQ(child.Wait(), 0) << child.err();
  const auto starts = OfType(JsonLines(child), "response/start");
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_EQ(starts[0]["attempt"], 2);  // one retry recovered; the torn line is not counted
  EXPECT_EQ(starts[1]["attempt"], 3);
  EXPECT_EQ(JsonLines(child).back()["text"], "Hello, world");
  // The new record starts on a line of its own after the torn one.
  const std::string after = log.Read();
  ASSERT_TRUE(after.starts_with(before + "\n")) << after;
  const ref::RecoveredCall recovered = ref::RecoverFromLog(after, "c-3");
  EXPECT_EQ(recovered.torn_lines, 1u);
  EXPECT_EQ(recovered.records, 4u);  // retry 1 before; attempt 2, its retry, attempt 3
  EXPECT_EQ(recovered.retries, 2);
  EXPECT_EQ(recovered.attempts_started, 3);
}

TEST(CallCliTest, AdapterModeTakesTheRetryLogFromTheCallLine) {
  Provider provider;
  const std::string url = provider.Session("cli/adapter-log", "openai-chat", R"(  - status: 503
    error: unavailable
  - content:
      text: "Hello, world"
      chunk_size: 4
)");
  TempFile policy("call_cli_adapter_policy", kFastPolicy);
  TempFile log("call_cli_adapter_log");
  Child child({"call", "--adapter", "--policy", policy.path()});
  const json call = {{"type", "call"},
                     {"base_url", url},
                     {"dialect", "openai-chat"},
                     {"retry_log", log.path()},
                     {"call_id", "c-4"},
                     {"request", {{"model", "m"}, {"stream", true}, {"messages", json::array()}}}};
  child.Write(call.dump() + "\n");
  ASSERT_EQ(child.Wait(), 0) << child.err();
  const ref::RecoveredCall recovered = ref::RecoverFromLog(log.Read(), "c-4");
  EXPECT_EQ(recovered.records, 3u);  // attempt 1, its retry, attempt 2
  EXPECT_EQ(recovered.retries, 1);
  EXPECT_EQ(recovered.attempts_started, 2);
}

}  // namespace
}  // namespace faultline::cli
