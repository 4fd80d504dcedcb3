// ProviderSession: attempts, chaos draws, the stateful rate limit and listener outages.
#include "fake_provider/provider_core.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "fake_provider/plan/plan_compiler.h"
#include "fake_provider/plan/plan_internal.h"
#include "scenarios/rate_window.h"
#include "scenarios/route_scenario.h"

namespace faultline::provider {
namespace {

std::uint64_t Mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::size_t SkipSpace(std::string_view text, std::size_t at) {
  while (at < text.size() && IsSpace(text[at])) ++at;
  return at;
}

// A table of the bytes in `stops`: every request's body is scanned for its stream flag, and a
// table lookup per byte skips the rest faster than comparing each byte with each stop.
constexpr std::array<bool, 256> StreamFlagStops(std::string_view stops) {
  std::array<bool, 256> table{};
  for (char c : stops) table[static_cast<unsigned char>(c)] = true;
  return table;
}
constexpr std::array<bool, 256> kStreamFlagStructure = StreamFlagStops("\"{}[]");
constexpr std::array<bool, 256> kStreamFlagStringEnd = StreamFlagStops("\"\\");

// The first index from `at` on whose byte is in `stops` (or the end).
std::size_t SkipToStop(std::string_view text, std::size_t at, const std::array<bool, 256>& stops) {
  while (at < text.size() && !stops[static_cast<unsigned char>(text[at])]) ++at;
  return at;
}

// The index just past the closing quote of the string that opens at `at` (or the end).
std::size_t SkipString(std::string_view text, std::size_t at) {
  for (std::size_t i = SkipToStop(text, at + 1, kStreamFlagStringEnd); i < text.size();
       i = SkipToStop(text, i, kStreamFlagStringEnd)) {
    if (text[i] == '"') return i + 1;
    i += 2;  // a backslash and the byte it escapes
  }
  return text.size();
}

std::string_view StripQuery(std::string_view path) {
  return path.substr(0, path.find_first_of("?#"));
}

// Output a request is charged for when its answer is a success with content.
int AnswerCost(const scenario::ResponseSpec& spec) {
  const bool content = spec.connection == scenario::ConnectionFault::kNone && spec.status >= 200 &&
                       spec.status < 300;
  return content ? plan_internal::OutputTokens(spec.content) : 0;
}

// The scripted answer for an attempt: its response entry, or the chaos draw.
const scenario::ResponseSpec& ChooseResponse(const scenario::Scenario& scenario,
                                             std::uint64_t session_seed, int attempt) {
  if (!scenario.chaos) return scenario::ResponseForAttempt(scenario, attempt);
  const scenario::Chaos& chaos = *scenario.chaos;
  const double draw = ChaosDraw(chaos.seed ^ session_seed, attempt);
  double cumulative = 0;
  for (const scenario::Chaos::Choice& choice : chaos.faults) {
    cumulative += choice.probability;
    if (draw < cumulative) return choice.response;
  }
  return chaos.otherwise;
}

// A route's health answers instead of its script: while it is down, and for a brownout's share
// of the attempts (drawn like chaos, from the seed and the attempt alone).
bool HealthFails(const scenario::Health& health, Duration since_start, std::uint64_t session_seed,
                 int attempt) {
  if (scenario::DownAt(health, since_start)) return true;
  return health.error_probability > 0 && ChaosDraw(health.seed ^ session_seed ^ 0x6865616c7468ULL,
                                                   attempt) < health.error_probability;
}

}  // namespace

double ChaosDraw(std::uint64_t seed, int attempt) {
  const std::uint64_t bits = Mix(Mix(seed) ^ static_cast<std::uint64_t>(attempt));
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

bool StreamRequested(DialectWriter::TargetKind kind, std::string_view body) {
  using Kind = DialectWriter::TargetKind;
  if (kind == Kind::kStream) return true;
  if (kind == Kind::kBodyDecides) return StreamFlag(body).value_or(false);
  if (kind == Kind::kBodyDecidesStreamByDefault) return StreamFlag(body).value_or(true);
  return false;
}

std::optional<bool> StreamFlag(std::string_view body) {
  std::optional<bool> flag;
  int depth = 0;
  std::size_t i = 0;
  while ((i = SkipToStop(body, i, kStreamFlagStructure)) < body.size()) {
    const char c = body[i];
    if (c == '"') {
      const std::size_t end = SkipString(body, i);
      const bool is_stream_key = depth == 1 && body.substr(i, end - i) == "\"stream\"";
      i = end;
      if (!is_stream_key) continue;
      const std::size_t colon = SkipSpace(body, i);
      if (colon >= body.size() || body[colon] != ':') continue;
      const std::size_t value = SkipSpace(body, colon + 1);
      const auto literal = [&](std::string_view word) {
        const std::size_t after = value + word.size();
        return body.substr(value, word.size()) == word &&
               (after >= body.size() || IsSpace(body[after]) || body[after] == ',' ||
                body[after] == '}');
      };
      if (literal("true")) {
        flag = true;
      } else if (literal("false")) {
        flag = false;
      } else {
        flag.reset();  // null or anything else: as if absent
      }
      i = value;
      continue;
    }
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') --depth;
    ++i;
  }
  return flag;
}

// The sliding window of accepted requests (the rule is the scenario format's).
struct ProviderSession::RateState {
  scenario::RateWindow window;
};

ProviderSession::ProviderSession(std::shared_ptr<const CompiledScenario> scenario,
                                 std::uint64_t seed, WallTime start)
    : compiled_(std::move(scenario)),
      seed_(seed),
      start_(start),
      outage_start_(start),
      rate_(std::make_unique<RateState>()) {}

ProviderSession::~ProviderSession() = default;
ProviderSession::ProviderSession(ProviderSession&&) noexcept = default;
ProviderSession& ProviderSession::operator=(ProviderSession&&) noexcept = default;

const scenario::Scenario& ProviderSession::scenario() const { return compiled_->scenario(); }

ResponsePlan ProviderSession::Respond(const RequestInfo& request, WallTime now) {
  const DialectWriter& writer = compiled_->writer();
  PlanRequest plan_request;
  plan_request.attempt = 0;
  plan_request.seed = seed_;
  plan_request.now = now;
  plan_request.input_tokens = EstimateTokens(request.body);
  const std::string_view path = StripQuery(request.path);
  const DialectWriter::TargetKind target = writer.ReadTarget(path, request.query);
  plan_request.stream = StreamRequested(target, request.body);
  if (target == DialectWriter::TargetKind::kNotServed) {
    return compiled_->ErrorPlan(
        404, scenario::ErrorKind::kNotFound,
        fmt::format("Unknown path '{}'. This fake provider ({}) serves POST {}", path,
                    scenario::ToString(writer.dialect()), writer.endpoint_help()),
        std::nullopt, plan_request);
  }
  if (request.method != "POST") {
    return compiled_->ErrorPlan(
        405, scenario::ErrorKind::kInvalidRequest,
        fmt::format("Method {} not allowed on {}: use POST", request.method, path), std::nullopt,
        plan_request);
  }
  const scenario::Scenario& scenario = compiled_->scenario();
  if (!scenario.routes.empty()) {
    return compiled_->ErrorPlan(
        404, scenario::ErrorKind::kNotFound,
        fmt::format("this scenario serves {} routes, each under its own base URL "
                    "(<session>/route/<route id>); send the request to one of them",
                    scenario.routes.size()),
        std::nullopt, plan_request);
  }
  plan_request.attempt = ++attempts_;
  if (scenario.health &&
      HealthFails(*scenario.health, ScriptedNow(now), seed_, plan_request.attempt)) {
    return compiled_->Plan(scenario.health->failure_response, plan_request);
  }
  const scenario::ResponseSpec& response = ChooseResponse(scenario, seed_, plan_request.attempt);
  if (scenario.rate_limit) {
    const int cost = plan_request.input_tokens + AnswerCost(response);
    if (auto wait = rate_->window.Admit(*scenario.rate_limit, now.time_since_epoch(), cost)) {
      return compiled_->ErrorPlan(429, scenario::ErrorKind::kRateLimit, {}, *wait, plan_request);
    }
  }
  return compiled_->Plan(response, plan_request);
}

Duration ProviderSession::ScriptedNow(WallTime now) const {
  return armed_ ? Duration{0} : std::chrono::duration_cast<Duration>(now - outage_start_);
}

bool ProviderSession::ListenerDown(WallTime now) const {
  const Duration t = ScriptedNow(now);
  for (const scenario::ListenerOutage& outage : compiled_->scenario().listener_outages) {
    if (t >= outage.from && t < outage.from + outage.length) return true;
  }
  return false;
}

std::optional<WallTime> ProviderSession::NextListenerChange(WallTime now) const {
  if (armed_) return std::nullopt;  // nothing changes before scripted time starts
  std::vector<WallTime> edges;
  for (const scenario::ListenerOutage& outage : compiled_->scenario().listener_outages) {
    if (outage.length.count() <= 0) continue;
    for (const WallTime edge :
         {outage_start_ + outage.from, outage_start_ + outage.from + outage.length}) {
      if (edge > now) edges.push_back(edge);
    }
  }
  std::sort(edges.begin(), edges.end());
  // Overlapping outages have edges where nothing changes; skip those.
  const bool down = ListenerDown(now);
  for (const WallTime edge : edges) {
    if (ListenerDown(edge) != down) return edge;
  }
  return std::nullopt;
}

bool ProviderSession::HasListenerOutages() const {
  const auto& outages = compiled_->scenario().listener_outages;
  return std::any_of(outages.begin(), outages.end(),
                     [](const scenario::ListenerOutage& o) { return o.length.count() > 0; });
}

void ProviderSession::Reset(WallTime start) {
  start_ = start;
  outage_start_ = start;
  armed_ = false;
  attempts_ = 0;
  rate_ = std::make_unique<RateState>();
}

}  // namespace faultline::provider
