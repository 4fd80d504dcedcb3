// The loader maps every field of a scenario file onto the model, from YAML and from JSON, and
// loads files and folders. Errors are tested in loader_errors_test.cc.
#include "scenarios/loader.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>

namespace faultline::scenario {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

namespace fs = std::filesystem;

Scenario Load(std::string_view text, std::string_view file = "test.yaml") {
  auto scenario = ParseScenario(text, file);
  EXPECT_TRUE(scenario.has_value()) << scenario.error().ToString();
  return scenario.value_or(Scenario{});
}

constexpr std::string_view kMinimal = R"(faultline: 1
name: t/minimal
description: The smallest valid scenario.
dialect: openai-chat
responses:
  - {}
)";

TEST(LoaderTest, MinimalScenarioTakesEveryDefault) {
  const Scenario scenario = Load(kMinimal, "dir/minimal.yaml");
  Scenario expected;
  expected.name = "t/minimal";
  expected.description = "The smallest valid scenario.";
  expected.responses.push_back(ResponseSpec{});
  expected.source = "dir/minimal.yaml";
  expected.source_line = 2;  // its name:
  EXPECT_EQ(scenario, expected);
}

// Every key of the format, each with a value other than its default.
constexpr std::string_view kEveryField = R"(# comments are welcome
faultline: 1
name: full/every-field
description: Every field, set to something other than its default.
dialect: anthropic-messages
tags: [full, every-field]
request: {stream: false, model: claude-x, message: "Hi there", max_tokens: 99, tools: true, calls: 3}
responses:
  - repeat: 2
    connection: reset_before_headers
    headers_delay: 5ms
  - status: 429
    error: rate_limit
    retry_after: {seconds: "1.5"}
    retry_after_ms: 1500
    should_retry: true
    rate_limit_headers: {requests_limit: 10, requests_remaining: 1, requests_reset: 2s,
                         tokens_limit: 1000, tokens_remaining: 5, tokens_reset: 1m}
    date_skew: -30s
    headers_stall: 3s
  - status: 400
    error: {kind: context_window, wording: anthropic_prompt_too_long, message: "too long"}
    retry_after: {http_date: -2s, form: rfc850}
    content_type: application/json
    body: '{"x":1}'
    headers:
      - {name: retry-after, value: 5}
      - {name: retry-after, value: "garbage"}
  - retry_after: {raw: "soon"}
    rate_limit_headers: true
    headers_stall: forever
    stream:
      text: "Héllo"
      chunk_size: 2
      chunk_delay: 10ms
      reasoning: thinking
      tool_call: {name: lookup, arguments: '{"q":1}', chunk_size: 3}
      finish_reason: tool_use
      input_tokens: 12
      output_tokens: 5
      drip: {bytes: 1, every: 5ms}
      framing: {line_ending: crlf, bom: true, comments: true, multiline_data: true,
                split_writes: true, split_utf8: true, split_delay: 3ms}
      faults:
        - {after_event: 3, stall: 10s, heartbeat: {every: 1s, style: ping}}
        - {after_event: 4, stall: forever}
        - {after_event: 2, delay: 500ms}
        - {after_event: 5, inject: invalid_json}
        - {after_event: 5, inject: provider_error, error: overloaded}
        - {after_event: 1, raw: "data: whatever\n\n"}
      end: {kind: stall, after_event: 7, wait: 30s, heartbeat: {every: 2s}}
  - repeat: 0
    content:
      tool_call: true
      end: {kind: reset, after_event: 3, at_byte: 10}
rate_limit: {requests: 2, tokens: 100, window: 10s}
listener_outages: [{from: 0s, for: 2s}, {from: 1m, for: 500ms}]
cancel_at: 1500ms
policy: {max_attempts: 5, backoff: {base_ms: 100}, retryable_classes: [rate-limit, "timeout"],
         timeouts: {total_ms: null}}
expect:
  outcome: failed
  attempts: 2
  text: partial
  failure_class: rate-limit
  failure_code: RATE_LIMIT
  failure: {status: 429, retry_after: 1s, request_id: true}
  attempt_failures: [{failure_class: transport, failure_code: TRANSPORT}, {failure_code: X}]
  retry_delays: [{min: 1s, max: 1.5s}]
  chunks: 0
  requests: 2
  request_headers: {present: [idempotency-key], same: [idempotency-key, x-b]}
)";

