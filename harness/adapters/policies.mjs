// The declared recovery policies of the Node adapters, as data for `adapter/hello` (the Python
// adapters' are in policies.py).
//
// Each declaration names a preset: `{"extends": "openai-node"}` (docs/policy.md, "Presets"). The
// presets (reference_impl/presets/<name>.json, embedded in faultline) are the one home of every
// value and of its citation: each value was read from the library's own shipped source
// (harness/adapters/node/node_modules/<pkg>/src/..., or frameworks/node_modules/ for the
// frameworks), or from the fetch that Node.js 20 bundles (undici 6.x), with the file and line
// in the preset's notes. Line numbers are those of the versions pinned in node/package.json and
// frameworks/package.json; re-check the presets when a pin moves. The runner resolves `extends`
// and judges retries and timeouts against the result, so a wrong value there makes a true
// behaviour look like a violation, or hides a real one.

// Plain `fetch` of Node.js 20 (kit/node/example.mjs): one attempt, undici's own timeouts.
export const PLAIN_FETCH_POLICY = { extends: 'node-fetch' };

// The official SDKs: openai 6.30.1 and @anthropic-ai/sdk 1.14.0 (one endpoint each).
export const OPENAI_NODE_POLICY = { extends: 'openai-node' };
export const ANTHROPIC_NODE_POLICY = { extends: 'anthropic-node' };

// The LLM frameworks (opt-in: harness/adapters/setup.sh --frameworks), one model each.
export const VERCEL_AI_POLICY = { extends: 'vercel-ai' };
export const LANGCHAIN_POLICY = { extends: 'langchain-js' };

// The frameworks as routers over a call's routes (--with-fallbacks). Their presets state two
// routes; the attempts grow with the routes: the SDK's own 3 streamText attempts each try every
// route once (vercel-ai-fallback), and each route's model spends its own 7 attempts
// (langchain-js-fallbacks: route_attempts 7).
//
// ai-fallback's FallbackModel is sticky: it keeps the model a failure moved it to for the calls
// after, and goes back to the first model once modelResetInterval has passed since its last
// reset (ai-fallback dist/index.js checkAndResetModel), so no later than that after any
// failover. The adapter passes this interval (the library's own default, 3 minutes) and declares
// it as routing.sticky.reset_ms (docs/policy.md), which ROUTE-010 judges across the calls of a
// session.
export const AI_FALLBACK_RESET_MS = 3 * 60 * 1000;
export const vercelAiFallbackPolicy = (routes) =>
  ({ extends: 'vercel-ai-fallback', max_attempts: 3 * routes,
     routing: { sticky: { reset_ms: AI_FALLBACK_RESET_MS } } });
export const langchainFallbacksPolicy = (routes) =>
  ({ extends: 'langchain-js-fallbacks', max_attempts: 7 * routes });

// The Node 22 lane (harness/adapters/setup.sh --node22; node22/package.json pins the versions,
// node22/node_modules/<pkg>/ holds the sources the lines below cite). They run under the Node 22
// installed there, whose fetch is undici 6.29.1 (process.versions.undici): the same connect,
// headers and body timeouts as Node 20's (the node-fetch preset).

// openai 7.60.0 (src/client.ts, O7:) differs from 6.30.1 in one declared key. The same defaults:
// O7:656 + 1046-1047 maxRetries 2 (3 attempts); O7:2146-2167 shouldRetry, x-should-retry first,
// then 408, 409, 429, >= 500; O7:2238-2251 backoff min(0.5 s x 2^n, 8 s) x (1 - 0.25 random);
// O7:646 + 2592 the 600 s timeout, cleared once fetch() resolves at the headers (O7:2101-2143)
// for a stream. What changed, retryRequest O7:2169-2236: a hint that is not finite, negative, or
// over 60 s (`timeoutMillis > 60 * 1000`, O7:2200-2208) is replaced by the backoff, where 6.x
// slept any hint (a past date or NaN at once, 2^32 s after ~1 ms); and the sleep takes the
// call's signals (O7:2222-2233, internal/utils/sleep.ts:1), so a cancel ends the backoff wait.
export const OPENAI_NODE7_POLICY = {
  extends: 'openai-node',
  retry_after: { cap_ms: 60000, over_cap: 'backoff' },
};

