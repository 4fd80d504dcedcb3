#include "reference_impl/sse_decoder.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace faultline::ref {
namespace {

using namespace std::string_view_literals;

struct Decoded {
  std::vector<SseEvent> events;
  std::size_t comments = 0;
  SseFinishResult finish;
};

Decoded Decode(const std::vector<std::string_view>& feeds, SseDecoder decoder = SseDecoder()) {
  Decoded out;
  for (std::string_view bytes : feeds) {
    auto result = decoder.Feed(bytes);
    EXPECT_FALSE(result.error) << result.error->message;
    if (result.error) break;
    for (const SseEventView& event : result.events) out.events.emplace_back(event);
    out.comments += result.comments;
  }
  out.finish = decoder.Finish();
  return out;
}

SseEvent Message(std::string data, std::string type = "message", std::string id = "") {
  return SseEvent{std::move(type), std::move(data), std::move(id)};
}

std::vector<std::string> Datas(const Decoded& decoded) {
  std::vector<std::string> out;
  for (const SseEvent& event : decoded.events) out.push_back(event.data);
  return out;
}

TEST(SseDecoderTest, DispatchesOnBlankLine) {
  Decoded out = Decode({"data: hello\n\n"});
  ASSERT_EQ(out.events.size(), 1u);
  EXPECT_EQ(out.events[0], Message("hello"));
  EXPECT_FALSE(out.finish.discarded_event);
}

TEST(SseDecoderTest, AcceptsEveryLineEndingAndMixtures) {
  const std::vector<std::string> streams = {
      "data: a\n\ndata: b\n\n",     "data: a\r\rdata: b\r\r",     "data: a\r\n\r\ndata: b\r\n\r\n",
      "data: a\r\n\ndata: b\r\r\n", "data: a\n\r\ndata: b\r\n\r",
  };
  for (const std::string& stream : streams) {
    Decoded out = Decode({stream});
    EXPECT_EQ(Datas(out), (std::vector<std::string>{"a", "b"})) << stream;
  }
}

TEST(SseDecoderTest, CrAtTheEndOfAFeedAndLfAtTheStartOfTheNextAreOneLineEnd) {
  // Were they two line ends, the LF would be a blank line and "a" would be dispatched alone.
  Decoded out = Decode({"data: a\r", "\ndata: b\r", "\n\r", "\n"});
  EXPECT_EQ(Datas(out), (std::vector<std::string>{"a\nb"}));
}

TEST(SseDecoderTest, LoneCrAtTheEndOfAFeedIsStillALineEnd) {
  Decoded out = Decode({"data: a\r", "\r", "data: b\r", "data: c\r\r"});
  EXPECT_EQ(Datas(out), (std::vector<std::string>{"a", "b\nc"}));
}

// A stream with every framing feature, and what it must decode to.
constexpr std::string_view kMixedStream =
    "\xEF\xBB\xBF: hello\r\n"
    "event: content_block_delta\r"
    "id: 7\n"
    "data: {\"t\":\"h\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\"}\r\n"
    "data:second\r"
    "\r\n"
    ":ping\n"
    "data\n"
    "\r"
    "retry: 1500\r\n"
    "data:  spaced\n"
    "\n";

std::vector<SseEvent> MixedExpected() {
  return {Message("{\"t\":\"h\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\"}\nsecond",
                  "content_block_delta", "7"),
          Message("", "message", "7"), Message(" spaced", "message", "7")};
}

TEST(SseDecoderTest, MixedStreamInOneFeed) {
  Decoded out = Decode({kMixedStream});
  EXPECT_EQ(out.events, MixedExpected());
  EXPECT_EQ(out.comments, 2u);
}

TEST(SseDecoderTest, EverySplitIntoTwoFeedsGivesTheSameEvents) {
  for (std::size_t cut = 0; cut <= kMixedStream.size(); ++cut) {
    Decoded out = Decode({kMixedStream.substr(0, cut), kMixedStream.substr(cut)});
    EXPECT_EQ(out.events, MixedExpected()) << "cut " << cut;
    EXPECT_EQ(out.comments, 2u) << "cut " << cut;
  }
}

TEST(SseDecoderTest, EverySplitIntoThreeFeedsGivesTheSameEvents) {
  const std::size_t n = kMixedStream.size();
  for (std::size_t a = 0; a <= n; ++a) {
    for (std::size_t b = a; b <= n; ++b) {
      Decoded out = Decode(
          {kMixedStream.substr(0, a), kMixedStream.substr(a, b - a), kMixedStream.substr(b)});
      ASSERT_EQ(out.events, MixedExpected()) << "cuts " << a << ", " << b;
    }
  }
}

TEST(SseDecoderTest, OneByteAtATime) {
  std::vector<std::string_view> feeds;
  for (std::size_t i = 0; i < kMixedStream.size(); ++i) feeds.push_back(kMixedStream.substr(i, 1));
  Decoded out = Decode(feeds);
  EXPECT_EQ(out.events, MixedExpected());
  EXPECT_EQ(out.comments, 2u);
}

TEST(SseDecoderTest, LeadingBomIsStrippedOnceEvenWhenSplit) {
  const std::string stream =
      "\xEF\xBB\xBF"
      "data: x\n\n";
  for (std::size_t cut = 0; cut <= 3; ++cut) {
    std::string_view view(stream);
    Decoded out = Decode({view.substr(0, cut), view.substr(cut)});
    EXPECT_EQ(Datas(out), (std::vector<std::string>{"x"})) << "cut " << cut;
  }
  // A second BOM is part of the first field name, which then is not "data".
  Decoded twice =
      Decode({"\xEF\xBB\xBF\xEF\xBB\xBF"
              "data: x\n\n"});
  EXPECT_TRUE(twice.events.empty());
  // A BOM later in the stream is content.
  Decoded later = Decode({"data: \xEF\xBB\xBFx\n\n"});
  EXPECT_EQ(Datas(later), (std::vector<std::string>{"\xEF\xBB\xBFx"}));
}

TEST(SseDecoderTest, BytesThatOnlyStartLikeABomAreKept) {
  // "\xEF\xBB" then a line end: a line of two invalid bytes (an ignored field), then the event.
  Decoded out = Decode({"\xEF", "\xBB\ndata: x\n\n"});
  EXPECT_EQ(Datas(out), (std::vector<std::string>{"x"}));
  Decoded glued =
      Decode({"\xEF\xBB"
              "data: x\n\n"});
  EXPECT_TRUE(glued.events.empty());  // the field name is "\xEF\xBB" "data", not "data"
}

TEST(SseDecoderTest, CommentsAreCountedAndNeverDispatched) {
  Decoded out = Decode({":keep-alive\n\n: another\ndata: a\n:inside\ndata: b\n\n:\n\n"});
  EXPECT_EQ(out.comments, 4u);
  EXPECT_EQ(Datas(out), (std::vector<std::string>{"a\nb"}));
}

TEST(SseDecoderTest, CommentsAreReportedPerFeed) {
  SseDecoder decoder;
  auto first = decoder.Feed(": one\n: two\n");
  ASSERT_FALSE(first.error);
  EXPECT_EQ(first.comments, 2u);
  EXPECT_TRUE(first.events.empty());
  auto second = decoder.Feed(": three");
  ASSERT_FALSE(second.error);
  EXPECT_EQ(second.comments, 0u);  // the line is not complete yet
  auto third = decoder.Feed("\n");
  ASSERT_FALSE(third.error);
  EXPECT_EQ(third.comments, 1u);
  EXPECT_EQ(decoder.total_comments(), 3u);
}

TEST(SseDecoderTest, DataLinesAreJoinedWithLineFeeds) {
  EXPECT_EQ(Datas(Decode({"data: a\ndata: b\ndata: c\n\n"})),
            (std::vector<std::string>{"a\nb\nc"}));
  EXPECT_EQ(Datas(Decode({"data:\ndata:\n\n"})), (std::vector<std::string>{"\n"}));
  EXPECT_EQ(Datas(Decode({"data\n\n"})), (std::vector<std::string>{""}));
  EXPECT_EQ(Datas(Decode({"data: a\n\n\n\ndata: b\n\n"})), (std::vector<std::string>{"a", "b"}));
}

TEST(SseDecoderTest, OnlyOneSpaceAfterTheColonIsRemoved) {
  EXPECT_EQ(Datas(Decode({"data:x\n\ndata: x\n\ndata:  x\n\ndata:\tx\n\n"})),
            (std::vector<std::string>{"x", "x", " x", "\tx"}));
  EXPECT_EQ(Datas(Decode({"data: a:b: c\n\n"})), (std::vector<std::string>{"a:b: c"}));
}

TEST(SseDecoderTest, EventTypeAppliesToOneEventOnly) {
  Decoded out = Decode({"event: ping\ndata: {}\n\ndata: x\n\n"});
  ASSERT_EQ(out.events.size(), 2u);
  EXPECT_EQ(out.events[0].type, "ping");
  EXPECT_EQ(out.events[1].type, "message");
}

TEST(SseDecoderTest, EventWithoutDataIsNotDispatchedAndItsTypeIsForgotten) {
  Decoded out = Decode({"event: lonely\n\ndata: x\n\n"});
  ASSERT_EQ(out.events.size(), 1u);
  EXPECT_EQ(out.events[0], Message("x"));
  Decoded empty_type = Decode({"event:\ndata: y\n\n"});
  EXPECT_EQ(empty_type.events, std::vector<SseEvent>{Message("y")});
}

TEST(SseDecoderTest, IdPersistsAcrossEventsUntilChanged) {
  Decoded out = Decode({"id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\nid: 2\n\ndata: d\n\n"});
  ASSERT_EQ(out.events.size(), 4u);
  EXPECT_EQ(out.events[0].id, "1");
  EXPECT_EQ(out.events[1].id, "1");
  EXPECT_EQ(out.events[2].id, "");
  EXPECT_EQ(out.events[3].id, "2");  // set by an event that was never dispatched
}

TEST(SseDecoderTest, IdWithNulIsIgnored) {
  const std::string_view stream = "id: 5\ndata: a\n\nid: 6\0x\ndata: b\n\n"sv;
  Decoded out = Decode({stream});
  ASSERT_EQ(out.events.size(), 2u);
  EXPECT_EQ(out.events[1].id, "5");
}

TEST(SseDecoderTest, RetryAcceptsOnlyAsciiDigits) {
  SseDecoder decoder;
  ASSERT_FALSE(decoder.Feed("retry: 1500\n").error);
  EXPECT_EQ(decoder.retry_ms(), 1500u);
  ASSERT_FALSE(decoder.Feed("retry: 2s\nretry: -1\nretry:\nretry: 1 \n").error);
  EXPECT_EQ(decoder.retry_ms(), 1500u);
  ASSERT_FALSE(decoder.Feed("retry: 99999999999999999999999\n").error);
  EXPECT_EQ(decoder.retry_ms(), UINT64_MAX);
}

TEST(SseDecoderTest, UnknownAndMiscasedFieldsAreIgnored) {
  Decoded out = Decode({"Data: x\nfoo: bar\nDATA: y\nevent : z\ndata: ok\n\n"});
  EXPECT_EQ(out.events, std::vector<SseEvent>{Message("ok")});
}

TEST(SseDecoderTest, EventNotEndedByABlankLineIsDiscardedAtEof) {
  Decoded out = Decode({"data: done\n\ndata: partial\n"});
  EXPECT_EQ(Datas(out), (std::vector<std::string>{"done"}));
  EXPECT_TRUE(out.finish.discarded_event);
  EXPECT_EQ(out.finish.discarded_bytes, 0u);

  Decoded unterminated = Decode({"data: done\n\ndata: cut mid-li"});
  EXPECT_EQ(Datas(unterminated), (std::vector<std::string>{"done"}));
  EXPECT_FALSE(unterminated.finish.discarded_event);
  EXPECT_EQ(unterminated.finish.discarded_bytes, std::string_view("data: cut mid-li").size());

  Decoded clean = Decode({"data: done\n\n"});
  EXPECT_FALSE(clean.finish.discarded_event);
  EXPECT_EQ(clean.finish.discarded_bytes, 0u);
}

TEST(SseDecoderTest, FinishResetsForANewStreamButKeepsTheLastEventId) {
  SseDecoder decoder;
  ASSERT_FALSE(decoder.Feed("id: 9\ndata: partial\n").error);
  EXPECT_TRUE(decoder.Finish().discarded_event);
  auto again = decoder.Feed(
      "\xEF\xBB\xBF"
      "data: fresh\n\n");
  ASSERT_FALSE(again.error);
  ASSERT_EQ(again.events.size(), 1u);
  EXPECT_EQ(again.events[0], Message("fresh", "message", "9"));
}

TEST(SseDecoderTest, Utf8CharacterSplitAcrossFeedsIsReassembled) {
  const std::string text = "h\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80!";  // é € 😀
  const std::string stream = "data: " + text + "\n\n";
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    std::string_view view(stream);
    Decoded out = Decode({view.substr(0, cut), view.substr(cut)});
    EXPECT_EQ(Datas(out), (std::vector<std::string>{text})) << "cut " << cut;
  }
}

