// Chaos for the server itself, in the style of Beast's fail-the-Nth-operation tests: clients
// that vanish at every byte of a request, or after every few bytes of a response, or send
// garbage. After each round the server must still answer, every exchange it journaled must have
// an end, and no connection may be left open.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fake_provider/tests/server_test_support.h"

namespace faultline::provider::server_testing {
namespace {

constexpr std::string_view kStreamYaml = R"(faultline: 1
name: chaos/stream
description: A stream that takes a little time.
dialect: openai-chat
responses:
  - content: {text: "The quick brown fox jumps over the lazy dog", chunk_size: 3, chunk_delay: 2ms}
)";

class ServerChaosTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto added = server_.server().AddSession(ScenarioFromYaml(kStreamYaml));
    ASSERT_TRUE(added) << added.error();
  }

  std::string Request() const {
    return RequestBytes("POST", "/s/chaos/stream/v1/chat/completions", kChatBody);
  }

  // The server is healthy: it answers, nothing is left in progress, no connection leaked.
  void ExpectHealthy() {
    auto response = Fetch(server_.port(), "POST", "/s/chaos/stream/v1/chat/completions", kChatBody);
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 200);
    EXPECT_TRUE(WaitFor([&] {
      const auto entries = server_.server().JournalOf("chaos/stream").value();
      return std::none_of(entries.begin(), entries.end(), [](const JournalEntry& entry) {
        return entry.end == EndKind::kInProgress;
      });
    })) << "an exchange never ended";
    EXPECT_TRUE(WaitFor([&] { return FetchStats(server_.port())["connections_open"] == 1; }))
        << FetchStats(server_.port()).dump();
  }

  static ServerOptions TwoThreads() {
    ServerOptions options;
    options.threads = 2;  // connections spread over two event loops
    return options;
  }
  TestServer server_{TwoThreads()};
};

TEST_F(ServerChaosTest, ClientVanishesAtEveryByteOfTheRequest) {
  const std::string request = Request();
  for (std::size_t cut = 0; cut < request.size(); ++cut) {
    RawClient client;
    ASSERT_EQ(client.Connect(server_.port()), 0);
    ASSERT_TRUE(client.Send(std::string_view(request).substr(0, cut)));
    if (cut % 2 == 0) {
      client.Close();
    } else {
      client.Reset();
    }
  }
  // Every partial request is counted (the empty one is just a connection), none is journaled.
  EXPECT_TRUE(WaitFor([&] {
    return FetchStats(server_.port())["aborted_requests"] == request.size() - 1;
  })) << FetchStats(server_.port()).dump();
  EXPECT_TRUE(server_.server().JournalOf("chaos/stream")->empty());
  ExpectHealthy();
}

TEST_F(ServerChaosTest, ClientVanishesPartWayThroughTheResponse) {
  std::size_t journaled = 0;
  for (std::size_t keep = 0; keep < 1400; keep += 97) {
    RawClient client;
    ASSERT_EQ(client.Connect(server_.port()), 0);
    ASSERT_TRUE(client.Send(Request()));
    client.ReadUntil([keep](const std::string& bytes) { return bytes.size() >= keep; }, 5s);
    if (keep % 2 == 0) {
      client.Close();
    } else {
      client.Reset();
    }
    ++journaled;
  }
  ExpectHealthy();
  const auto entries = server_.server().JournalOf("chaos/stream").value();
  ASSERT_EQ(entries.size(), journaled + 1);
  for (std::size_t i = 0; i < journaled; ++i) {
    EXPECT_TRUE(entries[i].end == EndKind::kClientClosed || entries[i].end == EndKind::kCompleted)
        << i << ": " << ToString(entries[i].end);
  }
}

TEST_F(ServerChaosTest, GarbageNeverHurts) {
  const std::vector<std::string> garbage = {
      std::string("\0\0\0\0", 4),
      "\r\n\r\n\r\n",
      "GET / HTTP/9.9\r\n\r\n",
      "POST /s/chaos/stream/v1/chat/completions HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
      "POST /s/chaos/stream/v1/chat/completions HTTP/1.1\r\nContent-Length: 5\r\n"
      "Transfer-Encoding: chunked\r\n\r\nzzzz\r\n",
      "POST /s/chaos/stream/v1/chat/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
      "ffffffffffffffffff\r\n",
      "GET /\x01\x02 HTTP/1.1\r\n\r\n",
      "G\x80T / HTTP/1.1\r\nHost: \xff\r\n\r\n",
      std::string(20000, 'A'),
  };
  for (const auto& bytes : garbage) {
    RawClient client;
    ASSERT_EQ(client.Connect(server_.port()), 0);
    client.Send(bytes);
    const auto read = client.ReadToEnd(5s);
    EXPECT_FALSE(read.timed_out) << fmt::format("{:?}", bytes.substr(0, 60));
    if (!read.bytes.empty()) {
      EXPECT_TRUE(read.bytes.starts_with("HTTP/1.1 4")) << read.bytes.substr(0, 80);
    }
  }
  ExpectHealthy();
}

}  // namespace
}  // namespace faultline::provider::server_testing