// @anthropic-ai/sdk 1.17.0 (src/client.ts, A17:): the retry loop of 1.14.0 line for line
// (maxRetries ?? 2 A17:1123; shouldRetry A17:2032-2070; retryRequest A17:2072-2111, a hint used
// only when 0 < hint <= 2^31-1 ms, A17:2104; backoff A17:2113-2125; timeout 600 s A17:1108 +
// 2286, cleared at the headers by fetchWithTimeout A17:1920), so the anthropic-node preset. New in
// 1.17: a non-streamed response whose body fails to read on the transport (APIConnectionError) is
// sent again, unless x-should-retry says false (A17:1862-1878, core/api-promise.ts:113-133);
// a stream, whose body the caller reads, is never sent again (api-promise.ts:116-120): the
// body phase is retried for unstreamed calls only (stream_retries never).
export const ANTHROPIC_NODE22_POLICY = {
  extends: 'anthropic-node',
  retry_phases: ['connect', 'response-headers', 'stream'],
  stream_retries: 'never',
};

// @google/genai 3.3.0 (dist/node/index.mjs, G:). Without httpOptions.retryOptions nothing is
// retried: apiCall G:13980-14035 returns the first response (`if (!retryOptions) return
// runFetch()`, G:14019-14021); the retry defaults G:13576-13592 (5 attempts, 1 s x2 up to 60 s,
// jitter, 408/429/500/502/503/504) apply only to a caller that passes retryOptions. No timeout:
// httpOptions.timeout is unset (G:13541-13575 arms no timer), and on Node the SDK gives every
// request a dispatcher with undici's headersTimeout and bodyTimeout set to 0 (G:13518-13533,
// G:13869-13875), so only undici's 10 s connect timeout is left; RetryInfo.retryDelay is never
// read. Declared as node-fetch without its headers and body timeouts.
export const GOOGLE_GENAI_POLICY = {
  extends: 'node-fetch',
  timeouts: { response_headers_ms: null, idle_ms: null, heartbeats_reset_idle: false },
};

// @openai/agents 0.20.0 over openai 7.60.0. The runner's own retry is opt-in:
// modelSettings.retry is unset by default, so maxRetries is 0 (@openai/agents-core
// dist/runner/modelRetry.mjs:944 `request.modelSettings.retry?.maxRetries ?? 0`) and nothing
// but the OpenAI client retries: OpenAIResponsesModel / OpenAIChatCompletionsModel call
// client.responses.create / chat.completions.create with the client's defaults
// (@openai/agents-openai dist/openaiResponsesModel.mjs:1010-1022; the runner sets maxRetries 0 on
// them only when it manages the retry itself, :1019-1021). Its rule when a retry is configured,
// that an emitted stream event vetoes any retry (modelRetry.mjs:650-663), is therefore moot by
// default: a stream is never retried once its headers are in, as with the client alone. The
// client's policy is openai 7's.
export const OPENAI_AGENTS_POLICY = OPENAI_NODE7_POLICY;

