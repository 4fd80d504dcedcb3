// The call engine with several routes, driven by hand in virtual time: failover only where the
// taxonomy allows it and only to a route that fits, per-route holds and breakers, one budget
// across routes, and the aggregated failure when every route is down.
#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

#include "reference_impl/call.h"
#include "reference_impl/client_state.h"
#include "reference_impl/route_json.h"
#include "reference_impl/route_registry.h"
#include "reference_impl/tests/call_harness.h"
#include "reference_impl/tests/wire_fixtures.h"

namespace faultline::ref {
namespace {

using namespace call_harness;  // NOLINT: the harness is this file's vocabulary

constexpr std::string_view kToolsBody =
    R"({"model":"m","stream":true,"messages":[],"tools":[{"type":"function"}]})";

CallRoute Route(std::string id, std::uint16_t port, int priority, std::string model = "m",
                std::string_view body = R"({"model":"m","stream":true,"messages":[]})") {
  CallRoute route;
  route.traits.id = std::move(id);
  route.traits.model = std::move(model);
  route.traits.priority = priority;
  route.dialect = Dialect::kOpenAiChat;
  route.base_url = {.host = "127.0.0.1", .port = port, .path = ""};
  route.body = std::string(body);
  return route;
}

CallRequest TwoRoutes(CallRoute secondary = Route("secondary", 9002, 1)) {
  CallRequest request = ChatRequest();
  request.routes = {Route("primary", 9001, 0), std::move(secondary)};
  return request;
}

std::string Error503() { return JsonError(503, "", R"({"error":{"message":"unavailable"}})"); }
std::string QuotaError() {
  return JsonError(429, "",
                   R"({"error":{"message":"You exceeded your current quota",)"
                   R"("type":"insufficient_quota","code":"insufficient_quota"}})");
}

TEST(RouteCallTest, AnUnavailablePrimaryFailsOverAtOnceToTheSecondary) {
  Harness h(TestPolicy(), TwoRoutes());
  h.Start(0);
  EXPECT_EQ(h.call.route_id(), "primary");
  EXPECT_EQ(h.call.target().port, 9001);
  const auto after = h.Exchange(Error503(), 10);
  const auto interrupted = h.Of(EventType::kInterrupted);
  ASSERT_EQ(interrupted.size(), 1u);
  EXPECT_EQ(interrupted[0]->route_id, "primary");
  EXPECT_EQ(interrupted[0]->failure->route_id, "primary");
  EXPECT_EQ(interrupted[0]->next_route_id, "secondary");
  EXPECT_EQ(interrupted[0]->scheduled_retry, milliseconds(0));
  EXPECT_EQ(interrupted[0]->delay_source, DelaySource::kFailover);
  const Action* wait = Find(after, Kind::kWait);
  ASSERT_NE(wait, nullptr);
  h.Timer(wait->at);
  EXPECT_EQ(h.call.target().port, 9002);
  h.Exchange(SseOk(fixtures::kChatText), 20);
  const auto committed = h.Of(EventType::kCommitted);
  ASSERT_EQ(committed.size(), 1u);
  EXPECT_EQ(committed[0]->route_id, "secondary");
  EXPECT_EQ(committed[0]->attempt, 2);
  EXPECT_EQ(h.Of(EventType::kStart)[1]->route_id, "secondary");
}

TEST(RouteCallTest, ATruncatedStreamFailsOverOnlyToARouteOfTheSameWireModel) {
  Harness other_model(TestPolicy(), TwoRoutes(Route("secondary", 9002, 1, "other")));
  other_model.Start(0);
  const auto after = other_model.Exchange(SseOk(TruncatedChatBody()), 10);
  ASSERT_EQ(other_model.Of(EventType::kInterrupted).size(), 1u);
  EXPECT_EQ(other_model.Of(EventType::kInterrupted)[0]->next_route_id, "");  // a retry in place
  other_model.Timer(Find(after, Kind::kWait)->at);
  EXPECT_EQ(other_model.call.route_id(), "primary");

  Harness same_model(TestPolicy(), TwoRoutes(Route("secondary", 9002, 1, "m")));
  same_model.Start(0);
  same_model.Exchange(SseOk(TruncatedChatBody()), 10);
  EXPECT_EQ(same_model.Of(EventType::kInterrupted)[0]->next_route_id, "secondary");
}

// An invalid request stays where it failed under the taxonomy; a router that falls back on every
// error (routing.failover_on: any-failure, LangChain's withFallbacks) asks the next route.
TEST(RouteCallTest, AnInvalidRequestMovesOnlyUnderAnyFailureFailover) {
  const std::string invalid = JsonError(
      400, "", R"({"error":{"message":"bad","type":"invalid_request_error","code":null}})");
  Harness taxonomy(TestPolicy(), TwoRoutes());
  taxonomy.Start(0);
  taxonomy.Exchange(invalid, 10);
  ASSERT_EQ(taxonomy.Terminals(), 1);
  EXPECT_EQ(taxonomy.events.back().type, EventType::kFailed);
  EXPECT_EQ(taxonomy.Of(EventType::kStart).size(), 1u);

  RetryPolicy any = TestPolicy();
  any.routing.failover_on = FailoverRule::kAnyFailure;
  Harness fallback(any, TwoRoutes());
  fallback.Start(0);
  const auto after = fallback.Exchange(invalid, 10);
  ASSERT_EQ(fallback.Of(EventType::kInterrupted).size(), 1u);
  EXPECT_EQ(fallback.Of(EventType::kInterrupted)[0]->next_route_id, "secondary");
  fallback.Timer(Find(after, Kind::kWait)->at);
  fallback.Exchange(SseOk(fixtures::kChatText), 20);
  ASSERT_EQ(fallback.Of(EventType::kCommitted).size(), 1u);
  EXPECT_EQ(fallback.Of(EventType::kCommitted)[0]->route_id, "secondary");
}

TEST(RouteCallTest, ARouteLackingARequiredCapabilityNeverGetsTheRequest) {
  CallRequest request = TwoRoutes();
  for (CallRoute& route : request.routes) route.body = std::string(kToolsBody);
  request.routes[1].traits.capabilities.tools = false;
  Harness h(TestPolicy(), std::move(request));
  h.Start(0);
  for (int attempt = 0; attempt < 3 && !h.call.done(); ++attempt) {
    EXPECT_EQ(h.call.route_id(), "primary");
    const auto after = h.Exchange(Error503(), 10 + 1000 * attempt);
    if (const Action* wait = Find(after, Kind::kWait)) h.Timer(wait->at);
  }
  ASSERT_EQ(h.Terminals(), 1);
  EXPECT_EQ(h.events.back().give_up, "attempts-exhausted");
  for (const auto* start : h.Of(EventType::kStart)) EXPECT_EQ(start->route_id, "primary");
}

TEST(RouteCallTest, NoRouteFitsTheRequest) {
  CallRequest request = TwoRoutes();
  for (CallRoute& route : request.routes) {
    route.body = std::string(kToolsBody);
    route.traits.capabilities.tools = false;
  }
  Harness h(TestPolicy(), std::move(request));
  const auto actions = h.Start(0);
  EXPECT_FALSE(Has(actions, Kind::kConnect));
  ASSERT_EQ(h.Terminals(), 1);
  EXPECT_EQ(h.events.back().give_up, "all-routes-down");
  EXPECT_NE(h.events.back().failure->message.find("primary lacks tools"), std::string::npos);
}

TEST(RouteCallTest, ARouteIsNotTriedBeforeItsOwnRetryAfterWhileAnotherStaysUsable) {
  RetryPolicy policy = TestPolicy();
  policy.max_attempts = 4;
  Harness h(policy, TwoRoutes());
  h.Start(0);
  auto after =
      h.Exchange(JsonError(429, "retry-after: 5\r\n", R"({"error":{"message":"slow down"}})"), 10);
  h.Timer(Find(after, Kind::kWait)->at);
  EXPECT_EQ(h.call.route_id(), "secondary");
  after = h.Exchange(Error503(), 20);  // the secondary fails too: its backoff is short
  const Action* wait = Find(after, Kind::kWait);
  ASSERT_NE(wait, nullptr);
  EXPECT_LT(wait->at, At(5000));
  h.Timer(wait->at);
  EXPECT_EQ(h.call.route_id(), "secondary");  // the primary is still held
  after = h.Exchange(Error503(), 1500);
  wait = Find(after, Kind::kWait);
  ASSERT_NE(wait, nullptr);
  // Now the primary's hold (5 s plus its jitter) and the secondary's backoff compete.
  h.Timer(wait->at);
  if (h.call.route_id() == "primary") {
    EXPECT_GE(wait->at, At(5010));
  }
}

// Answers `count` attempts with a 503, 10 ms after `now`, and starts each retry when its wait
// ends (`now` follows); the route of each attempt, or fewer when the call stops retrying.
std::vector<std::string> FailWith503(Harness& h, int count, int& now) {
  std::vector<std::string> routes;
  for (int i = 0; i < count; ++i) {
    routes.push_back(h.call.route_id());
    const auto after = h.Exchange(Error503(), now + 10);
    const Action* wait = Find(after, Kind::kWait);
    if (wait == nullptr) break;
    now = static_cast<int>((wait->at - kT0) / milliseconds(1));
    h.Timer(wait->at);
  }
  return routes;
}

TEST(RouteCallTest, TheBreakerOpensAtItsThresholdAndAGoodProbeClosesIt) {
  RetryPolicy policy = TestPolicy();
  policy.max_attempts = 6;
  policy.routing.breaker =
      BreakerConfig{.threshold = 2, .cooldown = milliseconds(3000), .half_open_probes = 1};
  Harness h(policy, TwoRoutes());
  h.Start(0);
  int now = 0;
  const std::vector<std::string> routes = FailWith503(h, 4, now);
  EXPECT_EQ(routes, (std::vector<std::string>{"primary", "secondary", "primary", "secondary"}));
  // Both breakers are open: the next attempt is the primary's probe, after its cooldown.
  EXPECT_EQ(h.call.route_id(), "primary");
  EXPECT_GE(now, 3000);
  h.Exchange(SseOk(fixtures::kChatText), now + 10);
  ASSERT_EQ(h.Of(EventType::kCommitted).size(), 1u);
  EXPECT_EQ(h.Of(EventType::kCommitted)[0]->route_id, "primary");
}

// A fallback chain (route_attempts, LangChain's withFallbacks): the primary spends its share of
// attempts, waiting its own backoff between them, before the secondary is asked.
TEST(RouteCallTest, AFallbackChainRetriesItsPrimaryBeforeMovingOn) {
  RetryPolicy policy = TestPolicy();
  policy.max_attempts = 6;
  policy.routing.route_attempts = 3;
  policy.routing.breaker.reset();
  Harness h(policy, TwoRoutes());
  h.Start(0);
  int now = 0;
  const std::vector<std::string> routes = FailWith503(h, 3, now);
  EXPECT_EQ(routes, (std::vector<std::string>{"primary", "primary", "primary"}));
  const auto interrupted = h.Of(EventType::kInterrupted);
  ASSERT_EQ(interrupted.size(), 3u);
  EXPECT_EQ(interrupted[0]->delay_source, DelaySource::kBackoff);
  EXPECT_GT(interrupted[0]->scheduled_retry, milliseconds(0));
  EXPECT_EQ(interrupted[2]->next_route_id, "secondary");
  EXPECT_EQ(interrupted[2]->delay_source, DelaySource::kFailover);
  EXPECT_EQ(h.call.route_id(), "secondary");
  h.Exchange(SseOk(fixtures::kChatText), now + 10);
  ASSERT_EQ(h.Of(EventType::kCommitted).size(), 1u);
  EXPECT_EQ(h.Of(EventType::kCommitted)[0]->route_id, "secondary");
}

// The only route that fits trips its breaker (threshold 1): its retry waits for the breaker's
// probe, not for its own short backoff, and a failed probe waits out another cooldown. (The
// virtual world's routes/openai-chat-fast-fail-beside-slow-fail caught the retry going out at
// its backoff while the breaker was open.)
TEST(RouteCallTest, ARetryOnARouteWhoseBreakerOpenedWaitsForItsProbe) {
  CallRequest request = TwoRoutes();
  for (CallRoute& route : request.routes) route.body = std::string(kToolsBody);
  request.routes[1].traits.capabilities.tools = false;
  RetryPolicy policy = TestPolicy();
  policy.max_attempts = 3;
  policy.routing.breaker =
      BreakerConfig{.threshold = 1, .cooldown = milliseconds(3000), .half_open_probes = 1};
  Harness h(policy, std::move(request));
  h.Start(0);
  auto after = h.Exchange(Error503(), 10);
  const Action* wait = Find(after, Kind::kWait);
  ASSERT_NE(wait, nullptr);
  EXPECT_GE(wait->at, At(3010));  // the cooldown from the failure, which ends the exchange
  EXPECT_LE(wait->at, At(3012));
  ASSERT_EQ(h.Of(EventType::kInterrupted).size(), 1u);
  EXPECT_EQ(h.Of(EventType::kInterrupted)[0]->delay_source, DelaySource::kBreaker);
  EXPECT_EQ(h.Of(EventType::kInterrupted)[0]->scheduled_retry, milliseconds(3000));
  EXPECT_EQ(h.Of(EventType::kInterrupted)[0]->next_route_id, "");
  h.Timer(wait->at);
  EXPECT_EQ(h.call.route_id(), "primary");
  after = h.Exchange(Error503(), 3020);  // the probe fails: open for another cooldown
  wait = Find(after, Kind::kWait);
  ASSERT_NE(wait, nullptr);
  EXPECT_GE(wait->at, At(6020));
  EXPECT_LE(wait->at, At(6022));
}

TEST(RouteCallTest, EveryRouteDownEndsTheCallAtOnceWithEveryRoutesFailure) {
  Harness h(TestPolicy(), TwoRoutes());
  h.Start(0);
  auto after = h.Exchange(QuotaError(), 10);
  h.Timer(Find(after, Kind::kWait)->at);
  EXPECT_EQ(h.call.route_id(), "secondary");
  after = h.Exchange(QuotaError(), 20);
  EXPECT_FALSE(Has(after, Kind::kWait));
  ASSERT_EQ(h.Terminals(), 1);
  const LifecycleEvent& failed = h.events.back();
  EXPECT_EQ(failed.give_up, "all-routes-down");
  ASSERT_EQ(failed.route_failures.size(), 2u);
  EXPECT_EQ(failed.route_failures[0].route_id, "primary");
  EXPECT_EQ(failed.route_failures[1].route_id, "secondary");
  EXPECT_NE(failed.failure->message.find("every route is down"), std::string::npos);
  EXPECT_EQ(failed.ToJson()["route_failures"].size(), 2u);
}

TEST(RouteCallTest, OneAttemptBudgetBoundsEveryRoute) {
  RetryPolicy policy = TestPolicy();
  policy.max_attempts = 2;
  Harness h(policy, TwoRoutes());
  h.Start(0);
  auto after = h.Exchange(Error503(), 10);
  h.Timer(Find(after, Kind::kWait)->at);
  after = h.Exchange(Error503(), 20);
  ASSERT_EQ(h.Terminals(), 1);
  EXPECT_EQ(h.events.back().give_up, "attempts-exhausted");
  EXPECT_EQ(h.events.back().route_id, "secondary");
}

TEST(RouteCallTest, WithoutFailoverEveryAttemptStaysOnTheFirstRoute) {
  RetryPolicy policy = TestPolicy();
  policy.routing.failover = false;
  Harness h(policy, TwoRoutes());
  h.Start(0);
  const auto after = h.Exchange(Error503(), 10);
  EXPECT_EQ(h.Of(EventType::kInterrupted)[0]->next_route_id, "");
  h.Timer(Find(after, Kind::kWait)->at);
  EXPECT_EQ(h.call.route_id(), "primary");
}

TEST(RouteNeedsTest, TheRequestBodySaysWhatItNeeds) {
  const RequestNeeds needs =
      NeedsOf(R"({"model":"m","max_tokens":100,"stop":["x"],"tools":[{"type":"function",)"
              R"("function":{"name":"f","strict":true}}],"messages":[{"role":"user","content":)"
              R"([{"type":"image_url"}]},{"role":"assistant","content":"Sure"}]})");
  EXPECT_TRUE(needs.tools);
  EXPECT_TRUE(needs.strict_tools);
  EXPECT_TRUE(needs.stop_sequences);
  EXPECT_TRUE(needs.images);
  EXPECT_TRUE(needs.prefill);
  EXPECT_FALSE(needs.reasoning);
  EXPECT_GT(needs.context_tokens, 100);
  RouteCapabilities capabilities;
  EXPECT_EQ(MissingCapability(capabilities, needs), "strict_tools");
  capabilities.strict_tools = capabilities.images = capabilities.prefill = true;
  EXPECT_EQ(MissingCapability(capabilities, needs), "");
  capabilities.context_window = 50;
  EXPECT_EQ(MissingCapability(capabilities, needs), "context_window");
}

TEST(RouteJsonTest, ReadsTheCallLinesRoutesStrictly) {
  const auto json = nlohmann::json::parse(R"([
    {"id": "a", "base_url": "http://127.0.0.1:9/s/x/route/a", "dialect": "anthropic-messages",
     "request": {"model": "claude"}, "capabilities": {"tools": false, "context_window": 200000},
     "priority": 1, "weight": 3, "group": "g"}])");
  const auto routes = RoutesFromJson(json);
  ASSERT_TRUE(routes.has_value()) << routes.error();
  ASSERT_EQ(routes->size(), 1u);
  const CallRoute& route = routes->front();
  EXPECT_EQ(route.traits.id, "a");
  EXPECT_EQ(route.traits.model, "claude");  // from the request when "model" is not given
  EXPECT_FALSE(route.traits.capabilities.tools);
  EXPECT_EQ(route.traits.capabilities.context_window, 200000);
  EXPECT_EQ(route.traits.weight, 3);
  EXPECT_EQ(route.dialect, Dialect::kAnthropicMessages);
  EXPECT_EQ(route.base_url.path, "/s/x/route/a");

