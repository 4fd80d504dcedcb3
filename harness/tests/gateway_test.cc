// Gateways as subjects: the definition format and its templates, the GW-* checks on hand-built
// traces (each one failing on what it names, passing or n/a otherwise), and a whole run over
// loopback through a gateway of the tests' own (tests/gateways/naive-python: retries the first
// upstream at once, ignoring Retry-After), which the checks must convict.
#include "harness/gateways/gateway.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "fleet/policy_file.h"
#include "harness/judge/gateway_checks.h"
#include "harness/tests/judge_test_support.h"
#include "harness/worlds/real_world.h"
#include "scenarios/loader.h"

namespace faultline::harness {
namespace {

using report::CheckStatus;
using testing::TraceBuilder;
using testing::WithHint;

const GatewayPlace kPlace{
    "/run",
    "/pkgs",
    8080,
    {{"primary", "127.0.0.1", 9001, false}, {"secondary", "127.0.0.1", 9002, true}}};

TEST(GatewayTemplateTest, FillsNamesAndRepeatsTheUpstreams) {
  auto text = RenderTemplate(
      "listen {{listen_port}}; pid {{dir}}/x;\n"
      "{{#upstreams}}server {{id}}={{host}}:{{port}}#{{index}}{{#backup}} backup{{/backup}}"
      "{{^backup}} main{{/backup}};\n{{/upstreams}}",
      kPlace);
  ASSERT_TRUE(text) << text.error();
  EXPECT_EQ(*text,
            "listen 8080; pid /run/x;\n"
            "server primary=127.0.0.1:9001#0 main;\n"
            "server secondary=127.0.0.1:9002#1 backup;\n");
}

TEST(GatewayTemplateTest, NamesWhatItCannotFill) {
  EXPECT_NE(RenderTemplate("{{port}}", kPlace).error().find("unknown name '{{port}}'"),
            std::string::npos)
      << "an upstream's name outside {{#upstreams}}";
  EXPECT_NE(RenderTemplate("{{#upstreams}}x", kPlace).error().find("not closed"),
            std::string::npos);
  EXPECT_NE(RenderTemplate("{{#backup}}x{{/backup}}", kPlace).error().find("unknown section"),
            std::string::npos);
  EXPECT_NE(RenderTemplate("a {{ b", kPlace).error().find("without its"), std::string::npos);
}

std::optional<std::string> OneTemplate(std::string_view, std::string_view name) {
  if (name == "conf") return std::string("listen {{listen_port}};");
  return std::nullopt;
}

TEST(GatewayDefinitionTest, ReadsADefinitionAndRefusesABrokenOne) {
  auto good = ParseGatewayDefinition(
      R"({"name": "g", "command": "g -c {{dir}}/conf", "files": ["conf"],
          "declares": {"max_upstream_attempts": 3}})",
      "g.json", "folder", OneTemplate);
  ASSERT_TRUE(good) << good.error();
  EXPECT_EQ(good->declares.max_upstream_attempts, 3);
  ASSERT_EQ(good->files.size(), 1u);
  EXPECT_EQ(good->files[0].text, "listen {{listen_port}};");
  const auto error = [](std::string_view json) {
    auto parsed = ParseGatewayDefinition(json, "g.json", "folder", OneTemplate);
    return parsed ? std::string("(parsed)") : parsed.error();
  };
  EXPECT_NE(error(R"({"command": "x", "files": ["conf"]})").find("'name'"), std::string::npos);
  EXPECT_NE(error(R"({"name": "g", "files": ["conf"]})").find("'command'"), std::string::npos);
  EXPECT_NE(error(R"({"name": "g", "command": "x", "files": ["missing"]})").find("missing"),
            std::string::npos);
  EXPECT_NE(error(R"({"name": "g", "command": "x", "files": ["../conf"]})").find("file name"),
            std::string::npos);
  EXPECT_NE(error(R"({"name": "g", "command": "x {{nope}}", "files": ["conf"]})").find("nope"),
            std::string::npos)
      << "a template error shows when the definition is read, not mid-run";
  EXPECT_NE(error(R"({"name": "g", "command": "x", "files": ["conf"],
                      "declares": {"max_upstream_attempts": 0}})")
                .find("max_upstream_attempts"),
            std::string::npos);
  EXPECT_NE(error("[").find("not a JSON object"), std::string::npos);
}

