#include "fake_provider/journal.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "fake_provider/admission.h"
#include "fake_provider/journal_json.h"

namespace faultline::provider {
namespace {

using std::chrono::microseconds;

JournalEntry Entry(std::string target, int attempt = 1) {
  JournalEntry entry;
  entry.attempt = attempt;
  entry.method = "POST";
  entry.target = std::move(target);
  return entry;
}

TEST(JournalTest, BeginNumbersEntriesInArrivalOrder) {
  Journal journal;
  EXPECT_EQ(journal.Begin(Entry("/a")), 0u);
  EXPECT_EQ(journal.Begin(Entry("/b")), 1u);
  const auto entries = journal.Snapshot();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].index, 0u);
  EXPECT_EQ(entries[0].target, "/a");
  EXPECT_EQ(entries[1].index, 1u);
  EXPECT_EQ(entries[1].end, EndKind::kInProgress);
}

TEST(JournalTest, RecordsWritesAndTheEnd) {
  Journal journal;
  const auto index = journal.Begin(Entry("/a"));
  journal.RecordWrite(index, {microseconds(10), microseconds(8), 100});
  journal.RecordWrite(index, {microseconds(30), microseconds(20), 5});
  journal.End(index, EndKind::kClientClosed, microseconds(40), "reset by peer");
  const auto entry = journal.Snapshot().at(0);
  ASSERT_EQ(entry.writes.size(), 2u);
  EXPECT_EQ(entry.writes[1].at, microseconds(30));
  EXPECT_EQ(entry.writes[1].planned, microseconds(20));
  EXPECT_EQ(entry.bytes_sent, 105u);
  EXPECT_EQ(entry.end, EndKind::kClientClosed);
  EXPECT_EQ(entry.ended, microseconds(40));
  EXPECT_EQ(entry.detail, "reset by peer");
}

TEST(JournalTest, KeepsTheNewestEntriesAndCountsTheDropped) {
  Journal journal({.entries = 3});
  for (int i = 0; i < 5; ++i) journal.Begin(Entry("/" + std::to_string(i)));
  const auto entries = journal.Snapshot();
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].index, 2u);
  EXPECT_EQ(entries[0].target, "/2");
  EXPECT_EQ(entries[2].index, 4u);
  EXPECT_EQ(journal.dropped(), 2u);
  // Updates for a dropped entry are ignored, the kept ones still land.
  journal.End(0, EndKind::kCompleted, microseconds(1));
  journal.End(3, EndKind::kCompleted, microseconds(2));
  EXPECT_EQ(journal.Snapshot()[1].end, EndKind::kCompleted);
  EXPECT_EQ(journal.Snapshot()[0].end, EndKind::kInProgress);
}

// Each entry keeps its request whole, so entries alone do not bound memory (100,000 entries of
// 4 MiB bodies would be 400 GB): past the byte bound the oldest go, never the newest, in the
// ring's filling phase and once it wraps.
TEST(JournalTest, KeepsTheNewestEntriesWithinTheByteBound) {
  Journal journal({.entries = 4, .bytes = 1000});
  const auto body = [](std::size_t bytes) {
    JournalEntry entry = Entry("/a");  // 2 bytes of target
    entry.body = std::string(bytes - 2, 'x');
    return entry;
  };
  for (int i = 0; i < 3; ++i) journal.Begin(body(400));
  auto entries = journal.Snapshot();
  ASSERT_EQ(entries.size(), 2u);  // 800 of 1000 bytes
  EXPECT_EQ(entries[0].index, 1u);
  EXPECT_EQ(journal.dropped(), 1u);
  journal.End(0, EndKind::kCompleted, microseconds(1));  // dropped: ignored
  journal.End(2, EndKind::kCompleted, microseconds(1));
  EXPECT_EQ(journal.Snapshot()[1].end, EndKind::kCompleted);
  // An entry over the whole bound is still kept, alone.
  journal.Begin(body(5000));
  entries = journal.Snapshot();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].index, 3u);
  // Small ones wrap the ring (4 slots): the entry count bounds them again.
  for (int i = 0; i < 6; ++i) journal.Begin(body(10));
  entries = journal.Snapshot();
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries.front().index, 6u);
  EXPECT_EQ(entries.back().index, 9u);
  EXPECT_EQ(journal.dropped(), 6u);  // 0 for bytes, 1 and 2 for the big one, 3, then 4 and 5
}

