// Secrets out of what faultline writes down: the one home of redaction for reports (the subject's
// command, its stderr and stdout tails, the free text of its events) and for the provider's
// journals (headers, query parameters, request bodies).
//
// It lives in the scenarios library because that is the lowest library both the fake provider
// and the harness link; it needs nothing but the standard library.
//
// Redaction recognises secrets by name and by shape:
//   - by name: the value of `NAME=value` (environment assignments, query parameters, `--token=X`),
//     of `"NAME": "value"` (JSON fields at any depth), of `Name: value` (header lines), and the
//     word after a flag such as `--api-key`, `--key` or `-k`, where NAME is secret-looking
//     (SecretName);
//   - by shape: provider keys (sk-..., sk-ant-..., sk-proj-..., hf_..., AIza..., xai-..., gsk_...,
//     AKIA... access key ids, GitHub and Slack tokens), JWTs (eyJ...), the word after "Bearer",
//     and the userinfo of a URL (https://user:pass@host).
// Each secret becomes "[redacted]"; everything else is kept byte for byte, so redacting is
// deterministic (equal inputs stay equal) and idempotent. Every rule is one linear scan with
// bounded look-back: no recursion, whatever the nesting of a hostile body.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace faultline::scenario {

inline constexpr std::string_view kRedacted = "[redacted]";

// Whether a header, query parameter, JSON field, environment variable or flag called `name`
// holds a credential: a word of it (split at punctuation and camelCase) is key, token, secret,
// password, auth, authorization, authentication, signature, sig, credential or cookie, or it
// contains secret, password, apikey, accesskey or authtoken. Identifiers that only look like
// one (Idempotency-Key, prompt_cache_key) and counts (max_tokens) are not secret.
bool SecretName(std::string_view name);

// Whether `token` (a run of letters, digits, '-' and '_') has the shape of a provider key.
bool KeyShaped(std::string_view token);

// `text` with every secret the rules above find replaced by kRedacted.
std::string RedactSecrets(std::string_view text);

// Cuts `text` to its last `max` bytes, for a tail that will be redacted (a subject's stderr and
// stdout): a cut through a word keeps none of it, "[…]" standing in for its rest. Shapes are
// recognised by their start (sk-, Bearer, https://user:), so the end of a key whose start was
// cut away would pass redaction whole; a line with no space in the kept bytes becomes "[…]".
// `text` of `max` bytes or fewer is returned as it is.
std::string CutForRedaction(std::string text, std::size_t max);

}  // namespace faultline::scenario