TEST(SseDecoderTest, InvalidUtf8BecomesReplacementCharacters) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(Datas(Decode({"data: a\xFF"
                          "b\n\n"})),
            (std::vector<std::string>{"a" + fffd + "b"}));
  // A truncated sequence is one U+FFFD; the line end after it still counts.
  EXPECT_EQ(Datas(Decode({"data: \xE2\x82\ndata: z\n\n"})),
            (std::vector<std::string>{fffd + "\nz"}));
  // A surrogate (ED A0 80) is three errors, an overlong form (C0 AF) two.
  EXPECT_EQ(Datas(Decode({"data: \xED\xA0\x80\n\n"})),
            (std::vector<std::string>{fffd + fffd + fffd}));
  EXPECT_EQ(Datas(Decode({"data: \xC0\xAF\n\n"})), (std::vector<std::string>{fffd + fffd}));
  // Above U+10FFFF.
  EXPECT_EQ(Datas(Decode({"data: \xF4\x90\x80\x80\n\n"})),
            (std::vector<std::string>{fffd + fffd + fffd + fffd}));
  // Valid text around invalid bytes, past the 8-byte ASCII fast path.
  EXPECT_EQ(Datas(Decode({"data: abcdefghij\x80klmnopqrstu\n\n"})),
            (std::vector<std::string>{"abcdefghij" + fffd + "klmnopqrstu"}));
}

