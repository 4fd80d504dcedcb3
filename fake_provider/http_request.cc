#include "fake_provider/http_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/rfc7230.hpp>
#include <limits>

namespace faultline::provider {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;

// Bytes of a field on the wire: "name: value\r\n".
constexpr std::size_t kFieldOverhead = 4;
// The body is not reserved beyond this from Content-Length alone: a slow client announcing 4 MB
// must not cost 4 MB before it sends them.
constexpr std::size_t kMaxReserve = 64 * 1024;

std::string_view Trim(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

// The last coding of a Transfer-Encoding list ("gzip, chunked" -> "chunked").
std::string_view LastCoding(std::string_view list) {
  std::string_view last;
  for (std::string_view coding : http::token_list{list}) last = coding;
  return last;
}

}  // namespace

std::string_view HttpRequest::Header(std::string_view name) const {
  for (const auto& header : headers) {
    if (beast::iequals(header.name, name)) return header.value;
  }
  return {};
}

bool HttpRequest::HasHeader(std::string_view name) const {
  return std::any_of(headers.begin(), headers.end(),
                     [name](const auto& header) { return beast::iequals(header.name, name); });
}

// Beast's parser, writing into an HttpRequest. The callbacks only set error codes; the reader
// turns them into states.
class RequestReader::Parser final : public http::basic_parser<true> {
 public:
  Parser(const RequestLimits& limits, HttpRequest& request) : limits_(limits), request_(request) {
    eager(false);  // stop after the header, so the reader can count its bytes; then eager
    header_limit(static_cast<std::uint32_t>(
        std::min<std::size_t>(limits.max_header_bytes, std::numeric_limits<std::uint32_t>::max())));
    body_limit(limits.max_body_bytes);
  }

  // Set when a callback refused the framing; the message explains it better than Beast's code.
  std::optional<std::string> framing_problem;
  // The bytes of the header block as received (counted by the reader), then of the trailer
  // fields too: together they must stay within max_header_bytes.
  std::size_t field_bytes = 0;

 private:
  void on_request_impl(http::verb, beast::string_view method, beast::string_view target,
                       int version, boost::system::error_code&) override {
    request_.method = std::string(method);
    request_.target = std::string(target);
    request_.version = version;
  }

  void on_response_impl(int, beast::string_view, int, boost::system::error_code&) override {}

  void on_field_impl(http::field, beast::string_view name, beast::string_view value,
                     boost::system::error_code& ec) override {
    if (!is_header_done()) {
      request_.headers.push_back({std::string(name), std::string(Trim(value))});
      return;
    }
    // A trailer field: it shares the header's budget.
    field_bytes += name.size() + value.size() + kFieldOverhead;
    if (field_bytes > limits_.max_header_bytes) {
      ec = http::error::header_limit;
      return;
    }
    request_.trailers.push_back({std::string(name), std::string(Trim(value))});
  }

  void on_header_impl(boost::system::error_code& ec) override {
    // RFC 9112 §3.2: a request with more than one Host field line gets 400. Which one names
    // the target would be ambiguous, and proxies in front of us may have read the other one.
    if (std::ranges::count_if(request_.headers, [](const scenario::Header& header) {
          return beast::iequals(header.name, "host");
        }) > 1) {
      framing_problem = "more than one Host header (RFC 9112 §3.2)";
      ec = http::error::bad_field;
      return;
    }
    std::string codings;
    for (const auto& header : request_.headers) {
      if (!beast::iequals(header.name, "transfer-encoding")) continue;
      codings += codings.empty() ? header.value : ", " + header.value;
    }
    if (codings.empty()) return;
    if (request_.version < 11) {
      framing_problem = "Transfer-Encoding in an HTTP/1.0 request (RFC 9112 §6.1)";
    } else if (!beast::iequals(LastCoding(codings), "chunked")) {
      framing_problem = fmt::format(
          "Transfer-Encoding \"{}\" does not end with chunked, so the body length cannot be "
          "determined (RFC 9112 §6.3)",
          codings.substr(0, 100));
    }
    if (framing_problem) ec = http::error::bad_transfer_encoding;
  }

  void on_body_init_impl(const boost::optional<std::uint64_t>& length,
                         boost::system::error_code&) override {
    if (length) request_.body.reserve(std::min<std::uint64_t>(*length, kMaxReserve));
  }

  std::size_t on_body_impl(beast::string_view body, boost::system::error_code&) override {
    request_.body.append(body.data(), body.size());
    return body.size();
  }