TEST(JournalTest, ZeroCapacityKeepsNothing) {
  Journal journal({.entries = 0});
  EXPECT_EQ(journal.Begin(Entry("/a")), 0u);
  EXPECT_EQ(journal.Begin(Entry("/b")), 1u);
  journal.End(1, EndKind::kCompleted, microseconds(1));
  EXPECT_TRUE(journal.Snapshot().empty());
  EXPECT_EQ(journal.dropped(), 2u);
}

TEST(JournalTest, ClearStartsOver) {
  Journal journal({.entries = 2});
  for (int i = 0; i < 3; ++i) journal.Begin(Entry("/x"));
  journal.Clear();
  EXPECT_TRUE(journal.Snapshot().empty());
  EXPECT_EQ(journal.dropped(), 0u);
  EXPECT_EQ(journal.Begin(Entry("/y")), 0u);
  EXPECT_EQ(journal.Snapshot().at(0).target, "/y");
}

TEST(JournalTest, ConcurrentAppendsAllLand) {
  Journal journal;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&journal] {
      for (int i = 0; i < 500; ++i) {
        const auto index = journal.Begin(Entry("/c"));
        journal.RecordWrite(index, {microseconds(1), microseconds(1), 1});
        journal.End(index, EndKind::kCompleted, microseconds(2));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const auto entries = journal.Snapshot();
  ASSERT_EQ(entries.size(), 2000u);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(entries[i].index, i);
    EXPECT_EQ(entries[i].bytes_sent, 1u);
    EXPECT_EQ(entries[i].end, EndKind::kCompleted);
  }
}

TEST(JournalTest, EndKindNames) {
  EXPECT_EQ(ToString(EndKind::kInProgress), "in_progress");
  EXPECT_EQ(ToString(EndKind::kCompleted), "completed");
  EXPECT_EQ(ToString(EndKind::kClosedByServer), "closed_by_server");
  EXPECT_EQ(ToString(EndKind::kResetByServer), "reset_by_server");
  EXPECT_EQ(ToString(EndKind::kClientClosed), "client_closed");
  EXPECT_EQ(ToString(EndKind::kStalledClientGaveUp), "stalled_client_gave_up");
  EXPECT_EQ(ToString(EndKind::kServerShutdown), "server_shutdown");
  EXPECT_EQ(ToString(EndKind::kWriteFailed), "write_failed");
}

TEST(JournalRedactionTest, SecretHeaderNames) {
  for (std::string_view name :
       {"Authorization", "proxy-authorization", "Cookie", "x-api-key", "api-key", "X-Goog-Api-Key",
        "x-auth-token", "OpenAI-Secret", "x-apikey", "password", "Ocp-Apim-Subscription-Key",
        "X-Auth-Key", "X-Functions-Key", "X-Access-Key", "Authentication"}) {
    std::vector<scenario::Header> headers = {{std::string(name), "value"}};
    RedactSecretHeaders(headers);
    EXPECT_EQ(headers[0].value, "...[redacted, 5 bytes]") << name;
  }
  for (std::string_view name : {"Host", "Content-Type", "x-request-id", "anthropic-version",
                                "OpenAI-Organization", "User-Agent", "Idempotency-Key"}) {
    std::vector<scenario::Header> headers = {{std::string(name), "value"}};
    RedactSecretHeaders(headers);
    EXPECT_EQ(headers[0].value, "value") << name;
  }
}

TEST(JournalRedactionTest, KeepsTheSchemeAFewCharactersAndTheLength) {
  EXPECT_EQ(RedactedSecret("Bearer sk-proj-0123456789abcdef"),
            "Bearer sk-p...[redacted, 31 bytes]");
  EXPECT_EQ(RedactedSecret("sk-ant-api03-xyz"), "sk-a...[redacted, 16 bytes]");
  EXPECT_EQ(RedactedSecret("short"), "...[redacted, 5 bytes]");
  EXPECT_EQ(RedactedSecret("Basic dXNlcjpwYXNz"), "Basic dXNl...[redacted, 18 bytes]");
  EXPECT_EQ(RedactedSecret(""), "...[redacted, 0 bytes]");
  std::vector<scenario::Header> headers = {{"Authorization", "Bearer 0123456789abcdef"},
                                           {"Host", "h"}};
  RedactSecretHeaders(headers);
  EXPECT_EQ(headers[0].value, "Bearer 0123...[redacted, 23 bytes]");
  EXPECT_EQ(headers[1].value, "h");
}