TEST(SseDecoderTest, ManyEventsPerFeedAndStorageReuseAcrossFeeds) {
  SseDecoder decoder;
  std::string batch;
  for (int i = 0; i < 100; ++i) batch += "data: " + std::to_string(i) + "\n\n";
  for (int round = 0; round < 3; ++round) {
    const std::string bytes = batch + "data: tail\n";  // leaves an event in progress
    auto result = decoder.Feed(bytes);  // the events view `bytes`: it must outlive them
    ASSERT_FALSE(result.error);
    ASSERT_EQ(result.events.size(), 100u);
    EXPECT_EQ(result.events[0].data, round == 0 ? "0" : "tail\n0");
    for (int i = 1; i < 100; ++i) EXPECT_EQ(result.events[i].data, std::to_string(i));
  }
  EXPECT_EQ(decoder.total_events(), 300u);
}

// An event whose fields are single lines of valid UTF-8 inside one feed is handed out as views of
// the fed bytes; anything else as views of the decoder's copies.
TEST(SseDecoderTest, EventsViewTheFedBytesWhenTheyCan) {
  SseDecoder decoder;
  const std::string bytes = "event: delta\ndata: in place\n\ndata: two\ndata: lines\n\ndata: cut";
  auto first = decoder.Feed(bytes);
  ASSERT_FALSE(first.error);
  ASSERT_EQ(first.events.size(), 2u);
  auto inside = [&](std::string_view view) {
    return view.data() >= bytes.data() && view.data() + view.size() <= bytes.data() + bytes.size();
  };
  EXPECT_EQ(first.events[0], (SseEventView{"delta", "in place", ""}));
  EXPECT_TRUE(inside(first.events[0].data));
  EXPECT_TRUE(inside(first.events[0].type));
  EXPECT_EQ(first.events[1].data, "two\nlines");
  EXPECT_FALSE(inside(first.events[1].data));
  const std::string rest = " here\n\n";
  auto second = decoder.Feed(rest);
  ASSERT_FALSE(second.error);
  ASSERT_EQ(second.events.size(), 1u);
  EXPECT_EQ(second.events[0].data, "cut here");  // pieced together across the feeds
}

