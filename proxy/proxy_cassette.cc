#include "proxy/proxy_cassette.h"

#include "fake_provider/journal.h"
#include "reference_impl/http_response.h"

namespace faultline::proxy {
namespace {

scenario::Cassette::End EndOf(provider::EndKind end) {
  switch (end) {
    case provider::EndKind::kCompleted:
      return scenario::Cassette::End::kCompleted;
    case provider::EndKind::kResetByServer:
      return scenario::Cassette::End::kReset;
    default:  // the upstream closed early, or the proxy stopped reading (a rule cut it)
      return scenario::Cassette::End::kClosed;
  }
}

}  // namespace

std::expected<scenario::Cassette, std::string> CassetteOf(const ExchangeRecord& record) {
  if (!record.upstream_called) return std::unexpected("a rule answered; the upstream said nothing");
  const provider::JournalEntry& upstream = record.upstream;
  scenario::Cassette cassette;
  cassette.dialect = record.dialect;
  cassette.source = "proxy";
  cassette.method = record.client.method;
  cassette.target = record.client.target;
  for (const scenario::Header& header : record.client.headers) {
    cassette.request_headers.push_back({header.name, header.value});
  }
  cassette.request_body = record.client.body;
  provider::RedactCassetteRequest(cassette);
  ref::HttpResponseParser parser;
  std::size_t offset = 0;
  bool head = false;
  for (const provider::WriteRecord& write : upstream.writes) {
    const std::string_view bytes =
        std::string_view(record.upstream_bytes).substr(offset, write.size);
    offset += write.size;
    const ref::HttpFeed feed = parser.Feed(bytes);
    const provider::Duration at = write.at - upstream.arrived;
    if (!head && parser.has_head()) {
      head = true;
      cassette.head_at = at;
    }
    if (!feed.body.empty()) cassette.writes.push_back({at, std::string(feed.body)});
    if (feed.failure || feed.complete) break;
  }
  if (!head) return std::unexpected("the upstream sent no whole response head");
  const ref::HttpResponseHead& response = parser.head();
  cassette.status = response.status;
  cassette.reason = std::string(response.reason);
  for (const ref::HttpHeader& header : response.headers.entries()) {
    cassette.headers.push_back({std::string(header.name), std::string(header.value)});
  }
  cassette.end = EndOf(upstream.end);
  cassette.end_at =
      std::max(upstream.ended - upstream.arrived,
               cassette.writes.empty() ? cassette.head_at : cassette.writes.back().at);
  return cassette;
}

}  // namespace faultline::proxy
