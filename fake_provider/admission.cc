#include "fake_provider/admission.h"

#include <fmt/format.h>

#include <charconv>
#include <string>
#include <utility>
#include <vector>

namespace faultline::provider {
namespace {

constexpr std::string_view kCallLabel = "/call/";
constexpr std::size_t kMaxCallDigits = 6;

// Strips a trailing "/call/<n>" from a session id and returns n; -1 (and `id` untouched) when
// there is none.
int TakeCallLabel(std::string_view& id) {
  const std::size_t label = id.rfind(kCallLabel);
  if (label == std::string_view::npos || label == 0) return -1;
  const std::string_view digits = id.substr(label + kCallLabel.size());
  int call = 0;
  if (digits.empty() || digits.size() > kMaxCallDigits ||
      std::from_chars(digits.data(), digits.data() + digits.size(), call).ptr !=
          digits.data() + digits.size()) {
    return -1;
  }
  id = id.substr(0, label);
  return call;
}

// Where the first of kApiRootSegments starts in `target` at `from` or later (npos: none). One
// pass over the slashes rather than a search per segment: every request's target comes here.
std::size_t FindApiRoot(std::string_view target, std::size_t from) {
  for (std::size_t at = target.find('/', from); at != std::string_view::npos;
       at = target.find('/', at + 1)) {
    const std::string_view rest = target.substr(at);
    for (std::string_view segment : kApiRootSegments) {
      if (rest.starts_with(segment)) return at;
    }
  }
  return std::string_view::npos;
}

}  // namespace

Destination ResolveTarget(std::string_view target) {
  if (target.starts_with(kControlPrefix) &&
      (target.size() == kControlPrefix.size() || target[kControlPrefix.size()] == '/' ||
       target[kControlPrefix.size()] == '?')) {
    return Destination{Destination::Kind::kControl, {}, {}};
  }
  constexpr std::string_view kSessionPrefix = "/s/";
  if (!target.starts_with(kSessionPrefix)) return Destination{};
  // The session id ends where the API's path starts, whichever root segment comes first.
  const std::size_t v1 = FindApiRoot(target, kSessionPrefix.size() - 1);
  if (v1 == std::string_view::npos || v1 <= kSessionPrefix.size()) return Destination{};
  std::string_view path = target.substr(v1);
  path = path.substr(0, path.find('?'));
  std::string_view id = target.substr(kSessionPrefix.size(), v1 - kSessionPrefix.size());
  const int call = TakeCallLabel(id);
  return Destination{Destination::Kind::kSession, PercentDecode(id), path, call};
}

std::string CallBaseUrl(std::string_view session_base_url, int call, int calls) {
  if (calls <= 1) return std::string(session_base_url);
  return fmt::format("{}{}{}", session_base_url, kCallLabel, call);
}

std::string PercentDecode(std::string_view text) {
  // Session ids are rarely escaped, and every request's target is decoded.
  if (text.find('%') == std::string_view::npos) return std::string(text);
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    unsigned value = 0;
    if (text[i] == '%' && i + 2 < text.size() &&
        std::from_chars(text.data() + i + 1, text.data() + i + 3, value, 16).ptr ==
            text.data() + i + 3) {
      out += static_cast<char>(value);
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

namespace {

JournalEntry JournalEntryWith(const HttpRequest& request, std::vector<scenario::Header> headers,
                              std::vector<scenario::Header> trailers, std::string body,
                              bool keep_secrets) {
  JournalEntry entry;
  entry.method = request.method;
  entry.target = request.target;
  entry.headers = std::move(headers);
  entry.trailers = std::move(trailers);
  entry.body = std::move(body);
  entry.secrets_in_clear = keep_secrets;
  if (!keep_secrets) {
    RedactSecretHeaders(entry.headers);
    RedactSecretHeaders(entry.trailers);
  }
  return entry;
}

}  // namespace

JournalEntry JournalEntryFor(const HttpRequest& request, bool keep_secrets) {
  return JournalEntryWith(request, request.headers, request.trailers, request.body, keep_secrets);
}

JournalEntry JournalEntryFrom(HttpRequest& request, bool keep_secrets) {
  return JournalEntryWith(request, std::move(request.headers), std::move(request.trailers),
                          std::move(request.body), keep_secrets);
}

Admitted Admit(ProviderSession& session, Journal& journal, const AdmissionInput& input) {
  Admitted admitted;
  const std::string_view target = input.request.target;
  const std::size_t question = target.find('?');
  const std::string_view query =
      question == std::string_view::npos ? std::string_view() : target.substr(question + 1);
  admitted.plan =
      session.Respond({input.request.method, input.path, input.request.body, query}, input.now);
  JournalEntry entry = JournalEntryFrom(input.request, input.keep_secrets);
  entry.connection = input.connection;
  entry.arrived = input.now - input.session_start;
  entry.attempt = admitted.plan.attempt;
  entry.route = session.scenario().route_id;
  entry.call = ResolveTarget(input.request.target).call;
  entry.status = admitted.plan.status;
  entry.plan_summary = admitted.plan.summary;
  entry.truth = std::move(admitted.plan.truth);  // judges read it from the journal only
  admitted.entry_index = journal.Begin(std::move(entry));
  return admitted;
}

}  // namespace faultline::provider
