// The rule book of `faultline proxy`: which rule (scenarios/proxy_rules.h) applies to a request.
//
// A rule applies to the first request it matches (path, dialect, request index) whose draw falls
// under its probability; the rules are tried in file order and the first that applies wins. The
// draw is the fake provider's seeded one (provider::ChaosDraw) over (proxy seed, rule name,
// request index): the same seed and the same sequence of requests give the same faults, whatever
// the timing.
//
// A rule that answers in the upstream's place (a non-2xx status, a connection fault) is compiled
// once per dialect it can meet by the fake provider's plan compiler, so the proxy's 429 is byte
// for byte the fake provider's; so is the 502 the proxy sends when the upstream cannot be reached.
//
// Immutable after construction; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "fake_provider/plan/plan_compiler.h"
#include "fake_provider/wire/event_splitter.h"
#include "reference_impl/dialect.h"
#include "scenarios/proxy_rules.h"
#include "scenarios/scenario.h"

namespace faultline::proxy {

// The dialect a request target speaks (fake_provider/wire/dialect.h).
using provider::DialectOfTarget;
// The reference client's name for the same dialect (its decoders read the stream).
using provider::RefDialect;

struct Selection {
  const scenario::ProxyRule* rule = nullptr;  // null: no rule applies, the exchange passes as is
  // The rule's response compiled for the request's dialect, when the rule answers itself.
  const provider::CompiledScenario* compiled = nullptr;
};

class RuleBook {
 public:
  explicit RuleBook(scenario::ProxyRules rules);

  // `index`: 1-based among the proxy's requests. `dialect`: nullopt when the path is none of
  // the dialects' (then only rules without a dialect condition that act on the upstream's
  // answer can apply: an answer needs a dialect to be written in).
  Selection Select(std::string_view path, std::optional<scenario::Dialect> dialect,
                   std::uint64_t index, std::uint64_t seed) const;

  // The fake provider's plans for what no rule scripts (the 502 of an unreachable upstream).
  const provider::CompiledScenario& Plain(scenario::Dialect dialect) const;

  const scenario::ProxyRules& rules() const { return rules_; }

 private:
  static constexpr std::size_t kDialects = 6;
  using PerDialect = std::array<std::unique_ptr<provider::CompiledScenario>, kDialects>;
  scenario::ProxyRules rules_;
  std::vector<PerDialect> compiled_;  // [rule][dialect], for the rules that answer
  PerDialect plain_;
};

}  // namespace faultline::proxy
