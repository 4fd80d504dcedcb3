// Status lines, response headers, durations and summaries for the plan compiler.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "fake_provider/plan/plan_internal.h"
#include "fake_provider/wire/http_date.h"

namespace faultline::provider::plan_internal {
namespace {

using scenario::RetryAfter;

void AppendHeader(std::string& out, std::string_view name, std::string_view value) {
  out.append(name);
  out.append(": ");
  out.append(value);
  out.append("\r\n");
}

std::string SignedDuration(Duration duration) {
  return duration.count() < 0 ? FormatDuration(duration) : "+" + FormatDuration(duration);
}

// Whole seconds, rounded up (a client waiting that long is never early); never negative.
long long CeilSeconds(Duration duration) {
  if (duration.count() <= 0) return 0;
  return (duration.count() + 999'999) / 1'000'000;
}

std::string RetryAfterSummary(const RetryAfter& retry_after) {
  switch (retry_after.form) {
    case RetryAfter::Form::kSeconds:
      return retry_after.text;
    case RetryAfter::Form::kImfFixdate:
      return "imf(" + SignedDuration(retry_after.date_offset) + ")";
    case RetryAfter::Form::kRfc850:
      return "rfc850(" + SignedDuration(retry_after.date_offset) + ")";
    case RetryAfter::Form::kAsctime:
      return "asctime(" + SignedDuration(retry_after.date_offset) + ")";
    case RetryAfter::Form::kRaw:
      break;
  }
  return "raw(" + retry_after.text + ")";
}

void AppendSpecHeaders(std::string& out, const scenario::ResponseSpec& spec, WallTime server_now,
                       const DialectWriter* writer) {
  if (spec.retry_after_ms) AppendHeader(out, "retry-after-ms", *spec.retry_after_ms);
  if (spec.should_retry) AppendHeader(out, "x-should-retry", *spec.should_retry ? "true" : "false");
  if (spec.rate_limit_headers && writer != nullptr) {
    std::vector<scenario::Header> limits;
    writer->AppendRateLimitHeaders(*spec.rate_limit_headers, server_now, limits);
    for (const scenario::Header& header : limits) AppendHeader(out, header.name, header.value);
  }
  for (const scenario::Header& header : spec.headers) AppendHeader(out, header.name, header.value);
}

// The Date header's value of `date` (whole seconds). All the answers of one second share it, so
// the last one is kept per thread instead of working out the calendar at every request.
const std::string& ImfFixdateOf(WallTime date) {
  thread_local WallTime last = WallTime::min();
  thread_local std::string text;
  if (date != last) {
    text = FormatImfFixdate(date);
    last = date;
  }
  return text;
}

}  // namespace

std::string_view ReasonPhrase(int status) {
  static constexpr std::pair<int, std::string_view> kReasons[] = {
      {200, "OK"},
      {201, "Created"},
      {202, "Accepted"},
      {204, "No Content"},
      {400, "Bad Request"},
      {401, "Unauthorized"},
      {402, "Payment Required"},
      {403, "Forbidden"},
      {404, "Not Found"},
      {405, "Method Not Allowed"},
      {408, "Request Timeout"},
      {409, "Conflict"},
      {413, "Payload Too Large"},
      {415, "Unsupported Media Type"},
      {422, "Unprocessable Entity"},
      {429, "Too Many Requests"},
      {500, "Internal Server Error"},
      {501, "Not Implemented"},
      {502, "Bad Gateway"},
      {503, "Service Unavailable"},
      {504, "Gateway Timeout"},
      {520, "Unknown Error"},
      {524, "A Timeout Occurred"},
      {529, "Site Overloaded"},
  };
  for (const auto& [code, reason] : kReasons) {
    if (code == status) return reason;
  }
  if (status >= 200 && status < 300) return "OK";
  if (status >= 500) return "Server Error";
  if (status >= 400) return "Client Error";
  return "Unknown";
}

void AppendStatusLine(std::string& out, int status) {
  // Written at every answer: plain appends, no format string to parse.
  out += "HTTP/1.1 ";
  out += std::to_string(status);
  out += ' ';
  out += ReasonPhrase(status);
  out += "\r\n";
}

std::string FormatDuration(Duration duration) {
  const long long us = duration.count();
  if (us % 1'000'000 == 0) return fmt::format("{}s", us / 1'000'000);
  if (us % 1'000 == 0) return fmt::format("{}ms", us / 1'000);
  return fmt::format("{}us", us);
}

std::string FormatWait(const scenario::Wait& wait) {
  return wait.forever ? "forever" : FormatDuration(wait.duration);
}

namespace {

// "{:x}\r\n" written at the end of `line`; returns where it starts.
char* ChunkSizeLine(std::size_t size, std::span<char, kChunkSizeLineMax> line) {
  static constexpr std::string_view kDigits = "0123456789abcdef";
  char* first = line.data() + line.size() - 2;
  std::copy_n("\r\n", 2, first);
  do {
    *--first = kDigits[size & 0xf];
    size >>= 4;
  } while (size != 0);
  return first;
}

}  // namespace

void AppendChunkSize(std::string& out, std::size_t size) {
  std::array<char, kChunkSizeLineMax> line;
  out.append(ChunkSizeLine(size, line), line.data() + line.size());
}

void AppendChunk(std::string& out, const ByteTemplate& bytes, const SlotValues& values) {
  if (bytes.sealed()) {  // resealing wants the message at the end of `out`: the CRLF comes after
    AppendChunkSize(out, bytes.RenderedSize(values));
    bytes.AppendTo(out, values);
    out.append("\r\n");
    return;
  }
  // One growth of `out` for the whole chunk, written in place.
  const std::size_t size = bytes.RenderedSize(values);
  std::array<char, kChunkSizeLineMax> line;
  const std::string_view size_line(ChunkSizeLine(size, line), line.data() + line.size());
  AppendInPlace(out, size_line.size() + size + 2, [&](char* first) {
    char* next = std::copy(size_line.begin(), size_line.end(), first);
    next = bytes.WriteTo(next, values);
    std::copy_n("\r\n", 2, next);
  });
}

std::string Chunk(std::string_view data) {
  std::string out;
  out.reserve(data.size() + 2 * sizeof(std::size_t) + 4);
  AppendChunkSize(out, data.size());
  out.append(data);
  out.append("\r\n");
  return out;
}

std::string Head(int status, const HeadInput& input) {
  const Duration skew = input.spec != nullptr ? input.spec->date_skew : Duration{0};
  const WallTime server_now = input.now + skew;
  // The instant the Date header stands for; HTTP-date Retry-After values are offsets from it.
  const WallTime date = std::chrono::floor<std::chrono::seconds>(server_now);
  std::string out;
  out.reserve(512);
  AppendStatusLine(out, status);
  AppendHeader(out, "date", ImfFixdateOf(date));
  AppendHeader(out, "content-type", input.content_type);
  if (!input.request_id_header.empty()) {
    AppendHeader(out, input.request_id_header, input.request_id);
  }
  if (input.spec != nullptr && input.spec->retry_after) {
    AppendHeader(out, "retry-after", FormatRetryAfter(*input.spec->retry_after, date));
  } else if (input.retry_after_seconds) {
    AppendHeader(out, "retry-after", std::to_string(CeilSeconds(*input.retry_after_seconds)));
  }
  if (input.spec != nullptr) AppendSpecHeaders(out, *input.spec, server_now, input.writer);
  for (const scenario::Header& header : input.extra) AppendHeader(out, header.name, header.value);
  // Always keep-alive, as the providers send it: a server about to fail does not announce it, and
  // announcing `close` changes what clients do (undici, under Node's fetch, then takes a reset or
  // a missing final chunk for a normal end of the body).
  AppendHeader(out, "connection", "keep-alive");
  if (input.chunked) {
    AppendHeader(out, "transfer-encoding", "chunked");
  } else {
    AppendHeader(out, "content-length", std::to_string(input.content_length));
  }
  out.append("\r\n");
  return out;
}

std::string StatusSummary(const scenario::ResponseSpec& spec) {
  std::string out;
  switch (spec.connection) {
    case scenario::ConnectionFault::kResetBeforeHeaders:
      out = "reset-before-headers";
      break;
    case scenario::ConnectionFault::kCloseBeforeHeaders:
      out = "close-before-headers";
      break;
    case scenario::ConnectionFault::kNone:
      out = std::to_string(spec.status);
      if (spec.status < 200 || spec.status >= 300) {
        out += " ";
        out += scenario::ToString(spec.error ? spec.error->kind
                                             : scenario::DefaultErrorKind(spec.status));
      }
      break;
  }
  if (spec.headers_delay.count() != 0)
    out += " headers-delay=" + FormatDuration(spec.headers_delay);
  if (spec.headers_stall) out += " headers-stall=" + FormatWait(*spec.headers_stall);
  if (spec.connection != scenario::ConnectionFault::kNone) return out;
  if (spec.retry_after) out += " retry-after=" + RetryAfterSummary(*spec.retry_after);
  if (spec.retry_after_ms) out += " retry-after-ms=" + *spec.retry_after_ms;
  if (spec.should_retry)
    out += *spec.should_retry ? " x-should-retry=true" : " x-should-retry=false";
  if (spec.date_skew.count() != 0) out += " date-skew=" + SignedDuration(spec.date_skew);
  if (spec.rate_limit_headers) out += " ratelimit-headers";
  if (!spec.headers.empty()) out += fmt::format(" +{} headers", spec.headers.size());
  if (spec.content_type) out += " content-type=" + *spec.content_type;
  if (spec.body) out += fmt::format(" body={}B", spec.body->size());
  return out;
}

}  // namespace faultline::provider::plan_internal
