// A load test of the hardening (issue 14): a normal client keeps streaming from one session
// while other clients attack the server on loopback (slowloris, huge trailers, huge and deep
// control-API bodies, disconnects at every byte of a request and of a response). The normal
// client's latency must stay within a bound of its own baseline, measured just before, and the
// journal of its session must stay exact. Bounded in time (attackers stop when the normal
// client is done, or after kAttackLimit) and in count; bounds generous enough for a loaded
// 2-core machine.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "fake_provider/tests/server_test_support.h"

namespace faultline::provider::server_testing {
namespace {

constexpr int kStreams = 20;                  // per phase
constexpr auto kAttackLimit = 30s;            // attackers stop by then at the latest
constexpr int kSlowClients = 200;             // slowloris connections
constexpr std::size_t kHugeTrailer = 70'000;  // the size that aborted the server

constexpr std::string_view kNormalYaml = R"(faultline: 1
name: attack/normal
description: The normal client's stream, 12 events 4 ms apart.
dialect: openai-chat
responses:
  - repeat: 0
    content: {text: "The quick brown fox jumps over the lazy dog", chunk_size: 4, chunk_delay: 4ms}
)";

constexpr std::string_view kVictimYaml = R"(faultline: 1
name: attack/victim
description: The session the attackers use.
dialect: openai-chat
responses:
  - repeat: 0
    content: {text: "Hello, world", chunk_size: 2, chunk_delay: 1ms}
)";

struct Stream {
  Clock::duration latency{};
  std::size_t bytes = 0;  // everything the client received
  bool ok = false;
};

// One streamed completion on a fresh connection, read to the server's close.
Stream NormalStream(std::uint16_t port) {
  Stream stream;
  const auto start = Clock::now();
  RawClient client;
  if (client.Connect(port) != 0) return stream;
  if (!client.Send(RequestBytes("POST", "/s/attack/normal/v1/chat/completions", kChatBody,
                                /*keep_alive=*/false))) {
    return stream;
  }
  const ReadOutcome read = client.ReadToEnd(10s);
  stream.latency = Clock::now() - start;
  stream.bytes = read.bytes.size();
  HttpResponse response;
  stream.ok = read.eof && ParseResponse(read.bytes, response) == read.bytes.size() &&
              response.status == 200 && response.body.find("data: [DONE]") != std::string::npos;
  return stream;
}

Clock::duration Median(std::vector<Stream> streams) {
  std::sort(streams.begin(), streams.end(),
            [](const Stream& a, const Stream& b) { return a.latency < b.latency; });
  return streams[streams.size() / 2].latency;
}

Clock::duration Worst(const std::vector<Stream>& streams) {
  Clock::duration worst{0};
  for (const Stream& stream : streams) worst = std::max(worst, stream.latency);
  return worst;
}

// Runs `attack` in a loop on its own thread until `stop`, counting rounds.
class Attacker {
 public:
  Attacker(std::atomic<bool>& stop, std::function<void()> attack)
      : thread_([this, &stop, attack = std::move(attack)] {
          const auto deadline = Clock::now() + kAttackLimit;
          while (!stop && Clock::now() < deadline) {
            attack();
            ++rounds_;
          }
        }) {}
  ~Attacker() { thread_.join(); }
  int rounds() const { return rounds_; }

 private:
  std::atomic<int> rounds_{0};
  std::thread thread_;
};

// Slowloris: many connections, each dripping a request a byte at a time and never finishing it
// (the server cuts each off at its request timeout; it then comes back).
struct SlowClient {
  RawClient client;
  std::size_t sent = 0;
};

void DripSlowly(std::uint16_t port, std::vector<SlowClient>& clients) {
  static const std::string request =
      RequestBytes("POST", "/s/attack/victim/v1/chat/completions", kChatBody);
  for (SlowClient& slow : clients) {
    if (!slow.client.connected()) {
      if (slow.client.Connect(port) != 0) continue;
      slow.sent = 0;
    }
    if (slow.sent + 1 >= request.size()) continue;  // all but the last byte: hold
    if (!slow.client.Send(std::string_view(request).substr(slow.sent++, 1))) slow.client.Close();
  }
  std::this_thread::sleep_for(20ms);
}

std::string HugeTrailerRequest() {
  return fmt::format(
      "POST /s/attack/victim/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      "Transfer-Encoding: chunked\r\n\r\n{:x}\r\n{}\r\n0\r\nX-Big: {}\r\n\r\n",
      kChatBody.size(), kChatBody, std::string(kHugeTrailer, 'a'));
}

