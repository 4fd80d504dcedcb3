#include "reference_impl/http_response.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace faultline::ref {
namespace {

constexpr std::string_view kChunked =
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: text/event-stream\r\n"
    "x-request-id: req_123\r\n"
    "Transfer-Encoding: chunked\r\n"
    "\r\n"
    "6\r\ndata: \r\n"
    "10\r\n{\"a\":\"hello!\"}\n\n\r\n"
    "0\r\n\r\n";
constexpr std::string_view kChunkedBody = "data: {\"a\":\"hello!\"}\n\n";

constexpr std::string_view kContentLength =
    "HTTP/1.1 429 Too Many Requests\r\n"
    "Retry-After: 2\r\n"
    "retry-after: 7\r\n"
    "Content-Type: application/json\r\n"
    "Content-Length: 11\r\n"
    "\r\n"
    "{\"e\":\"x\"}\r\n";

// Everything one parser produced over a sequence of feeds.
struct Outcome {
  int head_ready_count = 0;
  std::string body;
  bool complete = false;
  std::optional<Failure> failure;
};

Outcome Drive(HttpResponseParser& parser, const std::vector<std::string_view>& feeds, bool eof) {
  Outcome out;
  auto take = [&](const HttpFeed& feed) {
    out.head_ready_count += feed.head_ready ? 1 : 0;
    out.body.append(feed.body);
    out.complete = feed.complete;
    out.failure = feed.failure;
  };
  for (std::string_view bytes : feeds) {
    take(parser.Feed(bytes));
    if (out.failure) return out;
  }
  if (eof) take(parser.FeedEof());
  return out;
}

TEST(HttpResponseTest, ParsesContentLengthResponseWithHeadersInOrder) {
  HttpResponseParser parser;
  Outcome out = Drive(parser, {kContentLength}, false);
  ASSERT_FALSE(out.failure);
  EXPECT_EQ(out.head_ready_count, 1);
  EXPECT_TRUE(out.complete);
  EXPECT_EQ(out.body, "{\"e\":\"x\"}\r\n");
  const HttpResponseHead& head = parser.head();
  EXPECT_EQ(head.status, 429);
  EXPECT_EQ(head.reason, "Too Many Requests");
  EXPECT_EQ(head.version, 11);
  ASSERT_EQ(head.headers.size(), 4u);
  EXPECT_EQ(head.headers.entries()[0], (HttpHeader{"Retry-After", "2"}));
  EXPECT_EQ(head.headers.entries()[1], (HttpHeader{"retry-after", "7"}));
  EXPECT_EQ(head.headers.Find("RETRY-AFTER"), "2");
  EXPECT_EQ(head.headers.FindAll("retry-after"), (std::vector<std::string_view>{"2", "7"}));
  EXPECT_FALSE(head.headers.Find("x-missing"));
  EXPECT_EQ(head.content_length, 11u);
  EXPECT_FALSE(head.chunked);
  EXPECT_EQ(parser.body_bytes(), 11u);
  EXPECT_EQ(parser.bytes_received(), kContentLength.size());
}

TEST(HttpResponseTest, DecodesChunkedBody) {
  HttpResponseParser parser;
  Outcome out = Drive(parser, {kChunked}, false);
  ASSERT_FALSE(out.failure);
  EXPECT_TRUE(out.complete);
  EXPECT_EQ(out.body, kChunkedBody);
  EXPECT_TRUE(parser.head().chunked);
  EXPECT_EQ(parser.head().headers.Find("content-type"), "text/event-stream");
}

TEST(HttpResponseTest, HeadIsReportedBeforeTheBodyArrives) {
  HttpResponseParser parser;
  const std::size_t head_end = kChunked.find("\r\n\r\n") + 4;
  HttpFeed first = parser.Feed(kChunked.substr(0, head_end));
  ASSERT_FALSE(first.failure);
  EXPECT_TRUE(first.head_ready);
  EXPECT_TRUE(first.body.empty());
  EXPECT_FALSE(first.complete);
  EXPECT_TRUE(parser.has_head());
  HttpFeed rest = parser.Feed(kChunked.substr(head_end));
  ASSERT_FALSE(rest.failure);
  EXPECT_FALSE(rest.head_ready);
  EXPECT_EQ(rest.body, kChunkedBody);
  EXPECT_TRUE(rest.complete);
}

void ExpectEverySplitParses(std::string_view wire, std::string_view body) {
  for (std::size_t cut = 0; cut <= wire.size(); ++cut) {
    HttpResponseParser parser;
    Outcome out = Drive(parser, {wire.substr(0, cut), wire.substr(cut)}, false);
    ASSERT_FALSE(out.failure) << "cut " << cut << ": " << out.failure->message;
    EXPECT_EQ(out.head_ready_count, 1) << "cut " << cut;
    EXPECT_EQ(out.body, body) << "cut " << cut;
    EXPECT_TRUE(out.complete) << "cut " << cut;
  }
}

TEST(HttpResponseTest, EverySplitPositionGivesTheSameResult) {
  ExpectEverySplitParses(kChunked, kChunkedBody);
  ExpectEverySplitParses(kContentLength, "{\"e\":\"x\"}\r\n");
}

TEST(HttpResponseTest, OneByteAtATime) {
  HttpResponseParser parser;
  std::vector<std::string_view> bytes;
  for (std::size_t i = 0; i < kChunked.size(); ++i) bytes.push_back(kChunked.substr(i, 1));
  Outcome out = Drive(parser, bytes, false);
  ASSERT_FALSE(out.failure);
  EXPECT_EQ(out.head_ready_count, 1);
  EXPECT_EQ(out.body, kChunkedBody);
  EXPECT_TRUE(out.complete);
}

TEST(HttpResponseTest, EofAtEveryPositionInsideTheBodyIsATransportFailure) {
  const std::size_t head_end = kChunked.find("\r\n\r\n") + 4;
  for (std::size_t cut = head_end; cut < kChunked.size(); ++cut) {
    HttpResponseParser parser;
    Outcome out = Drive(parser, {kChunked.substr(0, cut)}, true);
    ASSERT_TRUE(out.failure) << "cut " << cut;
    EXPECT_EQ(out.failure->code, FailureCode::kTransport);
    EXPECT_EQ(out.failure->failure_class, FailureClass::kTransport);
    EXPECT_EQ(out.failure->phase, Phase::kStream);
    EXPECT_TRUE(out.failure->retryable);
    EXPECT_EQ(out.failure->status, 200);
    EXPECT_EQ(out.failure->request_id, "req_123");
    EXPECT_EQ(out.failure->partial_output, PartialOutput::kNone);
    EXPECT_FALSE(parser.complete());
  }
}

TEST(HttpResponseTest, EofMidContentLengthBodyIsATransportFailure) {
  HttpResponseParser parser;
  Outcome out = Drive(parser, {kContentLength.substr(0, kContentLength.size() - 3)}, true);
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->code, FailureCode::kTransport);
  EXPECT_EQ(out.failure->phase, Phase::kStream);
  EXPECT_EQ(out.failure->status, 429);
  EXPECT_EQ(out.body, "{\"e\":\"x\"");
}

