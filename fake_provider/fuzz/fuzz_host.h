// An in-memory SessionHost for the fake provider's fuzz targets: the control API and session
// admission exactly as the server runs them, without the Asio server or any socket. A session
// of the built-in catalogue exists under its scenario name from its first use, fresh for every
// host, so an input reproduces on its own. There are no dedicated listeners: a scenario with
// listener outages is refused as if the server had none left.
//
// Header-only; used only by the fuzz targets. Not thread-safe (libFuzzer runs one input at a
// time).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "fake_provider/server/server_core.h"
#include "scenarios/loader.h"
#include "scenarios/route_scenario.h"

namespace faultline::provider::fuzz {

class FuzzHost final : public internal::SessionHost {
 public:
  using Session = std::shared_ptr<internal::SessionState>;

  explicit FuzzHost(scenario::ParseLimits limits = {}, std::size_t max_sessions = 16)
      : limits_(limits), max_sessions_(max_sessions) {}

  // As the server does: the session, then one route session per route under it.
  std::expected<Session, internal::AddSessionError> CreateSession(
      scenario::Scenario scenario, std::string id, std::optional<std::uint64_t> seed) override {
    if (id.empty()) id = scenario.name;
    std::vector<scenario::Scenario> routes;
    for (const scenario::Route& route : scenario.routes) {
      routes.push_back(scenario::RouteScenario(scenario, route));
    }
    auto parent = CreateOne(std::move(scenario), id, seed);
    if (!parent) return parent;
    for (scenario::Scenario& route : routes) {
      const std::string route_id = scenario::RouteSessionId(id, route.route_id);
      auto created = CreateOne(std::move(route), route_id, seed);
      if (!created) {
        DeleteSession(id);
        return std::unexpected(created.error());
      }
      (*parent)->AddRoute(std::move(*created));
    }
    return parent;
  }
  std::expected<Session, internal::AddSessionError> CreateOne(scenario::Scenario scenario,
                                                              std::string id,
                                                              std::optional<std::uint64_t> seed) {
    using Code = internal::AddSessionError::Code;
    if (auto reason = internal::InvalidSessionIdReason(id)) {
      return std::unexpected(internal::AddSessionError{Code::kInvalid, *reason});
    }
    if (sessions_.contains(id))
      return std::unexpected(internal::AddSessionError{Code::kDuplicate, id});
    if (sessions_.size() >= max_sessions_ || !scenario.listener_outages.empty()) {
      return std::unexpected(internal::AddSessionError{Code::kLimit, "no room"});
    }
    auto session = std::make_shared<internal::SessionState>(
        id, base_url() + "/s/" + id, 0, std::move(scenario), seed.value_or(0), Now(),
        provider::JournalLimits{.entries = 8});
    sessions_.emplace(id, session);
    return session;
  }
  // The session and its routes, as the server deletes them.
  bool DeleteSession(std::string_view id) override {
    const auto it = sessions_.find(id);
    if (it == sessions_.end()) return false;
    sessions_.erase(it);
    const std::string routes = std::string(id) + "/route/";
    std::erase_if(sessions_, [&](const auto& entry) { return entry.first.starts_with(routes); });
    return true;
  }
  Session ResetSession(std::string_view id) override {
    Session session = FindSession(id);
    if (session) session->Reset(Now());
    return session;
  }
  bool AnchorOutages(std::string_view id) override {
    Session session = FindSession(id);
    if (session) session->AnchorOutages(Now());
    return session != nullptr;
  }
  Session FindSession(std::string_view id) const override {
    if (const auto it = sessions_.find(id); it != sessions_.end()) return it->second;
    const auto& catalogue = Catalogue();
    const auto it = catalogue.find(id);
    if (it == catalogue.end() || !it->second.listener_outages.empty()) return nullptr;
    auto session = std::make_shared<internal::SessionState>(
        it->first, base_url() + "/s/" + it->first, 0, it->second, 0, Now(),
        provider::JournalLimits{.entries = 8});
    sessions_.emplace(it->first, session);
    return session;
  }
  std::vector<Session> ListSessions() const override {
    std::vector<Session> out;
    for (const auto& [id, session] : sessions_) out.push_back(session);
    return out;
  }
  internal::StatsSnapshot Stats() const override { return {}; }
  std::string base_url() const override { return "http://127.0.0.1:8080"; }
  WallTime Now() const override { return WallTime(std::chrono::seconds(1'767'225'600)); }
  const scenario::ParseLimits& scenario_limits() const override { return limits_; }
  void Reject(internal::Rejection) override {}

  // The built-in catalogue by scenario name, loaded once.
  static const std::map<std::string, scenario::Scenario, std::less<>>& Catalogue() {
    static const std::map<std::string, scenario::Scenario, std::less<>> catalogue = [] {
      std::map<std::string, scenario::Scenario, std::less<>> out;
      if (auto loaded = scenario::LoadBuiltinCatalog()) {
        for (auto& scenario : *loaded) out.emplace(scenario.name, std::move(scenario));
      }
      return out;
    }();
    return catalogue;
  }

 private:
  scenario::ParseLimits limits_;
  std::size_t max_sessions_;
  mutable std::map<std::string, Session, std::less<>> sessions_;
};

}  // namespace faultline::provider::fuzz
