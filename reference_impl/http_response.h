// An incremental HTTP/1.1 response parser fed with bytes: the transport half of a sans-I/O client.
//
// The driver hands it whatever bytes the socket (or an in-memory pipe) produced, in any split, and
// reports end-of-stream with FeedEof(). The parser yields the head (status, reason, every header in
// wire order with duplicates kept), then the body bytes as they arrive, with chunked transfer
// coding already removed, and tells a body that ended cleanly (final chunk, Content-Length reached,
// or an EOF-delimited body at EOF) from a connection that ended early. Failures are values:
//   - EOF before the head is complete  -> TRANSPORT, phase response-headers;
//   - EOF inside the body              -> TRANSPORT, phase stream;
//   - bytes that are not HTTP/1.1      -> MALFORMED_RESPONSE (protocol).
// A failure leaves partial_output at kNone: only the stream assembler knows what the caller saw.
//
// The result is a function of the bytes, never of how they were split:
//   - a Feed() that decodes body bytes and then meets bad bytes returns both, body first
//     (HttpFeed::failure), so the caller handles what arrived before the garbage, as it would
//     have had the garbage come in a later write;
//   - a head is rejected as soon as the bytes seen so far cannot start a valid head (bad status
//     line, bad field syntax, more than kMaxHeadBytes), not only once its blank line arrives;
//     what only the whole head can tell (a bad Content-Length value) is judged at its end;
//   - a chunk-size line or trailer section that does not end within kMaxHeadBytes is
//     MALFORMED_RESPONSE however it arrives (Beast alone would buffer a trailer without bound
//     and throw on a field over 64 KiB).
//
// Built on Boost.Beast's response parser working on buffers; no socket, no clock. Interim 1xx
// responses are skipped. Bytes after a complete message are ignored (this client never pipelines).
// One instance per attempt; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reference_impl/failure.h"

namespace faultline::ref {

struct HttpHeader {
  std::string name;  // as sent
  std::string value;
  friend bool operator==(const HttpHeader&, const HttpHeader&) = default;
};

// Header fields in wire order, duplicates kept; lookups ignore ASCII case.
class HttpHeaders {
 public:
  void Append(std::string name, std::string value);
  // The first field with this name.
  std::optional<std::string_view> Find(std::string_view name) const;
  // Every field with this name, in wire order.
  std::vector<std::string_view> FindAll(std::string_view name) const;

  const std::vector<HttpHeader>& entries() const { return entries_; }
  std::size_t size() const { return entries_.size(); }

 private:
  std::vector<HttpHeader> entries_;
};

// The provider's id of a response, for reports and support tickets: the first non-blank of
// x-request-id (OpenAI and most), request-id (Anthropic) and x-amzn-requestid (Bedrock),
// without surrounding blanks; nullopt when none is sent.
std::optional<std::string> RequestIdOf(const HttpHeaders& headers);

struct HttpResponseHead {
  int status = 0;
  std::string reason;
  int version = 11;  // 10 or 11
  HttpHeaders headers;
  bool chunked = false;
  std::optional<std::uint64_t> content_length;
};

// The most bytes a response head, a chunk-size line or a trailer section may take.
inline constexpr std::size_t kMaxHeadBytes = 64 * 1024;

// What one Feed()/FeedEof() call produced, in wire order: the head, body bytes, then possibly a
// failure met after them. Handle head_ready and body first, then the failure.
struct HttpFeed {
  bool head_ready = false;         // the head became available during this call
  std::string_view body;           // body bytes decoded by this call; valid until the next call
  bool complete = false;           // the message has ended cleanly (now or earlier)
  std::optional<Failure> failure;  // the response broke after `body`; it stays broken
};

class HttpResponseParser {
 public:
  HttpResponseParser();
  ~HttpResponseParser();
  HttpResponseParser(HttpResponseParser&&) noexcept;
  HttpResponseParser& operator=(HttpResponseParser&&) noexcept;

  // Feeds the next bytes received. After a failure every later call returns only that failure.
  HttpFeed Feed(std::string_view bytes);
  // The peer closed the connection (FIN). Clean only when the message was complete or its body
  // is delimited by the end of the connection.
  HttpFeed FeedEof();

  bool has_head() const;
  const HttpResponseHead& head() const;  // only when has_head()
  bool complete() const;
  std::uint64_t bytes_received() const;  // raw bytes fed, head included
  std::uint64_t body_bytes() const;      // decoded body bytes so far

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace faultline::ref