TEST(HttpResponseTest, EofBeforeHeadersIsATransportFailureInResponseHeaders) {
  const std::size_t head_end = kChunked.find("\r\n\r\n") + 4;
  for (std::size_t cut = 0; cut < head_end; ++cut) {
    HttpResponseParser parser;
    Outcome out = Drive(parser, {kChunked.substr(0, cut)}, true);
    ASSERT_TRUE(out.failure) << "cut " << cut;
    EXPECT_EQ(out.failure->code, FailureCode::kTransport);
    EXPECT_EQ(out.failure->phase, Phase::kResponseHeaders);
    EXPECT_TRUE(out.failure->retryable);
    EXPECT_FALSE(out.failure->status);
    EXPECT_EQ(out.head_ready_count, 0);
  }
}

TEST(HttpResponseTest, EofAfterTheLastChunkButBeforeTheFinalChunkFails) {
  const std::size_t final_chunk = kChunked.rfind("0\r\n\r\n");
  HttpResponseParser parser;
  Outcome out = Drive(parser, {kChunked.substr(0, final_chunk)}, true);
  EXPECT_EQ(out.body, kChunkedBody);  // every byte was delivered ...
  ASSERT_TRUE(out.failure);           // ... but the body did not end cleanly
  EXPECT_EQ(out.failure->code, FailureCode::kTransport);
}

