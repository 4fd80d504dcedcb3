#include "fake_provider/journal_json.h"

#include <nlohmann/json.hpp>

#include "scenarios/redact.h"

namespace faultline::provider {
namespace {

nlohmann::json WriteToJson(const WriteRecord& write) {
  return {{"at_us", write.at.count()}, {"planned_us", write.planned.count()}, {"size", write.size}};
}

nlohmann::json TruthToJson(const PlanTruth& truth) {
  nlohmann::json json = nlohmann::json::object();
  if (truth.answer) json["answer"] = *truth.answer;
  if (!truth.tool_arguments.empty()) json["tool_arguments"] = truth.tool_arguments;
  if (!truth.failure_class.empty()) json["failure_class"] = truth.failure_class;
  json["retryable"] = truth.retryable;
  if (truth.failure_in_head) json["failure_in_head"] = true;
  nlohmann::json hint_fields = nlohmann::json::array();
  for (const HintField& field : truth.hint_fields) hint_fields.push_back({field.name, field.value});
  json["hint_fields"] = std::move(hint_fields);
  nlohmann::json silences = nlohmann::json::array();
  for (const Silence& silence : truth.silences) {
    nlohmann::json item = {{"from_us", silence.from.count()},
                           {"before_headers", silence.before_headers},
                           {"heartbeat", silence.heartbeat}};
    item["to_us"] = silence.to ? nlohmann::json(silence.to->count()) : nlohmann::json(nullptr);
    silences.push_back(std::move(item));
  }
  json["silences"] = std::move(silences);
  if (truth.streamed) {
    json["streamed"] = true;
    json["output_before_failure"] = truth.output_before_failure;
    if (truth.output_from) json["output_from_us"] = truth.output_from->count();
    if (truth.error_event) json["error_event"] = true;
    if (truth.events_before_failure) json["events_before_failure"] = true;
    if (truth.events_from) json["events_from_us"] = truth.events_from->count();
  }
  return json;
}

nlohmann::json HeadersToJson(const std::vector<scenario::Header>& fields) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& field : fields) out.push_back({field.name, field.value});
  return out;
}

nlohmann::json EntryToJson(const JournalEntry& entry) {
  // The entry keeps the request exact for judging; what is written out loses its keys.
  const auto shown = [&entry](const std::string& text) {
    return entry.secrets_in_clear ? text : scenario::RedactSecrets(text);
  };
  const std::string body = shown(entry.body);
  nlohmann::json writes = nlohmann::json::array();
  for (const auto& write : entry.writes) writes.push_back(WriteToJson(write));
  nlohmann::json json = {
      {"index", entry.index},
      {"attempt", entry.attempt},
      {"connection", entry.connection},
      {"arrived_us", entry.arrived.count()},
      {"method", entry.method},
      {"target", shown(entry.target)},
      {"headers", HeadersToJson(entry.headers)},
      {"trailers", HeadersToJson(entry.trailers)},
  };
  if (IsValidUtf8(body)) {
    json["body"] = body;
  } else {
    json["body_base64"] = Base64Encode(body);
  }
  if (!entry.route.empty()) json["route"] = entry.route;
  if (entry.call >= 0) json["call"] = entry.call;
  json["status"] = entry.status;
  json["plan"] = entry.plan_summary;
  json["truth"] = TruthToJson(entry.truth);
  json["writes"] = std::move(writes);
  json["bytes_sent"] = entry.bytes_sent;
  json["end"] = std::string(ToString(entry.end));
  json["ended_us"] = entry.ended.count();
  json["detail"] = entry.detail;
  if (entry.further_request_at) json["further_request_us"] = entry.further_request_at->count();
  return json;
}

}  // namespace

std::string JournalEntryToJson(const JournalEntry& entry) {
  return EntryToJson(entry).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string JournalToJson(std::string_view session_id, const std::vector<JournalEntry>& entries,
                          std::uint64_t dropped) {
  nlohmann::json entries_json = nlohmann::json::array();
  for (const auto& entry : entries) entries_json.push_back(EntryToJson(entry));
  nlohmann::json json = {{"session", std::string(session_id)},
                         {"dropped", dropped},
                         {"entries", std::move(entries_json)}};
  return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace faultline::provider