  const auto typo = RoutesFromJson(nlohmann::json::parse(
      R"([{"id": "a", "base_url": "http://h:1", "request": {}, "priorty": 1}])"));
  ASSERT_FALSE(typo.has_value());
  EXPECT_EQ(typo.error(), "routes[0].priorty: unknown key 'priorty'; did you mean 'priority'?");
  const auto twice = RoutesFromJson(nlohmann::json::parse(
      R"([{"id": "a", "base_url": "http://h:1", "request": {}},
          {"id": "a", "base_url": "http://h:2", "request": {}}])"));
  ASSERT_FALSE(twice.has_value());
  EXPECT_EQ(twice.error(), "routes[1].id: 'a' is listed twice");
  EXPECT_FALSE(RoutesFromJson(nlohmann::json::array()).has_value());
}

// ---- The breakers of one client, shared by its calls (client_state.h) ----

RetryPolicy SharedBreakerPolicy(int threshold) {
  RetryPolicy policy = TestPolicy();
  policy.max_attempts = 4;
  policy.routing.breaker =
      BreakerConfig{.threshold = threshold, .cooldown = milliseconds(3000), .half_open_probes = 1};
  return policy;
}

// One client's calls over TwoRoutes(), each started by hand and kept alive until the client goes
// (a call dropped mid-attempt gives its probe slot back).
struct Client {
  explicit Client(RetryPolicy p) : policy(std::move(p)), state(policy) {}
  Harness& Call(int start_ms, bool shared = true) {
    const CallOptions options{.call_id = "call" + std::to_string(calls.size())};
    Harness& h = calls.emplace_back(policy, TwoRoutes(), shared ? state.Share(options) : options);
    h.Start(start_ms);
    return h;
  }
  // A call that fails once on the primary (503) and commits the secondary's answer.
  void FailOverOnce(int now) {
    Harness& h = Call(now);
    ASSERT_EQ(h.call.route_id(), "primary");
    const auto after = h.Exchange(Error503(), now + 10);
    h.Timer(Find(after, Kind::kWait)->at);
    ASSERT_EQ(h.call.route_id(), "secondary");
    h.Exchange(SseOk(fixtures::kChatText), now + 20);
    ASSERT_EQ(h.Of(EventType::kCommitted).size(), 1u);
  }
  RetryPolicy policy;
  ClientState state;
  std::deque<Harness> calls;
};

TEST(SharedBreakerTest, TheNextCallStaysOffARouteAnEarlierCallFoundDownUntilItsProbe) {
  Client client(SharedBreakerPolicy(2));
  client.FailOverOnce(0);
  client.FailOverOnce(100);  // the primary's second failure: its breaker opens until ~3110
  EXPECT_EQ(client.Call(200).call.route_id(), "secondary");  // nothing to the open breaker
  // After the cooldown the next call's first attempt is the probe; while it is out, another call
  // is not let through to the primary as a second probe.
  Harness& probe = client.Call(3200);
  EXPECT_EQ(probe.call.route_id(), "primary");
  EXPECT_EQ(client.Call(3210).call.route_id(), "secondary");
  probe.Exchange(SseOk(fixtures::kChatText), 3220);  // a good probe closes the breaker
  ASSERT_EQ(probe.Of(EventType::kCommitted).size(), 1u);
  EXPECT_EQ(client.state.breakers().state("primary", At(3300)), CircuitBreaker::State::kClosed);
  EXPECT_EQ(client.Call(3300).call.route_id(), "primary");
}

TEST(SharedBreakerTest, ACallThatSharesNothingKeepsItsOwnBreakers) {
  Client client(SharedBreakerPolicy(1));
  client.FailOverOnce(0);
  EXPECT_EQ(client.Call(100, /*shared=*/false).call.route_id(), "primary");
  EXPECT_EQ(client.Call(100).call.route_id(), "secondary");
}

TEST(SharedBreakerTest, ACancelledProbeGivesItsSlotBack) {
  Client client(SharedBreakerPolicy(1));
  client.FailOverOnce(0);
  Harness& probe = client.Call(3100);
  ASSERT_EQ(probe.call.route_id(), "primary");
  EXPECT_FALSE(client.state.breakers().Admits("primary", At(3105)));
  probe.Cancel(3110);
  EXPECT_TRUE(client.state.breakers().Admits("primary", At(3120)));
  {
    Harness dropped(client.policy, TwoRoutes(), client.state.Share({.call_id = "dropped"}));
    dropped.Start(3120);
    ASSERT_EQ(dropped.call.route_id(), "primary");
  }  // a call dropped mid-attempt (its driver broke) gives the slot back too
  EXPECT_EQ(client.Call(3130).call.route_id(), "primary");
}

// Every route is held open by the client's breakers: a new call waits for the first probe, as a
// retry does, and gives up at once when that is past its deadline.
TEST(SharedBreakerTest, ACallWhoseEveryRouteIsOpenWaitsForTheFirstProbe) {
  const RetryPolicy policy = SharedBreakerPolicy(1);
  const ClientState client(policy);
  client.breakers().RecordFailure("primary", At(0));
  client.breakers().RecordFailure("secondary", At(500));
  Harness waits(policy, TwoRoutes(), client.Share({.call_id = "a"}));
  const auto started = waits.Start(1000);
  EXPECT_FALSE(Has(started, Kind::kConnect));
  const Action* wait = Find(started, Kind::kWait);
  ASSERT_NE(wait, nullptr);
  EXPECT_EQ(wait->at, At(3000));
  EXPECT_EQ(waits.call.route_id(), "primary");
  EXPECT_TRUE(waits.Of(EventType::kStart).empty());
  EXPECT_TRUE(Has(waits.Timer(wait->at), Kind::kConnect));
  EXPECT_EQ(waits.Of(EventType::kStart).size(), 1u);

  RetryPolicy short_deadline = policy;
  short_deadline.timeouts.total = milliseconds(1000);
  const ClientState tight(short_deadline);
  tight.breakers().RecordFailure("primary", At(0));
  tight.breakers().RecordFailure("secondary", At(0));
  Harness gives_up(short_deadline, TwoRoutes(), tight.Share({.call_id = "b"}));
  gives_up.Start(10);
  ASSERT_EQ(gives_up.Terminals(), 1);
  const auto failed = gives_up.Of(EventType::kFailed);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0]->give_up, "deadline");
  EXPECT_EQ(failed[0]->failure->code, FailureCode::kUnavailable);
  EXPECT_TRUE(gives_up.Of(EventType::kStart).empty());
}

// A retry whose wait ends on a route another call has taken the probe of goes elsewhere.
TEST(SharedBreakerTest, ARetryDueOnARouteAnotherCallIsProbingMovesToAnother) {
  RetryPolicy policy = SharedBreakerPolicy(5);
  // No jitter: the primary's retry (100 ms after its failure) is due before the secondary's
  // (200 ms after the second failure), so the call goes back to the primary.
  policy.backoff.strategy = BackoffStrategy::kExponential;
  policy.backoff.jitter = 0;
  const ClientState client(policy);
  Harness retrying(policy, TwoRoutes(), client.Share({.call_id = "a"}));
  retrying.Start(0);
  auto after = retrying.Exchange(Error503(), 10);  // fails over to the secondary
  retrying.Timer(Find(after, Kind::kWait)->at);
  ASSERT_EQ(retrying.call.route_id(), "secondary");
  after = retrying.Exchange(Error503(), 20);  // and back to the primary after its backoff
  const Action* wait = Find(after, Kind::kWait);
  ASSERT_NE(wait, nullptr);
  ASSERT_EQ(retrying.call.route_id(), "primary");
  // Meanwhile other calls of the client trip the primary's breaker and, past its cooldown, one
  // of them takes the only probe slot.
  for (int i = 0; i < 4; ++i) client.breakers().RecordFailure("primary", At(30));
  ASSERT_TRUE(client.breakers().Begin("primary", At(3040)));
  const auto resumed = retrying.Timer(std::max(wait->at, At(3050)));
  EXPECT_TRUE(Has(resumed, Kind::kConnect));
  EXPECT_EQ(retrying.call.route_id(), "secondary");
}

// A sticky client (routing.sticky, reset 5 s) without a breaker, so that only stickiness decides
// where a call starts.
RetryPolicy StickyPolicy() {
  RetryPolicy policy = TestPolicy();
  policy.routing.breaker.reset();
  policy.routing.sticky = StickyConfig{.reset = milliseconds(5000)};
  return policy;
}

TEST(StickyRouteTest, LaterCallsStartWhereTheLastFailoverMovedUntilItsReset) {
  Client client(StickyPolicy());
  Harness& first = client.Call(0);
  // The actions are kept: Find points into them (a temporary's would dangle, as ASan found).
  const std::vector<Action> failed = first.Exchange(Error503(), 10);
  const Action* failover = Find(failed, Kind::kWait);
  ASSERT_NE(failover, nullptr);
  const auto moved_ms = static_cast<int>((failover->at - At(0)) / milliseconds(1));
  first.Timer(failover->at);  // the secondary's attempt begins: the failover
  ASSERT_EQ(first.call.route_id(), "secondary");
  EXPECT_EQ(client.Call(moved_ms + 1000).call.route_id(), "secondary");
  EXPECT_EQ(client.Call(moved_ms + 4999).call.route_id(), "secondary");
  EXPECT_EQ(client.Call(moved_ms + 5000).call.route_id(), "primary")
      << "reset_ms after the failover";
  // A call that shares nothing starts afresh.
  Client other(StickyPolicy());
  other.FailOverOnce(0);
  EXPECT_EQ(other.Call(1000, /*shared=*/false).call.route_id(), "primary");
}

TEST(StickyRouteTest, WithoutStickinessEveryCallStartsOnThePrimary) {
  RetryPolicy policy = StickyPolicy();
  policy.routing.sticky.reset();
  Client client(policy);
  client.FailOverOnce(0);
  EXPECT_EQ(client.Call(1000).call.route_id(), "primary");
}

TEST(StickyRouteTest, AFailoverBackToThePrimaryMovesTheClientBack) {
  Client client(StickyPolicy());
  client.FailOverOnce(0);
  Harness& sticky = client.Call(1000);
  ASSERT_EQ(sticky.call.route_id(), "secondary");
  const auto after = sticky.Exchange(Error503(), 1010);
  sticky.Timer(Find(after, Kind::kWait)->at);
  ASSERT_EQ(sticky.call.route_id(), "primary");
  EXPECT_EQ(client.Call(2000).call.route_id(), "primary");
}

// A failover happens when its attempt begins: a call cancelled in the wait before it moved the
// client nowhere (the judge, which sees attempts, agrees).
TEST(StickyRouteTest, ACallCancelledBeforeItsFailoverAttemptMovesNothing) {
  Client client(StickyPolicy());
  Harness& cancelled = client.Call(0);
  const auto after = cancelled.Exchange(Error503(), 10);
  ASSERT_NE(Find(after, Kind::kWait), nullptr);
  ASSERT_EQ(cancelled.call.route_id(), "secondary");  // chosen, not begun
  cancelled.Cancel(10);
  EXPECT_EQ(client.Call(100).call.route_id(), "primary");
}

// The breakers come first: a sticky route they hold open is no place to start.
TEST(StickyRouteTest, AStickyRouteItsBreakerHoldsOpenIsPassedOver) {
  RetryPolicy policy = StickyPolicy();
  policy.routing.breaker =
      BreakerConfig{.threshold = 2, .cooldown = milliseconds(3000), .half_open_probes = 1};
  Client client(policy);
  client.FailOverOnce(0);
  client.state.breakers().RecordFailure("secondary", At(50));
  client.state.breakers().RecordFailure("secondary", At(60));
  EXPECT_EQ(client.Call(100).call.route_id(), "primary");
  EXPECT_EQ(client.Call(3100).call.route_id(), "secondary") << "its cooldown is over";
}

}  // namespace
}  // namespace faultline::ref