TEST(GatewayDefinitionTest, TheShippedGatewaysLoadAndAnUnknownOneIsNamed) {
  const std::vector<std::string> names = BuiltinGatewayNames();
  for (const char* name : {"caddy", "haproxy", "nginx"}) {
    EXPECT_NE(std::ranges::find(names, name), names.end()) << name;
    auto loaded = LoadGateway(name);
    ASSERT_TRUE(loaded) << loaded.error();
    EXPECT_EQ(loaded->name, name);
    EXPECT_FALSE(loaded->needs.empty());
  }
  auto folder =
      LoadGateway(std::string(FAULTLINE_SOURCE_DIR) + "/harness/tests/gateways/naive-python");
  ASSERT_TRUE(folder) << folder.error();
  EXPECT_EQ(folder->declares.max_upstream_attempts, 2);
  auto unknown = LoadGateway("no-such-gateway");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().find("nginx"), std::string::npos) << unknown.error();
}

// A run through a gateway: the client's hello and its one attempt's start.
TraceBuilder GatewayTrace() {
  TraceBuilder builder(nlohmann::json{{"max_attempts", 1}});
  builder.Start(0, 1);
  return builder;
}

Trace Gatewayed(TraceBuilder& builder, int bound = 2) {
  Trace trace = builder.Build();
  trace.gateway = GatewayRun{"test-gateway", bound};
  return trace;
}

report::CheckResult GatewayCheck(const Trace& trace, std::string_view id) {
  for (report::CheckResult& check : JudgeGateway(trace, VirtualTolerance())) {
    if (check.id == id) return check;
  }
  ADD_FAILURE() << "no check " << id;
  return {};
}

provider::JournalEntry& Upstream(TraceBuilder& builder, double at, std::string route, int status) {
  provider::JournalEntry& entry = builder.Entry(at, at + 1, provider::EndKind::kCompleted);
  entry.route = std::move(route);
  entry.status = status;
  return entry;
}

TEST(GatewayChecksTest, EveryCheckIsNamedAndOnlyForAGatewayRun) {
  TraceBuilder builder = GatewayTrace();
  EXPECT_TRUE(JudgeGateway(builder.Build(), VirtualTolerance()).empty());
  EXPECT_EQ(JudgeGateway(Gatewayed(builder), VirtualTolerance()).size(),
            GatewayCheckCatalog().size());
}

TEST(GatewayChecksTest, AmplificationPastTheDeclarationFailsGw001) {
  TraceBuilder builder = GatewayTrace();
  Upstream(builder, 1, "primary", 500);
  Upstream(builder, 3, "primary", 500);
  builder.Failed(10, 1, "provider-unavailable", "SERVER");
  EXPECT_EQ(GatewayCheck(Gatewayed(builder, 2), "GW-001").status, CheckStatus::kPass);
  TraceBuilder more = GatewayTrace();
  Upstream(more, 1, "primary", 500);
  Upstream(more, 3, "primary", 500);
  Upstream(more, 5, "secondary", 500);
  more.Failed(10, 1, "provider-unavailable", "SERVER");
  const auto check = GatewayCheck(Gatewayed(more, 2), "GW-001");
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.evidence.find("3 upstream requests"), std::string::npos) << check.evidence;
}

TEST(GatewayChecksTest, ARequestInsideTheSameUpstreamsRetryAfterFailsGw002) {
  TraceBuilder early = GatewayTrace();
  WithHint(Upstream(early, 1, "primary", 429), "retry-after", "2");
  Upstream(early, 5, "secondary", 200).truth.answer = "ok";  // another upstream: fine
  Upstream(early, 900, "primary", 429);                      // inside primary's 2 s
  EXPECT_EQ(GatewayCheck(Gatewayed(early, 3), "GW-002").status, CheckStatus::kFail);

  TraceBuilder later = GatewayTrace();
  WithHint(Upstream(later, 1, "primary", 429), "retry-after", "2");
  Upstream(later, 5, "secondary", 200).truth.answer = "ok";
  Upstream(later, 2100, "primary", 200);
  EXPECT_EQ(GatewayCheck(Gatewayed(later, 3), "GW-002").status, CheckStatus::kPass);

  TraceBuilder none = GatewayTrace();
  Upstream(none, 1, "primary", 503);
  EXPECT_EQ(GatewayCheck(Gatewayed(none), "GW-002").status, CheckStatus::kNotApplicable);
}

