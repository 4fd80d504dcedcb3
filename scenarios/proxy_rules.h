// The fault rules of `faultline proxy` (docs/proxy.md): which requests passing through the proxy
// get which fault, as plain values. The loader reads them (loader_proxy.cc) with the scenario
// format's reader, so a rule's fault is written, and checked, exactly as a scenario's response
// entry: `response:` takes the keys of a `responses:` item, with the same file:line:column
// errors. faultline::proxy applies them to live traffic (proxy/fault_rules.h).
//
// Values only; safe to copy and share read-only.
#pragma once

#include <cstdint>
#include <expected>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/load_error.h"
#include "scenarios/parse_limits.h"
#include "scenarios/scenario.h"

namespace faultline::scenario {

// Which requests a rule is for. Every given condition must hold; an empty rule matches all.
struct ProxyMatch {
  std::optional<std::string> path;      // the request's path (no query): exact, or a prefix when
                                        // it ends in '*'
  std::vector<Dialect> dialects;        // empty: any dialect the proxy recognises
  std::vector<std::uint64_t> requests;  // 1-based indexes among the proxy's requests; empty: any
  friend bool operator==(const ProxyMatch&, const ProxyMatch&) = default;
};

struct ProxyRule {
  std::string name;  // from the file, or "rule-N" (1-based)
  int line = 0;      // where the rule starts in its file (1-based)
  ProxyMatch match;
  double probability = 1.0;  // drawn per request from the proxy's seed (fault_rules.h)
  // What the rule does. With a non-2xx status (or `error`) or a connection fault the proxy
  // answers in the upstream's place, as the fake provider would (the upstream is not called).
  // Otherwise it acts on the upstream's answer as it passes: headers_delay, Retry-After and
  // extra headers, and on a 2xx body `content.faults` and `content.end`; nothing else of the
  // entry is allowed (the loader refuses it), since the upstream writes the rest.
  ResponseSpec response;
  bool answers = false;  // the proxy answers in the upstream's place
  friend bool operator==(const ProxyRule&, const ProxyRule&) = default;
};

struct ProxyRules {
  std::vector<ProxyRule> rules;  // in file order: the first that matches and is drawn applies
  std::string source;            // the file they came from
  friend bool operator==(const ProxyRules&, const ProxyRules&) = default;
};

// Parses a rule file (YAML or JSON): `faultline: 1`, optional `description`, and `rules:`.
std::expected<ProxyRules, LoadError> ParseProxyRules(std::string_view text, std::string_view file,
                                                     const ParseLimits& limits = {});
std::expected<ProxyRules, LoadError> LoadProxyRules(const std::filesystem::path& file);

}  // namespace faultline::scenario
