#include "reference_impl/http_response.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/buffer.hpp>
#include <boost/beast/core/buffers_range.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/optional.hpp>
#include <cctype>
#include <exception>
#include <expected>
#include <utility>

#include "reference_impl/ascii_text.h"

namespace faultline::ref {
namespace http = boost::beast::http;
namespace {

// A Beast body type whose reader appends the decoded body bytes to a std::string. The parser
// owner drains that string after every Feed(), so it only ever holds one call's worth of bytes
// (unlike string_body, it never reserves the announced Content-Length).
struct AppendBody {
  using value_type = std::string;

  class reader {
   public:
    template <bool kIsRequest, class Fields>
    reader(http::header<kIsRequest, Fields>& /*header*/, value_type& body) : body_(body) {}

    void init(const boost::optional<std::uint64_t>& /*length*/, boost::beast::error_code& ec) {
      ec = {};
    }

    template <class ConstBufferSequence>
    std::size_t put(const ConstBufferSequence& buffers, boost::beast::error_code& ec) {
      ec = {};
      std::size_t total = 0;
      for (const auto buffer : boost::beast::buffers_range_ref(buffers)) {
        body_.append(static_cast<const char*>(buffer.data()), buffer.size());
        total += buffer.size();
      }
      return total;
    }

    void finish(boost::beast::error_code& ec) { ec = {}; }

   private:
    value_type& body_;
  };
};

using Parser = http::response_parser<AppendBody>;

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

std::unique_ptr<Parser> NewParser() {
  auto parser = std::make_unique<Parser>();
  parser->header_limit(static_cast<std::uint32_t>(kMaxHeadBytes));
  parser->body_limit(boost::none);  // a stream may run for as long as the server likes
  parser->eager(true);
  return parser;
}

// RFC 9110 tchar, as Beast's field-name table has it.
bool IsTokenChar(unsigned char c) {
  constexpr std::string_view kSpecials = "!#$%&'*+-.^_`|~";
  const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  return alnum || (c != 0 && kSpecials.find(static_cast<char>(c)) != kSpecials.npos);
}

// A byte of a reason phrase or field value: anything but a control character, HTAB allowed.
bool IsTextChar(unsigned char c) { return c == '\t' || (c >= 0x20 && c != 0x7f); }

// Checks a response head byte by byte as it arrives, so that bytes which cannot start a valid
// head are refused at once, whatever their split (Beast waits for the blank line once a head
// spans two feeds), and tells when the head is complete: only then does Beast see it. The grammar
// is Beast's: "HTTP/1.0" or "HTTP/1.1", SP, three digits, SP, reason, CRLF; then `token ":" value
// CRLF` fields, obs-fold continuation lines, and CRLF. A head larger than kMaxHeadBytes is refused
// too. Interim 1xx heads (but 101) are each checked anew.
class HeadSyntax {
 public:
  enum class Verdict { kMore, kDone, kBad };

  // Consumes head bytes from `bytes`; kBad names the problem in error().
  Verdict Feed(std::string_view bytes) {
    for (const char byte : bytes) {
      if (state_ == State::kDone) return Verdict::kDone;
      if (++size_ > kMaxHeadBytes) return Bad(fmt::format("head over {} bytes", kMaxHeadBytes));
      if (!Step(static_cast<unsigned char>(byte))) return Verdict::kBad;
    }
    return state_ == State::kDone ? Verdict::kDone : Verdict::kMore;
  }
  const std::string& error() const { return error_; }

 private:
  enum class State { kVersion, kStatus, kReason, kLineEnd, kLineStart, kName, kValue, kEnd, kDone };
  static constexpr std::string_view kVersionPrefix = "HTTP/1.";

  Verdict Bad(std::string message) {
    error_ = std::move(message);
    return Verdict::kBad;
  }
  bool Fail(std::string_view what) {
    Bad(fmt::format("bad {} at byte {} of the head", what, size_));
    return false;
  }

  bool Step(unsigned char c) {
    switch (state_) {
      case State::kVersion:
        return StepVersion(c);
      case State::kStatus:
        return StepStatus(c);
      case State::kReason:
      case State::kValue:
        if (c == '\r') return Next(State::kLineEnd);
        return IsTextChar(c) || Fail(state_ == State::kReason ? "reason phrase" : "field value");
      case State::kLineEnd:
        return c == '\n' ? Next(State::kLineStart) : Fail("line ending");
      case State::kLineStart:
        return StepLineStart(c);
      case State::kName:
        if (c == ':') return Next(State::kValue);
        return IsTokenChar(c) || Fail("field name");
      case State::kEnd:
        return c == '\n' ? EndHead() : Fail("line ending");
      case State::kDone:
        return true;
    }
    return false;
  }

