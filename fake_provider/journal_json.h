// The journal as JSON, the shape served by GET /_faultline/sessions/<id>/journal:
//
//   {"session": "<id>", "dropped": 0, "entries": [{"index", "attempt", "connection",
//    "arrived_us", "method", "target", "headers": [[name, value], ...], "trailers": [...],
//    "body" (UTF-8 text) | "body_base64" (anything else), "status", "plan",
//    "writes": [{"at_us", "planned_us", "size"}], "bytes_sent", "end", "ended_us", "detail",
//    "further_request_us"? (JournalEntry::further_request_at)}]}
//
// Times are microsecond offsets from the session's start.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fake_provider/journal.h"
#include "scenarios/bytes_text.h"

namespace faultline::provider {

std::string JournalToJson(std::string_view session_id, const std::vector<JournalEntry>& entries,
                          std::uint64_t dropped);

// One entry as the object "entries" holds, on one line: the proxy's journal (proxy/) writes
// both sides of an exchange in this shape.
std::string JournalEntryToJson(const JournalEntry& entry);

// Helpers shared with the control API (their home is scenarios/bytes_text.h).
using scenario::Base64Encode;
using scenario::IsValidUtf8;

}  // namespace faultline::provider