ResponseSpec ConnectionResetResponse() {
  ResponseSpec response;
  response.repeat = 2;
  response.connection = ConnectionFault::kResetBeforeHeaders;
  response.headers_delay = milliseconds(5);
  return response;
}

ResponseSpec RateLimitedResponse() {
  ResponseSpec response;
  response.status = 429;
  response.error =
      ErrorSpec{ErrorKind::kRateLimit, ContextWording::kDialect, std::nullopt, std::nullopt};
  response.retry_after = RetryAfter{RetryAfter::Form::kSeconds, "1.5", Duration{0}};
  response.retry_after_ms = "1500";
  response.should_retry = true;
  response.rate_limit_headers = RateLimitHeaders{10, 1, seconds(2), 1000, 5, minutes(1)};
  response.date_skew = seconds(-30);
  response.headers_stall = Wait{seconds(3), false};
  return response;
}

ResponseSpec ContextWindowResponse() {
  ResponseSpec response;
  response.status = 400;
  response.error = ErrorSpec{ErrorKind::kContextWindow, ContextWording::kAnthropicPromptTooLong,
                             "too long", std::nullopt};
  response.retry_after = RetryAfter{RetryAfter::Form::kRfc850, "", seconds(-2)};
  response.content_type = "application/json";
  response.body = R"({"x":1})";
  response.headers = {{"retry-after", "5"}, {"retry-after", "garbage"}};
  return response;
}

std::vector<EventFault> EveryFaultKind() {
  std::vector<EventFault> faults(6);
  faults[0].after_event = 3;
  faults[0].wait = Wait{seconds(10), false};
  faults[0].heartbeat = Heartbeat{seconds(1), Heartbeat::Style::kPing};
  faults[1].after_event = 4;
  faults[1].wait = Wait{Duration{0}, true};
  faults[2].kind = EventFault::Kind::kDelay;
  faults[2].after_event = 2;
  faults[2].wait = Wait{milliseconds(500), false};
  faults[3].kind = EventFault::Kind::kInvalidJson;
  faults[3].after_event = 5;
  faults[4].kind = EventFault::Kind::kProviderError;
  faults[4].after_event = 5;
  faults[4].error.kind = ErrorKind::kOverloaded;
  faults[5].kind = EventFault::Kind::kRaw;
  faults[5].after_event = 1;
  faults[5].raw = "data: whatever\n\n";
  return faults;
}

ResponseSpec StreamedResponse() {
  ResponseSpec response;
  response.retry_after = RetryAfter{RetryAfter::Form::kRaw, "soon", Duration{0}};
  response.rate_limit_headers = RateLimitHeaders{};
  response.headers_stall = Wait{Duration{0}, true};
  Content& content = response.content;
  content.text = "Héllo";
  content.chunk_size = 2;
  content.chunk_delay = milliseconds(10);
  content.reasoning = "thinking";
  content.tool_call = ToolCallSpec{"lookup", R"({"q":1})", 3};
  content.finish_reason = "tool_use";
  content.input_tokens = 12;
  content.output_tokens = 5;
  content.drip_bytes = 1;
  content.drip_every = milliseconds(5);
  content.framing =
      Framing{Framing::LineEnding::kCrlf, true, true, true, true, true, milliseconds(3)};
  content.faults = EveryFaultKind();
  content.end.kind = Termination::Kind::kStall;
  content.end.after_event = 7;
  content.end.wait = Wait{seconds(30), false};
  content.end.heartbeat = Heartbeat{seconds(2), Heartbeat::Style::kComment};
  return response;
}

ResponseSpec ResetMidEventResponse() {
  ResponseSpec response;
  response.repeat = 0;
  response.content.tool_call = ToolCallSpec{};
  response.content.end.kind = Termination::Kind::kReset;
  response.content.end.after_event = 3;
  response.content.end.at_byte = 10;
  return response;
}