TEST(GatewayChecksTest, ARateLimitPassedOnWithoutItsHintFailsGw003) {
  TraceBuilder dropped = GatewayTrace();
  WithHint(Upstream(dropped, 1, "primary", 429), "retry-after", "2");
  dropped.Event(5,
                {{"type", "response/failed"},
                 {"attempt", 1},
                 {"failure", {{"class", "provider-unavailable"}, {"code", "S"}, {"status", 500}}}});
  const auto check = GatewayCheck(Gatewayed(dropped), "GW-003");
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.evidence.find("status 500"), std::string::npos) << check.evidence;

  TraceBuilder kept = GatewayTrace();
  WithHint(Upstream(kept, 1, "primary", 429), "retry-after", "2");
  kept.Event(
      5, {{"type", "response/failed"},
          {"attempt", 1},
          {"failure",
           {{"class", "rate-limit"}, {"code", "R"}, {"status", 429}, {"retry_after_ms", 2000}}}});
  EXPECT_EQ(GatewayCheck(Gatewayed(kept), "GW-003").status, CheckStatus::kPass);
}

TEST(GatewayChecksTest, ACommitNoUpstreamSentWholeFailsGw004) {
  TraceBuilder spliced = GatewayTrace();
  auto& first = Upstream(spliced, 1, "primary", 200);
  first.truth.answer = "Hello from the primary";
  first.end = provider::EndKind::kResetByServer;
  spliced.Committed(20, 1, "Hello from the secondary");
  EXPECT_EQ(GatewayCheck(Gatewayed(spliced), "GW-004").status, CheckStatus::kFail);

  TraceBuilder whole = GatewayTrace();
  Upstream(whole, 1, "primary", 200).truth.answer = "Hello";
  whole.Committed(20, 1, "Hello");
  EXPECT_EQ(GatewayCheck(Gatewayed(whole), "GW-004").status, CheckStatus::kPass);
}

TEST(GatewayChecksTest, AnotherUpstreamAfterAStreamBeganFailsGw005) {
  TraceBuilder builder = GatewayTrace();
  auto& began = Upstream(builder, 1, "primary", 200);
  began.truth.streamed = true;
  began.truth.failure_class = "truncated";
  began.truth.output_before_failure = true;
  Upstream(builder, 40, "secondary", 200).truth.answer = "rest";
  EXPECT_EQ(GatewayCheck(Gatewayed(builder), "GW-005").status, CheckStatus::kFail);

  TraceBuilder before = GatewayTrace();
  auto& empty = Upstream(before, 1, "primary", 200);
  empty.truth.streamed = true;
  empty.truth.failure_class = "truncated";  // nothing went out: a failover is safe
  auto& answer = Upstream(before, 40, "secondary", 200);
  answer.truth.answer = "rest";
  answer.truth.streamed = true;
  EXPECT_EQ(GatewayCheck(Gatewayed(before), "GW-005").status, CheckStatus::kPass);
}

TEST(GatewayChecksTest, RetryingA400FailsGw006ButA429DoesNot) {
  TraceBuilder invalid = GatewayTrace();
  Upstream(invalid, 1, "primary", 400).truth.failure_class = "invalid-request";
  Upstream(invalid, 3, "secondary", 200).truth.answer = "ok";
  EXPECT_EQ(GatewayCheck(Gatewayed(invalid), "GW-006").status, CheckStatus::kFail);

  TraceBuilder limited = GatewayTrace();
  Upstream(limited, 1, "primary", 429);
  Upstream(limited, 3, "secondary", 200).truth.answer = "ok";
  EXPECT_EQ(GatewayCheck(Gatewayed(limited), "GW-006").status, CheckStatus::kNotApplicable);
}

TEST(GatewayChecksTest, ACommitAfterAFailedStreamFailsGw007) {
  TraceBuilder hidden = GatewayTrace();
  auto& cut = Upstream(hidden, 1, "primary", 200);
  cut.truth.streamed = true;
  cut.truth.failure_class = "truncated";
  hidden.Committed(20, 1, "Hello fr");
  EXPECT_EQ(GatewayCheck(Gatewayed(hidden), "GW-007").status, CheckStatus::kFail);

  TraceBuilder shown = GatewayTrace();
  auto& also_cut = Upstream(shown, 1, "primary", 200);
  also_cut.truth.streamed = true;
  also_cut.truth.failure_class = "truncated";
  shown.Failed(20, 1, "truncated", "STREAM_TRUNCATED");
  EXPECT_EQ(GatewayCheck(Gatewayed(shown), "GW-007").status, CheckStatus::kPass);
}

