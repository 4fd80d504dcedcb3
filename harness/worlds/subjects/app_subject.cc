#include "harness/worlds/subjects/app_subject.h"

#include <fmt/format.h>

#include "harness/worlds/request_body.h"
#include "reference_impl/call.h"

namespace faultline::harness {
namespace {

// `existing` (a NO_PROXY value, maybe empty) with loopback added.
std::string WithLoopback(std::string_view existing) {
  constexpr std::string_view kLoopback = "127.0.0.1,localhost,::1";
  if (existing.empty()) return std::string(kLoopback);
  return fmt::format("{},{}", existing, kLoopback);
}

// The dialect's endpoint under `base_url` ("<base>/v1/chat/completions", ...) and the body to
// send there (the request as it is, but for Gemini and Bedrock: ref::ToWire).
ref::WireRequest Wire(const AppCall& call) {
  const auto dialect = ref::ParseDialect(call.dialect);
  if (!dialect) return {"/", call.request};
  return ref::ToWire(*dialect, "", call.request);
}

}  // namespace

std::vector<std::string> AppEnvironment(const AppCall& call, std::string_view no_proxy) {
  const std::string key(kTestApiKey);
  const std::string openai = call.base_url + "/v1";  // the OpenAI SDKs' base URL has the /v1
  const std::string bypass = WithLoopback(no_proxy);
  const ref::WireRequest wire = Wire(call);
  return {
      // The OpenAI SDKs (Python >= 1, Node >= 4, and the clients built on them); the older name
      // is what openai-python < 1 and LangChain's older integrations read.
      "OPENAI_BASE_URL=" + openai,
      "OPENAI_API_BASE=" + openai,
      "OPENAI_API_KEY=" + key,
      // The Anthropic SDKs (Python, TypeScript) take the base URL without /v1.
      "ANTHROPIC_BASE_URL=" + call.base_url,
      "ANTHROPIC_API_KEY=" + key,
      // Google's Gen AI SDKs: the key under both of its names, the base URL without /v1beta.
      "GOOGLE_GEMINI_BASE_URL=" + call.base_url,
      "GEMINI_API_KEY=" + key,
      "GOOGLE_API_KEY=" + key,
      // Ollama's clients (ollama-python, ollama-js, its CLI) take the host without a path.
      "OLLAMA_HOST=" + call.base_url,
      // The AWS SDKs (boto3, the JavaScript SDK v3, and the clients built on them) take Bedrock
      // Runtime's endpoint without a path, a region, and credentials: a Bedrock API key (a
      // bearer token) or access keys, which faultline accepts without checking the signature.
      // No instance metadata lookups: they would only wait for a host that is not there.
      "AWS_ENDPOINT_URL_BEDROCK_RUNTIME=" + call.base_url,
      "AWS_REGION=us-east-1",
      "AWS_DEFAULT_REGION=us-east-1",
      "AWS_BEARER_TOKEN_BEDROCK=" + key,
      "AWS_ACCESS_KEY_ID=AKIAFAULTLINETEST000",
      "AWS_SECRET_ACCESS_KEY=" + key,
      "AWS_EC2_METADATA_DISABLED=true",
      // For scripts: where to send what.
      "FAULTLINE_BASE_URL=" + call.base_url,
      "FAULTLINE_ENDPOINT=" + call.base_url + wire.path,
      "FAULTLINE_DIALECT=" + call.dialect,
      "FAULTLINE_MODEL=" + call.model,
      "FAULTLINE_REQUEST=" + wire.body,
      "FAULTLINE_CALL_LINE=" + call.call_line,
      "FAULTLINE_SCENARIO=" + call.scenario,
      fmt::format("FAULTLINE_CALL={}", call.call),
      fmt::format("FAULTLINE_CALLS={}", call.calls),
      "NO_PROXY=" + bypass,
      "no_proxy=" + bypass,
  };
}

std::string AppEnding(const AdapterRun& run) {
  if (run.timed_out) return "was stopped at the runner's timeout";
  if (run.interrupted) return "was stopped by a stop request";
  if (run.signal) return fmt::format("was killed by signal {}", *run.signal);
  return fmt::format("exited with status {}", run.exit_status);
}

ClientEvent AppHello(std::optional<nlohmann::json> policy) {
  ClientEvent hello;
  hello.kind = EventKind::kHello;
  hello.name = std::string(kAppName);
  hello.version = "exec";
  hello.policy = std::move(policy);
  return hello;
}

ClientEvent AppEnded(bool committed) {
  ClientEvent event;
  event.kind = committed ? EventKind::kCommitted : EventKind::kFailed;
  return event;
}

std::optional<ClientEvent> AppOutcome(const AdapterRun& run) {
  if (run.timed_out || run.interrupted || !run.overflow.empty()) return std::nullopt;
  ClientEvent event = AppEnded(run.exit_status == 0 && !run.signal);
  if (event.kind == EventKind::kFailed && run.cancel_sent) {
    // It ended on the caller's Ctrl-C: the cancel's own outcome (CANCEL-001 times it).
    event.failure =
        ReportedFailure{.code = "ABORTED",
                        .failure_class = "aborted",
                        .phase = "",
                        .retryable = false,
                        .partial_output = "none",
                        .message = "the app " + AppEnding(run) + " after the cancel's SIGINT",
                        .status = std::nullopt,
                        .retry_after_ms = std::nullopt,
                        .request_id = std::nullopt,
                        .route_id = ""};
  }
  // Otherwise the failure stays unclassified: an exit status says nothing of its class.
  return event;
}

std::optional<SubjectFault> AppFault(const AdapterRun& run, int call) {
  if (run.signal || (run.exit_status != 126 && run.exit_status != 127)) return std::nullopt;
  return SubjectFault{"cannot-start",
                      fmt::format("call {}: the command could not be started (exit status {})",
                                  call, run.exit_status),
                      run.exit_status, std::nullopt};
}

}  // namespace faultline::harness