Scenario EveryFieldScenario() {
  Scenario expected;
  expected.name = "full/every-field";
  expected.description = "Every field, set to something other than its default.";
  expected.dialect = Dialect::kAnthropicMessages;
  expected.tags = {"full", "every-field"};
  expected.request.stream = false;
  expected.request.model = "claude-x";
  expected.request.message = "Hi there";
  expected.request.max_tokens = 99;
  expected.request.tools = true;
  expected.request.calls = 3;
  expected.responses = {ConnectionResetResponse(), RateLimitedResponse(), ContextWindowResponse(),
                        StreamedResponse(), ResetMidEventResponse()};
  expected.rate_limit = RateLimit{2, 100, seconds(10)};
  expected.listener_outages = {{Duration{0}, seconds(2)}, {minutes(1), milliseconds(500)}};
  expected.cancel_at = milliseconds(1500);
  expected.policy = PolicySpec{
      R"({"backoff":{"base_ms":100},"max_attempts":5,"retryable_classes":["rate-limit","timeout"],)"
      R"("timeouts":{"total_ms":null}})",
      {{"", 59, 9},
       {"max_attempts", 59, 24},
       {"backoff", 59, 36},
       {"backoff.base_ms", 59, 46},
       {"retryable_classes", 59, 71},
       {"retryable_classes[0]", 59, 72},
       {"retryable_classes[1]", 59, 84},
       {"timeouts", 60, 20},
       {"timeouts.total_ms", 60, 21}}};
  Expect& expect = expected.expect;
  expect.outcome = "failed";
  expect.attempts = 2;
  expect.text = "partial";
  expect.failure_class = "rate-limit";
  expect.failure_code = "RATE_LIMIT";
  expect.failure = ExpectFailure{429, seconds(1), false, true};
  expect.attempt_failures = {{"transport", "TRANSPORT"}, {std::nullopt, "X"}};
  expect.retry_delays = {{seconds(1), milliseconds(1500)}};
  expect.chunks = 0;
  expect.requests = 2;
  expect.headers_present = {"idempotency-key"};
  expect.headers_same = {"idempotency-key", "x-b"};
  expected.source = "every.yaml";
  expected.source_line = 3;  // its name:, after a comment line
  return expected;
}

TEST(LoaderTest, EveryFieldIsMapped) {
  const Scenario scenario = Load(kEveryField, "every.yaml");
  const Scenario expected = EveryFieldScenario();
  ASSERT_EQ(scenario.responses.size(), expected.responses.size());
  for (std::size_t i = 0; i < expected.responses.size(); ++i) {
    EXPECT_EQ(scenario.responses[i].content, expected.responses[i].content)
        << "responses[" << i << "].content";
    EXPECT_EQ(scenario.responses[i], expected.responses[i]) << "responses[" << i << "]";
  }
  EXPECT_EQ(scenario.request, expected.request);
  EXPECT_EQ(scenario.expect, expected.expect);
  ASSERT_TRUE(scenario.policy.has_value());
  EXPECT_EQ(scenario.policy->json, expected.policy->json);
  EXPECT_EQ(scenario.policy->positions, expected.policy->positions);
  EXPECT_EQ(scenario, expected);
}

// Strings with quotes, escapes and non-BMP characters; JSON's surrogate-pair escapes included.
constexpr std::string_view kEveryFieldJson = R"({
	"faultline": 1,
	"name": "json/every-field",
	"description": "The same in JSON \ud83d\ude00 \"quoted\" \\ \/",
	"dialect": "openai-responses",
	"tags": ["json"],
	"responses": [
		{"status": 503, "retry_after": {"seconds": 2}, "headers": [{"name": "x-a", "value": 1.5}]},
		{"repeat": 0, "content": {"text": "caf\u00e9 \ud83d\ude00", "chunk_size": 1,
		 "faults": [{"after_event": 2, "inject": "sequence_gap"},
		            {"after_event": 3, "inject": "provider_error", "error": {"kind": "overloaded"},
		             "shape": "nested"}],
		 "end": "no_final_chunk"}}
	],
	"expect": {"outcome": "committed", "attempts": 2}
}
)";