  bool StepVersion(unsigned char c) {
    const bool ok = index_ < kVersionPrefix.size()    ? c == kVersionPrefix[index_]
                    : index_ == kVersionPrefix.size() ? (c == '0' || c == '1')
                                                      : c == ' ';
    if (!ok) return Fail("HTTP version");
    if (++index_ > kVersionPrefix.size() + 1) {
      index_ = 0;
      status_ = 0;
      state_ = State::kStatus;
    }
    return true;
  }

  bool StepStatus(unsigned char c) {
    if (index_ == 3) return c == ' ' ? Next(State::kReason) : Fail("status code");
    if (c < '0' || c > '9') return Fail("status code");
    status_ = status_ * 10 + (c - '0');
    ++index_;
    return true;
  }

  bool StepLineStart(unsigned char c) {
    if (c == '\r') return Next(State::kEnd);
    // obs-fold: a line starting with SP or HTAB continues the previous field's value.
    if (c == ' ' || c == '\t') return fields_ > 0 ? Next(State::kValue) : Fail("field name");
    if (!IsTokenChar(c)) return Fail("field name");
    ++fields_;
    return Next(State::kName);
  }

  bool EndHead() {
    if (status_ >= 100 && status_ < 200 && status_ != 101) {
      *this = HeadSyntax();  // an interim response: the real head follows
      return true;
    }
    return Next(State::kDone);
  }

  bool Next(State state) {
    state_ = state;
    return true;
  }

  State state_ = State::kVersion;
  std::size_t index_ = 0;  // bytes into the version or the status code
  std::size_t size_ = 0;   // bytes of this head so far
  int status_ = 0;
  int fields_ = 0;
  std::string error_;
};

}  // namespace

void HttpHeaders::Append(std::string name, std::string value) {
  entries_.push_back({std::move(name), std::move(value)});
}

std::optional<std::string_view> HttpHeaders::Find(std::string_view name) const {
  for (const HttpHeader& header : entries_) {
    if (EqualsIgnoreCase(header.name, name)) return header.value;
  }
  return std::nullopt;
}

std::vector<std::string_view> HttpHeaders::FindAll(std::string_view name) const {
  std::vector<std::string_view> values;
  for (const HttpHeader& header : entries_) {
    if (EqualsIgnoreCase(header.name, name)) values.emplace_back(header.value);
  }
  return values;
}

std::optional<std::string> RequestIdOf(const HttpHeaders& headers) {
  for (std::string_view name : {"x-request-id", "request-id", "x-amzn-requestid"}) {
    const auto value = headers.Find(name);
    if (value && !ascii::Trim(*value).empty()) return std::string(ascii::Trim(*value));
  }
  return std::nullopt;
}

struct HttpResponseParser::Impl {
  std::unique_ptr<Parser> parser = NewParser();
  HeadSyntax head_syntax;
  // Bytes fed but not yet accepted by the parser: an unfinished head, chunk-size line or trailer.
  std::string unconsumed;
  std::optional<HttpResponseHead> head;
  std::optional<Failure> failure;
  bool complete = false;
  std::uint64_t bytes_received = 0;
  std::uint64_t body_bytes = 0;

