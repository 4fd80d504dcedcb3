// Writes the seed corpora of the fuzz targets into <root>/<target>/ (tools/fuzz.sh passes
// build/fuzz/corpus): for every response the built-in catalogue scripts, the bytes its plan
// sends, its decoded body and its header lines; the reference client's hand-written wire
// fixtures; retry-log lines, whole and torn; fleet sections with --sweep values; HAR files and
// aimock fixtures for the cassette importers. Seeds are
// generated, never committed.
//
//   faultline_fuzz_corpus ROOT
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "fake_provider/plan/plan_compiler.h"
#include "fake_provider/tests/plan_test_util.h"
#include "fake_provider/wire/dialect.h"
#include "harness/trace/event.h"
#include "harness/worlds/virtual_world.h"
#include "reference_impl/retry_log.h"
#include "reference_impl/tests/wire_fixtures.h"
#include "scenarios/embedded_catalog.h"
#include "scenarios/loader.h"
#include "scenarios/scripted_responses.h"

namespace faultline::fuzz {
namespace {

namespace fs = std::filesystem;

class Corpus {
 public:
  explicit Corpus(fs::path root) : root_(std::move(root)) {}

  void Add(std::string_view target, std::string_view name, std::string_view bytes) {
    const fs::path dir = root_ / target;
    fs::create_directories(dir);
    std::string file(name);
    for (char& c : file) {
      if (c == '/' || c == ' ') c = '_';
    }
    std::ofstream(dir / file, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
    ++written_;
  }
  int written() const { return written_; }

 private:
  fs::path root_;
  int written_ = 0;
};

// The head's field lines ("name: value\n" each), as the retry-hint target reads them.
std::string FieldLines(const provider::testing::DecodedResponse& response) {
  std::string out;
  for (const auto& [name, value] : response.headers) out += name + ": " + value + "\n";
  return out;
}

// The JSON of a streamed body's events, one per line, as the fast-path target reads them: the
// data of SSE `data:` lines, and NDJSON lines as they are.
std::string EventDataLines(std::string_view body) {
  std::string out;
  for (std::size_t at = 0; at < body.size();) {
    const std::size_t end = std::min(body.find('\n', at), body.size());
    std::string_view line = body.substr(at, end - at);
    if (line.starts_with("data:")) line.remove_prefix(line.starts_with("data: ") ? 6 : 5);
    if (line.starts_with("{")) {
      out.append(line);
      out.push_back('\n');
    }
    at = end + 1;
  }
  return out;
}

// Every response entry and chaos choice of every catalogue scenario.
void AddCatalogue(Corpus& corpus) {
  auto catalogue = scenario::LoadBuiltinCatalog();
  if (!catalogue) return;
  const provider::WallTime now{std::chrono::seconds(1'767'225'600)};
  for (const scenario::Scenario& scenario : *catalogue) {
    const provider::CompiledScenario compiled(scenario);
    const std::vector<const scenario::ResponseSpec*> specs = scenario::ScriptedResponses(scenario);
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const provider::ResponsePlan plan =
          compiled.Plan(*specs[i], {.attempt = static_cast<int>(i) + 1,
                                    .stream = scenario.request.stream,
                                    .seed = 7,
                                    .now = now,
                                    .input_tokens = 12});
      const std::string wire = provider::testing::SentBytes(plan);
      const auto decoded = provider::testing::Decode(wire);
      const std::string name = fmt::format("{}-{}", scenario.name, i + 1);
      corpus.Add("ref_http_fuzz", name, wire);
      corpus.Add("ref_sse_fuzz", name, decoded.body);
      corpus.Add("ref_body_fuzz", name, decoded.body);
      corpus.Add("ref_fast_path_fuzz", name, EventDataLines(decoded.body));
      corpus.Add("ref_retry_hint_fuzz", name, FieldLines(decoded) + decoded.body);
    }
  }
}

void AddFixtures(Corpus& corpus) {
  namespace fx = ref::fixtures;
  const std::vector<std::pair<std::string_view, std::string_view>> bodies = {
      {"chat-text", fx::kChatText},
      {"chat-tool-calls", fx::kChatToolCalls},
      {"chat-reasoning", fx::kChatReasoning},
      {"chat-body", fx::kChatBody},
      {"anthropic-text", fx::kAnthropicText},
      {"anthropic-thinking-and-tool", fx::kAnthropicThinkingAndTool},
      {"anthropic-body", fx::kAnthropicBody},
      {"responses-text", fx::kResponsesText},
      {"responses-reasoning-and-tool", fx::kResponsesReasoningAndTool},
      {"responses-body", fx::kResponsesBody}};
  for (const auto& [name, body] : bodies) {
    const std::string fixture = fmt::format("fixture-{}", name);
    corpus.Add("ref_sse_fuzz", fixture, body);
    corpus.Add("ref_body_fuzz", fixture, body);
    corpus.Add("ref_fast_path_fuzz", fixture, EventDataLines(body));
    const bool json = body.starts_with("{");
    corpus.Add("ref_http_fuzz", fixture,
               fmt::format("HTTP/1.1 200 OK\r\ncontent-type: {}\r\ntransfer-encoding: chunked\r\n"
                           "\r\n{:x}\r\n{}\r\n0\r\nx-trailer: 1\r\n\r\n",
                           json ? "application/json" : "text/event-stream", body.size(), body));
  }
}

void AddRetryHints(Corpus& corpus) {
  const std::vector<std::string_view> seeds = {
      "retry-after: 120\n",
      "retry-after: 1.5\nretry-after-ms: 1500.25\n",
      "retry-after: Fri, 31 Dec 9999 23:59:59 GMT\ndate: Sat, 01 Jan 0000 00:00:00 GMT\n",
      "retry-after: Sunday, 06-Nov-94 08:49:37 GMT\n",
      "retry-after: Sun Nov  6 08:49:37 1994\n",
      "x-ratelimit-reset-requests: 1h2m3.5s\nx-ratelimit-remaining-requests: 0\n"
      "x-ratelimit-reset-tokens: 59.6s\n",
      "\n{\"error\":{\"message\":\"Please try again in 6m0s.\"}}",
      "\n{\"error\":{\"details\":[{\"retryDelay\":\"30s\"}]}}",
      "\nRate limited: retry after 20 seconds"};
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    corpus.Add("ref_retry_hint_fuzz", fmt::format("hand-{}", i), seeds[i]);
  }
}

void AddRetryLogs(Corpus& corpus) {
  std::string log = "c1\n";
  for (int attempt = 1; attempt <= 3; ++attempt) {
    log += ref::ToJsonLine({.call_id = attempt == 2 ? "c2" : "c1",
                            .attempt = attempt,
                            .scheduled_at = std::chrono::system_clock::time_point(
                                std::chrono::milliseconds(1'767'225'600'000 + attempt * 1500)),
                            .delay = std::chrono::milliseconds(1500),
                            .delay_source = ref::DelaySource::kRetryAfter,
                            .failure_code = ref::FailureCode::kRateLimit}) +
           "\n";
  }
  corpus.Add("ref_retry_log_fuzz", "log-whole", log);
  corpus.Add("ref_retry_log_fuzz", "log-torn", log.substr(0, log.size() - 20));
  corpus.Add("ref_retry_log_fuzz", "log-far-future",
             "c1\n{\"call_id\":\"c1\",\"attempt\":1,\"scheduled_at_ms\":9223372036854775807}\n");
}

// The fake provider's and the loader's targets: every catalogue file as text and inside a
// create request, requests to every catalogue session as clients send them (Content-Length,
// chunked with trailers, pipelined), control requests, and the hostile inputs of issue 14.
void AddServerSeeds(Corpus& corpus) {
  for (const scenario::EmbeddedFile& file : scenario::EmbeddedCatalogFiles()) {
    corpus.Add("scenario_loader_fuzz", file.path, file.content);
    corpus.Add("provider_control_create_fuzz", file.path,
               nlohmann::json{{"scenario_text", file.content}}.dump());
  }
  // Aliases that repeat text (issue 30): the loader counts the bytes they stand for.
  std::string aliases =
      "faultline: 1\nname: f/aliases\ndescription: d\ndialect: openai-chat\nresponses:\n"
      "  - content: {text: &t \"" +
      std::string(600, 'x') + "\"}\n";
  for (int i = 0; i < 12; ++i) aliases += "  - content: {text: *t, chunk_size: 2}\n";
  corpus.Add("scenario_loader_fuzz", "aliases", aliases);
  corpus.Add("provider_control_create_fuzz", "aliases",
             nlohmann::json{{"scenario_text", aliases}}.dump());
  corpus.Add("provider_control_create_fuzz", "deep",
             R"({"scenario":)" + std::string(100, '[') + std::string(100, ']') + "}");
  constexpr std::string_view kBody =
      R"({"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]})";
  auto catalogue = scenario::LoadBuiltinCatalog();
  if (!catalogue) return;
  for (const scenario::Scenario& scenario : *catalogue) {
    const std::string target = fmt::format("/s/{}{}", scenario.name,
                                           provider::WriterFor(scenario.dialect).endpoint_path());
    const std::string plain = fmt::format(
        "POST {} HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAuthorization: Bearer sk-test-0123456789\r\n"
        "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{}",
        target, kBody.size(), kBody);
    corpus.Add("provider_request_fuzz", scenario.name, plain);
    corpus.Add("provider_request_fuzz", scenario.name + "-chunked",
               fmt::format("POST {} HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n"
                           "\r\n{:x}\r\n{}\r\n0\r\nx-trailer: 1\r\n\r\n{}",
                           target, kBody.size(), kBody, plain));
  }
  const std::string create =
      nlohmann::json{{"scenario_text", scenario::EmbeddedCatalogFiles().front().content}}.dump();
  const std::vector<std::pair<std::string_view, std::string>> control = {
      {"health", "GET /_faultline/health HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n"},
      {"list", "GET /_faultline/sessions HTTP/1.1\r\nHost: faultline.test\r\n\r\n"},
      {"journal", fmt::format("GET /_faultline/sessions/{}/journal?since=0 HTTP/1.1\r\nHost: "
                              "localhost:8080\r\nOrigin: http://localhost:8080\r\n\r\n",
                              catalogue->front().name)},
      {"create", fmt::format("POST /_faultline/sessions HTTP/1.1\r\nHost: [::1]:8080\r\n"
                             "Content-Length: {}\r\n\r\n{}",
                             create.size(), create)},
      {"gzip",
       "POST /s/x/v1/chat/completions HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n"},
      {"trailers", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nx: " +
                       std::string(5000, 'a') + "\r\n\r\n"}};
  for (const auto& [name, bytes] : control) corpus.Add("provider_request_fuzz", name, bytes);
}

