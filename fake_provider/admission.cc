#include "fake_provider/admission.h"

#include <charconv>
#include <utility>

namespace faultline::provider {

Destination ResolveTarget(std::string_view target) {
  if (target.starts_with(kControlPrefix) &&
      (target.size() == kControlPrefix.size() || target[kControlPrefix.size()] == '/' ||
       target[kControlPrefix.size()] == '?')) {
    return Destination{Destination::Kind::kControl, {}, {}};
  }
  constexpr std::string_view kSessionPrefix = "/s/";
  if (!target.starts_with(kSessionPrefix)) return Destination{};
  const std::size_t v1 = target.find("/v1/", kSessionPrefix.size() - 1);
  if (v1 == std::string_view::npos || v1 <= kSessionPrefix.size()) return Destination{};
  std::string_view path = target.substr(v1);
  path = path.substr(0, path.find('?'));
  return Destination{
      Destination::Kind::kSession,
      PercentDecode(target.substr(kSessionPrefix.size(), v1 - kSessionPrefix.size())), path};
}

std::string PercentDecode(std::string_view text) {
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

JournalEntry JournalEntryFor(const HttpRequest& request, bool keep_secrets) {
  JournalEntry entry;
  entry.method = request.method;
  entry.target = request.target;
  entry.headers = request.headers;
  entry.trailers = request.trailers;
  entry.body = request.body;
  if (!keep_secrets) {
    RedactSecretHeaders(entry.headers);
    RedactSecretHeaders(entry.trailers);
  }
  return entry;
}

Admitted Admit(ProviderSession& session, Journal& journal, const AdmissionInput& input) {
  Admitted admitted;
  admitted.plan =
      session.Respond({input.request.method, input.path, input.request.body}, input.now);
  JournalEntry entry = JournalEntryFor(input.request, input.keep_secrets);
  entry.connection = input.connection;
  entry.arrived = input.now - input.session_start;
  entry.attempt = admitted.plan.attempt;
  entry.route = session.scenario().route_id;
  entry.status = admitted.plan.status;
  entry.plan_summary = admitted.plan.summary;
  entry.truth = admitted.plan.truth;
  admitted.entry_index = journal.Begin(std::move(entry));
  return admitted;
}

}  // namespace faultline::provider
