// JsonText writes exactly what nlohmann's dump(-1, ' ', false, replace) writes of the tree that
// JsonTree builds from the same calls, so the trace's fingerprint (the hash of that text) stays
// what it was when it hashed the dumped tree.
#include "harness/trace/json_out.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "harness/trace/event.h"
#include "harness/trace/trace.h"
#include "harness/worlds/virtual_world.h"
#include "hashing/fnv1a.h"
#include "scenarios/loader.h"

namespace faultline::harness {
namespace {

using nlohmann::json;

std::string Dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string Text(const std::function<void(JsonOut&)>& write) {
  std::string text;
  JsonText out(&text);
  write(out);
  return text;
}

json Tree(const std::function<void(JsonOut&)>& write) {
  JsonTree out;
  write(out);
  return out.Take();
}

// The text and the hash of one description agree with the dumped tree.
void ExpectSameAsDump(const std::function<void(JsonOut&)>& write) {
  const std::string dumped = Dump(Tree(write));
  EXPECT_EQ(Text(write), dumped);
  JsonText hashed(hashing::kFnv1aOffsetBasis);
  write(hashed);
  EXPECT_EQ(hashed.Hash(), hashing::Fnv1a64(dumped));
}

TEST(JsonTextTest, EscapesStringsAsNlohmannDumps) {
  std::vector<std::string> strings = {"",
                                      "plain",
                                      "quote \" and \\ backslash",
                                      "\b\t\n\f\r",
                                      "slash / and del \x7f",
                                      "café ünïcode ✓ 𝄞",  // valid UTF-8, written as is
                                      "bad \xff byte",
                                      "cut \xe2\x9c",
                                      "\xc0\xaf overlong",
                                      "\xed\xa0\x80 surrogate",
                                      std::string("nul \0 inside", 13)};
  for (int byte = 0; byte < 0x20; ++byte) strings.push_back(fmt::format("<{}>", char(byte)));
  for (const std::string& each : strings) {
    ExpectSameAsDump([&](JsonOut& out) { out.String(each); });
    ExpectSameAsDump([&](JsonOut& out) {
      out.BeginObject();
      out.Field(each, each);
      out.EndObject();
    });
  }
}

TEST(JsonTextTest, FormatsNumbersAsNlohmannDumps) {
  std::vector<double> doubles = {0.0,
                                 -0.0,
                                 1.0,
                                 -1.0,
                                 0.1,
                                 0.001,
                                 1e-4,
                                 1e-5,
                                 1.5e-7,
                                 123.456,
                                 1e15,
                                 1e16,
                                 1e17,
                                 1e21,
                                 2.5e300,
                                 5e-324,
                                 1.0 / 3,
                                 2.0 / 3,
                                 1e100,
                                 -7.25e-3,
                                 std::numeric_limits<double>::max(),
                                 std::numeric_limits<double>::min(),
                                 std::numeric_limits<double>::quiet_NaN(),
                                 std::numeric_limits<double>::infinity()};
  std::mt19937_64 draw(31);
  for (int i = 0; i < 2000; ++i) {
    doubles.push_back(static_cast<double>(static_cast<std::int64_t>(draw() % 100'000'000)) /
                      1000.0);  // a time in ms, as Ms() makes them
    doubles.push_back(
        std::ldexp(static_cast<double>(draw() >> 11), static_cast<int>(draw() % 200) - 150));
  }
  for (const double each : doubles) {
    ExpectSameAsDump([&](JsonOut& out) { out.Double(each); });
  }
  for (const std::int64_t each :
       {std::int64_t{0}, std::int64_t{-1}, std::int64_t{42},
        std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()}) {
    ExpectSameAsDump([&](JsonOut& out) { out.Int(each); });
  }
  ExpectSameAsDump([&](JsonOut& out) { out.Uint(std::numeric_limits<std::uint64_t>::max()); });
}

TEST(JsonTextTest, NestsAsNlohmannDumps) {
  ExpectSameAsDump([](JsonOut& out) {
    out.BeginObject();
    out.Key("a");
    out.BeginArray();
    out.EndArray();
    out.Key("b");
    out.BeginObject();
    out.EndObject();
    out.Key("c");
    out.BeginArray();
    out.Null();
    out.Bool(true);
    out.BeginArray();
    out.Int(1);
    out.BeginObject();
    out.Field("x", false);
    out.EndObject();
    out.EndArray();
    const json inner = json::parse(R"({"z":[1,2.5,"s"],"a":{"k":null}})");
    out.Json(inner, Dump(inner));
    out.EndArray();
    out.Field("d", "e");
    out.EndObject();
  });
}

// A shared JSON value carries its text as nlohmann dumps it, which JsonText writes; its copies
// are the one value, and equal values are equal whether shared or not.
TEST(SharedJsonTest, CarriesItsDumpedText) {
  for (const char* text : {"{\"a\":1}", "{\"a\":1.0}", "[-0.0,1e-05]", "{\"b\":[true,null]}"}) {
    const SharedJson value = json::parse(text);
    EXPECT_EQ(value.text(), Dump(*value));
    ExpectSameAsDump([&](JsonOut& out) { out.Json(*value, value.text()); });
  }
  const SharedJson bad = json(std::string("caf\xc3 \xff"));
  EXPECT_EQ(bad.text(), Dump(*bad));
  const SharedJson one = json::parse(R"({"a":1})");
  const SharedJson copy = one;
  const SharedJson equal = json::parse(R"({"a":1})");
  EXPECT_TRUE(copy.SameAs(one));
  EXPECT_FALSE(equal.SameAs(one));
  EXPECT_EQ(equal, one);
  EXPECT_NE(SharedJson(json::parse(R"({"a":2})")), one);
}

// What the fingerprint hashed before it was written as text: the dumped tree of the trace without
// the fields that differ between runs of one seed.
std::uint64_t TreeFingerprint(const Trace& trace) {
  json stable = TraceToJson(trace);
  for (const char* key : {"endings", "gateway", "scheduling_lateness_ms", "scripted_by_fallback",
                          "scripted_from_ms", "stderr", "stdout"}) {
    stable.erase(key);
  }
  for (json& entry : stable["journal"]) {
    entry.erase("connection");
    entry.erase("detail");
  }
  return hashing::Fnv1a64(Dump(stable));
}

std::string Hex(std::uint64_t hash) { return fmt::format("{:016x}", hash); }

TEST(TraceFingerprintTest, IsTheHashOfTheDumpedStableTree) {
  auto catalog = scenario::LoadBuiltinCatalog();
  ASSERT_TRUE(catalog);
  for (const scenario::Scenario& scenario : *catalog) {
    for (std::uint64_t seed : {0, 7}) {
      VirtualRunOptions options;
      options.seed = seed;
      options.provider_seed = seed;
      auto trace = RunVirtual(scenario, options);
      ASSERT_TRUE(trace) << scenario.name;
      EXPECT_EQ(Fingerprint(*trace), Hex(TreeFingerprint(*trace))) << scenario.name;
    }
  }
}

// Every field of an event and a trace, with text that needs escaping and times that do not read
// as whole milliseconds.
Trace EveryField() {
  Trace trace;
  trace.calls = 2;
  trace.one_client = true;
  ClientEvent hello;
  hello.kind = EventKind::kHello;
  hello.at_ms = 0.5;
  hello.name = "subject \"x\"";
  hello.version = "1.0";
  hello.policy = json::parse(R"({"max_attempts":3,"base_delay_ms":250.5})");
  hello.session = true;
  hello.reset = true;
  hello.route_id = "r";
  trace.client.push_back({Duration{-1500}, 0, hello});
  ClientEvent failed;
  failed.kind = EventKind::kFailed;
  failed.at_ms = 12.0;
  failed.call = 1;
  failed.response_id = "resp\n1";
  failed.attempt = 2;
  failed.text = "caf\xc3\xa9 \xff";
  failed.tool_call = ReportedToolCall{3, "id", "", "{\"a\":1}"};
  failed.uncommitted = true;
  ReportedFailure failure{"SERVER",      "provider-unavailable",
                          "stream",      true,
                          "uncommitted", "boom\t\x01",
                          503,           1234.5,
                          "req",         "primary"};
  failed.failure = failure;
  failed.wasted = ReportedWaste{100, 25};
  failed.scheduled_retry_ms = 0.25;
  failed.delay_source = "backoff";
  failed.next_route_id = "fallback";
  failed.give_up = "all-routes-down";
  failed.route_failures = {failure, ReportedFailure{}};
  trace.client.push_back({Duration{12'345}, 1, failed});
  ClientEvent committed;
  committed.kind = EventKind::kCommitted;
  committed.text = "done";
  committed.tool_calls = std::vector<ReportedToolCall>{{std::nullopt, "c1", "get", "{}"}};
  committed.has_finish_reason = true;
  committed.usage = ReportedUsage{10, std::nullopt};
  committed.reasoning = "because";
  trace.client.push_back({Duration{20'001}, 0, committed});
  committed.finish_reason = "stop";
  trace.client.push_back({Duration{20'002}, 1, committed});
  provider::JournalEntry entry;
  entry.index = 1;
  entry.attempt = 2;
  entry.route = "primary";
  entry.call = 1;
  entry.connection = 9;
  entry.arrived = Duration{1001};
  entry.body = "{}";
  entry.status = 503;
  entry.plan_summary = "status 503 \"x\"";
  entry.truth.answer = "hi";
  entry.truth.failure_class = "provider-unavailable";
  entry.truth.retryable = true;
  entry.truth.failure_in_head = true;
  entry.truth.hint_fields = {{"retry-after", "2"}, {"retry-after-ms", "nope"}};
  entry.truth.silences = {{Duration{100}, Duration{2100}, true, false},
                          {Duration{3000}, std::nullopt, false, true}};
  entry.writes = {{Duration{1500}, Duration{1400}, 17}};
  entry.bytes_sent = 17;
  entry.end = provider::EndKind::kResetByServer;
  entry.ended = Duration{4000};
  entry.detail = "reset \xfe";
  trace.journal.push_back(entry);
  trace.journal.push_back(provider::JournalEntry{});
  trace.cancel_at = Duration{5000};
  trace.ended = Duration{30'000'001};
  trace.subject_timed_out = true;
  trace.subject_stopped_at = Duration{29'000'000};
  trace.subject_stderr = "warn\n";
  trace.subject_stdout = "out";
  trace.subject_endings = {"exit 0"};
  trace.protocol_errors = {"not json: {", "\x80"};
  trace.outcome_unknown = true;
  trace.own_request = true;
  trace.scheduling_lateness = Duration{3};
  trace.scripted_from = Duration{-2};
  trace.scripted_by_fallback = true;
  trace.gateway = GatewayRun{"nginx", 3};
  return trace;
}

TEST(TraceFingerprintTest, CoversEveryFieldAsTheTreeDoes) {
  const Trace trace = EveryField();
  EXPECT_EQ(Fingerprint(trace), Hex(TreeFingerprint(trace)));
  for (const ClientRecord& record : trace.client) {
    ExpectSameAsDump([&](JsonOut& out) { WriteEvent(record.event, out); });
    EXPECT_EQ(EventFromJson(EventToJson(record.event)), record.event);
  }
  // The volatile fields are in the stored trace, not in the fingerprint.
  Trace other = trace;
  other.journal[0].connection = 10;
  other.subject_stderr = "other";
  other.scheduling_lateness = Duration{4};
  other.gateway->max_upstream_attempts = 4;
  EXPECT_EQ(Fingerprint(other), Fingerprint(trace));
  EXPECT_NE(TraceToJson(other), TraceToJson(trace));
}

TEST(TraceFingerprintTest, SeededFingerprintHashesThePlansAsTheirDumpedTree) {
  const Trace trace = EveryField();
  const json stored = TraceToJson(trace);
  json plans = json::array();
  for (std::size_t i = 0; i < trace.journal.size(); ++i) {
    const provider::JournalEntry& entry = trace.journal[i];
    plans.push_back(
        {entry.attempt, entry.status, entry.plan_summary, stored["journal"][i]["truth"]});
  }
  EXPECT_EQ(SeededFingerprint(trace, "pass;"), Hex(hashing::Fnv1a64(Dump(plans) + "|pass;")));
}

}  // namespace
}  // namespace faultline::harness