TEST(HttpResponseTest, BodyDelimitedByEofEndsCleanlyAtEof) {
  HttpResponseParser parser;
  Outcome out =
      Drive(parser, {"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", "data: x\n", "\n"}, false);
  ASSERT_FALSE(out.failure);
  EXPECT_FALSE(out.complete);
  HttpFeed end = parser.FeedEof();
  ASSERT_FALSE(end.failure);
  EXPECT_TRUE(end.complete);
  EXPECT_TRUE(parser.complete());
  EXPECT_EQ(out.body, "data: x\n\n");
}

TEST(HttpResponseTest, EofAfterACompleteMessageIsClean) {
  HttpResponseParser parser;
  Outcome out = Drive(parser, {kChunked}, true);
  ASSERT_FALSE(out.failure);
  EXPECT_TRUE(out.complete);
}

TEST(HttpResponseTest, NoContentResponseIsCompleteAfterTheHead) {
  HttpResponseParser parser;
  Outcome out = Drive(parser, {"HTTP/1.1 204 No Content\r\n\r\n"}, false);
  ASSERT_FALSE(out.failure);
  EXPECT_TRUE(out.complete);
  EXPECT_EQ(parser.head().status, 204);
}

TEST(HttpResponseTest, InterimResponsesAreSkipped) {
  HttpResponseParser parser;
  Outcome out = Drive(parser,
                      {"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 503 Service Unavailable\r\n",
                       "Content-Length: 2\r\n\r\nno"},
                      false);
  ASSERT_FALSE(out.failure);
  EXPECT_EQ(out.head_ready_count, 1);
  EXPECT_EQ(parser.head().status, 503);
  EXPECT_EQ(out.body, "no");
  EXPECT_TRUE(out.complete);
}

TEST(HttpResponseTest, GarbageIsAMalformedResponseAndTheFailureSticks) {
  HttpResponseParser parser;
  HttpFeed first = parser.Feed("SSH-2.0-OpenSSH_9.2\r\n\r\n");
  ASSERT_TRUE(first.failure);
  EXPECT_EQ(first.failure->code, FailureCode::kMalformedResponse);
  EXPECT_EQ(first.failure->failure_class, FailureClass::kProtocol);
  EXPECT_EQ(first.failure->phase, Phase::kResponseHeaders);
  HttpFeed again = parser.Feed("HTTP/1.1 200 OK\r\n\r\n");
  ASSERT_TRUE(again.failure);
  EXPECT_EQ(*again.failure, *first.failure);
  EXPECT_FALSE(again.head_ready);
  EXPECT_TRUE(parser.FeedEof().failure);
}

