#include "proxy/proxy_journal.h"

#include <nlohmann/json.hpp>

#include "fake_provider/journal_json.h"

namespace faultline::proxy {
namespace {

void PutBytes(nlohmann::ordered_json& line, const std::string& key, const std::string& bytes) {
  if (provider::IsValidUtf8(bytes)) {
    line[key] = bytes;
  } else {
    line[key + "_base64"] = provider::Base64Encode(bytes);
  }
}

}  // namespace

std::string JournalLine(const ExchangeRecord& record) {
  nlohmann::ordered_json line;
  line["index"] = record.client.index + 1;
  line["dialect"] = record.dialect;
  line["rule"] = record.rule;
  line["faults"] = record.faults;
  line["client"] = nlohmann::ordered_json::parse(provider::JournalEntryToJson(record.client));
  line["upstream"] =
      record.upstream_called
          ? nlohmann::ordered_json::parse(provider::JournalEntryToJson(record.upstream))
          : nlohmann::ordered_json(nullptr);
  PutBytes(line, "client_bytes", record.client_bytes);
  PutBytes(line, "upstream_bytes", record.upstream_bytes);
  line["upstream_events"] = record.upstream_events;
  return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace faultline::proxy