  HttpFeed Feed(std::string_view bytes);
  HttpFeed FeedEof();
  // Runs the parser over `input`; returns how many bytes it accepted.
  std::size_t Parse(std::string_view input, HttpFeed& feed);
  // One Beast put() of at most kMaxHeadBytes: the bytes it accepted, or why the response is
  // broken.
  std::expected<std::size_t, std::string> PutWindow(std::string_view window);
  void TakeHead(HttpFeed& feed);
  HttpFeed DrainBody(HttpFeed feed);
  Failure Fail(FailureCode code, std::string message);
};

Failure HttpResponseParser::Impl::Fail(FailureCode code, std::string message) {
  Failure result;
  result.code = code;
  result.failure_class =
      code == FailureCode::kTransport ? FailureClass::kTransport : FailureClass::kProtocol;
  result.phase = head ? Phase::kStream : Phase::kResponseHeaders;
  result.retryable = true;
  result.message = std::move(message);
  if (head) {
    result.status = head->status;
    auto request_id = head->headers.Find("x-request-id");
    if (!request_id) request_id = head->headers.Find("request-id");
    if (request_id) result.request_id = std::string(*request_id);
  }
  failure = result;
  return result;
}

void HttpResponseParser::Impl::TakeHead(HttpFeed& feed) {
  const auto& message = parser->get();
  HttpResponseHead result;
  result.status = static_cast<int>(message.result_int());
  result.reason = std::string(message.reason());
  result.version = static_cast<int>(message.version());
  for (const auto& field : message) {
    result.headers.Append(std::string(field.name_string()), std::string(field.value()));
  }
  result.chunked = parser->chunked();
  if (auto length = parser->content_length()) result.content_length = *length;
  head = std::move(result);
  feed.head_ready = true;
}

std::expected<std::size_t, std::string> HttpResponseParser::Impl::PutWindow(
    std::string_view window) {
  boost::beast::error_code ec;
  std::size_t used = 0;
  try {
    used = parser->put(boost::asio::const_buffer(window.data(), window.size()), ec);
  } catch (const std::exception& error) {  // Beast's field storage throws on absurd sizes
    return std::unexpected(std::string(error.what()));
  }
  if (ec && ec != http::error::need_more) return std::unexpected(ec.message());
  // Beast takes the bytes of a chunk-size line or a trailer section only once they are all
  // there: a full window it cannot use is one of those over the limit.
  if (ec && used == 0 && window.size() == kMaxHeadBytes) {
    return std::unexpected(
        fmt::format("a chunk-size line or trailer section over {} bytes", kMaxHeadBytes));
  }
  return used;
}

// Beast sees at most kMaxHeadBytes per put(), so what it decides depends only on the bytes, not
// on how many arrived at once.
std::size_t HttpResponseParser::Impl::Parse(std::string_view input, HttpFeed& feed) {
  std::size_t offset = 0;
  while (!complete && offset < input.size()) {
    const auto used = PutWindow(input.substr(offset, kMaxHeadBytes));
    if (!head && parser->is_header_done()) {  // even when bad bytes follow the head
      const unsigned status = parser->get().result_int();
      if (used && status >= 100 && status < 200 && status != 101) {  // interim: skip it
        offset += *used;
        parser = NewParser();
        continue;
      }
      TakeHead(feed);
    }
    if (!used) {
      Fail(FailureCode::kMalformedResponse, "invalid HTTP response: " + used.error());
      return offset;
    }
    offset += *used;
    if (parser->is_done()) complete = true;
    if (*used == 0) break;  // Beast needs more bytes than there are
  }
  return offset;
}

HttpFeed HttpResponseParser::Impl::DrainBody(HttpFeed feed) {
  std::string& body = parser->get().body();
  body_bytes += body.size();
  feed.body = body;
  feed.complete = complete;
  feed.failure = failure;
  return feed;
}

HttpFeed HttpResponseParser::Impl::Feed(std::string_view bytes) {
  HttpFeed feed;
  if (failure) {
    feed.failure = failure;
    return feed;
  }
  parser->get().body().clear();  // the previous call's bytes
  bytes_received += bytes.size();
  if (complete) {
    feed.complete = true;
    return feed;
  }
  if (!head) {
    const HeadSyntax::Verdict verdict = head_syntax.Feed(bytes);
    if (verdict == HeadSyntax::Verdict::kBad) {
      Fail(FailureCode::kMalformedResponse,
           fmt::format("invalid HTTP response: {}", head_syntax.error()));
      feed.failure = failure;
      return feed;
    }
    // Beast only ever sees whole heads: it judges a field's value (Content-Length, say) as it
    // reads the field when a head comes at once, but only at the blank line when it came in
    // pieces, so the verdict would depend on the split.
    if (verdict == HeadSyntax::Verdict::kMore) {
      unconsumed.append(bytes);
      return feed;
    }
  }
  if (unconsumed.empty()) {  // the common case: parse straight from the caller's bytes
    const std::size_t used = Parse(bytes, feed);
    if (!complete && !failure) unconsumed.assign(bytes.substr(used));
  } else {
    unconsumed.append(bytes);
    const std::size_t used = Parse(unconsumed, feed);
    unconsumed.erase(0, used);
  }
  return DrainBody(feed);
}

HttpFeed HttpResponseParser::Impl::FeedEof() {
  HttpFeed feed;
  if (failure) {
    feed.failure = failure;
    return feed;
  }
  parser->get().body().clear();
  if (complete) {
    feed.complete = true;
    return feed;
  }
  if (!head) {
    Fail(FailureCode::kTransport,
         fmt::format("connection closed before the response headers ({} bytes received)",
                     bytes_received));
    feed.failure = failure;
    return feed;
  }
  boost::beast::error_code ec;
  parser->put_eof(ec);
  if (ec) {
    Fail(FailureCode::kTransport,
         fmt::format("connection closed mid-body after {} body bytes", body_bytes));
  } else {
    complete = true;
  }
  return DrainBody(feed);
}

HttpResponseParser::HttpResponseParser() : impl_(std::make_unique<Impl>()) {}
HttpResponseParser::~HttpResponseParser() = default;
HttpResponseParser::HttpResponseParser(HttpResponseParser&&) noexcept = default;
HttpResponseParser& HttpResponseParser::operator=(HttpResponseParser&&) noexcept = default;

HttpFeed HttpResponseParser::Feed(std::string_view bytes) { return impl_->Feed(bytes); }
HttpFeed HttpResponseParser::FeedEof() { return impl_->FeedEof(); }
bool HttpResponseParser::has_head() const { return impl_->head.has_value(); }
const HttpResponseHead& HttpResponseParser::head() const { return *impl_->head; }
bool HttpResponseParser::complete() const { return impl_->complete; }
std::uint64_t HttpResponseParser::bytes_received() const { return impl_->bytes_received; }
std::uint64_t HttpResponseParser::body_bytes() const { return impl_->body_bytes; }

}  // namespace faultline::ref