// The same list again (a client's next attempt) is redacted alike, from the kept result; another
// list is redacted on its own.
TEST(JournalRedactionTest, TheSameHeadersAgainAreRedactedAlike) {
  const std::vector<scenario::Header> sent = {{"Authorization", "Bearer 0123456789abcdef"},
                                              {"user-agent", "key sk-proj-0123456789abcdefghij"},
                                              {"Host", "h"}};
  std::vector<scenario::Header> first = sent;
  RedactSecretHeaders(first);
  std::vector<scenario::Header> again = sent;
  RedactSecretHeaders(again);
  EXPECT_EQ(again, first);
  EXPECT_NE(first[1].value, sent[1].value);
  std::vector<scenario::Header> other = {{"Host", "h"}};
  RedactSecretHeaders(other);
  EXPECT_EQ(other, (std::vector<scenario::Header>{{"Host", "h"}}));
  std::vector<scenario::Header> none;
  RedactSecretHeaders(none);
  EXPECT_TRUE(none.empty());
  again = sent;
  RedactSecretHeaders(again);
  EXPECT_EQ(again, first);
}

// Issue 30, item 6: what the journal kept in clear (headers that hold a key under another name,
// keys in the query string and in body fields at any depth, key-shaped values anywhere), and what
// it must keep as sent: judging reads the entry (bodies compared across attempts, routes), so the
// entry's target and body stay exact and only the journal's JSON, what leaves the provider, is
// redacted. --journal-secrets (keep_secrets) keeps everything whole.
HttpRequest LeakyRequest() {
  HttpRequest request;
  request.method = "POST";
  request.target =
      "/s/demo/v1/chat/completions?key=LEAKquery&api_key=LEAK1&token=LEAK2&access_token=LEAK3"
      "&sig=LEAK4&signature=LEAK5&alt=json";
  request.headers = {{"Ocp-Apim-Subscription-Key", "0123456789LEAKapim"},
                     {"X-Auth-Key", "LEAKauth"},
                     {"X-Functions-Key", "fn-LEAK"},
                     {"X-Access-Key", "LEAKaccess"},
                     {"Authentication", "authn-LEAK"},
                     {"X-Custom", "note sk-live-LEAK0123456789"},
                     {"Idempotency-Key", "idem-1"},
                     {"Content-Type", "application/json"}};
  request.trailers = {{"X-Goog-Api-Key", "LEAKtrailer"}};
  std::string deep = R"({"access_token":"LEAKdeep"})";
  for (int i = 0; i < 200; ++i) deep = R"({"d":[)" + deep + "]}";
  request.body = R"({"model":"m","api_key":"LEAKbody","secret":"LEAKsecret","nested":)" + deep +
                 R"(,"messages":[{"role":"user","content":"hi hf_LEAK0123456789ab"}],)"
                 R"("max_tokens":5})";
  return request;
}

TEST(JournalRedactionTest, EveryKeyTheRequestCarriedIsRedactedInTheJournal) {
  const HttpRequest request = LeakyRequest();
  const JournalEntry entry = JournalEntryFor(request, /*keep_secrets=*/false);
  EXPECT_EQ(entry.target, request.target);
  EXPECT_EQ(entry.body, request.body);
  const std::string text = JournalToJson("demo", {entry}, 0);
  EXPECT_EQ(text.find("LEAK"), std::string::npos) << text;
  const auto written = nlohmann::json::parse(text)["entries"].at(0);
  EXPECT_EQ(written["target"],
            "/s/demo/v1/chat/completions?key=[redacted]&api_key=[redacted]&token=[redacted]"
            "&access_token=[redacted]&sig=[redacted]&signature=[redacted]&alt=json");
  const auto body = nlohmann::json::parse(written["body"].get<std::string>());
  EXPECT_EQ(body["model"], "m");
  EXPECT_EQ(body["max_tokens"], 5);
  EXPECT_EQ(body["api_key"], "[redacted]");
  EXPECT_EQ(body["messages"][0]["content"], "hi [redacted]");
  std::map<std::string, std::string> headers;
  for (const auto& field : written["headers"]) headers[field[0]] = field[1];
  EXPECT_EQ(headers["Idempotency-Key"], "idem-1");
  EXPECT_EQ(headers["Content-Type"], "application/json");
  EXPECT_EQ(headers["X-Auth-Key"], "...[redacted, 8 bytes]");
  EXPECT_EQ(headers["X-Custom"], "note [redacted]");
}

