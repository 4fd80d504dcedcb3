// result.json of `faultline simulate`: the experiment and every job's measures, and back (for
// merging shards). The shape is fleet/schema/simulate-result.schema.json.
#include <array>

#include "fleet/experiment.h"
#include "fmt/format.h"

namespace faultline::fleet {
namespace {

using Json = nlohmann::json;

constexpr int kFormatVersion = 1;

// Every raw counter of PolicyMeasures under its JSON name: one table for writing and reading.
struct Counter {
  std::string_view name;
  std::uint64_t PolicyMeasures::*field;
};
constexpr std::array<Counter, 15> kCounters{{
    {"calls", &PolicyMeasures::calls},
    {"succeeded", &PolicyMeasures::succeeded},
    {"failed", &PolicyMeasures::failed},
    {"unfinished", &PolicyMeasures::unfinished},
    {"shed", &PolicyMeasures::shed},
    {"attempts", &PolicyMeasures::attempts},
    {"provider_requests", &PolicyMeasures::provider_requests},
    {"local_rejections", &PolicyMeasures::local_rejections},
    {"retries", &PolicyMeasures::retries},
    {"overloaded", &PolicyMeasures::overloaded},
    {"timeouts", &PolicyMeasures::timeouts},
    {"faults", &PolicyMeasures::faults},
    {"served", &PolicyMeasures::served},
    {"wasted_requests", &PolicyMeasures::wasted_requests},
    {"events", &PolicyMeasures::events},
}};

struct BucketField {
  std::string_view name;
  std::uint64_t Bucket::*field;
};
constexpr std::array<BucketField, 9> kBucketFields{{
    {"offered", &Bucket::offered},
    {"attempts", &Bucket::attempts},
    {"retries", &Bucket::retries},
    {"succeeded", &Bucket::succeeded},
    {"failed", &Bucket::failed},
    {"overloaded", &Bucket::overloaded},
    {"timeouts", &Bucket::timeouts},
    {"wasted", &Bucket::wasted},
    {"queue_max", &Bucket::queue_max},
}};

Json Optional(const std::optional<double>& value) { return value ? Json(*value) : Json(nullptr); }

Json SeriesJson(const PolicyMeasures& m) {
  Json series = Json::object();
  for (const BucketField& field : kBucketFields) {
    Json values = Json::array();
    for (const Bucket& bucket : m.series) values.push_back(bucket.*field.field);
    series[std::string(field.name)] = std::move(values);
  }
  Json busy = Json::array();
  for (const Bucket& bucket : m.series) busy.push_back(bucket.busy_slot_seconds);
  series["busy_slot_seconds"] = std::move(busy);
  return series;
}

Json LayersJson(const PolicyMeasures& m) {
  Json layers = Json::array();
  for (const LayerMeasures& layer : m.layers) {
    layers.push_back({{"name", layer.name},
                      {"received", layer.received},
                      {"sent", layer.sent},
                      {"retries", layer.retries},
                      {"timeouts", layer.timeouts},
                      {"amplification", layer.amplification}});
  }
  return layers;
}

void ReadLayers(const Json& json, PolicyMeasures& m) {
  if (!json.contains("layers")) return;
  for (const Json& layer : json.at("layers")) {
    m.layers.push_back(LayerMeasures{
        layer.at("name").get<std::string>(), layer.at("received").get<std::uint64_t>(),
        layer.at("sent").get<std::uint64_t>(), layer.at("retries").get<std::uint64_t>(),
        layer.at("timeouts").get<std::uint64_t>(), 0});
  }
}

Json MeasuresJson(const PolicyMeasures& m) {
  Json json = {{"policy", m.policy},
               {"description", m.description},
               {"source", m.source},
               {"amplification", m.amplification},
               {"load_amplification", m.load_amplification},
               {"success_rate", m.success_rate},
               {"goodput_per_s", m.goodput},
               {"latency_ms",
                {{"p50", m.p50_ms}, {"p95", m.p95_ms}, {"p99", m.p99_ms}, {"p999", m.p999_ms}}},
               {"drain_s", Optional(m.drain_seconds)},
               {"trigger_end_s", Optional(m.trigger_end_seconds)},
               {"recovery_s", Optional(m.recovery_seconds)},
               {"utilisation", m.utilisation},
               {"wasted_tokens", m.wasted_tokens},
               {"wasted_bytes", m.wasted_bytes},
               {"give_up_reasons", m.give_up_reasons},
               {"bucket_s", m.bucket_seconds},
               {"horizon_s", m.horizon_seconds},
               {"end_s", m.end_seconds},
               {"concurrency", m.concurrency},
               {"capacity_per_s", m.capacity_steps},
               {"tokens_per_call", m.tokens_per_call},
               {"bytes_per_call", m.bytes_per_call},
               {"latency_histogram", m.latency.Occupied()},
               {"series", SeriesJson(m)}};
  Json counters = Json::object();
  for (const Counter& counter : kCounters) counters[std::string(counter.name)] = m.*counter.field;
  json["counters"] = std::move(counters);
  if (!m.layers.empty()) json["layers"] = LayersJson(m);  // absent without a gateway, as before
  return json;
}

std::optional<double> ReadOptional(const Json& json, const char* key) {
  if (!json.contains(key) || json[key].is_null()) return std::nullopt;
  return json[key].get<double>();
}

void ReadSeries(const Json& series, PolicyMeasures& m) {
  const std::size_t n = series.at("offered").size();
  m.series.assign(n, Bucket{});
  for (const BucketField& field : kBucketFields) {
    const Json& values = series.at(std::string(field.name));
    for (std::size_t i = 0; i < n && i < values.size(); ++i) {
      m.series[i].*field.field = values[i].get<std::uint64_t>();
    }
  }
  const Json& busy = series.at("busy_slot_seconds");
  for (std::size_t i = 0; i < n && i < busy.size(); ++i) {
    m.series[i].busy_slot_seconds = busy[i].get<double>();
  }
}

PolicyMeasures MeasuresFromJson(const Json& json) {
  PolicyMeasures m;
  m.policy = json.at("policy").get<std::string>();
  m.description = json.at("description").get<std::string>();
  m.source = json.at("source").get<std::string>();
  for (const Counter& counter : kCounters) {
    m.*counter.field = json.at("counters").at(std::string(counter.name)).get<std::uint64_t>();
  }
  m.give_up_reasons = json.at("give_up_reasons").get<std::map<std::string, std::uint64_t>>();
  ReadLayers(json, m);
  for (const auto& [index, count] :
       json.at("latency_histogram").get<std::vector<std::pair<int, std::uint64_t>>>()) {
    m.latency.AddToBucket(index, count);
  }
  m.bucket_seconds = json.at("bucket_s").get<double>();
  m.horizon_seconds = json.at("horizon_s").get<double>();
  m.end_seconds = json.at("end_s").get<double>();
  m.concurrency = json.at("concurrency").get<int>();
  m.tokens_per_call = json.at("tokens_per_call").get<int>();
  m.bytes_per_call = json.at("bytes_per_call").get<int>();
  m.trigger_end_seconds = ReadOptional(json, "trigger_end_s");
  if (json.contains("capacity_per_s")) {  // absent from results written before it was kept
    m.capacity_steps = json["capacity_per_s"].get<std::vector<std::pair<double, double>>>();
  }
  ReadSeries(json.at("series"), m);
  Finish(m);
  return m;
}

}  // namespace

Json ToJson(const Experiment& experiment) {
  Json results = Json::array();
  for (const JobResult& result : experiment.results) {
    Json job = MeasuresJson(result.measures);
    job["job"] = result.job;
    job["sweep_value"] = Optional(result.sweep_value);
    results.push_back(std::move(job));
  }
  Json sweep = nullptr;
  if (experiment.sweep) {
    sweep = {{"key", experiment.sweep->key},
             {"from", experiment.sweep->from},
             {"to", experiment.sweep->to},
             {"step", experiment.sweep->step}};
  }
  return {{"faultline_simulate", kFormatVersion},
          {"scenario", experiment.scenario},
          {"source", experiment.source},
          {"seed", experiment.seed},
          {"sweep", sweep},
          {"total_jobs", experiment.total_jobs},
          {"results", std::move(results)}};
}

std::expected<Experiment, std::string> ExperimentFromJson(const Json& json) {
  try {
    if (json.value("faultline_simulate", 0) != kFormatVersion) {
      return std::unexpected(fmt::format(
          "not a faultline simulate result (expected \"faultline_simulate\": {})", kFormatVersion));
    }
    Experiment experiment;
    experiment.scenario = json.at("scenario").get<std::string>();
    experiment.source = json.at("source").get<std::string>();
    experiment.seed = json.at("seed").get<std::uint64_t>();
    experiment.total_jobs = json.at("total_jobs").get<std::size_t>();
    if (const Json& sweep = json.at("sweep"); !sweep.is_null()) {
      experiment.sweep = Sweep{sweep.at("key").get<std::string>(), sweep.at("from").get<double>(),
                               sweep.at("to").get<double>(), sweep.at("step").get<double>()};
    }
    for (const Json& job : json.at("results")) {
      experiment.results.push_back({job.at("job").get<std::size_t>(),
                                    ReadOptional(job, "sweep_value"), MeasuresFromJson(job)});
    }
    return experiment;
  } catch (const nlohmann::json::exception& error) {
    return std::unexpected(fmt::format("malformed simulate result: {}", error.what()));
  }
}

}  // namespace faultline::fleet
