// Every class of loader error, with its exact position, JSON path and message; and a robustness
// test that feeds truncated and mutated documents and only asks for an answer, never a crash.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <string>

#include "scenarios/loader.h"
#include "scenarios/tests/load_error_cases.h"

namespace faultline::scenario {
namespace {

// Lines 1-5; the responses given to Doc() start on line 6.
std::string Doc(std::string_view responses, std::string_view dialect = "openai-chat") {
  return "faultline: 1\nname: t/x\ndescription: d\ndialect: " + std::string(dialect) +
         "\nresponses:\n" + std::string(responses);
}

// A valid document (lines 1-6) followed by `extra` top-level lines from line 7.
std::string Top(std::string_view extra) { return Doc("  - {}\n") + std::string(extra); }

TEST(LoaderErrorTest, UnknownKeys) {
  ExpectErrors({
      {"close to a known key", Doc("  - status: 429\n    retry_afer: {seconds: 1}\n"), 7, 5,
       "responses[0].retry_afer", "unknown key 'retry_afer'; did you mean 'retry_after'?"},
      {"transposed letters", Top("expcet: {}\n"), 7, 1, "expcet",
       "unknown key 'expcet'; did you mean 'expect'?"},
      {"nothing close", Doc("  - {zzzzzz: 1}\n"), 6, 6, "responses[0].zzzzzz",
       "unknown key 'zzzzzz'; expected one of: repeat, connection, headers_delay, "
       "headers_stall, status, error, retry_after, retry_after_ms, should_retry, "
       "rate_limit_headers, date_skew, content_type, body, headers, content, stream, cassette, "
       "time_scale"},
      {"retry_after has no ms", Doc("  - retry_after: {ms: 1500}\n"), 6, 19,
       "responses[0].retry_after.ms",
       "unknown key 'ms'; expected one of: seconds, http_date, form, raw"},
  });
}

TEST(LoaderErrorTest, WrongTypes) {
  ExpectErrors({
      {"quoted integer", Doc("  - status: \"429\"\n"), 6, 13, "responses[0].status",
       "expected an integer from 100 to 599, got the string \"429\""},
      {"number for a string", Doc("  - content: {text: 123}\n"), 6, 21, "responses[0].content.text",
       "expected a string, got the number 123 (quote it to use it as text)"},
      {"yes is not a boolean", Doc("  - should_retry: yes\n"), 6, 19, "responses[0].should_retry",
       "expected true or false, got the string \"yes\""},
      {"scalar for a list", Top("tags: foo\n"), 7, 7, "tags",
       "expected a list, got the string \"foo\""},
      {"list for a mapping", Top("request: [1]\n"), 7, 10, "request",
       "expected a mapping, got a list"},
      {"empty value points at its key", Doc("  - status:\n"), 6, 5, "responses[0].status",
       "expected an integer from 100 to 599, got nothing"},
      {"empty list item", Doc("  -\n"), 6, 3, "responses[0]", "expected a mapping, got nothing"},
      {"key that is not a name", Doc("  - {[a]: 1}\n"), 6, 6, "responses[0]",
       "expected a key name, got a list"},
      {"document is a list", "- a\n", 1, 1, "", "expected a mapping, got a list"},
      {"document is a scalar", "hello\n", 1, 1, "", "expected a mapping, got the string \"hello\""},
      {"unknown error kind", Doc("  - error: ratelimit\n"), 6, 12, "responses[0].error",
       "expected one of invalid_request, context_window, auth, permission, not_found, "
       "request_timeout, conflict, too_large, unprocessable, rate_limit, quota, server, "
       "bad_gateway, unavailable, gateway_timeout, overloaded, got the string \"ratelimit\""},
      {"unknown enum value", Doc("  - status: 429\n    retry_after: {http_date: 2s, form: iso}\n"),
       7, 40, "responses[0].retry_after.form",
       "expected one of imf, rfc850, asctime, got the string \"iso\""},
      {"unknown end kind", Doc("  - content: {end: finished}\n"), 6, 20, "responses[0].content.end",
       "expected one of done, no_terminator, no_final_chunk, close, reset, stall, got the "
       "string \"finished\""},
  });
}

TEST(LoaderErrorTest, OutOfRangeValues) {
  ExpectErrors({
      {"status", Doc("  - status: 600\n"), 6, 13, "responses[0].status",
       "expected an integer from 100 to 599, got the number 600"},
      {"chunk size", Doc("  - content: {chunk_size: 0}\n"), 6, 27,
       "responses[0].content.chunk_size", "expected an integer >= 1, got the number 0"},
      {"negative count", Doc("  - repeat: -1\n"), 6, 13, "responses[0].repeat",
       "expected an integer from 0 to 1000000, got the number -1"},
      {"probability",
       "faultline: 1\nname: t/x\ndescription: d\ndialect: openai-chat\n"
       "chaos: {faults: [{probability: 1.5, response: {}}]}\n",
       5, 32, "chaos.faults[0].probability", "expected a number from 0 to 1, got the number 1.5"},
      {"probabilities add up to more than 1",
       "faultline: 1\nname: t/x\ndescription: d\ndialect: openai-chat\nchaos:\n  faults:\n"
       "    - {probability: 0.6, response: {status: 500}}\n"
       "    - {probability: 0.5, response: {status: 503}}\n",
       7, 5, "chaos.faults",
       "the probabilities add up to 1.1; they must not exceed 1 ('otherwise' takes what is "
       "left)"},
      {"heartbeat period", Doc("  - content: {end: {kind: stall, heartbeat: {every: 0s}}}\n"), 6,
       53, "responses[0].content.end.heartbeat.every", "expected a heartbeat period longer than 0"},
      {"outage length", Top("listener_outages: [{from: 1s, for: 0s}]\n"), 7, 36,
       "listener_outages[0].for", "expected an outage longer than 0"},
      {"rate limit window", Top("rate_limit: {requests: 1, window: 0s}\n"), 7, 35,
       "rate_limit.window", "expected a window longer than 0"},
      {"empty rate limit", Top("rate_limit: {requests: 0}\n"), 7, 13, "rate_limit",
       "a rate limit needs 'requests' or 'tokens' above 0"},
      {"expected attempts", Top("expect: {attempts: 0}\n"), 7, 20, "expect.attempts",
       "expected an integer >= 1, got the number 0"},
  });
}

TEST(LoaderErrorTest, Durations) {
  ExpectErrors({
      {"no unit", Doc("  - headers_delay: 2\n"), 6, 20, "responses[0].headers_delay",
       "expected a duration such as \"500ms\", \"2s\" or \"1m30s\", got the number 2 (a "
       "duration needs a unit, e.g. \"2s\")"},
      {"unknown unit", Doc("  - headers_delay: 2x\n"), 6, 20, "responses[0].headers_delay",
       "expected a duration such as \"500ms\", \"2s\" or \"1m30s\", got the string \"2x\": "
       "unknown unit \"x\" (use us, ms, s, m or h)"},
      {"negative where it cannot be", Doc("  - headers_delay: -2s\n"), 6, 20,
       "responses[0].headers_delay",
       "expected a duration that is not negative, got the string \"-2s\""},
      {"overflow", Top("cancel_at: 99999999999h\n"), 7, 12, "cancel_at",
       "expected a duration such as \"500ms\", \"2s\" or \"1m30s\", got the string "
       "\"99999999999h\": out of range"},
      {"forever where a time is needed",
       Doc("  - content: {faults: [{after_event: 1, "
           "delay: forever}]}\n"),
       6, 48, "responses[0].content.faults[0].delay",
       "expected a duration such as \"500ms\", \"2s\" or \"1m30s\", got the string "
       "\"forever\": expected a number at \"forever\""},
      {"wait that is neither", Doc("  - headers_stall: 5\n"), 6, 20, "responses[0].headers_stall",
       "expected a duration such as \"500ms\", \"2s\" or \"1m30s\" or \"forever\", got the "
       "number 5"},
  });
}

TEST(LoaderErrorTest, MissingRequiredKeys) {
  ExpectErrors({
      {"name", "faultline: 1\ndescription: d\ndialect: openai-chat\nresponses: [{}]\n", 1, 1, "",
       "missing required key 'name'"},
      {"faultline", "name: t/x\ndescription: d\ndialect: openai-chat\nresponses: [{}]\n", 1, 1, "",
       "missing required key 'faultline'"},
      {"responses or chaos", "faultline: 1\nname: t/x\ndescription: d\ndialect: openai-chat\n", 1,
       1, "", "missing required key 'responses' (or 'chaos', 'fleet' or 'routes')"},
      {"header value", Doc("  - headers: [{name: x-a}]\n"), 6, 15, "responses[0].headers[0]",
       "missing required key 'value'"},
      {"fault position", Doc("  - content: {faults: [{stall: 1s}]}\n"), 6, 24,
       "responses[0].content.faults[0]", "missing required key 'after_event'"},
      {"drip period", Doc("  - content: {drip: {bytes: 1}}\n"), 6, 21, "responses[0].content.drip",
       "missing required key 'every'"},
      {"end kind", Doc("  - content: {end: {after_event: 2}}\n"), 6, 20, "responses[0].content.end",
       "missing required key 'kind'"},
      {"outage start", Top("listener_outages: [{for: 1s}]\n"), 7, 20, "listener_outages[0]",
       "missing required key 'from'"},
      {"chaos faults",
       "faultline: 1\nname: t/x\ndescription: d\ndialect: openai-chat\n"
       "chaos: {seed: 1}\n",
       5, 8, "chaos", "missing required key 'faults'"},
      {"a fault action", Doc("  - content: {faults: [{after_event: 1}]}\n"), 6, 24,
       "responses[0].content.faults[0]",
       "a fault needs one of the keys stall, delay, inject or raw"},
      {"a retry-after form", Doc("  - retry_after: {}\n"), 6, 18, "responses[0].retry_after",
       "expected one of the keys seconds, http_date, raw"},
  });
}

TEST(LoaderErrorTest, KeysThatMeanNothingWhereTheyAre) {
  ExpectErrors({
      {"at_byte on a clean end", Doc("  - content: {end: {kind: done, at_byte: 3}}\n"), 6, 33,
       "responses[0].content.end.at_byte",
       "'at_byte' cuts inside an event; it needs kind: close, reset or no_terminator"},
      {"a skip to the terminator with nothing spoiling the stream",
       Doc("  - content: {faults: [{after_event: 1, delay: 1s}], end: {kind: done, "
           "after_event: 2}}\n"),
       6, 85, "responses[0].content.end.after_event",
       "kind: done with after_event: 2 skips to the terminator after event 2; it needs a fault "
       "that spoils the stream at or before it (inject, raw, or a stall forever), else write a "
       "shorter text"},
      {"a fault after a skip to the terminator",
       Doc("  - content: {faults: [{after_event: 2, inject: error_envelope}, {after_event: 3, "
           "inject: invalid_json}], end: {kind: done, after_event: 2}}\n"),
       6, 138, "responses[0].content.end.after_event",
       "kind: done with after_event: 2 skips to the terminator after event 2, so a fault after "
       "event 2 is never sent"},
      {"wait on a close", Doc("  - content: {end: {kind: close, wait: 1s}}\n"), 6, 34,
       "responses[0].content.end.wait", "'wait' applies only to kind: stall"},
      {"heartbeat on a reset", Doc("  - content: {end: {kind: reset, heartbeat: {every: 1s}}}\n"),
       6, 34, "responses[0].content.end.heartbeat", "'heartbeat' applies only to kind: stall"},
      {"heartbeat on a delay",
       Doc("  - content:\n      faults:\n"
           "        - {after_event: 1, delay: 1s, heartbeat: {every: 1s}}\n"),
       8, 39, "responses[0].content.faults[0].heartbeat", "'heartbeat' applies only to a stall"},
      {"two fault actions",
       Doc("  - content: {faults: [{after_event: 1, stall: 1s, delay: 1s}]}\n"), 6, 52,
       "responses[0].content.faults[0].delay",
       "'stall' and 'delay' cannot be combined in one fault; write two faults"},
      {"error on invalid_json",
       Doc("  - content: {faults: [{after_event: 1, inject: invalid_json, error: server}]}\n"), 6,
       63, "responses[0].content.faults[0].error",
       "'error' applies only to provider_error and error_envelope"},
      {"error with a 2xx status", Doc("  - status: 200\n    error: rate_limit\n"), 7, 5,
       "responses[0].error",
       "an error needs a non-2xx status, but status is 200 (drop 'status' to use the error's "
       "own, or inject the error into the stream)"},
      {"content with an error status", Doc("  - status: 500\n    content: {text: x}\n"), 7, 5,
       "responses[0].content",
       "content is sent only with a 2xx status; this response has status 500 and sends an "
       "error body"},
      {"content and its alias", Doc("  - content: {}\n    stream: {}\n"), 7, 5,
       "responses[0].stream", "'stream' is another name for 'content'; give only one of them"},
      {"content and body", Doc("  - body: x\n    content: {}\n"), 7, 5, "responses[0].content",
       "'content' and 'body' cannot be combined: 'body' replaces the whole body"},
      {"status with a connection fault",
       Doc("  - connection: close_before_headers\n    status: 500\n"), 7, 5, "responses[0].status",
       "with 'connection: close_before_headers' no response byte is sent, so 'status' has no "
       "effect"},
      {"form without http_date", Doc("  - retry_after: {seconds: 1, form: imf}\n"), 6, 31,
       "responses[0].retry_after.form",
       "'form' chooses the HTTP-date format; it needs 'http_date'"},
      {"two retry-after forms", Doc("  - retry_after: {seconds: 1, raw: x}\n"), 6, 31,
       "responses[0].retry_after.raw",
       "'seconds' and 'raw' cannot be combined; give one of: seconds, http_date, raw"},
      {"wording on another kind", Doc("  - error: {kind: auth, wording: openai}\n"), 6, 25,
       "responses[0].error.wording", "'wording' applies only to kind: context_window"},
      {"split_utf8 without split_writes", Doc("  - content: {framing: {split_utf8: true}}\n"), 6,
       25, "responses[0].content.framing.split_utf8",
       "'split_utf8' refines split writes; it needs 'split_writes: true'"},
      {"failure with a committed outcome",
       Top("expect: {outcome: committed, failure_class: auth}\n"), 7, 30, "expect.failure_class",
       "'failure_class' describes a failure, but outcome is committed"},
      {"responses and chaos", Top("chaos: {faults: [{probability: 1, response: {}}]}\n"), 7, 1,
       "chaos", "'chaos' replaces 'responses'; give one of them, not both"},
      {"repeat inside chaos",
       "faultline: 1\nname: t/x\ndescription: d\ndialect: openai-chat\n"
       "chaos: {faults: [{probability: 1, response: {repeat: 2}}]}\n",
       5, 46, "chaos.faults[0].response.repeat",
       "'repeat' has no meaning inside chaos: every attempt draws its response afresh"},
      {"entries after repeat 0", Doc("  - repeat: 0\n  - status: 500\n"), 7, 5, "responses[1]",
       "this response is never sent: responses[0] has 'repeat: 0' and answers every remaining "
       "attempt"},
  });
}

TEST(LoaderErrorTest, DialectSpecificFaults) {
  ExpectErrors({
      {"ping outside anthropic",
       Doc("  - content:\n      faults: [{after_event: 1, stall: 5s, heartbeat: {every: 1s, "
           "style: ping}}]\n"),
       7, 74, "responses[0].content.faults[0].heartbeat.style",
       "'ping' events exist only in anthropic-messages; openai-chat keeps streams alive with "
       "'comment'"},
      {"sequence gap outside responses",
       Doc("  - content: {faults: [{after_event: 1, inject: sequence_gap}]}\n",
           "anthropic-messages"),
       6, 49, "responses[0].content.faults[0].inject",
       "sequence numbers exist only in openai-responses, not in anthropic-messages"},
      {"provider error in openai-chat",
       Doc("  - content: {faults: [{after_event: 1, inject: provider_error}]}\n"), 6, 49,
       "responses[0].content.faults[0].inject",
       "openai-chat has no in-stream error event of its own; use 'inject: error_envelope'"},
      {"shape outside responses",
       Doc("  - content: {faults: [{after_event: 1, inject: provider_error, shape: flat}]}\n",
           "anthropic-messages"),
       6, 65, "responses[0].content.faults[0].shape",
       "'shape' chooses among openai-responses error events; this scenario is "
       "anthropic-messages"},
  });
}

TEST(LoaderErrorTest, InvalidTextValues) {
  ExpectErrors({
      {"scenario name", "faultline: 1\nname: Bad Name\n", 2, 7, "name",
       "expected a scenario name made of a-z, 0-9 and . _ / - (starting with a letter or "
       "digit), got the string \"Bad Name\""},
      {"tag", Top("tags: [ok, -no]\n"), 7, 12, "tags[1]",
       "expected a tag made of a-z, 0-9 and . _ / - (starting with a letter or digit), got "
       "the string \"-no\""},
      {"blank description", "faultline: 1\nname: t/x\ndescription: \"  \"\n", 3, 14, "description",
       "expected a description of the failure, got an empty string"},
      {"unknown dialect", "faultline: 1\nname: t/x\ndescription: d\ndialect: openai\n", 4, 10,
       "dialect",
       "expected one of openai-chat, anthropic-messages, openai-responses, gemini, ollama, "
       "bedrock-converse, got the string \"openai\""},
      {"retry-after seconds", Doc("  - status: 429\n    retry_after: {seconds: soon}\n"), 7, 28,
       "responses[0].retry_after.seconds",
       "expected a number of seconds such as 2 or \"1.5\", got the string \"soon\" (use 'raw' "
       "for text that is not a number)"},
      {"header name", Doc("  - headers: [{name: \"bad name\", value: x}]\n"), 6, 22,
       "responses[0].headers[0].name",
       "expected a header name (letters, digits and !#$%&'*+-.^_`|~), got the string \"bad "
       "name\""},
      {"header value", Doc("  - headers: [{name: x-a, value: \"a\\nb\"}]\n"), 6, 34,
       "responses[0].headers[0].value",
       "expected a header value without line breaks or NUL characters"},
      {"failure code", Top("expect: {outcome: failed, failure_code: rate_limit}\n"), 7, 41,
       "expect.failure_code",
       "expected an upper-case failure code such as RATE_LIMIT, got the string \"rate_limit\""},
      {"failure class", Top("expect: {failure_class: ratelimit}\n"), 7, 25, "expect.failure_class",
       "expected one of auth, rate-limit, quota, invalid-request, context-overflow, timeout, "
       "transport, provider-overloaded, provider-unavailable, protocol, truncated, empty, "
       "safety, aborted, unknown, got the string \"ratelimit\""},
      {"empty tool name", Doc("  - content: {tool_call: {name: \"\"}}\n"), 6, 33,
       "responses[0].content.tool_call.name", "expected a tool name, got an empty string"},
      {"empty content type", Doc("  - content_type: \"\"\n"), 6, 19, "responses[0].content_type",
       "expected a media type such as \"text/plain\""},
      {"empty responses",
       "faultline: 1\nname: t/x\ndescription: d\ndialect: openai-chat\n"
       "responses: []\n",
       5, 12, "responses", "expected at least one response"},
      {"empty chaos faults",
       "faultline: 1\nname: t/x\ndescription: d\ndialect: openai-chat\n"
       "chaos: {faults: []}\n",
       5, 17, "chaos.faults", "expected at least one fault"},
  });
}

TEST(LoaderErrorTest, DocumentLevelProblems) {
  ExpectErrors({
      {"empty file", "", 1, 1, "",
       "the file is empty; expected a scenario (faultline: 1, name: ...)"},
      {"only comments", "# nothing here\n", 1, 1, "",
       "the file is empty; expected a scenario (faultline: 1, name: ...)"},
      {"a second document", Top("---\nfaultline: 1\n"), 8, 1, "",
       "a second YAML document starts here; a scenario file holds exactly one scenario"},
      {"duplicate key", Doc("  - status: 429\n    status: 500\n"), 7, 5, "responses[0].status",
       "key 'status' is given twice (first at line 6)"},
      {"newer format", "faultline: 2\nname: t/x\nfuture_key: 1\n", 1, 12, "faultline",
       "unsupported format version 2; this build reads 'faultline: 1'"},
      {"quoted version", "faultline: \"1\"\n", 1, 12, "faultline",
       "expected an integer >= 1, got the string \"1\""},
  });
}

TEST(LoaderErrorTest, MalformedYamlReportsYamlCppPosition) {
  auto scenario = ParseScenario(Doc("  - status: [429\n    error: x\n"), "bad.yaml");
  ASSERT_FALSE(scenario.has_value());
  EXPECT_EQ(scenario.error().path, "");
  EXPECT_EQ(scenario.error().message.rfind("invalid YAML: ", 0), 0u) << scenario.error().message;
  EXPECT_GE(scenario.error().line, 6);
  EXPECT_GE(scenario.error().column, 1);

  auto tab = ParseScenario("faultline: 1\nname:\tt/x\n\tdescription: d\n", "tab.yaml");
  ASSERT_FALSE(tab.has_value());
  EXPECT_EQ(tab.error().line, 3);
  EXPECT_EQ(tab.error().message.rfind("invalid YAML: ", 0), 0u) << tab.error().message;
}

// yaml-cpp 0.7 loops forever, allocating, on a stray ',' (jbeder/yaml-cpp#1040); the loader
// notices that the parser stopped making progress and reports the character.
TEST(LoaderErrorTest, StrayCommaIsAnErrorNotAnEndlessLoop) {
  ExpectErrors({
      {"a comma alone", ",", 1, 1, "", "invalid YAML: unexpected ','"},
      {"a comma after a JSON object", "{\"faultline\": 1},\n", 1, 17, "",
       "invalid YAML: unexpected ','"},
      {"a comma after a flow list", "[a],\n", 1, 4, "", "invalid YAML: unexpected ','"},
  });
}

TEST(LoaderErrorTest, DeepNestingIsAnErrorNotAStackOverflow) {
  auto scenario = ParseScenario("tags: " + std::string(100'000, '['), "deep.yaml");
  ASSERT_FALSE(scenario.has_value());
  EXPECT_TRUE(scenario.error().over_limit);
  EXPECT_EQ(scenario.error().message, "the document nests deeper than 64 levels");
  EXPECT_EQ(scenario.error().line, 1);
  EXPECT_GT(scenario.error().column, 7);
}

// The control API's hostile input (issue 14): a scenario object nested 60,000 deep, as JSON.
TEST(LoaderLimitsTest, DeepJsonIsRefusedAtTheLimit) {
  std::string deep;
  for (int i = 0; i < 60'000; ++i) deep += "{\"a\":";
  deep += "1" + std::string(60'000, '}');
  auto scenario = ParseScenario(deep, "deep.json");
  ASSERT_FALSE(scenario.has_value());
  EXPECT_TRUE(scenario.error().over_limit);
  EXPECT_EQ(scenario.error().message, "the document nests deeper than 64 levels");

  auto shallow = ParseScenario(deep, "deep.json", ParseLimits{.max_depth = 3});
  ASSERT_FALSE(shallow.has_value());
  EXPECT_EQ(shallow.error().message, "the document nests deeper than 3 levels");
  EXPECT_EQ(shallow.error().column, 16);
}

TEST(LoaderLimitsTest, ValidDocumentsFitTheDefaultsAndTightLimitsRefuseThem) {
  const std::string doc = Doc("  - content: {text: hi, faults: [{after_event: 1, stall: 1s}]}\n");
  ASSERT_TRUE(ParseScenario(doc, "ok.yaml").has_value());
  auto shallow = ParseScenario(doc, "ok.yaml", ParseLimits{.max_depth = 4});
  ASSERT_FALSE(shallow.has_value());
  EXPECT_TRUE(shallow.error().over_limit);
  EXPECT_EQ(shallow.error().line, 6);
  // faultline, name, description, dialect, responses, one item, content, text, faults, one
  // fault, after_event, stall: 12 keys and items.
  EXPECT_TRUE(ParseScenario(doc, "ok.yaml", ParseLimits{.max_keys = 12}).has_value());
  auto few = ParseScenario(doc, "ok.yaml", ParseLimits{.max_keys = 11});
  ASSERT_FALSE(few.has_value());
  EXPECT_TRUE(few.error().over_limit);
  EXPECT_EQ(few.error().message, "the document has more than 11 keys and list items");
  EXPECT_EQ(few.error().line, 6);
}

std::chrono::nanoseconds ThreadCpuTime() {
  timespec now{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
}

std::string ManyKeys(std::size_t count) {
  std::string text = "faultline: 1\n";
  for (std::size_t i = 0; i < count; ++i) text += "k" + std::to_string(i) + ": 1\n";
  return text;
}

// 100,000 keys in one mapping (1.1 MB) took 17 s to reject: every key was compared with every
// key before it. Now the count is bounded, and checking stays linear when the bound is lifted.
TEST(LoaderLimitsTest, ManyKeysAreRefusedQuicklyAndCheckedInLinearTime) {
  const std::string text = ManyKeys(100'000);
  auto refused = ParseScenario(text, "keys.yaml");
  ASSERT_FALSE(refused.has_value());
  EXPECT_TRUE(refused.error().over_limit);
  EXPECT_EQ(refused.error().line, 10'001);

  // This thread's CPU time, not the wall clock: a loaded machine (ctest -j2 beside a build)
  // stretched the wall time of the linear check past the bound.
  const auto start = ThreadCpuTime();
  auto checked = ParseScenario(text, "keys.yaml", ParseLimits{.max_keys = 1'000'000});
  const auto took = ThreadCpuTime() - start;
  ASSERT_FALSE(checked.has_value());
  EXPECT_FALSE(checked.error().over_limit);
  EXPECT_EQ(checked.error().message.rfind("unknown key 'k0'", 0), 0u) << checked.error().message;
  EXPECT_LT(took, std::chrono::seconds(5));  // quadratic: 17 s; linear: well under 1 s
}

// A "billion laughs" of aliases: each level repeats the one before ten times.
TEST(LoaderLimitsTest, AliasesCountWhatTheyRepeat) {
  const std::string laughs =
      "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n"
      "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
      "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
      "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
      "e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n";
  auto scenario = ParseScenario(laughs, "laughs.yaml");
  ASSERT_FALSE(scenario.has_value());
  EXPECT_TRUE(scenario.error().over_limit);
  EXPECT_EQ(scenario.error().line, 4);  // a to d: 11 + 111 + 1,111 + 11,111 keys and items
}

// Issue 30: one 1 MiB anchor and 2,400 aliases (a 1.1 MB file) took 34.5 s and 2.4 GB to
// validate; the bytes an alias repeats now count as the text it stands for.
TEST(LoaderLimitsTest, AliasesCountTheBytesTheyRepeat) {
  std::string doc = Doc("  - content: {text: &big \"" + std::string(1 << 20, 'x') + "\"}\n");
  for (int i = 0; i < 2'400; ++i) doc += "  - content: {text: *big}\n";
  const auto start = ThreadCpuTime();
  auto scenario = ParseScenario(doc, "aliases.yaml");
  EXPECT_LT(ThreadCpuTime() - start, std::chrono::seconds(5));
  ASSERT_FALSE(scenario.has_value());
  EXPECT_TRUE(scenario.error().over_limit);
  EXPECT_EQ(scenario.error().message,
            "the document's text is more than 8388608 bytes (counting what aliases repeat)");
  EXPECT_EQ(scenario.error().line, 13);  // the seventh alias: with the anchor, over 8 MiB
  // An anchored scalar under the limit, named a few times, loads.
  std::string few = Doc("  - content: {text: &t \"" + std::string(1000, 'x') + "\"}\n");
  for (int i = 0; i < 3; ++i) few += "  - content: {text: *t}\n";
  ASSERT_TRUE(ParseScenario(few, "few.yaml").has_value());
  auto tight = ParseScenario(few, "few.yaml", ParseLimits{.max_bytes = 3'000});
  ASSERT_FALSE(tight.has_value());
  EXPECT_TRUE(tight.error().over_limit);
}

// A 1 MiB text streams 262,144 four-character events, which the plan renders ahead of time
// (about 300 MB): the events every response streams are bounded in all.
TEST(LoaderLimitsTest, TheEventsTheResponsesStreamAreBounded) {
  auto big = ParseScenario(Doc("  - content: {text: \"" + std::string(1 << 20, 'x') + "\"}\n"),
                           "big.yaml");
  ASSERT_FALSE(big.has_value());
  EXPECT_TRUE(big.error().over_limit);
  EXPECT_EQ(big.error().message.rfind("the responses stream 262144 events in all", 0), 0u)
      << big.error().message;
  EXPECT_EQ(big.error().line, 6);  // the responses list
  // The same text in larger chunks fits; so do many small responses within the bound.
  EXPECT_TRUE(ParseScenario(Doc("  - content: {text: \"" + std::string(1 << 20, 'x') +
                                "\", chunk_size: 64}\n"),
                            "chunks.yaml")
                  .has_value());
  // A one-byte drip writes every byte of every event on its own.
  auto drip = ParseScenario(Doc("  - content: {text: \"" + std::string(20'000, 'x') +
                                "\", drip: {bytes: 1, every: 1ms}}\n"),
                            "drip.yaml");
  ASSERT_FALSE(drip.has_value());
  EXPECT_TRUE(drip.error().over_limit);
  EXPECT_TRUE(ParseScenario(Doc("  - content: {text: hi}\n"), "few.yaml",
                            ParseLimits{.max_stream_events = 100})
                  .has_value());
}

TEST(LoaderLimitsTest, LongUnknownKeysAreShortenedAndNotCompared) {
  const std::string key(1'000'000, 'x');
  // An explicit key ("? key"): YAML limits implicit ones to 1024 characters.
  auto scenario = ParseScenario("faultline: 1\n? " + key + "\n: 1\n", "long.yaml");
  ASSERT_FALSE(scenario.has_value());
  EXPECT_EQ(scenario.error().message.rfind(
                "unknown key '" + std::string(60, 'x') + "...' (1000000 characters); expected", 0),
            0u)
      << scenario.error().message.substr(0, 200);
}

TEST(LoaderErrorTest, JsonErrorsHaveJsonPositions) {
  ExpectErrors({
      {"bad value",
       "{\"faultline\": 1, \"name\": \"t/x\", \"description\": \"d\", \"dialect\": "
       "\"openai-chat\",\n"
       " \"responses\": [{\"status\": \"x\"}]}\n",
       2, 27, "responses[0].status", "expected an integer from 100 to 599, got the string \"x\""},
      {"unknown key", "{\n  \"faultline\": 1,\n  \"nmae\": \"t/x\"\n}\n", 3, 3, "nmae",
       "unknown key 'nmae'; did you mean 'name'?"},
  });
  auto broken = ParseScenario("{\"faultline\": 1,\n \"name\": \"t/x\"", "broken.json");
  ASSERT_FALSE(broken.has_value());
  EXPECT_EQ(broken.error().message.rfind("invalid YAML: ", 0), 0u);
}

// Aliases may build shared or even cyclic node graphs; the loader reads a fixed shape, so they
// can only ever be a type error.
TEST(LoaderErrorTest, AliasesCannotLoop) {
  auto cyclic = ParseScenario(Top("tags: &a [*a]\n"), "alias.yaml");
  ASSERT_FALSE(cyclic.has_value());
  EXPECT_EQ(cyclic.error().path, "tags[0]");
  auto shared = ParseScenario(
      "faultline: 1\nname: t/x\ndescription: d\ndialect: openai-chat\n"
      "responses: [&r {status: 500}, *r, *r]\n",
      "alias.yaml");
  ASSERT_TRUE(shared.has_value()) << shared.error().ToString();
  EXPECT_EQ(shared->responses.size(), 3u);
}

constexpr std::string_view kValid = R"(faultline: 1
name: fuzz/seed
description: "A document that uses most of the format."
dialect: anthropic-messages
tags: [a, b]
request: {stream: true, max_tokens: 10}
responses:
  - status: 429
    retry_after: {http_date: 2s, form: asctime}
    headers: [{name: x-a, value: "1"}]
  - content:
      text: "Hé 😀"
      faults:
        - {after_event: 1, stall: 1s, heartbeat: {every: 100ms, style: ping}}
        - {after_event: 2, inject: provider_error, error: {kind: overloaded}}
      end: {kind: reset, after_event: 3, at_byte: 2}
rate_limit: {requests: 1, window: 1s}
expect: {outcome: committed, attempts: 2, text: "Hé 😀"}
)";

// Every prefix, and every byte replaced by characters that matter to YAML or JSON: the loader
// must answer each with a scenario or an error that points inside the document.
TEST(LoaderRobustnessTest, TruncatedAndMutatedDocumentsNeverCrash) {
  ASSERT_TRUE(ParseScenario(kValid, "seed.yaml").has_value());
  const int lines = static_cast<int>(std::count(kValid.begin(), kValid.end(), '\n')) + 1;
  int errors = 0;
  auto check = [&](const std::string& text) {
    auto scenario = ParseScenario(text, "fuzz.yaml");
    if (scenario.has_value()) return;
    ++errors;
    ASSERT_FALSE(scenario.error().message.empty()) << text;
    ASSERT_LE(scenario.error().line, lines + 1) << text;
    ASSERT_GE(scenario.error().line, 0) << text;
  };
  for (std::size_t length = 0; length <= kValid.size(); ++length) {
    check(std::string(kValid.substr(0, length)));
  }
  constexpr std::string_view kReplacements(":-[{,\"'\n\t&*!#|>\0\xff", 16);
  for (std::size_t at = 0; at < kValid.size(); ++at) {
    for (char replacement : kReplacements) {
      std::string text(kValid);
      text[at] = replacement;
      check(text);
    }
    std::string deleted(kValid);
    deleted.erase(at, 1);
    check(deleted);
  }
  EXPECT_GT(errors, static_cast<int>(kValid.size()));  // most mutations must be rejected
}

}  // namespace
}  // namespace faultline::scenario

namespace faultline::scenario {
namespace {

TEST(LoaderErrorTest, PolicyAndExpectFacts) {
  ExpectErrors({
      {"policy is a mapping", Top("policy: [1, 2]\n"), 7, 9, "policy",
       "expected a retry policy (a mapping, docs/policy.md), got a list"},
      {"a policy key given twice", Top("policy: {max_attempts: 2, max_attempts: 3}\n"), 7, 27,
       "policy", "'max_attempts' is given twice"},
      {"retry delays need both bounds", Top("expect: {retry_delays: [{min: 1s}]}\n"), 7, 25,
       "expect.retry_delays[0]", "missing required key 'max'"},
      {"retry delay bounds in order", Top("expect: {retry_delays: [{min: 2s, max: 1s}]}\n"), 7, 40,
       "expect.retry_delays[0].max", "expected 'max' to be at least 'min'"},
      {"a hint or none", Top("expect: {failure: {retry_after: soon}}\n"), 7, 33,
       "expect.failure.retry_after",
       "expected a duration such as \"1s\", or none, got the string \"soon\""},
      {"header names", Top("expect: {request_headers: {same: [\"a b\"]}}\n"), 7, 35,
       "expect.request_headers.same[0]", "expected a header name, got the string \"a b\""},
      {"no failure facts on a commit",
       Top("expect: {outcome: committed, failure: {status: 500}}\n"), 7, 30, "expect.failure",
       "'failure' describes a failure, but outcome is committed"},
  });
}

}  // namespace
}  // namespace faultline::scenario

namespace faultline::scenario {
namespace {

// Bedrock's binary event stream has no SSE framing, no keep-alive, no untyped error envelope and
// no rate-limit headers; its tools no strict mode. Each is refused with the reason.
TEST(LoaderErrorTest, BedrockRefusesWhatItsWireCannotSay) {
  const std::pair<std::string, std::string_view> cases[] = {
      {Doc("  - content: {text: hi, framing: {line_ending: crlf}}\n", "bedrock-converse"),
       "length-prefixed binary messages"},
      {Doc("  - content: {text: hi, faults: [{after_event: 1, stall: 1s, heartbeat: {every: "
           "100ms}}]}\n",
           "bedrock-converse"),
       "no keep-alive of its own"},
      {Doc("  - content: {text: hi, faults: [{after_event: 1, inject: error_envelope}]}\n",
           "bedrock-converse"),
       "has no error envelope"},
      {Doc("  - status: 429\n    rate_limit_headers: {}\n", "bedrock-converse"),
       "ThrottlingException"},
      {"faultline: 1\nname: t/x\ndescription: d\ndialect: bedrock-converse\nrequest: {tools: "
       "true, strict_tools: true}\nresponses:\n  - {}\n",
       "no strict mode"},
  };
  for (const auto& [text, reason] : cases) {
    SCOPED_TRACE(text);
    auto scenario = ParseScenario(text, "bad.yaml");
    ASSERT_FALSE(scenario.has_value());
    EXPECT_NE(scenario.error().message.find(reason), std::string::npos) << scenario.error().message;
  }
  // What the wire can say is taken: split writes, an exception mid-stream, a cut inside a message.
  EXPECT_TRUE(ParseScenario(Doc("  - content: {text: hi, framing: {split_writes: true}, faults: "
                                "[{after_event: 1, inject: provider_error, error: rate_limit}], "
                                "end: {kind: close, after_event: 1, at_byte: 5}}\n",
                                "bedrock-converse"),
                            "good.yaml")
                  .has_value());
}

}  // namespace
}  // namespace faultline::scenario