TEST(LoaderTest, JsonDocumentsLoadLikeYaml) {
  const Scenario scenario = Load(kEveryFieldJson, "every.json");
  EXPECT_EQ(scenario.name, "json/every-field");
  EXPECT_EQ(scenario.description, "The same in JSON \xF0\x9F\x98\x80 \"quoted\" \\ /");
  EXPECT_EQ(scenario.dialect, Dialect::kOpenAiResponses);
  ASSERT_EQ(scenario.responses.size(), 2u);
  const ResponseSpec& unavailable = scenario.responses[0];
  EXPECT_EQ(unavailable.status, 503);
  EXPECT_EQ(unavailable.error->kind, ErrorKind::kUnavailable);  // defaulted from the status
  EXPECT_EQ(unavailable.retry_after->text, "2");
  EXPECT_EQ(unavailable.headers, (std::vector<Header>{{"x-a", "1.5"}}));
  const Content& content = scenario.responses[1].content;
  EXPECT_EQ(content.text, "caf\xC3\xA9 \xF0\x9F\x98\x80");
  ASSERT_EQ(content.faults.size(), 2u);
  EXPECT_EQ(content.faults[0].kind, EventFault::Kind::kSequenceGap);
  EXPECT_EQ(content.faults[1].shape, EventFault::Shape::kNested);
  EXPECT_EQ(content.faults[1].error.kind, ErrorKind::kOverloaded);
  EXPECT_EQ(content.end.kind, Termination::Kind::kNoFinalChunk);
  EXPECT_EQ(scenario.expect.attempts, 2);
}

TEST(LoaderTest, ByteOrderMarkLineEndingsAndDocumentMarkers) {
  std::string crlf;
  for (char c : kMinimal) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  EXPECT_EQ(Load("\xEF\xBB\xBF" + crlf).name, "t/minimal");
  EXPECT_EQ(Load("---\n" + std::string(kMinimal) + "...\n").name, "t/minimal");
  EXPECT_EQ(Load(std::string(kMinimal) + "---\n").name, "t/minimal");  // an empty 2nd document
}

// JSON surrogate-pair escapes are joined only in JSON; in YAML literal text stays literal.
TEST(LoaderTest, SurrogateEscapesAreJoinedOnlyInJson) {
  const Scenario yaml =
      Load(std::string(kMinimal) + R"(expect: {text: 'a\ud83d\ude00 "b'})" + "\n");
  EXPECT_EQ(yaml.expect.text, R"(a\ud83d\ude00 "b)");
  const Scenario json =
      Load(R"({"faultline": 1, "name": "t/j", "description": "\\ud83d \ud83d\ude00",
    "dialect": "openai-chat", "responses": [{}]})");
  EXPECT_EQ(json.description, "\\ud83d \xF0\x9F\x98\x80");
}

TEST(LoaderTest, ErrorDefaultsFromStatusAndStatusFromError) {
  const Scenario scenario = Load(R"(faultline: 1
name: t/defaults
description: d
dialect: openai-chat
responses:
  - status: 401
  - error: quota
  - error: {kind: overloaded}
  - status: 418
  - status: 599
  - status: 200
  - status: 204
  - status: 302
)");
  ASSERT_EQ(scenario.responses.size(), 8u);
  EXPECT_EQ(scenario.responses[0].error->kind, ErrorKind::kAuth);
  EXPECT_EQ(scenario.responses[1].status, 429);
  EXPECT_EQ(scenario.responses[1].error->kind, ErrorKind::kQuota);
  EXPECT_EQ(scenario.responses[2].status, 529);
  EXPECT_EQ(scenario.responses[3].error->kind, ErrorKind::kInvalidRequest);
  EXPECT_EQ(scenario.responses[4].error->kind, ErrorKind::kServer);
  EXPECT_FALSE(scenario.responses[5].error.has_value());
  EXPECT_FALSE(scenario.responses[6].error.has_value());
  EXPECT_EQ(scenario.responses[7].error->kind, ErrorKind::kInvalidRequest);
}

TEST(LoaderTest, ShorthandsAndFalseFlags) {
  const Scenario scenario = Load(R"(faultline: 1
name: t/shorthands
description: d
dialect: anthropic-messages
responses:
  - rate_limit_headers: false
    retry_after: {http_date: 2s}
    content: {tool_call: false, end: stall}
  - content:
      end: {kind: close, at_byte: 0}
      faults: [{after_event: 0, stall: 1s, heartbeat: {every: 100ms}}]
)");
  ASSERT_EQ(scenario.responses.size(), 2u);
  EXPECT_FALSE(scenario.responses[0].rate_limit_headers.has_value());
  EXPECT_EQ(scenario.responses[0].retry_after,
            (RetryAfter{RetryAfter::Form::kImfFixdate, "", seconds(2)}));
  EXPECT_FALSE(scenario.responses[0].content.tool_call.has_value());
  EXPECT_EQ(scenario.responses[0].content.end.kind, Termination::Kind::kStall);
  EXPECT_EQ(scenario.responses[0].content.end.wait, (Wait{Duration{0}, true}));
  const Termination& end = scenario.responses[1].content.end;
  EXPECT_EQ(end.kind, Termination::Kind::kClose);
  EXPECT_EQ(end.after_event, std::nullopt);
  EXPECT_EQ(end.at_byte, 0);
  EXPECT_EQ(scenario.responses[1].content.faults[0].heartbeat.every, milliseconds(100));
}