// The runner's target: the reference client's own protocol lines for every catalogue scenario
// (what a correct adapter writes), and the same with the terminal line cut short.
void AddAdapterLines(Corpus& corpus) {
  auto catalogue = scenario::LoadBuiltinCatalog();
  if (!catalogue) return;
  for (const scenario::Scenario& scenario : *catalogue) {
    auto trace = harness::RunVirtual(scenario, harness::VirtualRunOptions{});
    if (!trace) continue;
    std::string lines;
    for (const harness::ClientRecord& record : trace->client) {
      lines += harness::EventToJson(record.event).dump() + "\n";
    }
    corpus.Add("harness_adapter_lines_fuzz", scenario.name, lines);
    corpus.Add("harness_adapter_lines_fuzz", scenario.name + "-torn",
               lines.substr(0, lines.size() - std::min<std::size_t>(lines.size(), 15)));
  }
  // Issue 30: an unknown field nested deep in a terminal line, and a deep policy in a hello,
  // at the depth limit and one past it.
  for (int depth : {63, 64, 65, 3000}) {
    const std::string deep = std::string(depth, '[') + std::string(depth, ']');
    corpus.Add("harness_adapter_lines_fuzz", "deep-field-" + std::to_string(depth),
               R"({"type":"response/committed","text":"x","zz":)" + deep + "}\n");
    corpus.Add(
        "harness_adapter_lines_fuzz", "deep-policy-" + std::to_string(depth),
        R"({"type":"adapter/hello","name":"d","version":"1","policy":{"x":)" + deep + "}}\n");
  }
}

