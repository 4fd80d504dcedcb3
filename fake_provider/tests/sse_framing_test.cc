#include "fake_provider/wire/sse_framing.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fake_provider/tests/plan_test_util.h"

namespace faultline::provider {
namespace {

using scenario::Framing;
using testing::ParseSse;

const std::vector<SseEvent> kEvents = {
    {"", R"({"id":"a","choices":[{"delta":{"content":"Hel, {lo} \"x\""}}]})"},
    {"message_start", R"({"type":"message_start","message":{"id":"m","usage":{"in":1}}})"},
    {"", "[DONE]"},
};

std::string FrameAll(const Framing& framing, const std::vector<SseEvent>& events) {
  SseFramer framer(framing);
  std::string out;
  for (const SseEvent& event : events) out += framer.Event(event);
  return out;
}

TEST(SseFramingTest, DefaultFramingIsWhatProvidersSend) {
  SseFramer framer(Framing{});
  EXPECT_EQ(framer.Event({"", R"({"a":1})"}), "data: {\"a\":1}\n\n");
  EXPECT_EQ(framer.Event({"ping", R"({"type":"ping"})"}),
            "event: ping\ndata: {\"type\":\"ping\"}\n\n");
  EXPECT_EQ(framer.Event({"", ""}), ": keep-alive\n\n");
}

TEST(SseFramingTest, FixedLineEndingsUseOnlyThatEnding) {
  Framing crlf;
  crlf.line_ending = Framing::LineEnding::kCrlf;
  EXPECT_EQ(SseFramer(crlf).Event({"e", "x"}), "event: e\r\ndata: x\r\n\r\n");
  Framing cr;
  cr.line_ending = Framing::LineEnding::kCr;
  EXPECT_EQ(SseFramer(cr).Event({"e", "x"}), "event: e\rdata: x\r\r");
}

TEST(SseFramingTest, EveryVariantParsesToTheSameEvents) {
  for (const auto ending : {Framing::LineEnding::kLf, Framing::LineEnding::kCrlf,
                            Framing::LineEnding::kCr, Framing::LineEnding::kMixed}) {
    for (int flags = 0; flags < 8; ++flags) {
      Framing framing;
      framing.line_ending = ending;
      framing.bom = (flags & 1) != 0;
      framing.comments = (flags & 2) != 0;
      framing.multiline_data = (flags & 4) != 0;
      // Many events so that the mixed cycle meets every alignment.
      std::vector<SseEvent> events;
      for (int i = 0; i < 7; ++i) events.insert(events.end(), kEvents.begin(), kEvents.end());
      int comments = 0;
      const std::string wire = FrameAll(framing, events);
      const auto parsed = ParseSse(wire, &comments);
      ASSERT_EQ(parsed.size(), events.size())
          << "ending " << static_cast<int>(ending) << " flags " << flags;
      for (std::size_t i = 0; i < events.size(); ++i) {
        EXPECT_EQ(parsed[i].name, events[i].name);
        if (events[i].data.starts_with('{')) {
          EXPECT_EQ(nlohmann::json::parse(parsed[i].data), nlohmann::json::parse(events[i].data));
        } else {
          EXPECT_EQ(parsed[i].data, events[i].data);
        }
      }
      EXPECT_EQ(comments, framing.comments ? static_cast<int>(events.size()) : 0);
      EXPECT_EQ(wire.starts_with("\xEF\xBB\xBF"), framing.bom);
      EXPECT_EQ(wire.find("\xEF\xBB\xBF", 1), std::string::npos) << "BOM only once";
    }
  }
}

TEST(SseFramingTest, MixedLineEndingsUseAllThree) {
  Framing framing;
  framing.line_ending = Framing::LineEnding::kMixed;
  const std::string wire = FrameAll(framing, kEvents);
  EXPECT_NE(wire.find("\r\n"), std::string::npos);
  bool lone_cr = false, lone_lf = false;
  for (std::size_t i = 0; i < wire.size(); ++i) {
    if (wire[i] == '\r' && (i + 1 == wire.size() || wire[i + 1] != '\n')) lone_cr = true;
    if (wire[i] == '\n' && (i == 0 || wire[i - 1] != '\r')) lone_lf = true;
  }
  EXPECT_TRUE(lone_cr);
  EXPECT_TRUE(lone_lf);
}

