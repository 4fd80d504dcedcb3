// The request reader on bytes alone: framing, limits, trailers, and the hostile inputs of
// issue 14 (huge trailers, Transfer-Encoding without chunked), fed the way a connection feeds
// them (a read at a time, consuming what the reader used).
#include "fake_provider/http_request.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace faultline::provider {
namespace {

using State = RequestReader::State;
using ::testing::HasSubstr;

struct Fed {
  State state = State::kReading;
  std::size_t most_unconsumed = 0;  // the most bytes the caller ever had to keep
  std::string rest;                 // what the reader did not consume at the end
};

// Feeds `bytes` in pieces of `piece` bytes, keeping what the reader does not consume, as a
// connection does; then EOF when `eof`.
Fed Feed(RequestReader& reader, std::string_view bytes, std::size_t piece = 16 * 1024,
         bool eof = false) {
  Fed fed;
  std::string pending;
  for (std::size_t at = 0; at < bytes.size() && reader.state() == State::kReading; at += piece) {
    pending.append(bytes.substr(at, piece));
    fed.most_unconsumed = std::max(fed.most_unconsumed, pending.size());
    pending.erase(0, reader.Put(pending));
  }
  if (eof) reader.PutEof();
  fed.state = reader.state();
  fed.rest = pending;
  return fed;
}

RequestLimits Limits(std::size_t header = 16 * 1024, std::size_t body = 1024 * 1024) {
  return RequestLimits{header, body};
}

std::string Chunked(std::string_view trailer_block, std::string_view body = "hello") {
  std::string out =
      "POST /s/x/v1/chat/completions HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
  if (!body.empty()) out += fmt::format("{:x}\r\n{}\r\n", body.size(), body);
  return out + "0\r\n" + std::string(trailer_block) + "\r\n";
}

TEST(RequestReaderTest, ReadsARequestWithContentLength) {
  RequestReader reader(Limits());
  const Fed fed = Feed(reader,
                       "POST /a?b=c HTTP/1.1\r\nHost: h\r\nX-Spaced:  v  \r\nContent-Length: 3\r\n"
                       "\r\nabc");
  ASSERT_EQ(fed.state, State::kComplete);
  const HttpRequest& request = reader.request();
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.target, "/a?b=c");
  EXPECT_EQ(request.version, 11);
  EXPECT_EQ(request.body, "abc");
  EXPECT_TRUE(request.keep_alive);
  EXPECT_EQ(request.Header("x-spaced"), "v");
  EXPECT_EQ(request.Header("HOST"), "h");
  EXPECT_TRUE(request.trailers.empty());
}

TEST(RequestReaderTest, ByteByByteGivesTheSameRequest) {
  const std::string bytes = Chunked("X-T: 1\r\n", "hello world");
  RequestReader whole(Limits());
  RequestReader trickled(Limits());
  ASSERT_EQ(Feed(whole, bytes).state, State::kComplete);
  ASSERT_EQ(Feed(trickled, bytes, 1).state, State::kComplete);
  EXPECT_EQ(whole.request().body, "hello world");
  EXPECT_EQ(trickled.request().body, whole.request().body);
  EXPECT_EQ(trickled.request().headers, whole.request().headers);
  EXPECT_EQ(trickled.request().trailers, whole.request().trailers);
}

TEST(RequestReaderTest, PipelinedBytesAreLeftForTheNextRequest) {
  RequestReader reader(Limits());
  const std::string second = "GET /b HTTP/1.1\r\nHost: h\r\n\r\n";
  const Fed fed = Feed(reader, "GET /a HTTP/1.1\r\nHost: h\r\n\r\n" + second);
  ASSERT_EQ(fed.state, State::kComplete);
  EXPECT_EQ(reader.request().target, "/a");
  EXPECT_EQ(fed.rest, second);
}

// RFC 9112 section 2.2: an empty line or two before the request-line is no request, fed whole or
// byte by byte; more are garbage.
TEST(RequestReaderTest, EmptyLinesBeforeTheRequestLineAreIgnored) {
  const std::string request = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n";
  for (const std::size_t step : {std::size_t{16 * 1024}, std::size_t{1}}) {
    RequestReader reader(Limits());
    const Fed fed = Feed(reader, "\r\n\r\n" + request, step);
    ASSERT_EQ(fed.state, State::kComplete) << "step " << step;
    EXPECT_EQ(reader.request().target, "/a");
  }
  RequestReader blank(Limits());
  EXPECT_EQ(Feed(blank, "\r\n").state, State::kReading) << "still waiting for a request";
  RequestReader garbage(Limits());
  EXPECT_EQ(Feed(garbage, "\r\n\r\n\r\n" + request).state, State::kRejected)
      << "three empty lines are garbage";
}