// The fleet target: the shipped fleet experiments (the target's tight bounds keep a run small), a
// fleet section using every key, and issue 30's hostile files and sweeps, each after a "%%" line.
void AddFleetSeeds(Corpus& corpus) {
  const fs::path folder = fs::path(FAULTLINE_SOURCE_DIR) / "scenarios" / "fleet";
  for (const fs::directory_entry& entry : fs::directory_iterator(folder)) {
    std::ifstream in(entry.path());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    corpus.Add("fleet_spec_fuzz", entry.path().filename().string(), text);
  }
  const std::string head =
      "faultline: 1\nname: fleet/seed\ndescription: d\ndialect: openai-chat\nfleet:\n";
  const std::string every = head + R"(  clients: 50
  horizon: 3s
  drain: 2s
  bucket: 500ms
  seed: 3
  arrivals: {process: poisson, rate: [{at: 0s, rate: 5}, {at: 1s, rate: 20}]}
  provider:
    concurrency: 2
    rate: 10
    burst: 2
    queue: 5
    service: {distribution: lognormal, mean: 50ms, sigma: 0.5}
    overload: {status: 503, retry_after: 1s}
    brownouts: [{from: 1s, for: 1s, capacity: 0.3}]
  timeout: 200ms
  tokens_per_call: 10
  bytes_per_call: 100
  policies: [naive, aws-standard]
)";
  corpus.Add("fleet_spec_fuzz", "every-key", every);
  corpus.Add("fleet_spec_fuzz", "closed",
             head +
                 "  clients: 5\n  horizon: 2s\n  arrivals: {process: closed, think: 100ms}\n"
                 "  policies: [openai-node]\n");
  corpus.Add("fleet_spec_fuzz", "huge-series",
             head + "  horizon: 1000000s\n  bucket: 1ms\n  policies: [naive]\n");
  corpus.Add("fleet_spec_fuzz", "huge-horizon",
             head + "  horizon: 9000000000000s\n  policies: [naive]\n");
  corpus.Add("fleet_spec_fuzz", "storm",
             head +
                 "  clients: 1000000\n  horizon: 100000s\n  arrivals: {rate: 10000000}\n"
                 "  policies: [naive]\n");
  for (const std::string_view sweep :
       {"horizon_s=-10..-10", "horizon_s=1e9..1e9", "arrivals.rate=1e12..1e12", "clients=-5..-5",
        "provider.service_ms=-5..-5", "timeout_s=-5..-5", "brownout.capacity=-1..-1",
        "clients=1..1000000:1", "provider.concurrency=1..3", "policy.max_attempts=1..4",
        "policy.backoff.base_ms=10..30:10", "policy.a~2=1..1"}) {
    corpus.Add("fleet_spec_fuzz", fmt::format("sweep-{}", sweep),
               fmt::format("{}\n%%\n{}", every, sweep));
  }
}

