// Reading one HTTP/1.1 request from bytes, sans-I/O: the server's connections feed it what they
// receive, the fuzz target feeds it anything.
//
// It is Beast's parser (beast::http::basic_parser) with its own sink, so that the request is
// read the way the server needs and never the way an attacker would like:
//   - header fields and chunked trailer fields are kept apart (trailers are never headers);
//   - header plus trailer bytes share one bound, the body has its own, and the bytes a caller
//     must hold unconsumed (a header block, a trailer block, a chunk line) never exceed the
//     header bound, whatever the framing;
//   - a Transfer-Encoding whose final coding is not chunked is refused (RFC 9112 §6.3: 400 and
//     close), as is one in an HTTP/1.0 request;
//   - nothing throws: every outcome is a state, and a refusal carries its HTTP answer.
//
// Thread-safety: one reader per request, used by one thread at a time.
#pragma once

#include <boost/system/error_code.hpp>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/scenario.h"

namespace faultline::provider {

struct HttpRequest {
  std::string method;
  std::string target;
  int version = 11;                        // 10 or 11
  std::vector<scenario::Header> headers;   // as sent, in order (values without surrounding blanks)
  std::vector<scenario::Header> trailers;  // the chunked body's trailer fields, in order
  std::string body;                        // de-chunked
  bool keep_alive = true;

  // The first header field named `name` (case-insensitive); "" when absent.
  std::string_view Header(std::string_view name) const;
  bool HasHeader(std::string_view name) const;
};

struct RequestLimits {
  std::size_t max_header_bytes = 16 * 1024;  // request line + header fields + trailer fields
  std::size_t max_body_bytes = 4 * 1024 * 1024;
};

// Why a request was refused, as the answer to send before closing.
struct RequestRejection {
  int status = 400;  // 400, 413 or 431
  std::string type;  // "bad_request", "request_too_large", "request_header_fields_too_large"
  std::string message;
};

class RequestReader {
 public:
  enum class State {
    kReading,    // give it more bytes
    kComplete,   // request() is whole
    kRejected,   // rejection() says what to answer; then close
    kTruncated,  // the client closed its side before the request was whole
  };

  explicit RequestReader(const RequestLimits& limits);
  ~RequestReader();
  RequestReader(const RequestReader&) = delete;
  RequestReader& operator=(const RequestReader&) = delete;

  // Parses as much of `bytes` (everything received and not yet consumed) as it can and returns
  // how many bytes it consumed: drop those, append what arrives next, and call again. While the
  // state stays kReading, the unconsumed rest is always shorter than max_header_bytes.
  std::size_t Put(std::string_view bytes);
  // The client closed its sending side.
  void PutEof();

  State state() const { return state_; }
  bool header_done() const;  // the request line and the header fields are in
  bool got_some() const;     // any byte of a request was seen
  const HttpRequest& request() const { return request_; }
  HttpRequest Release() { return std::move(request_); }
  const std::optional<RequestRejection>& rejection() const { return rejection_; }

 private:
  class Parser;
  bool CountHeader(std::size_t consumed, boost::system::error_code& ec);
  void Conclude(const boost::system::error_code& ec, bool window_full);
  void Reject(int status, std::string type, std::string message);

  RequestLimits limits_;
  HttpRequest request_;
  std::unique_ptr<Parser> parser_;  // writes into request_
  State state_ = State::kReading;
  // The empty lines a request may follow (Put): at most kMaxBlankBytes of CR and LF are skipped.
  static constexpr std::size_t kMaxBlankBytes = 4;
  bool request_line_started_ = false;
  std::size_t blank_bytes_ = 0;
  std::optional<RequestRejection> rejection_;
};

}  // namespace faultline::provider
