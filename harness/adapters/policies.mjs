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

// A client of one endpoint: every attempt goes to the base URL it was given (the format's default
// is the reference client's failover between routes, docs/routes.md), and no circuit breaker
// ever stops it sending there.
const ONE_ENDPOINT = { failover: false, breaker: null };

// No recovery at all: one attempt, no hint read, no budget (fields that only matter for a retry
// are stated anyway, so that no reference default is implied).
const NO_RETRIES = {
  routing: ONE_ENDPOINT,
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
  routing: ONE_ENDPOINT,
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

// ---- the LLM frameworks (opt-in: harness/adapters/setup.sh --frameworks) ---------------------
//
// Pinned in harness/adapters/frameworks/package.json; citations are relative to
// harness/adapters/frameworks/node_modules/. Both run on the same Node 20 fetch as the SDKs.

// No cap on a backoff: the format wants a number, and 2^31-1 ms (24.8 days) is beyond any delay
// these libraries compute within their attempt budgets.
const NO_BACKOFF_CAP_MS = 2 ** 31 - 1;

// Vercel AI SDK: ai 6.0.325 + @ai-sdk/openai 3.0.141 + @ai-sdk/anthropic 3.0.140, streamText
// (generateText when the runner's request is not streamed). Requests go through provider-utils'
// postToApi with `fetch ?? globalThis.fetch` (@ai-sdk/provider-utils/src/post-to-api.ts:12,84).
export const VERCEL_AI_POLICY = {
  mode: 'standard',
  routing: ONE_ENDPOINT,  // one provider model; --with-fallbacks declares its own routing
  // ai/src/util/prepare-retries.ts:41 `maxRetries ?? 2`.
  max_attempts: 3,
  // Retried: an APICallError whose isRetryable is true (ai/src/util/retry-with-exponential-
  // backoff.ts:83-88): by default status 408, 409, 429 or >= 500 (@ai-sdk/provider/src/errors/
  // api-call-error.ts:28-32; the providers' error handlers keep that default, @ai-sdk/openai/src/
  // openai-error.ts:27-30, @ai-sdk/anthropic/src/anthropic-error.ts:23-26), and every network
  // error (@ai-sdk/provider-utils/src/handle-fetch-error.ts:57-101); aborts never (provider-utils
  // retry-with-exponential-backoff.ts:89-91). `x-should-retry` is not read anywhere.
  retryable_classes: ['rate-limit', 'timeout', 'transport', 'provider-overloaded',
                      'provider-unavailable', 'invalid-request'],
  statuses: { retry: [408, 409, 429, '5xx'], never: [] },
  should_retry_header: false,
  // The retried call is the model's doStream/doGenerate (ai/src/generate-text/stream-text.ts:1881),
  // which returns once the headers are in, EXCEPT that both providers read ahead to the first
  // event and turn an error event that comes before any output into a retryable APICallError:
  // Anthropic's overloaded_error (@ai-sdk/anthropic/src/anthropic-messages-language-model.ts:
  // 3192-3221), OpenAI's error frames unless insufficient_quota (@ai-sdk/openai/src/
  // openai-stream-error.ts:45-97, 219-240). So phase stream is declared, and only before any
  // output: once a text delta or tool call has been read, the retried call has returned.
  retry_phases: ['connect', 'response-headers', 'stream'],
  stream_retries: 'before-output',
  // provider-utils retry-with-exponential-backoff.ts:36-131: 2 s, then x2, no jitter, no cap.
  backoff: { strategy: 'exponential', base_ms: 2000, cap_ms: NO_BACKOFF_CAP_MS, multiplier: 2,
             jitter: 0, jitter_mode: 'symmetric' },
  // ai/src/util/retry-with-exponential-backoff.ts:10-58: retry-after-ms, then retry-after
  // (float seconds or Date.parse(date) - Date.now()), used INSTEAD of the backoff when
  // 0 <= hint < 60 s (or shorter than the backoff); otherwise (over a minute, negative, NaN)
  // the backoff. A hint of 0 is waited as 0.
  retry_after: { honor: true, mode: 'replace', cap_ms: 59_999, over_cap: 'backoff', jitter: 0,
                 zero: 'immediate', sources: ['retry-after-ms', 'retry-after', 'retry-after-date'],
                 statuses: null },
  min_attempt_ms: 0,
  // streamText's `timeout` option is unset by default (ai/src/generate-text/stream-text.ts:
  // 593-608): only undici's timers.
  timeouts: NODE20_FETCH_TIMEOUTS,
  budget: null,
};

// LangChain JS: @langchain/core 1.4.0 AsyncCaller with @langchain/openai 1.5.8 (openai 6.49.0
// underneath) and @langchain/anthropic 1.5.11 (@anthropic-ai/sdk 0.122.0 underneath). Both
// construct their SDK client with maxRetries: 0 (@langchain/openai/dist/chat_models/base.js:
// 309-316, @langchain/anthropic/dist/chat_models.js:989-997) and wrap the SDK call in
// AsyncCaller.callWithOptions (@langchain/openai/dist/chat_models/completions.js:253-264,
// @langchain/anthropic/dist/chat_models.js:1017): all retrying is p-retry's. Citations below
// are in @langchain/core/dist/utils/.
const LANGCHAIN_NO_RETRY = [400, 401, 402, 403, 404, 405, 406, 407, 409, 413];
export const LANGCHAIN_POLICY = {
  mode: 'standard',
  routing: ONE_ENDPOINT,  // one chat model; --with-fallbacks declares its own routing
  // async_caller.js:182 `params.maxRetries ?? 6`: 7 attempts.
  max_attempts: 7,
  // defaultFailedAttemptHandler (async_caller.js:133-161): STATUS_NO_RETRY (:12-23) and a
  // quota 429 (code insufficient_quota or quota/billing wording, :25-34, :99-109) stop at once;
  // a 429 is retried only with a hint of at most 60 s (:110-116); a 429 without a hint, or with
  // a longer one, stops too (:117-126: the error is thrown from onFailedAttempt, which ends
  // p-retry). Everything else is retried (p-retry/index.js:53-65 retries any error but a
  // TypeError that is not a network error), whatever the status, so every other 4xx and all
  // 5xx are status rules; which other failures are retried follows the classes below.
  statuses: {
    retry: [...Array.from({ length: 100 }, (_, i) => 400 + i)
              .filter((s) => s !== 429 && !LANGCHAIN_NO_RETRY.includes(s)), '5xx'],
    never: LANGCHAIN_NO_RETRY,
  },
  retryable_classes: ['rate-limit', 'timeout', 'transport', 'provider-overloaded',
                      'provider-unavailable', 'protocol', 'truncated', 'empty', 'invalid-request'],
  should_retry_header: false,
  // The retried call resolves when the SDK has the response: for a stream once the headers are
  // in (stream errors are never retried: stream_retries never), for a non-streamed call after
  // the body is parsed, so a body that stalls or does not parse is retried too. Every phase.
  retry_phases: ['connect', 'response-headers', 'stream', 'finish'],
  stream_retries: 'never',
  // p-retry/index.js:29-35 with the options of async_caller.js:190-198 and the defaults of
  // p-retry/index.js:90-95: round((1 + random) x 1 s x 2^retry), no cap.
  backoff: { strategy: 'exponential', base_ms: 1000, cap_ms: NO_BACKOFF_CAP_MS, multiplier: 2,
             jitter: 1, jitter_mode: 'up' },
  // Only on a 429 (async_caller.js:100): `retry-after` (delay-seconds or an HTTP-date against the
  // local clock, :87-98; retry-after-ms is not read), else "try again in N s" in the error
  // message (:35, :62-73); at most 60 s, else no retry (:112-121); the wait is
  // max(backoff, hint) (p-retry/index.js:66-68), so a hint of 0 leaves the backoff.
  retry_after: { honor: true, mode: 'floor', cap_ms: 60_000, over_cap: 'give-up', jitter: 0,
                 missing: 'give-up', zero: 'backoff',
                 sources: ['retry-after', 'retry-after-date', 'body'], statuses: [429] },
  min_attempt_ms: 0,
  // The SDKs' `timeout` (600 s, connect + headers only) and undici's timers; LangChain adds none.
  timeouts: NODE20_FETCH_TIMEOUTS,
  budget: null,
};