  void on_chunk_header_impl(std::uint64_t, beast::string_view,
                            boost::system::error_code&) override {}

  std::size_t on_chunk_body_impl(std::uint64_t, beast::string_view body,
                                 boost::system::error_code&) override {
    request_.body.append(body.data(), body.size());
    return body.size();
  }

  void on_finish_impl(boost::system::error_code&) override { request_.keep_alive = keep_alive(); }

  const RequestLimits& limits_;
  HttpRequest& request_;
};

RequestReader::RequestReader(const RequestLimits& limits)
    : limits_(limits), parser_(std::make_unique<Parser>(limits_, request_)) {}

RequestReader::~RequestReader() = default;

bool RequestReader::header_done() const { return parser_->is_header_done(); }
bool RequestReader::got_some() const { return parser_->got_some(); }

void RequestReader::Reject(int status, std::string type, std::string message) {
  state_ = State::kRejected;
  rejection_ = RequestRejection{status, std::move(type), std::move(message)};
}

// Beast sees at most max_header_bytes at a time: what it cannot make progress on within that
// window (a header block, a trailer block, a chunk line) is too long, however the bytes were
// split on the way in, and the caller never holds more than that unconsumed.
std::size_t RequestReader::Put(std::string_view bytes) {
  if (state_ != State::kReading) return 0;
  std::size_t used = 0;
  // RFC 9112 section 2.2: an empty line or two before a request-line is ignored (a client may
  // send a CRLF after a request's body). More are garbage, which the parser then refuses.
  while (!request_line_started_ && used < bytes.size() &&
         (bytes[used] == '\r' || bytes[used] == '\n') && blank_bytes_ < kMaxBlankBytes) {
    ++used;
    ++blank_bytes_;
  }
  if (used == bytes.size() && !request_line_started_) return used;
  request_line_started_ = true;
  bool window_full = false;
  boost::system::error_code ec;
  try {
    while (used < bytes.size() && !parser_->is_done()) {
      const std::size_t window = std::min(bytes.size() - used, limits_.max_header_bytes);
      const bool in_header = !parser_->is_header_done();
      ec = {};
      const std::size_t n =
          parser_->put(boost::asio::const_buffer(bytes.data() + used, window), ec);
      used += n;
      if (in_header && CountHeader(n, ec)) break;
      if (ec == http::error::need_more && n > 0) continue;
      window_full = ec == http::error::need_more && window == limits_.max_header_bytes;
      if (ec || n == 0) break;
    }
  } catch (const std::exception& e) {  // only allocation can throw here
    Reject(503, "server_error", fmt::format("cannot read the request: {}", e.what()));
    return used;
  }
  Conclude(ec, window_full);
  return used;
}

// Beast consumes a header a field at a time when it can, and applies its own limit to each call
// only: the reader counts the header's bytes across calls. True when they are too many.
bool RequestReader::CountHeader(std::size_t consumed, boost::system::error_code& ec) {
  parser_->field_bytes += consumed;
  if (parser_->field_bytes > limits_.max_header_bytes) {
    ec = http::error::header_limit;
    return true;
  }
  if (parser_->is_header_done()) parser_->eager(true);  // the body: as much as there is
  return false;
}

// An error first: Beast marks a request without a body done before the header callback that
// may refuse it.
void RequestReader::Conclude(const boost::system::error_code& ec, bool window_full) {
  if (!ec && parser_->is_done()) {
    state_ = State::kComplete;
  } else if (ec == http::error::header_limit || window_full) {
    Reject(431, "request_header_fields_too_large",
           fmt::format("the request's header and trailer fields exceed {} bytes (faultline serve "
                       "--max-header-bytes)",
                       limits_.max_header_bytes));
  } else if (ec == http::error::body_limit) {
    Reject(413, "request_too_large",
           fmt::format("the request body exceeds {} bytes (faultline serve --max-body-bytes)",
                       limits_.max_body_bytes));
  } else if (ec && ec != http::error::need_more) {
    Reject(400, "bad_request",
           parser_->framing_problem ? *parser_->framing_problem
                                    : fmt::format("malformed HTTP request: {}", ec.message()));
  }
}

void RequestReader::PutEof() {
  if (state_ != State::kReading) return;
  boost::system::error_code ec = http::error::partial_message;
  if (parser_->got_some()) parser_->put_eof(ec);
  state_ = parser_->is_done() && !ec ? State::kComplete : State::kTruncated;
}

}  // namespace faultline::provider