TEST(HttpResponseTest, BadChunkSizeIsMalformedInTheStreamPhase) {
  HttpResponseParser parser;
  Outcome out =
      Drive(parser, {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"}, false);
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->code, FailureCode::kMalformedResponse);
  EXPECT_EQ(out.failure->phase, Phase::kStream);
  EXPECT_EQ(out.failure->status, 200);
}

TEST(HttpResponseTest, BytesAfterTheMessageAreIgnored) {
  HttpResponseParser parser;
  std::string wire(kContentLength);
  wire += "HTTP/1.1 200 OK\r\n";
  Outcome out = Drive(parser, {wire, "more"}, true);
  ASSERT_FALSE(out.failure);
  EXPECT_EQ(out.body, "{\"e\":\"x\"}\r\n");
  EXPECT_TRUE(out.complete);
}

TEST(HttpResponseTest, LargeBodyIsNotLimited) {
  HttpResponseParser parser;
  const std::string body(20 * 1024 * 1024, 'x');
  std::string wire =
      "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  Outcome out = Drive(parser, {wire, body}, false);
  ASSERT_FALSE(out.failure);
  EXPECT_TRUE(out.complete);
  EXPECT_EQ(out.body.size(), body.size());
}

// ---- Hostile input: the verdict is a function of the bytes, not of their split ----

// The wire in one feed, in two at every `stride`-th position, and byte by byte.
std::vector<std::vector<std::string_view>> Splits(std::string_view wire, std::size_t stride = 1) {
  std::vector<std::vector<std::string_view>> out{{wire}};
  for (std::size_t cut = 0; cut <= wire.size(); cut += stride) {
    out.push_back({wire.substr(0, cut), wire.substr(cut)});
  }
  std::vector<std::string_view> bytes;
  for (std::size_t i = 0; i < wire.size(); ++i) bytes.push_back(wire.substr(i, 1));
  out.push_back(std::move(bytes));
  return out;
}

void ExpectMalformedEverySplit(std::string_view wire, std::string_view body, Phase phase,
                               std::size_t stride = 1) {
  for (const auto& feeds : Splits(wire, stride)) {
    HttpResponseParser parser;
    Outcome out = Drive(parser, feeds, /*eof=*/false);  // no EOF: rejected without waiting
    ASSERT_TRUE(out.failure) << feeds.size() << " feeds";
    EXPECT_EQ(out.failure->code, FailureCode::kMalformedResponse) << out.failure->message;
    EXPECT_EQ(out.failure->phase, phase);
    EXPECT_EQ(out.body, body) << feeds.size() << " feeds";
  }
}

std::string ChunkedHead() { return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"; }

TEST(HttpResponseHostileTest, TrailerFieldOver64KiBIsMalformedNotAnException) {
  const std::string wire =
      ChunkedHead() + "5\r\nhello\r\n0\r\nx-big: " + std::string(70'000, 'a') + "\r\n\r\n";
  ExpectMalformedEverySplit(wire, "hello", Phase::kStream, 997);
}

TEST(HttpResponseHostileTest, TrailerSectionIsBoundedWhateverItsFields) {
  std::string wire = ChunkedHead() + "5\r\nhello\r\n0\r\n";
  for (int i = 0; i < 3000; ++i) wire += "t" + std::to_string(i) + ": 0123456789abcdef\r\n";
  wire += "\r\n";
  ExpectMalformedEverySplit(wire, "hello", Phase::kStream, 1009);
}

TEST(HttpResponseHostileTest, SmallTrailersAreAccepted) {
  ExpectEverySplitParses(ChunkedHead() + "5\r\nhello\r\n0\r\nx-checksum: 1\r\nx-b: 2\r\n\r\n",
                         "hello");
}

TEST(HttpResponseHostileTest, EndlessChunkSizeLineIsMalformed) {
  const std::string wire = ChunkedHead() + "5\r\nhello\r\n5;ext=" + std::string(70'000, 'e');
  ExpectMalformedEverySplit(wire, "hello", Phase::kStream, 997);
}

TEST(HttpResponseHostileTest, BodyBeforeABadChunkHeaderIsDeliveredWithTheFailure) {
  const std::string wire = ChunkedHead() + "e\r\ndata: [DONE]\n\n\r\nzz\r\n";
  HttpResponseParser parser;
  HttpFeed fed = parser.Feed(wire);
  EXPECT_TRUE(fed.head_ready);
  EXPECT_EQ(fed.body, "data: [DONE]\n\n");
  ASSERT_TRUE(fed.failure);
  EXPECT_EQ(fed.failure->code, FailureCode::kMalformedResponse);
  EXPECT_EQ(fed.failure->status, 200);
  HttpFeed later = parser.Feed("more");
  EXPECT_TRUE(later.body.empty());
  EXPECT_EQ(later.failure, fed.failure);
}

TEST(HttpResponseHostileTest, HeadAndFailureInOneFeedKeepTheHead) {
  HttpResponseParser parser;
  HttpFeed fed = parser.Feed(ChunkedHead() + "zz\r\n");
  EXPECT_TRUE(fed.head_ready);
  ASSERT_TRUE(fed.failure);
  EXPECT_EQ(fed.failure->phase, Phase::kStream);
  EXPECT_EQ(parser.head().status, 200);
}

TEST(HttpResponseHostileTest, BadHeadsAreRejectedBeforeTheirBlankLine) {
  // None of these ends its head: each must be refused from the bytes seen, in any split.
  for (const std::string& head :
       {std::string("SSH-2.0-OpenSSH_9.2\r\n"), std::string("HTTP/2.0 200 OK\r\n"),
        std::string("HTTP/1.1 2x0 OK\r\n"), std::string("HTTP/1.1 200\r\nA: b\r\n"),
        std::string("HTTP/1.1 200 OK\r\nBad Name: v\r\n"),
        std::string("HTTP/1.1 200 OK\r\n: v\r\n"),
        std::string("HTTP/1.1 200 OK\r\n folded-first: v\r\n"),
        std::string("HTTP/1.1 200 OK\r\nA: b\rc\r\n"),
        std::string("HTTP/1.1 200 OK\r\nA: \x01\r\n"), std::string("HTTP/1.1 200 O\x7fK\r\n"),
        std::string("HTTP/1.1 200 OK\r\n\rX"),
        "HTTP/1.1 200 OK\r\nx-long: " + std::string(kMaxHeadBytes, 'v')}) {
    SCOPED_TRACE(head.substr(0, 40));
    ExpectMalformedEverySplit(head, "", Phase::kResponseHeaders, head.size() > 1000 ? 4099 : 1);
  }
}

// A field Beast refuses by its value (not its syntax) is refused at the blank line, whatever the
// split: before, a head that came at once was refused at the field, one in pieces only at the
// blank line, so a connection closed in between ended MALFORMED or TRANSPORT by the split.
TEST(HttpResponseHostileTest, BadFieldValueIsJudgedAtTheBlankLineInEverySplit) {
  // The second was found by ref_http_fuzz (a catalogue head with one value mutated).
  for (const std::string start : {"HTTP/1.1 200 OK\r\nA: b\r\nContent-Length: x\r\nX",
                                  "HTTP/1.1 200 OK\r\ndate: x\r\nconnection: keen/json\r\nX"}) {
    for (const auto& feeds : Splits(start)) {
      HttpResponseParser parser;
      Outcome out = Drive(parser, feeds, /*eof=*/true);
      ASSERT_TRUE(out.failure);
      EXPECT_EQ(out.failure->code, FailureCode::kTransport) << feeds.size() << " feeds";
    }
    ExpectMalformedEverySplit(start + ": y\r\n\r\n", "", Phase::kResponseHeaders);
  }
}

TEST(HttpResponseHostileTest, UnusualButValidHeadsParseInEverySplit) {
  ExpectEverySplitParses(
      "HTTP/1.0 200 \r\nX-Fold: a\r\n  b\r\n\tc\r\nX-Obs: caf\xc3\xa9\t!\r\n"
      "x~odd!#$%&'*+-.^_`|: v\r\nContent-Length: 2\r\n\r\nok",
      "ok");
  ExpectEverySplitParses(
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
      "ok");
}

TEST(HttpResponseHostileTest, HeadAtTheSizeLimitIsAccepted) {
  const std::string start = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nx-pad: ";
  const std::string end = "\r\n\r\n";
  const std::string wire =
      start + std::string(kMaxHeadBytes - start.size() - end.size(), 'p') + end + "ok";
  for (const auto& feeds : Splits(wire, 8191)) {
    HttpResponseParser parser;
    Outcome out = Drive(parser, feeds, false);
    ASSERT_FALSE(out.failure) << out.failure->message;
    EXPECT_EQ(out.body, "ok");
  }
}

}  // namespace
}  // namespace faultline::ref