TEST(JournalRedactionTest, JournalSecretsKeepsTheRequestWhole) {
  const HttpRequest request = LeakyRequest();
  const JournalEntry entry = JournalEntryFor(request, /*keep_secrets=*/true);
  const auto written = nlohmann::json::parse(JournalToJson("demo", {entry}, 0))["entries"].at(0);
  EXPECT_EQ(written["target"], request.target);
  EXPECT_EQ(written["body"], request.body);
  for (std::size_t i = 0; i < request.headers.size(); ++i) {
    EXPECT_EQ(written["headers"][i][1], request.headers[i].value);
  }
  EXPECT_EQ(written["trailers"][0][1], "LEAKtrailer");
}

TEST(JournalJsonTest, SerialisesEveryField) {
  JournalEntry entry = Entry("/s/demo/v1/chat/completions", 2);
  entry.index = 7;
  entry.connection = 3;
  entry.arrived = microseconds(1500);
  entry.headers = {{"Host", "x"}, {"X-Dup", "1"}, {"X-Dup", "2"}};
  entry.body = R"({"stream":true})";
  entry.status = 429;
  entry.plan_summary = "429 rate_limit";
  entry.writes = {{microseconds(1600), microseconds(1500), 42}};
  entry.bytes_sent = 42;
  entry.end = EndKind::kCompleted;
  entry.ended = microseconds(1700);
  const auto json = nlohmann::json::parse(JournalToJson("demo", {entry}, 5));
  EXPECT_EQ(json["session"], "demo");
  EXPECT_EQ(json["dropped"], 5);
  const auto& e = json["entries"].at(0);
  EXPECT_EQ(e["index"], 7);
  EXPECT_EQ(e["attempt"], 2);
  EXPECT_EQ(e["connection"], 3);
  EXPECT_EQ(e["arrived_us"], 1500);
  EXPECT_EQ(e["method"], "POST");
  EXPECT_EQ(e["target"], "/s/demo/v1/chat/completions");
  EXPECT_EQ(e["headers"], nlohmann::json::parse(R"([["Host","x"],["X-Dup","1"],["X-Dup","2"]])"));
  EXPECT_EQ(e["body"], R"({"stream":true})");
  EXPECT_FALSE(e.contains("body_base64"));
  EXPECT_EQ(e["status"], 429);
  EXPECT_EQ(e["plan"], "429 rate_limit");
  EXPECT_EQ(e["writes"].at(0)["at_us"], 1600);
  EXPECT_EQ(e["writes"].at(0)["planned_us"], 1500);
  EXPECT_EQ(e["writes"].at(0)["size"], 42);
  EXPECT_EQ(e["bytes_sent"], 42);
  EXPECT_EQ(e["end"], "completed");
  EXPECT_EQ(e["ended_us"], 1700);
  EXPECT_EQ(e["detail"], "");
}

TEST(JournalJsonTest, NonUtf8BodiesAreBase64) {
  JournalEntry entry = Entry("/x");
  entry.body = std::string("\xff\xfe\x00z", 4);
  const auto json = nlohmann::json::parse(JournalToJson("s", {entry}, 0));
  const auto& e = json["entries"].at(0);
  EXPECT_FALSE(e.contains("body"));
  EXPECT_EQ(e["body_base64"], "//4Aeg==");
}

TEST(JournalJsonTest, Utf8Validation) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xc3"));              // truncated
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));          // overlong
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("a\x80z"));            // stray continuation
}

TEST(JournalJsonTest, Base64Vectors) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
}

}  // namespace
}  // namespace faultline::provider
