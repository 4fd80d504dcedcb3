// The sans-I/O provider core: one scenario session's state, turning requests into response plans.
//
// A ProviderSession owns the mutable state of one scenario run: the attempt counter, the stateful
// rate-limit window, the chaos RNG position. Respond() is pure apart from that state: given the
// same scenario, seed, sequence of requests and `now` values it returns the same plans, byte for
// byte. It never reads a clock, sleeps or touches a socket; drivers pass `now` in.
//
// The scenario is compiled once (CompiledScenario): bodies and event payloads are rendered with
// placeholder ids when the session is created, so a request only copies bytes and fills in ids
// and dates. Nothing on that path parses JSON or YAML.
//
// Thread-safety: a ProviderSession is not thread-safe; the server serialises access per session.
// CompiledScenario is immutable and may be shared.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "fake_provider/plan/plan.h"
#include "fake_provider/wire/dialect.h"
#include "scenarios/scenario.h"

namespace faultline::provider {

struct RequestInfo {
  std::string_view method;  // "POST"
  std::string_view path;    // relative to the session's base URL, e.g. "/v1/chat/completions"
  std::string_view body;
  std::string_view query = {};  // after the '?', e.g. "alt=sse" (Gemini's streams); "" for none
};

// The body's top-level "stream" flag, found by a scan, not a parse: true, false, or nullopt when
// absent or not a boolean.
std::optional<bool> StreamFlag(std::string_view body);
// Whether a request asks for a stream: its target says (Gemini's streamGenerateContent, Bedrock's
// converse-stream), or its body's "stream" flag where the target leaves it to the body (absent:
// no stream, but Ollama's default is one). False for a target that `kind` does not serve.
bool StreamRequested(DialectWriter::TargetKind kind, std::string_view body);

// A uniform draw in [0, 1) that depends on (seed, attempt) only: the same seed gives the same
// faults whatever the timing or the order of other sessions' requests. The one seeded draw of a
// fault: a scenario's chaos, a route's brownout, a proxy rule's probability.
double ChaosDraw(std::uint64_t seed, int attempt);

class CompiledScenario;  // defined in plan_compiler.h

class ProviderSession {
 public:
  // `start` anchors listener outages and rate-limit windows.
  ProviderSession(std::shared_ptr<const CompiledScenario> scenario, std::uint64_t seed,
                  WallTime start);
  ~ProviderSession();
  ProviderSession(ProviderSession&&) noexcept;
  ProviderSession& operator=(ProviderSession&&) noexcept;

  // The plan for one request. Requests to the wrong path or with the wrong method get a 404/405
  // plan in the dialect's error shape and do not count as attempts.
  ResponsePlan Respond(const RequestInfo& request, WallTime now);

  // Whether the session's listener must be down (connection refused) at `now`, and when that
  // next changes (nullopt: never again).
  bool ListenerDown(WallTime now) const;
  std::optional<WallTime> NextListenerChange(WallTime now) const;
  bool HasListenerOutages() const;
  // Scripted time (listener outages, route health) counts from `at` from now on (default: the
  // session's start).
  void AnchorOutages(WallTime at) {
    outage_start_ = at;
    armed_ = false;
  }
  // Scripted time waits at its zero until AnchorOutages: the runner arms it before it launches an
  // adapter and anchors it at the adapter's first attempt (its first request here, or its first
  // response/start), so that interpreter start-up never eats into a scripted outage and an
  // outage at 0 is met by the first connection. While armed, the listener is as it is at 0.
  void ArmOutages() { armed_ = true; }
  bool armed() const { return armed_; }
  // When scripted time started; nullopt while armed.
  std::optional<WallTime> scripted_start() const {
    return armed_ ? std::nullopt : std::optional<WallTime>(outage_start_);
  }

  int attempts() const { return attempts_; }
  const scenario::Scenario& scenario() const;
  std::uint64_t seed() const { return seed_; }
  // Forget attempts and rate-limit state; `start` becomes the new anchor.
  void Reset(WallTime start);

 private:
  struct RateState;
  Duration ScriptedNow(WallTime now) const;  // how far scripted time has run at `now`
  std::shared_ptr<const CompiledScenario> compiled_;
  std::uint64_t seed_ = 0;
  WallTime start_;
  WallTime outage_start_;
  bool armed_ = false;
  int attempts_ = 0;
  std::unique_ptr<RateState> rate_;
};

}  // namespace faultline::provider