TEST(LoaderTest, RetryAfterSecondsKeepTheirText) {
  for (std::string_view written : {"0", "-5", "1.5", "9e99", "\"2\"", "\"007\"", "1E+3"}) {
    const std::string text = std::string(kMinimal.substr(0, kMinimal.find("  - {}"))) +
                             "  - {status: 429, retry_after: {seconds: " + std::string(written) +
                             "}}\n";
    const Scenario scenario = Load(text);
    ASSERT_EQ(scenario.responses.size(), 1u) << written;
    std::string_view expected = written;
    if (expected.front() == '"') expected = expected.substr(1, expected.size() - 2);
    EXPECT_EQ(scenario.responses[0].retry_after->text, expected);
  }
}

TEST(LoaderTest, ChaosReplacesResponses) {
  const Scenario scenario = Load(R"(faultline: 1
name: t/chaos
description: d
dialect: openai-chat
chaos:
  seed: 18446744073709551615
  faults:
    - {probability: 0.3, response: {status: 503}}
    - {probability: 0.7, response: {content: {end: reset}}}
  otherwise: {content: {text: ok}}
)");
  ASSERT_TRUE(scenario.chaos.has_value());
  EXPECT_TRUE(scenario.responses.empty());
  EXPECT_EQ(scenario.chaos->seed, 18446744073709551615u);
  ASSERT_EQ(scenario.chaos->faults.size(), 2u);
  EXPECT_DOUBLE_EQ(scenario.chaos->faults[0].probability, 0.3);
  EXPECT_EQ(scenario.chaos->faults[0].response.status, 503);
  EXPECT_EQ(scenario.chaos->faults[1].response.content.end.kind, Termination::Kind::kReset);
  EXPECT_EQ(scenario.chaos->otherwise.content.text, "ok");
}

TEST(LoaderTest, ChaosWithoutOtherwiseAnswersNormally) {
  const Scenario scenario = Load(R"(faultline: 1
name: t/chaos
description: d
dialect: openai-chat
chaos: {faults: [{probability: 1, response: {status: 500}}]}
)");
  ASSERT_TRUE(scenario.chaos.has_value());
  EXPECT_EQ(scenario.chaos->seed, 0u);
  EXPECT_EQ(scenario.chaos->otherwise, ResponseSpec{});
}

TEST(LoaderTest, RateLimitWindowDefaultsToAMinute) {
  std::string text(kMinimal);
  text += "rate_limit: {tokens: 500}\n";
  const Scenario scenario = Load(text);
  EXPECT_EQ(scenario.rate_limit, (RateLimit{0, 500, minutes(1)}));
}

// A fresh folder under the test temp dir, removed at the end of the test.
class TempFolder {
 public:
  TempFolder() {
    std::random_device random;
    path_ = fs::temp_directory_path() / ("faultline-loader-test-" + std::to_string(random()));
    fs::create_directories(path_);
  }
  ~TempFolder() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  fs::path Write(const fs::path& relative, std::string_view content) const {
    const fs::path file = path_ / relative;
    fs::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << content;
    return file;
  }

 private:
  fs::path path_;
};

std::string Named(std::string_view name) {
  std::string text(kMinimal);
  return text.replace(text.find("t/minimal"), 9, name);
}