TEST(SseFramingTest, MultilineDataCutsOnlyBetweenTokensOutsideStrings) {
  const std::string json = R"({"a":"x, {y}, \"z,\"","b":[1,2,{"c":null}]})";
  const std::vector<std::string_view> lines = DataLines(json, true);
  EXPECT_GT(lines.size(), 3u);
  std::string joined;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) joined += "\n";
    joined += lines[i];
    EXPECT_FALSE(lines[i].empty());
  }
  EXPECT_EQ(nlohmann::json::parse(joined), nlohmann::json::parse(json));
  // The string value stays whole on one line.
  bool string_whole = false;
  for (std::string_view line : lines)
    string_whole |= line.find(R"("x, {y}, \"z,\"")") != std::string_view::npos;
  EXPECT_TRUE(string_whole);
}

TEST(SseFramingTest, DataLinesKeepNonJsonWholeAndAlwaysSplitLineBreaks) {
  EXPECT_EQ(DataLines("[DONE]", true), std::vector<std::string_view>{"[DONE]"});
  EXPECT_EQ(DataLines("a,b", true), std::vector<std::string_view>{"a,b"});
  EXPECT_EQ(DataLines("one\ntwo\r\nthree", false),
            (std::vector<std::string_view>{"one", "two", "three"}));
  SseFramer framer(Framing{});
  EXPECT_EQ(framer.Event({"", "one\ntwo"}), "data: one\ndata: two\n\n");
}

TEST(SseFramingTest, RawBytesGoOutVerbatimAfterTheBom) {
  Framing framing;
  framing.bom = true;
  SseFramer framer(framing);
  EXPECT_EQ(framer.Raw("data: x\n\n"),
            "\xEF\xBB\xBF"
            "data: x\n\n");
  EXPECT_EQ(framer.Raw("y"), "y");
}

TEST(SseFramingTest, HeartbeatTextIsStandaloneWithOneEnding) {
  EXPECT_EQ(HeartbeatText({}, Framing::LineEnding::kLf), ": keep-alive\n\n");
  EXPECT_EQ(HeartbeatText({}, Framing::LineEnding::kMixed), ": keep-alive\r\n\r\n");
  EXPECT_EQ(HeartbeatText({"ping", "{}"}, Framing::LineEnding::kCr), "event: ping\rdata: {}\r\r");
}

TEST(SseFramingTest, SplitPointFallsMidLineOrInsideAUtf8Character) {
  const std::string event = "event: x\ndata: {\"t\":\"h\xC3\xA9llo\"}\n\n";
  const std::size_t utf8 = SplitPoint(event, true);
  ASSERT_GT(utf8, 0u);
  EXPECT_EQ(static_cast<unsigned char>(event[utf8 - 1]), 0xC3);
  EXPECT_EQ(static_cast<unsigned char>(event[utf8]), 0xA9);

  const std::size_t mid = SplitPoint(event, false);
  const std::size_t data = event.find("data:");
  const std::size_t data_end = event.find('\n', data);
  EXPECT_GT(mid, data);
  EXPECT_LT(mid, data_end);

  // Without a multi-byte character the UTF-8 variant falls back to mid-line.
  EXPECT_EQ(SplitPoint("data: abcdef\n\n", true), SplitPoint("data: abcdef\n\n", false));
  // A BOM is not the character to cut.
  const std::string with_bom =
      "\xEF\xBB\xBF"
      "data: plain\n\n";
  const std::size_t cut = SplitPoint(with_bom, true);
  EXPECT_GT(cut, 3u);
  EXPECT_EQ(SplitPoint("x", false), 0u);
}

}  // namespace
}  // namespace faultline::provider
