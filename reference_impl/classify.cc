#include "reference_impl/classify.h"

#include <array>
#include <string>
#include <utility>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "reference_impl/ascii_text.h"
#include "reference_impl/stream_error_class.h"

namespace faultline::ref {
namespace {

using Json = nlohmann::json;
using ascii::Contains;
using ascii::Lowercase;
using ascii::Trim;

// The provider's error fields, whatever the envelope ({"error":{...}}, {"type":"error",
// "error":{...}}, {"error":"text"}, {"message":...} or not JSON at all).
struct BodyError {
  std::string type;
  std::string code;
  std::string message;  // the provider's message, or the raw body when it is not JSON
  // A google.rpc.RetryInfo detail: the provider says when the window reopens, so a quota
  // wording beside it names a per-minute window (Gemini's free tier), not an exhausted quota.
  bool retry_info = false;
  // AWS's "__type" ("com.amazon.coral.availability#ThrottlingException" -> ThrottlingException),
  // the type when neither `type` nor the x-amzn-ErrorType header names one.
  std::string aws_type = {};
};

bool HasRetryInfo(const Json& error) {
  const auto details = error.find("details");
  if (details == error.end() || !details->is_array()) return false;
  for (const Json& detail : *details) {
    if (!detail.is_object()) continue;
    const auto type = detail.find("@type");
    if (type != detail.end() && type->is_string() &&
        type->get_ref<const std::string&>().ends_with("google.rpc.RetryInfo")) {
      return true;
    }
  }
  return false;
}

std::string FieldText(const Json& object, std::string_view key) {
  const auto found = object.find(std::string(key));
  if (found == object.end() || found->is_null()) return {};
  if (found->is_string()) return found->get<std::string>();
  return found->dump();  // Cloudflare's numeric codes, for example
}

BodyError ReadBodyError(std::string_view body) {
  const Json json = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return {{}, {}, std::string(body)};
  const auto error = json.find("error");
  if (error != json.end() && error->is_object()) {
    // Google's google.rpc.Status has no `type`: its `status` name says the kind.
    std::string type = FieldText(*error, "type");
    if (type.empty()) type = FieldText(*error, "status");
    return {std::move(type), FieldText(*error, "code"), FieldText(*error, "message"),
            HasRetryInfo(*error)};
  }
  if (error != json.end() && error->is_string()) return {{}, {}, error->get<std::string>()};
  std::string message = FieldText(json, "message");
  if (message.empty()) message = FieldText(json, "Message");  // some AWS services' spelling
  if (message.empty()) message = FieldText(json, "detail");
  std::string aws_type = FieldText(json, "__type");
  aws_type.erase(0, aws_type.rfind('#') + 1);  // npos + 1 == 0: nothing to drop
  return {FieldText(json, "type"), FieldText(json, "code"), std::move(message), false,
          std::move(aws_type)};
}

// The type AWS names in x-amzn-ErrorType ("ThrottlingException:http://internal..."), else in the
// body's "__type"; "" when neither does.
std::string AwsErrorType(const HttpHeaders& headers, const BodyError& error) {
  if (auto value = headers.Find("x-amzn-errortype")) {
    return std::string(value->substr(0, value->find(':')));
  }
  return error.aws_type;
}

// What the shared provider-error table says about the body's type/code, if it knows them.
std::optional<FailureCode> TableCode(Dialect dialect, const BodyError& error) {
  auto known = ClassifyProviderError(dialect, error.type, error.code);
  if (!known) return std::nullopt;
  return known->code;
}

bool IsContextWindow(const BodyError& error, std::optional<FailureCode> table_code) {
  return table_code == FailureCode::kContextWindowExceeded || SaysContextOverflow(error.message);
}

bool IsQuota(const BodyError& error, std::optional<FailureCode> table_code) {
  if (table_code == FailureCode::kQuota) return true;
  return SaysQuotaExhausted(error.message) && !error.retry_info;
}

struct StatusRow {
  int status;
  FailureCode code;
  FailureClass failure_class;
  bool retryable;
};

constexpr std::array<StatusRow, 15> kStatusTable{{
    {400, FailureCode::kInvalidRequest, FailureClass::kInvalidRequest, false},
    {401, FailureCode::kAuth, FailureClass::kAuth, false},
    {402, FailureCode::kQuota, FailureClass::kQuota, false},
    {403, FailureCode::kAuth, FailureClass::kAuth, false},
    {404, FailureCode::kInvalidRequest, FailureClass::kInvalidRequest, false},
    {408, FailureCode::kTimeout, FailureClass::kTimeout, true},
    {409, FailureCode::kInvalidRequest, FailureClass::kInvalidRequest, true},
    {413, FailureCode::kInvalidRequest, FailureClass::kInvalidRequest, false},
    {422, FailureCode::kInvalidRequest, FailureClass::kInvalidRequest, false},
    {429, FailureCode::kRateLimit, FailureClass::kRateLimit, true},
    {500, FailureCode::kServer, FailureClass::kProviderUnavailable, true},
    {502, FailureCode::kServer, FailureClass::kProviderUnavailable, true},
    {503, FailureCode::kUnavailable, FailureClass::kProviderUnavailable, true},
    {504, FailureCode::kServer, FailureClass::kProviderUnavailable, true},
    {529, FailureCode::kOverloaded, FailureClass::kProviderOverloaded, true},
}};

StatusRow RowFor(int status) {
  for (const StatusRow& row : kStatusTable) {
    if (row.status == status) return row;
  }
  if (status >= 500 && status <= 599) {
    return {status, FailureCode::kServer, FailureClass::kProviderUnavailable, true};
  }
  if (status >= 400 && status <= 499) {
    return {status, FailureCode::kInvalidRequest, FailureClass::kInvalidRequest, false};
  }
  return {status, FailureCode::kMalformedResponse, FailureClass::kProtocol, false};
}

// The body refines the status: overloaded_error anywhere, context windows and quotas on the
// statuses that carry them.
StatusRow Refine(StatusRow row, const BodyError& error, Dialect dialect) {
  const std::optional<FailureCode> table_code = TableCode(dialect, error);
  // OpenAI's per-model overload is a 503 whose type is only "server_error"; its wording ("That
  // model is currently overloaded with other requests") is what says it. The generic 503 ("The
  // server is overloaded or not ready yet.") stays UNAVAILABLE: it also covers deploys.
  const bool overloaded_wording = row.status >= 500 && SaysModelOverloaded(error.message);
  if (table_code == FailureCode::kOverloaded || overloaded_wording) {
    return {row.status, FailureCode::kOverloaded, FailureClass::kProviderOverloaded, true};
  }
  const int status = row.status;
  if ((status == 400 || status == 413 || status == 422) && IsContextWindow(error, table_code)) {
    return {status, FailureCode::kContextWindowExceeded, FailureClass::kContextOverflow, false};
  }
  if ((status == 400 || status == 429) && IsQuota(error, table_code)) {
    return {status, FailureCode::kQuota, FailureClass::kQuota, false};
  }
  return row;
}

std::optional<bool> ShouldRetryHeader(const HttpHeaders& headers) {
  auto value = headers.Find("x-should-retry");
  if (!value) return std::nullopt;
  const std::string lower = Lowercase(Trim(*value));
  if (lower == "true") return true;
  if (lower == "false") return false;
  return std::nullopt;  // anything else carries no instruction
}

std::string Summary(int status, const BodyError& error) {
  constexpr std::size_t kMaxMessage = 300;
  std::string message = error.message;
  for (char& c : message) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  if (message.size() > kMaxMessage) message = message.substr(0, kMaxMessage) + "...";
  if (message.empty()) return fmt::format("HTTP {}", status);
  return fmt::format("HTTP {}: {}", status, message);
}

std::string_view TransportText(TransportKind kind) {
  switch (kind) {
    case TransportKind::kRefused:
      return "connection refused";
    case TransportKind::kReset:
      return "connection reset by peer";
    case TransportKind::kClosed:
      return "connection closed before the response was complete";
    case TransportKind::kResolve:
      return "name resolution failed";
    case TransportKind::kOther:
      break;
  }
  return "transport error";
}

}  // namespace

ClassifiedResponse ClassifyHttpError(const HttpErrorResponse& response,
                                     std::chrono::system_clock::time_point now,
                                     bool honor_should_retry, RetryAfterParse parse) {
  BodyError error = ReadBodyError(response.body);
  if (error.type.empty()) error.type = AwsErrorType(response.headers, error);
  const StatusRow row = Refine(RowFor(response.status), error, response.dialect);
  ClassifiedResponse result;
  Failure& failure = result.failure;
  failure.code = row.code;
  failure.failure_class = row.failure_class;
  failure.phase = Phase::kResponseHeaders;
  if (honor_should_retry) failure.should_retry = ShouldRetryHeader(response.headers);
  failure.retryable = failure.should_retry.value_or(row.retryable);
  failure.partial_output = PartialOutput::kNone;
  failure.status = response.status;
  failure.request_id = RequestIdOf(response.headers);
  failure.message = Summary(response.status, error);
  result.hints = FindRetryHints({response.headers, response.body, response.status, now, parse});
  if (!result.hints.empty()) result.hint = result.hints.front();
  if (result.hint) failure.retry_after = result.hint->delay;
  return result;
}

Failure TransportFailure(TransportKind kind, Phase phase, PartialOutput partial_output,
                         std::string_view detail) {
  Failure failure;
  failure.code = FailureCode::kTransport;
  failure.failure_class = FailureClass::kTransport;
  failure.phase = phase;
  failure.retryable = true;
  failure.partial_output = partial_output;
  failure.message = detail.empty() ? std::string(TransportText(kind))
                                   : fmt::format("{}: {}", TransportText(kind), detail);
  return failure;
}

Failure TimeoutFailure(TimeoutKind kind, std::chrono::milliseconds limit,
                       PartialOutput partial_output, Phase phase) {
  Failure failure;
  failure.code = FailureCode::kTimeout;
  failure.failure_class = FailureClass::kTimeout;
  failure.partial_output = partial_output;
  failure.retryable = kind != TimeoutKind::kTotal;
  switch (kind) {
    case TimeoutKind::kConnect:
      failure.phase = Phase::kConnect;
      failure.message = fmt::format("connect timed out after {} ms", limit.count());
      break;
    case TimeoutKind::kResponseHeaders:
      failure.phase = Phase::kResponseHeaders;
      failure.message = fmt::format("no response headers within {} ms", limit.count());
      break;
    case TimeoutKind::kIdle:
      failure.phase = Phase::kStream;
      failure.message = fmt::format("stream idle for {} ms", limit.count());
      break;
    case TimeoutKind::kTotal:
      failure.phase = phase;
      failure.message = fmt::format("total deadline of {} ms reached", limit.count());
      break;
  }
  return failure;
}

namespace {

// A failure that ends the call whatever the policy says: no status, not retryable.
Failure CallEnding(FailureCode code, FailureClass failure_class, Phase phase,
                   PartialOutput partial_output, std::string message) {
  Failure failure;
  failure.code = code;
  failure.failure_class = failure_class;
  failure.phase = phase;
  failure.retryable = false;
  failure.partial_output = partial_output;
  failure.message = std::move(message);
  return failure;
}

}  // namespace

Failure AbortedFailure(Phase phase, PartialOutput partial_output) {
  return CallEnding(FailureCode::kAborted, FailureClass::kAborted, phase, partial_output,
                    fmt::format("cancelled by the caller during {}", ToString(phase)));
}

Failure InternalFailure(std::string_view what, Phase phase, PartialOutput partial_output) {
  return CallEnding(
      FailureCode::kUnknown, FailureClass::kUnknown, phase, partial_output,
      fmt::format("internal error of the client during {}: {}", ToString(phase), what));
}

}  // namespace faultline::ref
