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
#include <utility>

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

constexpr std::uint32_t kHeaderLimit = 64 * 1024;

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

std::unique_ptr<Parser> NewParser() {
  auto parser = std::make_unique<Parser>();
  parser->header_limit(kHeaderLimit);
  parser->body_limit(boost::none);  // a stream may run for as long as the server likes
  parser->eager(true);
  return parser;
}

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

struct HttpResponseParser::Impl {
  std::unique_ptr<Parser> parser = NewParser();
  std::string unconsumed;  // bytes fed but not yet accepted by the parser (a partial head line)
  std::optional<HttpResponseHead> head;
  std::optional<Failure> failure;
  bool complete = false;
  std::uint64_t bytes_received = 0;
  std::uint64_t body_bytes = 0;

  std::expected<HttpFeed, Failure> Feed(std::string_view bytes);
  std::expected<HttpFeed, Failure> FeedEof();
  // Runs the parser over `input`; returns how many bytes it accepted.
  std::size_t Parse(std::string_view input, HttpFeed& feed);
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

std::size_t HttpResponseParser::Impl::Parse(std::string_view input, HttpFeed& feed) {
  std::size_t offset = 0;
  while (!complete && offset < input.size()) {
    boost::beast::error_code ec;
    const std::size_t used =
        parser->put(boost::asio::const_buffer(input.data() + offset, input.size() - offset), ec);
    offset += used;
    if (!head && parser->is_header_done()) {
      const unsigned status = parser->get().result_int();
      if (status >= 100 && status < 200 && status != 101 && !ec) {  // interim response: skip it
        parser = NewParser();
        continue;
      }
      TakeHead(feed);
    }
    if (ec == http::error::need_more) break;
    if (ec) {
      Fail(FailureCode::kMalformedResponse, fmt::format("invalid HTTP response: {}", ec.message()));
      return offset;
    }
    if (parser->is_done()) complete = true;
    if (used == 0) break;
  }
  return offset;
}

HttpFeed HttpResponseParser::Impl::DrainBody(HttpFeed feed) {
  std::string& body = parser->get().body();
  body_bytes += body.size();
  feed.body = body;
  feed.complete = complete;
  return feed;
}

std::expected<HttpFeed, Failure> HttpResponseParser::Impl::Feed(std::string_view bytes) {
  if (failure) return std::unexpected(*failure);
  parser->get().body().clear();  // the previous call's bytes
  bytes_received += bytes.size();
  HttpFeed feed;
  if (complete) {
    feed.complete = true;
    return feed;
  }
  if (unconsumed.empty()) {  // the common case: parse straight from the caller's bytes
    const std::size_t used = Parse(bytes, feed);
    if (!complete) unconsumed.assign(bytes.substr(used));
  } else {
    unconsumed.append(bytes);
    const std::size_t used = Parse(unconsumed, feed);
    unconsumed.erase(0, used);
  }
  if (failure) return std::unexpected(*failure);
  return DrainBody(feed);
}

std::expected<HttpFeed, Failure> HttpResponseParser::Impl::FeedEof() {
  if (failure) return std::unexpected(*failure);
  parser->get().body().clear();
  HttpFeed feed;
  if (complete) {
    feed.complete = true;
    return feed;
  }
  if (!head) {
    return std::unexpected(
        Fail(FailureCode::kTransport,
             fmt::format("connection closed before the response headers ({} bytes received)",
                         bytes_received)));
  }
  boost::beast::error_code ec;
  parser->put_eof(ec);
  if (ec) {
    return std::unexpected(
        Fail(FailureCode::kTransport,
             fmt::format("connection closed mid-body after {} body bytes", body_bytes)));
  }
  complete = true;
  return DrainBody(feed);
}

HttpResponseParser::HttpResponseParser() : impl_(std::make_unique<Impl>()) {}
HttpResponseParser::~HttpResponseParser() = default;
HttpResponseParser::HttpResponseParser(HttpResponseParser&&) noexcept = default;
HttpResponseParser& HttpResponseParser::operator=(HttpResponseParser&&) noexcept = default;

std::expected<HttpFeed, Failure> HttpResponseParser::Feed(std::string_view bytes) {
  return impl_->Feed(bytes);
}
std::expected<HttpFeed, Failure> HttpResponseParser::FeedEof() { return impl_->FeedEof(); }
bool HttpResponseParser::has_head() const { return impl_->head.has_value(); }
const HttpResponseHead& HttpResponseParser::head() const { return *impl_->head; }
bool HttpResponseParser::complete() const { return impl_->complete; }
std::uint64_t HttpResponseParser::bytes_received() const { return impl_->bytes_received; }
std::uint64_t HttpResponseParser::body_bytes() const { return impl_->body_bytes; }

}  // namespace faultline::ref