TEST(LoadScenariosTest, FoldersAreWalkedRecursivelyInPathOrder) {
  TempFolder folder;
  folder.Write("b.yaml", Named("t/b"));
  folder.Write("a/z.yml", Named("t/az"));
  folder.Write("a/deeper/c.json", R"({"faultline": 1, "name": "t/c", "description": "d",
    "dialect": "openai-chat", "responses": [{}]})");
  folder.Write("notes.txt", "not a scenario");
  folder.Write("README.md", "# not a scenario either");
  const fs::path paths[] = {folder.path()};
  auto scenarios = LoadScenarios(paths);
  ASSERT_TRUE(scenarios.has_value()) << scenarios.error().front().ToString();
  ASSERT_EQ(scenarios->size(), 3u);
  EXPECT_EQ((*scenarios)[0].name, "t/c");  // a/deeper/c.json
  EXPECT_EQ((*scenarios)[1].name, "t/az");
  EXPECT_EQ((*scenarios)[2].name, "t/b");
  EXPECT_EQ((*scenarios)[2].source, (folder.path() / "b.yaml").string());
}

TEST(LoadScenariosTest, FilesAndFoldersMixAndAFileIsLoadedOnce) {
  TempFolder folder;
  const fs::path one = folder.Write("one.yaml", Named("t/one"));
  folder.Write("two.yaml", Named("t/two"));
  const fs::path paths[] = {one, folder.path(), folder.path() / "." / "one.yaml"};
  auto scenarios = LoadScenarios(paths);
  ASSERT_TRUE(scenarios.has_value()) << scenarios.error().front().ToString();
  ASSERT_EQ(scenarios->size(), 2u);
  EXPECT_EQ((*scenarios)[0].name, "t/one");
  EXPECT_EQ((*scenarios)[1].name, "t/two");
}

TEST(LoadScenariosTest, EveryErrorIsCollected) {
  TempFolder folder;
  folder.Write("a.yaml", Named("t/dup"));
  folder.Write("b.yaml", "faultline: 1\nname: t/bad\n");
  folder.Write("c.yaml", std::string(Named("t/dup")));
  folder.Write("d.yaml", Named("t/fine"));
  const fs::path paths[] = {folder.path(), folder.path() / "missing.yaml"};
  auto scenarios = LoadScenarios(paths);
  ASSERT_FALSE(scenarios.has_value());
  const std::vector<LoadError>& errors = scenarios.error();
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].file, (folder.path() / "missing.yaml").string());
  EXPECT_EQ(errors[0].line, 0);
  EXPECT_EQ(errors[0].message, "no such file or folder");
  EXPECT_EQ(errors[1].file, (folder.path() / "b.yaml").string());
  EXPECT_EQ(errors[1].message, "missing required key 'description'");
  EXPECT_EQ(errors[2].file, (folder.path() / "c.yaml").string());
  EXPECT_EQ(errors[2].line, 2);
  EXPECT_EQ(errors[2].column, 7);
  EXPECT_EQ(errors[2].path, "name");
  EXPECT_EQ(errors[2].message, "duplicate scenario name 't/dup': already defined in " +
                                   (folder.path() / "a.yaml").string());
}

TEST(LoadScenariosTest, AFileNamedDirectlyNeedNotEndInYaml) {
  TempFolder folder;
  const fs::path file = folder.Write("scenario.txt", Named("t/txt"));
  auto scenario = LoadScenarioFile(file);
  ASSERT_TRUE(scenario.has_value()) << scenario.error().ToString();
  EXPECT_EQ(scenario->name, "t/txt");
  EXPECT_EQ(scenario->source, file.string());
}

TEST(LoadScenariosTest, UnreadableInputsAreErrors) {
  TempFolder folder;
  auto missing = LoadScenarioFile(folder.path() / "nope.yaml");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().message, "cannot open file");
  auto directory = LoadScenarioFile(folder.path());
  ASSERT_FALSE(directory.has_value());
  EXPECT_EQ(directory.error().message, "is a folder");
  auto empty = LoadScenarios({});
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->empty());
}

TEST(LoadErrorTest, ToStringNamesFileLineColumnAndPath) {
  LoadError error{"a.yaml", 3, 7, "responses[1].status", "expected an integer"};
  EXPECT_EQ(error.ToString(), "a.yaml:3:7: at responses[1].status: expected an integer");
  error.path = "";
  EXPECT_EQ(error.ToString(), "a.yaml:3:7: expected an integer");
  error.line = 0;
  EXPECT_EQ(error.ToString(), "a.yaml: expected an integer");
}

}  // namespace
}  // namespace faultline::scenario