// Trailers used to be merged into the headers (and journaled as headers).
TEST(RequestReaderTest, TrailersAreKeptApartFromHeaders) {
  RequestReader reader(Limits());
  ASSERT_EQ(Feed(reader, Chunked("X-Trailer: t\r\nAuthorization: late\r\n")).state,
            State::kComplete);
  const HttpRequest& request = reader.request();
  EXPECT_EQ(request.body, "hello");
  EXPECT_FALSE(request.HasHeader("x-trailer"));
  EXPECT_FALSE(request.HasHeader("authorization"));
  ASSERT_EQ(request.trailers.size(), 2u);
  EXPECT_EQ(request.trailers[0], (scenario::Header{"X-Trailer", "t"}));
}

// Issue 14: a trailer field of 65,535 bytes or more made Beast throw length_error from inside
// async_read, which escaped io_context::run() and aborted the server.
TEST(RequestReaderTest, AHugeTrailerFieldIsA431NotAnException) {
  RequestReader reader(Limits());
  const Fed fed = Feed(reader, Chunked("X-Big: " + std::string(70'000, 'a') + "\r\n"));
  ASSERT_EQ(fed.state, State::kRejected);
  EXPECT_EQ(reader.rejection()->status, 431);
  EXPECT_THAT(reader.rejection()->message, HasSubstr("--max-header-bytes"));
  EXPECT_LE(fed.most_unconsumed, 2 * 16 * 1024u);
}

// Issue 14: 400,000 trailer fields bypassed the header limit (RSS 12 -> 175 MB).
TEST(RequestReaderTest, ManyTrailerFieldsAreBoundedLikeHeaders) {
  std::string trailers;
  for (int i = 0; i < 400'000; ++i) trailers += "t: 1\r\n";
  RequestReader reader(Limits());
  const Fed fed = Feed(reader, Chunked(trailers));
  ASSERT_EQ(fed.state, State::kRejected);
  EXPECT_EQ(reader.rejection()->status, 431);
  EXPECT_LE(fed.most_unconsumed, 2 * 16 * 1024u);
  EXPECT_LT(reader.request().trailers.size(), 16 * 1024u);
}

TEST(RequestReaderTest, HeadersAndTrailersShareOneBudget) {
  const std::string head(9'000, 'h');
  const std::string tail(9'000, 't');
  const std::string bytes = "POST / HTTP/1.1\r\nHost: h\r\nX-Head: " + head +
                            "\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-Tail: " + tail +
                            "\r\n\r\n";
  RequestReader tight(Limits(16 * 1024));
  ASSERT_EQ(Feed(tight, bytes).state, State::kRejected);
  EXPECT_EQ(tight.rejection()->status, 431);
  RequestReader roomy(Limits(32 * 1024));
  EXPECT_EQ(Feed(roomy, bytes).state, State::kComplete);
}

// Beast takes a header a field at a time when it can and applies its limit to each call only,
// so a header half again the limit passed when it came in one read; found by the fuzz target.
TEST(RequestReaderTest, TheHeaderLimitHoldsAcrossFieldsHoweverTheBytesArrive) {
  std::string header = "GET / HTTP/1.1\r\n";
  for (int i = 0; header.size() < 1500; ++i) header += fmt::format("X-F{}: value\r\n", i);
  header += "\r\n";
  for (std::size_t piece : {header.size(), std::size_t{1}, std::size_t{100}}) {
    SCOPED_TRACE(piece);
    RequestReader reader(Limits(1024));
    ASSERT_EQ(Feed(reader, header, piece).state, State::kRejected);
    EXPECT_EQ(reader.rejection()->status, 431);
  }
  RequestReader roomy(Limits(header.size()));
  EXPECT_EQ(Feed(roomy, header).state, State::kComplete);
}

TEST(RequestReaderTest, AChunkLineWithoutEndIsBounded) {
  RequestReader reader(Limits());
  const std::string bytes = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;" +
                            std::string(100'000, 'e');
  const Fed fed = Feed(reader, bytes);
  EXPECT_EQ(fed.state, State::kRejected);
  EXPECT_LE(fed.most_unconsumed, 2 * 16 * 1024u);
}

TEST(RequestReaderTest, OversizedHeadersAndBodiesAreRefused) {
  RequestReader headers(Limits(1024));
  ASSERT_EQ(Feed(headers, "GET / HTTP/1.1\r\nX: " + std::string(2000, 'x') + "\r\n\r\n").state,
            State::kRejected);
  EXPECT_EQ(headers.rejection()->status, 431);

  RequestReader body(Limits(16 * 1024, 100));
  ASSERT_EQ(Feed(body, "POST / HTTP/1.1\r\nContent-Length: 101\r\n\r\n").state, State::kRejected);
  EXPECT_EQ(body.rejection()->status, 413);

  RequestReader chunks(Limits(16 * 1024, 100));
  ASSERT_EQ(Feed(chunks, Chunked("", std::string(101, 'b'))).state, State::kRejected);
  EXPECT_EQ(chunks.rejection()->status, 413);
}

// Issue 14: "Transfer-Encoding: gzip" without chunked was read as a request without a body, and
// its bytes as the next request. RFC 9112 §6.3: 400, then close.
TEST(RequestReaderTest, TransferEncodingNotEndingInChunkedIsRefused) {
  for (std::string_view codings : {"gzip", "chunked, gzip", "identity", "gzip;q=1"}) {
    SCOPED_TRACE(codings);
    RequestReader reader(Limits());
    const Fed fed =
        Feed(reader, "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: " + std::string(codings) +
                         "\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: h\r\n\r\n");
    ASSERT_EQ(fed.state, State::kRejected);
    EXPECT_EQ(reader.rejection()->status, 400);
    EXPECT_THAT(reader.rejection()->message, HasSubstr("RFC 9112"));
  }
  RequestReader gzip_then_chunked(Limits());
  EXPECT_EQ(Feed(gzip_then_chunked,
                 "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
                 "3\r\nabc\r\n0\r\n\r\n")
                .state,
            State::kComplete);
  EXPECT_EQ(gzip_then_chunked.request().body, "abc");

  RequestReader old(Limits());
  ASSERT_EQ(Feed(old, "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n").state,
            State::kRejected);
  EXPECT_EQ(old.rejection()->status, 400);
}

// Issue 30: two Host headers, ours first, were served 200. RFC 9112 §3.2: 400, whichever comes
// first and whatever their case.
TEST(RequestReaderTest, TwoHostHeadersAreRefused) {
  for (std::string_view second : {"Host: evil.example", "host: localhost"}) {
    SCOPED_TRACE(second);
    RequestReader reader(Limits());
    const Fed fed =
        Feed(reader, "GET /a HTTP/1.1\r\nHost: localhost\r\n" + std::string(second) + "\r\n\r\n");
    ASSERT_EQ(fed.state, State::kRejected);
    EXPECT_EQ(reader.rejection()->status, 400);
    EXPECT_THAT(reader.rejection()->message, HasSubstr("more than one Host header"));
  }
  RequestReader one(Limits());
  EXPECT_EQ(Feed(one, "GET /a HTTP/1.1\r\nHost: localhost\r\nX-Host: a\r\n\r\n").state,
            State::kComplete);
}

TEST(RequestReaderTest, EofPartWayIsTruncatedAndGarbageIsA400) {
  RequestReader truncated(Limits());
  EXPECT_EQ(
      Feed(truncated, "POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc", 16 * 1024, true).state,
      State::kTruncated);
  EXPECT_TRUE(truncated.got_some());

  RequestReader nothing(Limits());
  nothing.PutEof();
  EXPECT_EQ(nothing.state(), State::kTruncated);
  EXPECT_FALSE(nothing.got_some());

  RequestReader garbage(Limits());
  ASSERT_EQ(Feed(garbage, std::string("\0\0\0\0\r\n\r\n", 8)).state, State::kRejected);
  EXPECT_EQ(garbage.rejection()->status, 400);
}

TEST(RequestReaderTest, ConnectionCloseAndHttp10EndKeepAlive) {
  RequestReader close(Limits());
  ASSERT_EQ(Feed(close, "GET / HTTP/1.1\r\nConnection: close\r\n\r\n").state, State::kComplete);
  EXPECT_FALSE(close.request().keep_alive);
  RequestReader old(Limits());
  ASSERT_EQ(Feed(old, "GET / HTTP/1.0\r\n\r\n").state, State::kComplete);
  EXPECT_FALSE(old.request().keep_alive);
  EXPECT_EQ(old.request().version, 10);
}

}  // namespace
}  // namespace faultline::provider