// Everything one feed returns stays valid until the next call, whatever mix of views and copies
// it is, while the decoder keeps decoding (its buffers reused, the last event ID changing).
TEST(SseDecoderTest, EventsOfOneFeedStayValidTogether) {
  SseDecoder decoder;
  ASSERT_FALSE(decoder.Feed("event: spanning\ndata: from the").error);
  std::string bytes = " first feed\n\n";
  std::vector<SseEvent> expected = {{"spanning", "from the first feed", ""}};
  for (int i = 0; i < 40; ++i) {
    const std::string n = std::to_string(i);
    if (i % 3 == 0) bytes += "id: id" + n + "\n";
    if (i % 4 == 0) bytes += "event: type" + n + "\n";
    bytes += "data: " + n + "\n";
    if (i % 5 == 0) bytes += "data: more " + n + "\n";
    if (i % 7 == 0) bytes += "data: \xFF" + n + "\n";
    bytes += "\n";
    std::string data =
        n + (i % 5 == 0 ? "\nmore " + n : "") + (i % 7 == 0 ? "\n\xEF\xBF\xBD" + n : "");
    std::string id = "id" + std::to_string(i - i % 3);
    expected.push_back({i % 4 == 0 ? "type" + n : "message", data, id});
  }
  bytes += "data: pending";
  auto fed = decoder.Feed(bytes);
  ASSERT_FALSE(fed.error);
  std::vector<SseEvent> got;
  for (const SseEventView& event : fed.events) got.emplace_back(event);
  EXPECT_EQ(got, expected);
}

