// The NDJSON decoder: lines however the bytes are split, CRLF, blank lines, the unfinished last
// line, the line limit.
#include "reference_impl/ndjson_decoder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace faultline::ref {
namespace {

std::vector<std::string> Lines(NdjsonDecoder& decoder, std::string_view bytes) {
  std::vector<std::string> out;
  const SseFeedResult fed = decoder.Feed(bytes);
  for (const SseEventView& event : fed.events) out.emplace_back(event.data);
  return out;
}

TEST(NdjsonDecoderTest, OneEventPerLineWhateverTheSplit) {
  const std::string body = "{\"a\":1}\n{\"b\":2}\r\n\n  \n{\"c\":\"\xC3\xA9\"}\n";
  for (std::size_t cut = 0; cut <= body.size(); ++cut) {
    SCOPED_TRACE(cut);
    NdjsonDecoder decoder;
    std::vector<std::string> lines = Lines(decoder, std::string_view(body).substr(0, cut));
    for (std::string& line : Lines(decoder, std::string_view(body).substr(cut))) {
      lines.push_back(std::move(line));
    }
    EXPECT_EQ(lines, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", "{\"c\":\"\xC3\xA9\"}"}));
    EXPECT_EQ(decoder.Finish(), 0u);
  }
}

// Lines inside a feed are views of its bytes, lines cut by feed boundaries are pieced together:
// byte by byte, every line is cut.
TEST(NdjsonDecoderTest, ByteByByte) {
  const std::string body = "{\"a\":1}\r\n \r\n{\"b\":\"x\"}\n\n{}\n";
  NdjsonDecoder decoder;
  std::vector<std::string> lines;
  for (char c : body) {
    for (std::string& line : Lines(decoder, std::string_view(&c, 1))) lines.push_back(line);
  }
  EXPECT_EQ(lines, (std::vector<std::string>{"{\"a\":1}", "{\"b\":\"x\"}", "{}"}));
  EXPECT_EQ(decoder.Finish(), 0u);
}

TEST(NdjsonDecoderTest, AnUnfinishedLastLineIsDiscardedAndCounted) {
  NdjsonDecoder decoder;
  EXPECT_EQ(Lines(decoder, "{\"a\":1}\n{\"b\""), (std::vector<std::string>{"{\"a\":1}"}));
  EXPECT_EQ(decoder.Finish(), 4u);
  EXPECT_TRUE(Lines(decoder, "").empty());
}

TEST(NdjsonDecoderTest, ALineOverTheLimitIsAnErrorThatStays) {
  NdjsonDecoder decoder(8);
  const SseFeedResult first = decoder.Feed("{\"a\":1}\n0123");
  ASSERT_EQ(first.events.size(), 1u);
  EXPECT_FALSE(first.error);
  const SseFeedResult second = decoder.Feed("45678");
  ASSERT_TRUE(second.error);
  EXPECT_TRUE(second.events.empty());
  EXPECT_TRUE(decoder.Feed("\n{}\n").error);
}

TEST(NdjsonDecoderTest, TheLimitCountsACarriedLineWithItsRest) {
  NdjsonDecoder decoder(8);
  ASSERT_FALSE(decoder.Feed("0123").error);
  const SseFeedResult fits = decoder.Feed("4567\n89");
  ASSERT_EQ(fits.events.size(), 1u);
  EXPECT_EQ(fits.events[0].data, "01234567");
  EXPECT_FALSE(fits.error);
  const SseFeedResult over = decoder.Feed("abcdefg\n");
  EXPECT_TRUE(over.error);
  EXPECT_TRUE(over.events.empty());
}

}  // namespace
}  // namespace faultline::ref