TEST(GatewayChecksTest, AWholeAnswerTheClientNeverGotFailsGw008) {
  TraceBuilder broken = GatewayTrace();
  auto& whole = Upstream(broken, 1, "primary", 200);
  whole.truth.answer = "Hello";
  whole.truth.streamed = true;
  broken.Event(
      20, {{"type", "response/failed"},
           {"attempt", 1},
           {"failure", {{"class", "provider-unavailable"}, {"code", "SERVER"}, {"status", 500}}}});
  const auto check = GatewayCheck(Gatewayed(broken), "GW-008");
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.evidence.find("status 500"), std::string::npos) << check.evidence;

  TraceBuilder passed = GatewayTrace();
  Upstream(passed, 1, "primary", 200).truth.answer = "Hello";
  passed.Committed(20, 1, "Hello");
  EXPECT_EQ(GatewayCheck(Gatewayed(passed), "GW-008").status, CheckStatus::kPass);
}

// Over loopback: the tests' naive gateway retries the only upstream at once after its 429 with
// Retry-After: 2, three tries where it declares two. The run shows it and the checks say so.
TEST(GatewaySubjectTest, ANaiveGatewayIsConvictedByItsUpstreamJournal) {
  auto catalog = scenario::LoadBuiltinGatewayCatalog();
  ASSERT_TRUE(catalog.has_value());
  const auto found = std::ranges::find(*catalog, "gateway/single-upstream-429-retry-after",
                                       &scenario::Scenario::name);
  ASSERT_NE(found, catalog->end());
  auto gateway =
      LoadGateway(std::string(FAULTLINE_SOURCE_DIR) + "/harness/tests/gateways/naive-python");
  ASSERT_TRUE(gateway) << gateway.error();
  auto policy = fleet::PolicyOption("no-retry");
  ASSERT_TRUE(policy) << policy.error();
  auto world = RealWorld::Start();
  ASSERT_TRUE(world) << world.error();
  RealRunOptions options;
  options.timeout = std::chrono::seconds(60);
  auto trace = (*world)->RunGatewaySubject(*found, *gateway, *policy, options);
  ASSERT_TRUE(trace) << trace.error();
  ASSERT_TRUE(trace->gateway);
  ASSERT_EQ(trace->journal.size(), 2u) << "429, then the answer on the second try";
  EXPECT_EQ(trace->journal[0].status, 429);
  EXPECT_EQ(trace->journal[1].status, 200);
  ASSERT_FALSE(trace->client.empty());
  EXPECT_EQ(trace->client.back().event.kind, EventKind::kCommitted) << trace->subject_stderr;
  const auto checks = JudgeGateway(*trace, RealTolerance());
  const auto status = [&](std::string_view id) {
    return std::ranges::find(checks, id, &report::CheckResult::id)->status;
  };
  EXPECT_EQ(status("GW-002"), CheckStatus::kFail) << "the retry came inside the 2 s";
  EXPECT_EQ(status("GW-001"), CheckStatus::kPass) << "two upstream requests, as declared";
  EXPECT_EQ(status("GW-004"), CheckStatus::kPass) << "the answer passed whole";
}

TEST(GatewaySubjectTest, AGatewayThatCannotStartIsARunErrorWithItsOutput) {
  auto catalog = scenario::LoadBuiltinGatewayCatalog();
  ASSERT_TRUE(catalog.has_value());
  GatewayDefinition broken;
  broken.name = "broken";
  broken.needs = "nothing";
  broken.command = "echo 'cannot bind' >&2; exit 3";
  auto world = RealWorld::Start();
  ASSERT_TRUE(world) << world.error();
  auto policy = fleet::PolicyOption("no-retry");
  ASSERT_TRUE(policy) << policy.error();
  auto trace = (*world)->RunGatewaySubject(catalog->front(), broken, *policy, RealRunOptions{});
  ASSERT_FALSE(trace);
  EXPECT_NE(trace.error().find("cannot bind"), std::string::npos) << trace.error();
  EXPECT_NE(trace.error().find("status 3"), std::string::npos) << trace.error();
}

}  // namespace
}  // namespace faultline::harness
