#include "reference_impl/failure.h"

#include <array>
#include <utility>

#include "reference_impl/name_table.h"

namespace faultline::ref {
namespace {

constexpr NameTable<FailureClass, 15> kClassNames{{
    {FailureClass::kAuth, "auth"},
    {FailureClass::kRateLimit, "rate-limit"},
    {FailureClass::kQuota, "quota"},
    {FailureClass::kInvalidRequest, "invalid-request"},
    {FailureClass::kContextOverflow, "context-overflow"},
    {FailureClass::kTimeout, "timeout"},
    {FailureClass::kTransport, "transport"},
    {FailureClass::kProviderOverloaded, "provider-overloaded"},
    {FailureClass::kProviderUnavailable, "provider-unavailable"},
    {FailureClass::kProtocol, "protocol"},
    {FailureClass::kTruncated, "truncated"},
    {FailureClass::kEmpty, "empty"},
    {FailureClass::kSafety, "safety"},
    {FailureClass::kAborted, "aborted"},
    {FailureClass::kUnknown, "unknown"},
}};

constexpr std::array<std::pair<FailureCode, FailureClass>, 16> kCodeClasses{{
    {FailureCode::kRateLimit, FailureClass::kRateLimit},
    {FailureCode::kQuota, FailureClass::kQuota},
    {FailureCode::kServer, FailureClass::kProviderUnavailable},
    {FailureCode::kOverloaded, FailureClass::kProviderOverloaded},
    {FailureCode::kUnavailable, FailureClass::kProviderUnavailable},
    {FailureCode::kTimeout, FailureClass::kTimeout},
    {FailureCode::kTransport, FailureClass::kTransport},
    {FailureCode::kStreamTruncated, FailureClass::kTruncated},
    {FailureCode::kEmptyResponse, FailureClass::kEmpty},
    {FailureCode::kMalformedResponse, FailureClass::kProtocol},
    {FailureCode::kContextWindowExceeded, FailureClass::kContextOverflow},
    {FailureCode::kInvalidRequest, FailureClass::kInvalidRequest},
    {FailureCode::kAuth, FailureClass::kAuth},
    {FailureCode::kContentFilter, FailureClass::kSafety},
    {FailureCode::kAborted, FailureClass::kAborted},
    {FailureCode::kUnknown, FailureClass::kUnknown},
}};

constexpr NameTable<FailureCode, 16> kCodeNames{{
    {FailureCode::kRateLimit, "RATE_LIMIT"},
    {FailureCode::kQuota, "QUOTA"},
    {FailureCode::kServer, "SERVER"},
    {FailureCode::kOverloaded, "OVERLOADED"},
    {FailureCode::kUnavailable, "UNAVAILABLE"},
    {FailureCode::kTimeout, "TIMEOUT"},
    {FailureCode::kTransport, "TRANSPORT"},
    {FailureCode::kStreamTruncated, "STREAM_TRUNCATED"},
    {FailureCode::kEmptyResponse, "EMPTY_RESPONSE"},
    {FailureCode::kMalformedResponse, "MALFORMED_RESPONSE"},
    {FailureCode::kContextWindowExceeded, "CONTEXT_WINDOW_EXCEEDED"},
    {FailureCode::kInvalidRequest, "INVALID_REQUEST"},
    {FailureCode::kAuth, "AUTH"},
    {FailureCode::kContentFilter, "CONTENT_FILTER"},
    {FailureCode::kAborted, "ABORTED"},
    {FailureCode::kUnknown, "UNKNOWN"},
}};

}  // namespace

std::string_view ToString(FailureClass value) { return NameOf(kClassNames, value, "unknown"); }
std::optional<FailureClass> ParseFailureClass(std::string_view text) {
  return ValueOf(kClassNames, text);
}
std::string_view ToString(FailureCode value) { return NameOf(kCodeNames, value, "unknown"); }
std::optional<FailureCode> ParseFailureCode(std::string_view text) {
  return ValueOf(kCodeNames, text);
}
FailureClass ClassOf(FailureCode code) {
  for (const auto& [entry, failure_class] : kCodeClasses) {
    if (entry == code) return failure_class;
  }
  return FailureClass::kUnknown;
}

std::string_view ToString(Phase value) {
  switch (value) {
    case Phase::kConnect:
      return "connect";
    case Phase::kResponseHeaders:
      return "response-headers";
    case Phase::kStream:
      return "stream";
    case Phase::kFinish:
      return "finish";
  }
  return "connect";
}

std::string_view ToString(PartialOutput value) {
  switch (value) {
    case PartialOutput::kNone:
      return "none";
    case PartialOutput::kUncommitted:
      return "uncommitted";
    case PartialOutput::kCommitted:
      return "committed";
  }
  return "none";
}

}  // namespace faultline::ref
