// Failover: whether a failed attempt of a call may move to another route of the same logical
// model (docs/routes.md), as the failure taxonomy says.
//
//   failover           classes
//   never              aborted, invalid-request, safety, unknown; a total timeout; and any failure
//                      once output is committed (no failover after commit, ever)
//   same-model         protocol, truncated, empty: the stream broke, not the route's capacity, so
//                      only a route serving the same wire model may finish the answer
//   compatible-model   rate-limit, quota, auth, provider-overloaded, provider-unavailable,
//                      transport, timeout (connect, headers, idle), context-overflow: the route
//                      cannot serve now, and any route whose capabilities fit may (for a context
//                      overflow only one with a larger window fits)
//
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string_view>

#include "reference_impl/failure.h"
#include "reference_impl/name_table.h"

namespace faultline::ref {

enum class Failover { kNever, kSameModel, kCompatibleModel };
inline constexpr NameTable<Failover, 3> kFailoverNames{{
    {Failover::kNever, "never"},
    {Failover::kSameModel, "same-model"},
    {Failover::kCompatibleModel, "compatible-model"},
}};
std::string_view ToString(Failover value);
std::optional<Failover> ParseFailover(std::string_view text);

// Which failures a router moves to another route (the policy's `routing.failover_on`).
enum class FailoverRule {
  kTaxonomy,    // "taxonomy": as the table above says (the reference client)
  kAnyFailure,  // "any-failure": every failure before commit but a cancel or the total deadline,
                // to any route that fits (LangChain's withFallbacks handles every error)
};
inline constexpr NameTable<FailoverRule, 2> kFailoverRuleNames{{
    {FailoverRule::kTaxonomy, "taxonomy"},
    {FailoverRule::kAnyFailure, "any-failure"},
}};
std::string_view ToString(FailoverRule value);
std::optional<FailoverRule> ParseFailoverRule(std::string_view text);

// The verdict for `failure` under `rule`: the taxonomy's, or compatible-model for any failure
// the taxonomy does not rule out whatever the rule (commit, cancel, total deadline).
Failover FailoverOf(const Failure& failure, FailoverRule rule = FailoverRule::kTaxonomy);

}  // namespace faultline::ref
