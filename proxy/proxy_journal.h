// The proxy's journal: one JSON line per exchange, both sides of it (`faultline proxy --journal`).
//
//   {"index", "dialect", "rule", "faults",
//    "client": <the request as the client sent it, its status, writes and end>,
//    "upstream": <the request as the proxy sent it, the upstream's status, arrivals and end>
//                (null when a rule answered in the upstream's place),
//    "client_bytes" | "client_bytes_base64", "upstream_bytes" | "upstream_bytes_base64",
//    "upstream_events"}
//
// "client" and "upstream" are the fake provider's journal entries (fake_provider/journal_json.h:
// times in microseconds from the proxy's start, credentials redacted), so one reader reads both
// journals. The response bytes are kept whole: base64 when they are not UTF-8 (Bedrock's binary
// event stream). Pure function; thread-safe.
#pragma once

#include <string>

#include "proxy/proxy_core.h"

namespace faultline::proxy {

std::string JournalLine(const ExchangeRecord& record);

}  // namespace faultline::proxy
