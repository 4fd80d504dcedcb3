// The default recovery policies of the pinned official SDKs, as data for `adapter/hello`.
//
// Each value is read from the SDK's own shipped source (harness/adapters/node/node_modules/<pkg>/
// src/..., the TypeScript the package publishes next to its build) or, where the SDK leaves it to
// the runtime, from the defaults of the fetch that Node.js 20 bundles (undici 6.x). Line numbers
// are those of the pinned versions in harness/adapters/node/package.json; re-check them when a
// pin moves. The runner judges retries and timeouts against these declarations
// (harness/declared_policy.cc), so a value that is wrong here makes a true SDK behaviour look like
// a violation, or hides a real one.

// Node.js 20's bundled fetch (undici 6.24.1 in Node 20.20; process.versions.undici) sets, unless
// the caller passes its own dispatcher (neither SDK does by default):
//   connect timeout 10 s   (undici lib/core/connect.js: `timeout == null ? 10e3`),
//   headersTimeout 300 s   (undici docs/api/Client.md: "Default: 300e3"),
//   bodyTimeout 300 s      (same file: "time between receiving body data", reset by any bytes,
//                           so SSE comments and pings keep it alive).
// Both SDKs pass `timeout` (600 s) only to an AbortController timer that is cleared as soon as
// fetch() resolves, i.e. when the response headers are in (openai client.ts:788-822,
// anthropic client.ts:1905-1913). Nothing in either SDK bounds the time between stream chunks or
// the whole call, so the only idle and headers limits are undici's 300 s, which fire first.
// undici arms these on its coarse "fast timers" (a tick of about a second, lib/util/timers.js), so
// they fire up to ~1 s after the nominal 300 s: measured 300.8-301.6 s into a silence here. The
// declaration adds that second, so the runner judges the SDK by what it really does.
const NODE20_FETCH_TIMEOUTS = {
  connect_ms: 10_000,
  response_headers_ms: 301_000,  // min(SDK `timeout` 600 000, undici headersTimeout 300 000) + tick
  idle_ms: 301_000,              // undici bodyTimeout + tick; the SDKs themselves have none
  heartbeats_reset_idle: true,   // bodyTimeout counts bytes, not events
  // total_ms: none. Each attempt gets a fresh headers timer, and the stream is unbounded.
};

// Classes the SDKs retry, by the HTTP status they retry (shouldRetry) mapped onto DESIGN §6:
// 408 -> timeout, 409 -> invalid-request (a lock conflict: the only retryable invalid request),
// 429 -> rate-limit AND quota (the status decides, the body is not read), >= 500 ->
// provider-unavailable / provider-overloaded (529), and connection errors before the response
// headers -> transport / timeout. Failures after the headers (mid-stream errors, disconnects,
// malformed events, in-stream error events) are never retried: the stream is handed to the
// caller once the headers are in (openai client.ts:603-762, anthropic client.ts:1655-1835).
const RETRIED_CLASSES = ['timeout', 'invalid-request', 'rate-limit', 'quota', 'transport',
                         'provider-unavailable', 'provider-overloaded'];

// Backoff of both SDKs (openai client.ts:886-899, anthropic client.ts:2058-2071):
//   delay = min(0.5 s * 2^retry, 8 s) * (1 - 0.25 * Math.random())
// i.e. within (0.75 x nominal, nominal]. The runner's "exponential" strategy with jitter 0.25
// allows [0.75 x nominal, 1.25 x nominal]: the closest it can express (its jitter is symmetric),
// exact on the lower bound and 25 % lenient on the upper one.
const SDK_BACKOFF = {
  strategy: 'exponential', base_ms: 500, cap_ms: 8000, multiplier: 2, jitter: 0.25,
};

export const OPENAI_NODE_POLICY = {
  // client.ts:423 `this.maxRetries = options.maxRetries ?? 2`: one attempt plus two retries.
  max_attempts: 3,
  retryable_classes: RETRIED_CLASSES,
  backoff: SDK_BACKOFF,
  // client.ts:847-884 retryRequest: retry-after-ms (float ms) first, then Retry-After as float
  // seconds or an HTTP-date (Date.parse(date) - Date.now(): the local clock, not the server's
  // Date header). "If the API asks us to wait a certain amount of time, just do what it says":
  // no cap at all, and no validation either: a date in the past or garbage gives a negative or
  // NaN delay, and a delay over 2^31-1 ms overflows setTimeout, which Node then fires after 1 ms.
  // So: honoured, without a cap (no cap_ms, no over_cap).
  retry_after: { honor: true, jitter: 0 },
  timeouts: NODE20_FETCH_TIMEOUTS,
};

export const ANTHROPIC_NODE_POLICY = {
  // client.ts:1119 `validatePositiveInteger('maxRetries', options.maxRetries ?? 2)`.
  max_attempts: 3,
  retryable_classes: RETRIED_CLASSES,
  backoff: SDK_BACKOFF,
  // client.ts:2017-2056 retryRequest: retry-after-ms, then Retry-After (float seconds or an
  // HTTP-date against the local clock), honoured only when 0 < delay <= 2^31-1 ms (the largest
  // setTimeout delay, about 24.8 days); anything else (absent, garbage, zero, negative, a past
  // date, an overflow) falls back to the SDK's own backoff. The wait wakes up on abort
  // (internal/utils/sleep.ts, called with options.signal at client.ts:2053).
  retry_after: { honor: true, cap_ms: 2 ** 31 - 1, over_cap: 'backoff', jitter: 0 },
  timeouts: NODE20_FETCH_TIMEOUTS,
};