// The Vercel AI SDK 7 (ai 7.0.185 with @ai-sdk/openai 4.0.126, @ai-sdk/anthropic 4.0.112,
// @ai-sdk/google 4.0.129; AI: ai/src/, PU: @ai-sdk/provider-utils 5.0.86 src/, OA:
// @ai-sdk/openai/src/, AN: @ai-sdk/anthropic/src/, GO: @ai-sdk/google/src/), streamText with
// its defaults. The vercel-ai preset (ai 6) holds for what did not move: maxRetries ?? 2
// (AI util/prepare-retries.ts:15,44: 3 attempts); an APICallError is retried when isRetryable
// (AI util/retry-with-exponential-backoff.ts:83-88): by default 408, 409, 429, >= 500
// (@ai-sdk/provider src/errors/api-call-error.ts:28-32) and the network errors of PU
// handle-fetch-error.ts:6-18, 41-102 (a refused or reset connection, undici's timeouts);
// backoff 2 s x2, no jitter (AI util/retry-with-exponential-backoff.ts:67-68, PU
// retry-with-exponential-backoff.ts:109-125); retry-after-ms, then retry-after (seconds or a
// date against the local clock) instead of the backoff when 0 <= hint < 60 s (AI
// util/retry-with-exponential-backoff.ts:10-58); `timeout` unset, so no timer of its own (AI
// generate-text/stream-text.ts:947-956, prompt/request-options.ts:30-40) and undici's (6.29.1 in
// Node 22.23.5) alone; an unstreamed body is read inside the retried call, its transport errors
// retryable (PU post-to-api.ts:141-165). What a stream's failure after its headers gets depends
// on the provider, which reads ahead before it hands the stream over (the retried call ends
// there; an error part after it is never retried by default):
// - OpenAI (openai-chat, openai-responses): up to the first output chunk (OA
//   openai-stream-error.ts:39-132; chat: content, refusal, tool calls, chat/openai-chat-
//   language-model.ts:596-600, 825-840). An error frame there is a retryable APICallError by
//   its status (insufficient_quota never, OA openai-stream-error.ts:303-315), a broken body the
//   network error it is (PU response-handler.ts:57-90): stream_retries before-output. The
//   Responses read-ahead stops at the first event that is not response.created or
//   response.in_progress (responses/openai-responses-language-model.ts:1682-1694, 3310-3318) or
//   50 ms after response.in_progress (OA openai-stream-error.ts:81-86), before the first text:
//   before-output is the nearest the format says.
// - Anthropic: the first event only (a ping is skipped), AN anthropic-language-model.ts:
//   3678-3716: stream_retries first-event.
// - Google (gemini): none; the stream is returned at its headers (GO google-language-model.ts:
//   881-900): stream_retries never.
// With streamRetries (opt-in: AI generate-text/stream-text.ts:730-748, default 0 at :2235-2240,
// `--stream-retries N`), streamText retries the step when the stream yields an error part, also
// after output (:3110-3181): an error event or an event it cannot parse (the providers put both
// in error parts), never a broken or stalled body (a read that throws ends the stream,
// :3022-3029), whatever the error's isRetryable says (:3133-3135), at once: the retried call has
// no backoff before its first attempt (:3163 calls callLanguageModel, :2845-2847, whose retry
// waits only after a failure, PU retry-with-exponential-backoff.ts:86-87). The parts an attempt
// streamed before its error stay in fullStream (:735-738: "Partial output from a failed attempt
// that was already emitted cannot be retracted"), so the caller of fullStream gets both
// attempts' text: COMMIT-001 judges it. Declared as the nearest the format says: stream_retries
// until-commit on error events; what it cannot say is left to the defaults' keys, and the runner
// holds the library to them: an unparseable event is a `transport` failure to the format (which
// the library retries, resets not), the retry has no backoff (the declared 2 s is that of the
// other retries), and its budget is its own, N more calls of the model on top of the 3 attempts
// of maxRetries, each of them retried by maxRetries again.
const VERCEL_AI7_STREAM_RETRIES = {
  'openai-chat': 'before-output',
  'openai-responses': 'before-output',
  'anthropic-messages': 'first-event',
  gemini: 'never',
};
export const vercelAi7Policy = (dialect, streamRetries) => (streamRetries > 0
  ? { extends: 'vercel-ai', stream_retries: 'until-commit', stream_retry_on: ['error-event'] }
  : { extends: 'vercel-ai', stream_retries: VERCEL_AI7_STREAM_RETRIES[dialect] ?? 'never' });

// ollama 0.6.4 (ollama-js, pinned in node/package.json: it declares no engines; src/browser.ts,
// src/utils.ts). One attempt, nothing retried: chat() is one utils.post (browser.ts:76-111,
// utils.ts:248-270), an HTTP error a ResponseError at once (utils.ts:67-92), an error line a
// thrown Error (utils.ts:45-59). No timer of its own: the global fetch (browser.ts:52) with
// undici's timeouts, and a stream aborted only by client.abort() (browser.ts:58-63, 83-87). The
// node-fetch preset.
export const OLLAMA_JS_POLICY = { extends: 'node-fetch' };