// The cassette importers' targets: the HAR and aimock files the tests check in
// (cassette_import/tests/data/), and each with the hand-made turns of the import's rules (base64,
// an aborted entry, a body left out or truncated, a fixture of every kind).
void AddImportSeeds(Corpus& corpus) {
  const fs::path data = fs::path(FAULTLINE_SOURCE_DIR) / "cassette_import" / "tests" / "data";
  const auto read = [](const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  const std::string har = read(data / "devtools-session.har");
  corpus.Add("cassette_har_import_fuzz", "devtools-session", har);
  const auto entry = [](std::string_view response) {
    return fmt::format(
        R"({{"log":{{"entries":[{{"request":{{"method":"POST","url":"http://h/v1/messages",)"
        R"("headers":[{{"name":":path","value":"/"}}]}},"response":{},"timings":{{"wait":1,)"
        R"("receive":-1}}}}]}}}})",
        response);
  };
  const std::vector<std::pair<std::string_view, std::string>> hars = {
      {"base64",
       entry(
           R"({"status":200,"content":{"encoding":"base64","text":"ZXZlbnQ6IHgKZGF0YTogMQoK","size":18},)"
           R"("headers":[{"name":"content-type","value":"text/event-stream"}]})")},
      {"aborted", entry(R"({"status":0,"content":{"size":0}})")},
      {"no-text", entry(R"({"status":200,"content":{"size":10}})")},
      {"truncated", entry(R"({"status":200,"content":{"size":10,"text":"ab"}})")},
      {"gzip", entry(R"({"status":200,"content":{"encoding":"gzip","text":"ab"}})")}};
  for (const auto& [name, text] : hars) corpus.Add("cassette_har_import_fuzz", name, text);
  corpus.Add("cassette_aimock_import_fuzz", "fixtures", read(data / "aimock-fixtures.json"));
  corpus.Add("cassette_aimock_import_fuzz", "aimock-1.43.0",
             read(data / "aimock-1.43.0" / "fixtures.json"));
  corpus.Add("cassette_aimock_import_fuzz", "kinds",
             R"({"fixtures":[{"response":{"content":{"a":[1,2.5]}},"latency":3},)"
             R"({"response":{"toolCalls":[{"name":"f","arguments":"{\"x\":1"}]},)"
             R"("streamingProfile":{"ttft":5,"tps":0}},{"response":{"error":{"message":"m"}}},)"
             R"({"response":{"content":"\ud83d\udc4b","finishReason":"length"},"chunkSize":1}]})");
}

}  // namespace
}  // namespace faultline::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: faultline_fuzz_corpus ROOT\n");
    return 2;
  }
  faultline::fuzz::Corpus corpus{std::filesystem::path(argv[1])};
  faultline::fuzz::AddCatalogue(corpus);
  faultline::fuzz::AddFixtures(corpus);
  faultline::fuzz::AddRetryHints(corpus);
  faultline::fuzz::AddRetryLogs(corpus);
  faultline::fuzz::AddServerSeeds(corpus);
  faultline::fuzz::AddAdapterLines(corpus);
  faultline::fuzz::AddFleetSeeds(corpus);
  faultline::fuzz::AddImportSeeds(corpus);
  std::printf("faultline_fuzz_corpus: %d seeds in %s\n", corpus.written(), argv[1]);
  return corpus.written() > 0 ? 0 : 1;
}
