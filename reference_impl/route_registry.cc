#include "reference_impl/route_registry.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "nlohmann/json.hpp"
#include "reference_impl/recent_memo.h"

namespace faultline::ref {
namespace {

using Json = nlohmann::json;

bool HasStrictTool(const Json& tools) {
  for (const Json& tool : tools) {
    if (!tool.is_object()) continue;
    const Json& function = tool.contains("function") ? tool["function"] : tool;
    if (function.is_object() && function.value("strict", false) == true) return true;
  }
  return false;
}

// Ollama carries a turn's images beside its text, as bare base64 strings.
bool HasImages(const Json& message) {
  const auto images = message.find("images");
  return images != message.end() && images->is_array() && !images->empty();
}

bool IsImagePart(const Json& part) {
  if (!part.is_object()) return false;
  if (part.contains("inlineData")) return true;  // Gemini
  if (part.contains("image")) return true;       // Bedrock Converse's {"image":{...}} block
  const std::string type = part.value("type", "");
  return type == "image" || type == "image_url" || type == "input_image";
}

// A turn's parts: `content` (OpenAI, Anthropic, Responses) or `parts` (Gemini).
bool HasImage(const Json& messages) {
  if (!messages.is_array()) return false;
  for (const Json& message : messages) {
    if (!message.is_object()) continue;
    if (HasImages(message)) return true;
    const auto content =
        message.contains("content") ? message.find("content") : message.find("parts");
    if (content == message.end() || !content->is_array()) continue;
    if (std::ranges::any_of(*content, IsImagePart)) return true;
  }
  return false;
}

// A prefill: the conversation ends with the assistant's own words (Gemini's role "model").
bool EndsWithAssistant(const Json& messages) {
  if (!messages.is_array() || messages.empty() || !messages.back().is_object()) return false;
  const std::string role = messages.back().value("role", "");
  return role == "assistant" || role == "model";
}

// Gemini keeps the output budget, reasoning and stop sequences in `generationConfig`, Ollama its
// budget and stop sequences in `options`, Bedrock in `inferenceConfig` (and its tools in
// `toolConfig`, thinking in `additionalModelRequestFields`).
const Json& Nested(const Json& body, const char* key) {
  static const Json kNone = Json::object();
  const auto found = body.find(key);
  return found != body.end() && found->is_object() ? *found : kNone;
}
const Json& GenerationConfig(const Json& body) { return Nested(body, "generationConfig"); }

int OutputBudget(const Json& body) {
  for (const char* key : {"max_tokens", "max_output_tokens", "max_completion_tokens"}) {
    const auto found = body.find(key);
    if (found != body.end() && found->is_number_integer()) {
      return static_cast<int>(std::clamp<std::int64_t>(found->get<std::int64_t>(), 0, 1 << 30));
    }
  }
  for (const auto& [holder, key] :
       {std::pair{"generationConfig", "maxOutputTokens"}, std::pair{"options", "num_predict"},
        std::pair{"inferenceConfig", "maxTokens"}}) {
    const Json& nested = Nested(body, holder);
    const auto budget = nested.find(key);
    if (budget != nested.end() && budget->is_number_integer()) {
      return static_cast<int>(std::clamp<std::int64_t>(budget->get<std::int64_t>(), 0, 1 << 30));
    }
  }
  return 0;
}

// Ollama's "think": true, or a level ("high") on the models that take one.
bool Thinks(const Json& body) {
  const auto think = body.find("think");
  if (think == body.end()) return false;
  return (think->is_boolean() && think->get<bool>()) || think->is_string();
}

bool Present(const Json& body, const char* key) {
  const auto found = body.find(key);
  return found != body.end() && !found->is_null();
}

RequestNeeds ComputeNeeds(std::string_view body) {
  RequestNeeds needs;
  needs.context_tokens = static_cast<int>(std::min<std::size_t>(body.size() / 4, 1 << 30));
  const Json json = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return needs;
  const Json& tool_config = Nested(json, "toolConfig");  // Bedrock's
  const Json* tools = nullptr;
  if (const auto found = json.find("tools"); found != json.end()) {
    tools = &*found;
  } else if (const auto nested = tool_config.find("tools"); nested != tool_config.end()) {
    tools = &*nested;
  }
  needs.tools = tools != nullptr && tools->is_array() && !tools->empty();
  needs.strict_tools = needs.tools && HasStrictTool(*tools);
  const Json& config = GenerationConfig(json);
  needs.reasoning = Present(json, "reasoning") || Present(json, "thinking") ||
                    Present(json, "reasoning_effort") || Present(config, "thinkingConfig") ||
                    Present(Nested(json, "additionalModelRequestFields"), "thinking") ||
                    Thinks(json);
  const Json messages = json.contains("messages")   ? json["messages"]
                        : json.contains("contents") ? json["contents"]
                                                    : json.value("input", Json());
  needs.images = HasImage(messages);
  needs.prefill = EndsWithAssistant(messages);
  needs.stop_sequences = Present(json, "stop") || Present(json, "stop_sequences") ||
                         Present(config, "stopSequences") ||
                         Present(Nested(json, "options"), "stop") ||
                         Present(Nested(json, "inferenceConfig"), "stopSequences");
  needs.context_tokens += OutputBudget(json);
  return needs;
}

}  // namespace

RequestNeeds NeedsOf(std::string_view body) {
  // A call's body is asked at its construction, and judged, run after run.
  thread_local RecentMemo<RequestNeeds> memo;
  return memo.Get(body, ComputeNeeds);
}

std::string_view MissingCapability(const RouteCapabilities& capabilities,
                                   const RequestNeeds& needs) {
  const std::pair<bool, std::string_view> checks[] = {
      {needs.tools && !capabilities.tools, "tools"},
      {needs.strict_tools && !capabilities.strict_tools, "strict_tools"},
      {needs.reasoning && !capabilities.reasoning, "reasoning"},
      {needs.images && !capabilities.images, "images"},
      {needs.stop_sequences && !capabilities.stop_sequences, "stop_sequences"},
      {needs.prefill && !capabilities.prefill, "prefill"},
      {needs.context_tokens > capabilities.context_window, "context_window"},
  };
  for (const auto& [missing, name] : checks) {
    if (missing) return name;
  }
  return {};
}

RouteRegistry::RouteRegistry(std::vector<RouteTraits> routes, RequestNeeds needs,
                             RoutingConfig config, std::uint64_t seed, BreakerBoard* breakers)
    : own_breakers_(breakers ? nullptr : std::make_unique<BreakerBoard>(config.breaker)),
      breakers_(breakers ? breakers : own_breakers_.get()),
      needs_(needs),
      route_attempts_(config.route_attempts),
      avoid_failed_group_(config.avoid_failed_group),
      one_endpoint_(!config.failover),
      rng_(seed) {
  for (RouteTraits& traits : routes) routes_.push_back({.traits = std::move(traits)});
}

RouteRegistry::~RouteRegistry() { Release(); }

bool RouteRegistry::Fits(const Entry& entry) const {
  return one_endpoint_ || MissingCapability(entry.traits.capabilities, needs_).empty();
}

std::optional<RouteRegistry::Time> RouteRegistry::ReadyAt(const Entry& entry, Time now) const {
  if (entry.retired || !Fits(entry)) return std::nullopt;
  return breakers_->ReadyAt(entry.traits.id, std::max(now, entry.hold.value_or(now)));
}

// The candidate ready soonest; then one outside the avoided group; then not the avoided route;
// then the lowest priority; then a weighted draw.
std::optional<RouteRegistry::Choice> RouteRegistry::Best(const std::vector<std::size_t>& candidates,
                                                         Time now, const Avoid& avoid) {
  if (&candidates != &candidates_) candidates_ = candidates;
  if (&avoid != &avoid_) avoid_ = avoid;
  std::vector<std::pair<std::size_t, Time>> ready;
  for (std::size_t index : candidates) {
    if (auto at = ReadyAt(routes_[index], now)) ready.emplace_back(index, *at);
  }
  if (ready.empty()) return std::nullopt;
  const auto key = [&](const std::pair<std::size_t, Time>& r) {
    const RouteTraits& traits = routes_[r.first].traits;
    const bool shared_fate = !avoid_.group.empty() && traits.group == avoid_.group;
    return std::tuple(r.second, shared_fate, avoid_.route == r.first, traits.priority);
  };
  const auto best = key(*std::ranges::min_element(ready, {}, key));
  std::erase_if(ready, [&](const auto& r) { return key(r) != best; });
  if (ready.size() == 1) return Choice{ready[0].first, ready[0].second};
  long total = 0;
  for (const auto& r : ready) total += std::max(1, routes_[r.first].traits.weight);
  long draw = static_cast<long>(Uniform01(rng_) * static_cast<double>(total));
  for (const auto& r : ready) {
    draw -= std::max(1, routes_[r.first].traits.weight);
    if (draw < 0) return Choice{r.first, r.second};
  }
  return Choice{ready.back().first, ready.back().second};
}

std::optional<RouteRegistry::Choice> RouteRegistry::First(Time now,
                                                          std::optional<std::size_t> sticky) {
  if (sticky && !one_endpoint_ && *sticky < routes_.size()) {
    // One candidate: no weighted draw, so the RNG's sequence is the non-sticky client's.
    const auto kept = Best({*sticky}, now, Avoid{});
    if (kept && kept->at <= now) return kept;
  }
  if (one_endpoint_ && !routes_.empty()) {
    // The primary: the lowest priority, the first of those (the call line's base URL).
    const auto primary = std::ranges::min_element(
        routes_, {}, [](const Entry& entry) { return entry.traits.priority; });
    return Best({static_cast<std::size_t>(primary - routes_.begin())}, now, Avoid{});
  }
  std::vector<std::size_t> all(routes_.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  return Best(all, now, Avoid{});
}

std::optional<RouteRegistry::Choice> RouteRegistry::Next(std::size_t failed, Failover verdict,
                                                         std::optional<Time> own_retry, Time now) {
  Entry& entry = routes_[failed];
  const bool share_spent = route_attempts_ && entry.attempts >= *route_attempts_;
  if (own_retry && !share_spent) {
    entry.hold = own_retry;
  } else {
    entry.retired = true;
  }
  // A fallback chain stays on its route while the route's share of attempts lasts.
  if (route_attempts_ && !entry.retired) return Best({failed}, now, Avoid{});
  std::vector<std::size_t> candidates;
  for (std::size_t i = 0; i < routes_.size(); ++i) {
    const bool same_model = routes_[i].traits.model == entry.traits.model;
    const bool allowed = i == failed || verdict == Failover::kCompatibleModel ||
                         (verdict == Failover::kSameModel && same_model);
    if (allowed) candidates.push_back(i);
  }
  // Whatever took the failed route down may have taken its whole group (provider, account,
  // region) down, and certainly the route itself: among routes ready as soon, one outside the
  // group goes first, then any but the failed route.
  if (!avoid_failed_group_) return Best(candidates, now, Avoid{});
  return Best(candidates, now, Avoid{entry.traits.group, failed});
}

std::optional<RouteRegistry::Choice> RouteRegistry::Reselect(Time now) {
  return Best(candidates_, now, avoid_);
}

bool RouteRegistry::Admits(std::size_t route, Time now) const {
  return breakers_->Admits(routes_[route].traits.id, now);
}

void RouteRegistry::Begin(std::size_t route, Time now) {
  Release();
  ++routes_[route].attempts;
  (void)breakers_->Begin(routes_[route].traits.id, now);
  begun_ = route;
}

void RouteRegistry::RecordFailure(std::size_t route, Time now) {
  breakers_->RecordFailure(routes_[route].traits.id, now);
  begun_.reset();
}

void RouteRegistry::RecordSuccess(std::size_t route) {
  breakers_->RecordSuccess(routes_[route].traits.id);
  begun_.reset();
}

void RouteRegistry::Release() {
  if (begun_) breakers_->Release(routes_[*begun_].traits.id);
  begun_.reset();
}

bool RouteRegistry::usable(std::size_t route) const {
  const Entry& entry = routes_[route];
  return !entry.retired && Fits(entry);
}

CircuitBreaker::State RouteRegistry::breaker_state(std::size_t route, Time now) const {
  return breakers_->state(routes_[route].traits.id, now);
}

}  // namespace faultline::ref