std::string ControlBody(int round) {
  if (round % 2 == 0) {
    std::string deep;
    for (int i = 0; i < 60'000; ++i) deep += R"({"a":)";
    return R"({"scenario":)" + deep + "1" + std::string(60'000, '}') + "}";
  }
  std::string keys = "faultline: 1\n";
  for (int i = 0; i < 100'000; ++i) keys += fmt::format("k{}: 1\n", i);
  return nlohmann::json{{"scenario_text", keys}}.dump();
}

// Cuts a request at every byte, then reads part of a response and resets, in turn.
void Disconnect(std::uint16_t port, std::size_t round) {
  static const std::string request =
      RequestBytes("POST", "/s/attack/victim/v1/chat/completions", kChatBody);
  RawClient client;
  if (client.Connect(port) != 0) return;
  const std::size_t cut = round % (request.size() + 1);
  client.Send(std::string_view(request).substr(0, cut));
  if (cut == request.size()) {
    client.ReadUntil([&](const std::string& bytes) { return bytes.size() >= round % 700; }, 2s);
  }
  if (round % 2 == 0) {
    client.Reset();
  } else {
    client.Close();
  }
}

TEST(ServerAttackTest, ANormalClientKeepsStreamingWhileTheServerIsAttacked) {
  ServerOptions options;
  options.request_timeout = 2s;  // slowloris connections are cut off and come back
  TestServer server(std::move(options));
  ASSERT_TRUE(server.server().AddSession(ScenarioFromYaml(kNormalYaml)));
  ASSERT_TRUE(server.server().AddSession(ScenarioFromYaml(kVictimYaml)));
  const std::uint16_t port = server.port();

  std::vector<Stream> baseline;
  for (int i = 0; i < kStreams; ++i) baseline.push_back(NormalStream(port));

  std::atomic<bool> stop{false};
  std::atomic<int> trailer_431{0}, control_413{0};
  std::vector<Stream> attacked;
  {
    std::vector<SlowClient> slow(kSlowClients);
    Attacker slowloris(stop, [&] { DripSlowly(port, slow); });
    Attacker trailers(stop, [&] {
      RawClient client;
      if (client.Connect(port) != 0 || !client.Send(HugeTrailerRequest())) return;
      auto response = client.ReadResponse(5s);
      if (response && response->status == 431) ++trailer_431;
    });
    std::atomic<int> control_round{0};
    Attacker control(stop, [&] {
      auto response = Fetch(port, "POST", "/_faultline/sessions", ControlBody(control_round++));
      if (response && response->status == 413) ++control_413;
    });
    std::atomic<std::size_t> disconnect_round{0};
    Attacker disconnects(stop, [&] { Disconnect(port, disconnect_round++); });
    std::this_thread::sleep_for(200ms);  // let every attack get going
    for (int i = 0; i < kStreams; ++i) attacked.push_back(NormalStream(port));
    stop = true;
    EXPECT_GT(slowloris.rounds(), 0);
    EXPECT_GT(disconnects.rounds(), 10);
  }

  for (const auto& phase : {baseline, attacked}) {
    for (const Stream& stream : phase) EXPECT_TRUE(stream.ok);
  }
  EXPECT_GT(trailer_431.load(), 0);
  EXPECT_GT(control_413.load(), 0);
  const auto base_median = Median(baseline);
  const auto base_worst = Worst(baseline);
  const auto median = Median(attacked);
  const auto worst = Worst(attacked);
  auto ms = [](Clock::duration d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  };
  const std::string summary =
      fmt::format("baseline median {} ms, worst {} ms; attacked median {} ms, worst {} ms",
                  ms(base_median), ms(base_worst), ms(median), ms(worst));
  std::cout << summary << "\n";
  EXPECT_LE(median, 3 * base_median + 100ms) << summary;
  EXPECT_LE(worst, 3 * base_worst + 1s) << summary;

  // The journal of the normal session is exact: every request, in order, whole, and every byte
  // the client received accounted for.
  std::vector<JournalEntry> entries;
  ASSERT_TRUE(WaitFor([&] {
    entries = *server.server().JournalOf("attack/normal");
    return std::none_of(entries.begin(), entries.end(),
                        [](const JournalEntry& e) { return e.end == EndKind::kInProgress; });
  }));
  ASSERT_EQ(entries.size(), 2u * kStreams);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    SCOPED_TRACE(i);
    const Stream& stream = i < kStreams ? baseline[i] : attacked[i - kStreams];
    EXPECT_EQ(entries[i].attempt, static_cast<int>(i) + 1);
    EXPECT_EQ(entries[i].body, kChatBody);
    EXPECT_EQ(entries[i].end, EndKind::kCompleted);
    EXPECT_EQ(entries[i].bytes_sent, stream.bytes);
  }
  const auto stats = FetchStats(port);
  EXPECT_EQ(stats["internal_errors"], 0) << stats.dump();
  EXPECT_GE(stats["rejected"]["header_bytes"].get<int>(), trailer_431.load());
  EXPECT_GE(stats["rejected"]["scenario"].get<int>(), control_413.load());
}

}  // namespace
}  // namespace faultline::provider::server_testing
