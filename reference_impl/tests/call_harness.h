// The call engine driven by hand for tests: canned response bytes and virtual `now` values, no
// I/O (call_test.cc, route_call_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "reference_impl/call.h"
#include "reference_impl/tests/wire_fixtures.h"

namespace faultline::ref::call_harness {

using std::chrono::milliseconds;
using Kind = Action::Kind;
using Time = PolicyClock::time_point;

inline const Time kT0 = Time(std::chrono::hours(1));
inline const std::chrono::system_clock::time_point kWall0 =
    std::chrono::system_clock::time_point(std::chrono::seconds(1'750'000'000));

inline Time At(int ms) { return kT0 + milliseconds(ms); }

inline RetryPolicy TestPolicy() {
  RetryPolicy policy;
  policy.max_attempts = 3;
  policy.backoff.base = milliseconds(100);
  policy.backoff.cap = milliseconds(1000);
  policy.min_attempt_time = milliseconds(100);
  policy.timeouts.connect = milliseconds(1000);
  policy.timeouts.response_headers = milliseconds(2000);
  policy.timeouts.idle = milliseconds(500);
  policy.timeouts.total = milliseconds(60'000);
  return policy;
}

inline CallRequest ChatRequest() {
  return {.dialect = Dialect::kOpenAiChat,
          .base_url = {.host = "127.0.0.1", .port = 8080, .path = ""},
          .api_key = "sk-test",
          .body = R"({"model":"m","stream":true,"messages":[]})",
          .stream = true,
          .idempotency_key = std::nullopt,
          .extra_headers = {},
          .routes = {}};
}

inline std::string Chunked(std::string_view body) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", body.size());
  return size + std::string(body) + "\r\n0\r\n\r\n";
}

inline std::string SseOk(std::string_view body) {
  return "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
         "x-request-id: req-1\r\n\r\n" +
         Chunked(body);
}

inline std::string JsonError(int status, std::string_view extra_headers, std::string_view body) {
  return "HTTP/1.1 " + std::to_string(status) + " Error\r\ncontent-type: application/json\r\n" +
         std::string(extra_headers) + "content-length: " + std::to_string(body.size()) +
         "\r\n\r\n" + std::string(body);
}

// The first two events of kChatText ("Hello"), then a clean end without [DONE].
inline std::string TruncatedChatBody() {
  const std::string_view full = fixtures::kChatText;
  std::size_t cut = 0;
  for (int i = 0; i < 2; ++i) cut = full.find("\n\n", cut) + 2;
  return std::string(full.substr(0, cut));
}

inline bool Has(const std::vector<Action>& actions, Kind kind) {
  return std::ranges::any_of(actions, [&](const Action& a) { return a.kind == kind; });
}

inline const Action* Find(const std::vector<Action>& actions, Kind kind) {
  auto it = std::ranges::find_if(actions, [&](const Action& a) { return a.kind == kind; });
  return it == actions.end() ? nullptr : &*it;
}

// A call plus everything it emitted.
struct Harness {
  explicit Harness(RetryPolicy policy = TestPolicy(), CallRequest request = ChatRequest(),
                   CallOptions options = {})
      : call(std::move(request), std::move(policy), std::move(options)) {}

  std::vector<Action> Take(std::vector<Action> actions) {
    for (auto& event : call.TakeEvents()) events.push_back(std::move(event));
    for (const Action& action : actions) all_actions.push_back(action);
    return actions;
  }
  std::vector<Action> Start(int ms = 0) { return Take(call.Start(At(ms), kWall0)); }
  std::vector<Action> Connected(int ms) { return Take(call.Connected(At(ms))); }
  std::vector<Action> Bytes(std::string_view bytes, int ms) {
    return Take(call.BytesReceived(bytes, At(ms)));
  }
  std::vector<Action> Closed(int ms) { return Take(call.ConnectionClosed(At(ms))); }
  std::vector<Action> Reset(int ms) {
    return Take(call.ConnectionFailed(TransportKind::kReset, "Connection reset by peer", At(ms)));
  }
  std::vector<Action> Timer(Time now) { return Take(call.TimerFired(now)); }
  std::vector<Action> Cancel(int ms) { return Take(call.Cancel(At(ms))); }

  // Start (or the retry's timer) already returned Connect: connect, send, receive `response`.
  std::vector<Action> Exchange(std::string_view response, int ms) {
    auto sent = Connected(ms);
    EXPECT_TRUE(Has(sent, Kind::kSend));
    auto received = Bytes(response, ms + 1);
    auto closed = Closed(ms + 2);
    received.insert(received.end(), closed.begin(), closed.end());
    return received;
  }

  std::vector<const LifecycleEvent*> Of(EventType type) const {
    std::vector<const LifecycleEvent*> out;
    for (const auto& event : events) {
      if (event.type == type) out.push_back(&event);
    }
    return out;
  }
  int Terminals() const {
    return static_cast<int>(
        std::ranges::count_if(events, [](const auto& e) { return e.terminal(); }));
  }
  bool TerminalIsLast() const { return !events.empty() && events.back().terminal(); }

  Call call;
  std::vector<LifecycleEvent> events;
  std::vector<Action> all_actions;
};

}  // namespace faultline::ref::call_harness