// The UTF-8 check reads 32 and 8 bytes at a time, and then the word that ends the text: an
// invalid byte is found, and a valid character kept, at every position of lines of every length.
TEST(SseDecoderTest, Utf8IsCheckedAtEveryPositionOfEveryLength) {
  const std::string fffd = "\xEF\xBF\xBD";
  for (std::size_t n = 1; n <= 70; ++n) {
    for (std::size_t k = 0; k < n; ++k) {
      std::string invalid(n, 'a');
      invalid[k] = '\xFF';
      std::string replaced = std::string(k, 'a') + fffd + std::string(n - k - 1, 'a');
      std::string valid = std::string(k, 'a') + "\xC3\xA9" + std::string(n - k - 1, 'a');
      // Both orders: a line before the first invalid byte of a feed is viewed, not copied.
      const std::string stream = "data: " + invalid + "\n\ndata: " + valid + "\n\n";
      EXPECT_EQ(Datas(Decode({stream})), (std::vector<std::string>{replaced, valid}))
          << n << " " << k;
      const std::string reversed = "data: " + valid + "\n\ndata: " + invalid + "\n\n";
      EXPECT_EQ(Datas(Decode({reversed})), (std::vector<std::string>{valid, replaced}))
          << n << " " << k;
    }
  }
}

TEST(SseDecoderTest, LongCrOnlyStreamIsDecodedLinearly) {
  std::string stream;
  for (int i = 0; i < 20000; ++i) stream += "data: x\r\r";
  Decoded out = Decode({stream});
  EXPECT_EQ(out.events.size(), 20000u);
}

TEST(SseDecoderTest, OversizedEventIsAnErrorThatSticks) {
  SseDecoder decoder(SseDecoder::Options{.max_event_bytes = 16});
  ASSERT_FALSE(decoder.Feed("data: 0123456789\n\n").error);
  auto too_big = decoder.Feed("data: 0123456789\ndata: 0123456789\n");
  ASSERT_TRUE(too_big.error);
  EXPECT_TRUE(decoder.Feed("\n").error);
  SseDecoder line_limited(SseDecoder::Options{.max_event_bytes = 16});
  EXPECT_TRUE(line_limited.Feed("data: an unterminated line that is too long").error);
}

TEST(SseDecoderTest, NulBytesInDataPassThrough) {
  const std::string_view stream = "data: a\0b\n\n"sv;
  Decoded out = Decode({stream});
  ASSERT_EQ(out.events.size(), 1u);
  EXPECT_EQ(out.events[0].data, std::string("a\0b", 3));
}

// The size limit is a property of the bytes: the same stream fails at the same line whether it
// arrives whole or in pieces (a long comment or `id:` line used to pass in one feed and fail
// when split), and the events completed before the failure are still handed out.
TEST(SseDecoderTest, SizeLimitDoesNotDependOnTheSplit) {
  const std::string stream = "data: ok\n\n: a comment line far too long\ndata: late\n\n";
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    SseDecoder decoder(SseDecoder::Options{.max_event_bytes = 16});
    std::vector<std::string> datas;
    bool failed = false;
    for (std::string_view piece :
         {std::string_view(stream).substr(0, cut), std::string_view(stream).substr(cut)}) {
      const SseFeedResult fed = decoder.Feed(piece);
      for (const SseEventView& event : fed.events) datas.emplace_back(event.data);
      failed = failed || fed.error.has_value();
    }
    EXPECT_TRUE(failed) << "cut " << cut;
    EXPECT_EQ(datas, std::vector<std::string>{"ok"}) << "cut " << cut;
  }
}

TEST(SseDecoderTest, EventsBeforeAnErrorComeWithIt) {
  SseDecoder decoder(SseDecoder::Options{.max_event_bytes = 16});
  // The events view into the bytes fed: they must outlive `fed` (TSan caught a temporary here).
  const std::string bytes = "data: one\n\ndata: two\n\nid: " + std::string(40, 'x');
  const SseFeedResult fed = decoder.Feed(bytes);
  ASSERT_TRUE(fed.error);
  ASSERT_EQ(fed.events.size(), 2u);
  EXPECT_EQ(fed.events[1].data, "two");
  const SseFeedResult later = decoder.Feed("data: three\n\n");
  EXPECT_TRUE(later.events.empty());
  EXPECT_TRUE(later.error);
}

}  // namespace
}  // namespace faultline::ref
