// The declared recovery policies of the Node adapters, as data for `adapter/hello`: the one home
// of every Node adapter's declaration (the Python adapters' is policies.py).
//
// The format is the reference client's policy format (docs/policy.md), read strictly by the
// runner: every key is optional and an omitted key takes the REFERENCE CLIENT's default, so each
// declaration below states every key that the library's behaviour depends on, with `null` for a
// timeout or cap the library does not have. Each value is read from the library's own shipped
// source (harness/adapters/node/node_modules/<pkg>/src/..., the TypeScript the package
// publishes next to its build) or, where the library leaves it to the runtime, from the fetch
// that Node.js 20 bundles (undici 6.x). Line numbers are those of the pinned versions in
// harness/adapters/node/package.json; re-check them when a pin moves. The runner judges retries
// and timeouts against these declarations, so a wrong value here makes a true behaviour look
// like a violation, or hides a real one.

// Node.js 20's bundled fetch (undici 6.24.1 in Node 20.20; process.versions.undici) sets, unless
// the caller passes its own dispatcher (no adapter here does):
//   connect timeout 10 s   (undici lib/core/connect.js: `timeout == null ? 10e3`),
//   headersTimeout 300 s   (undici docs/api/Client.md: "Default: 300e3"),
//   bodyTimeout 300 s      (same file: "time between receiving body data", reset by any bytes,
//                           so SSE comments and pings keep it alive).
// undici arms these on its coarse "fast timers" (a tick of about a second, lib/util/timers.js), so
// they fire up to ~1 s after the nominal 300 s: measured 300.8-301.6 s into a silence here. The
// declaration adds that second, so the runner judges what really happens. Nothing bounds a whole
// call: each attempt gets fresh timers, and a stream that keeps sending is never cut.
const NODE20_FETCH_TIMEOUTS = {
  connect_ms: 10_000,
  response_headers_ms: 301_000,  // undici headersTimeout + tick
  idle_ms: 301_000,              // undici bodyTimeout + tick
  heartbeats_reset_idle: true,   // bodyTimeout counts bytes, not events
  total_ms: null,
};

// No recovery at all: one attempt, no hint read, no budget (fields that only matter for a retry
// are stated anyway, so that no reference default is implied).
const NO_RETRIES = {
  mode: 'standard',
  max_attempts: 1,
  retryable_classes: [],
  retry_phases: [],
  statuses: { retry: [], never: [] },
  should_retry_header: false,
  retry_after: { honor: false },
  min_attempt_ms: 0,
  budget: null,
};

// Plain `fetch` of Node.js 20 (kit/node/example.mjs): no retries, undici's timeouts.
export const PLAIN_FETCH_POLICY = { ...NO_RETRIES, timeouts: NODE20_FETCH_TIMEOUTS };

// ---- the official SDKs: openai 6.30.1 and @anthropic-ai/sdk 1.14.0 -------------------------
//
// Both SDKs share one generated core (Stainless), so most facts hold for both; the citations
// are openai src/client.ts (O:) and @anthropic-ai/sdk src/client.ts (A:).
//
// Which failures: shouldRetry (O:824-845, A:1977-2015) obeys `x-should-retry: true|false` first,
// then retries 408, 409, 429 and >= 500, nothing else; connection errors and the SDK's own
// timeout before the response headers are retried too (O:646-688, A:1698-1763). Once the
// headers are in, the response is handed to the caller and nothing is retried (O:761, A:1834):
// retry_phases connect and response-headers only. The retried statuses are status rules;
// the class list names every class a status error can have, because `x-should-retry: true`
// makes the SDKs retry any status (the runner applies the header before the class rule), and
// the connection-level classes transport and timeout. (Not expressible: `x-should-retry: false`
// on a 429 or 5xx also stops the SDKs, while a `statuses.retry` rule retries whatever it says.)
const SDK_RETRIED = {
  retryable_classes: ['auth', 'rate-limit', 'quota', 'invalid-request', 'context-overflow',
                      'timeout', 'transport', 'provider-overloaded', 'provider-unavailable'],
  retry_phases: ['connect', 'response-headers'],
  statuses: { retry: [408, 409, 429, '5xx'], never: [] },
  should_retry_header: true,
};

// Backoff (O:886-899, A:2058-2071): delay = min(0.5 s * 2^retry, 8 s) * (1 - 0.25 * random),
// i.e. within (0.75 x nominal, nominal]: exponential, jitter 0.25 downwards.
const SDK_BACKOFF = {
  strategy: 'exponential', base_ms: 500, cap_ms: 8000, multiplier: 2, jitter: 0.25,
  jitter_mode: 'down',
};

// Timeouts: the SDK `timeout` (600 s, O:413+1019, A:1104+2231) runs on an AbortController timer
// that is cleared as soon as fetch() resolves, i.e. when the response headers are in (O:788-822,
// A:1905-1913), so it never fires before undici's 300 s headers timeout; nothing in either SDK
// bounds the time between stream chunks or the whole call. No budget; min_attempt_ms is moot
// without a deadline.
const SDK_COMMON = {
  ...SDK_RETRIED, backoff: SDK_BACKOFF, min_attempt_ms: 0,
  timeouts: NODE20_FETCH_TIMEOUTS, budget: null,
};

export const OPENAI_NODE_POLICY = {
  mode: 'standard',
  // O:423 `this.maxRetries = options.maxRetries ?? 2`: one attempt plus two retries.
  max_attempts: 3,
  ...SDK_COMMON,
  // O:847-884 retryRequest: retry-after-ms (float ms) first, then Retry-After as float seconds
  // or an HTTP-date (Date.parse(date) - Date.now(): the local clock, not the server's Date
  // header). "If the API asks us to wait a certain amount of time, just do what it says": the
  // hint REPLACES the backoff, with no cap and no validation (a past date or garbage gives a
  // negative or NaN delay, and over 2^31-1 ms setTimeout fires after 1 ms). A hint of 0 is
  // waited as 0 (`timeoutMillis === undefined` is the only fallback, O:877): immediate.
  retry_after: { honor: true, mode: 'replace', cap_ms: null, jitter: 0, zero: 'immediate',
                 sources: ['retry-after-ms', 'retry-after', 'retry-after-date'], statuses: null },
};

export const ANTHROPIC_NODE_POLICY = {
  mode: 'standard',
  // A:1119 `validatePositiveInteger('maxRetries', options.maxRetries ?? 2)`.
  max_attempts: 3,
  ...SDK_COMMON,
  // A:2017-2056 retryRequest: the same parsing as openai, but the hint replaces the backoff only
  // when 0 < delay <= 2^31-1 ms (the largest setTimeout delay, about 24.8 days, A:2049); anything
  // else (zero, negative, a past date, garbage, an overflow) falls back to the SDK's own backoff.
  // The wait wakes up on abort (A:2053, internal/utils/sleep.ts).
  retry_after: { honor: true, mode: 'replace', cap_ms: 2 ** 31 - 1, over_cap: 'backoff',
                 jitter: 0, zero: 'backoff',
                 sources: ['retry-after-ms', 'retry-after', 'retry-after-date'], statuses: null },
};
