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
// Usage: node harness/adapters/vercel-ai.mjs [--with-fallbacks] [--per-call|--no-reset] < call
// lines (session mode with reset by default: one process serves every call of a scenario run,
// and the runs one after another; sdk-common.mjs)
// Exit code: 0 committed, 1 failed, 2 bad input or library not installed.
import { causeText, classifyNetworkError, classifyStreamError, currentCall, failure, runAdapter }
  from './kit/node/faultline-adapter.mjs';
import { adapterMode, conversation, loadPinned, resetWith, stopSequences } from './sdk-common.mjs';
import { AI_FALLBACK_RESET_MS, VERCEL_AI_POLICY, vercelAiFallbackPolicy } from './policies.mjs';

const withFallbacks = process.argv.includes('--with-fallbacks');
const { modules: [ai, openaiProvider, anthropicProvider, aiFallback], version } =
    await loadPinned('frameworks', ['ai', '@ai-sdk/openai', '@ai-sdk/anthropic',
                                    ...(withFallbacks ? ['ai-fallback'] : [])]);

function model(call, fetch) {
  const settings = { apiKey: call.api_key, baseURL: `${call.base_url.replace(/\/+$/, '')}/v1`,
                     fetch };
  const name = call.request.model;
  if (call.dialect === 'anthropic-messages') {
    return anthropicProvider.createAnthropic(settings)(name);
  }
  const openai = openaiProvider.createOpenAI(settings);
  return call.dialect === 'openai-chat' ? openai.chat(name) : openai.responses(name);
}

// The runner's tools (in the dialect's own shape) as the library's tool set, without execute.
function tools(request) {
  if (!Array.isArray(request.tools)) return undefined;
  const set = {};
  for (const t of request.tools) {
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
  return { model: routedModel(call, fetch), messages, tools: tools(request), abortSignal: signal,
           maxOutputTokens: request.max_tokens ?? request.max_output_tokens,
           stopSequences: stopSequences(request) };
}

const usageOf = (u) => ({ input_tokens: u?.inputTokens ?? null,
                          output_tokens: u?.outputTokens ?? null });

async function main({ call, fetch, signal, output }) {
  const index = currentCall() ?? 0;
  sessionCalls.set(index, { call, fetch });
  try {
    await serve(call, fetch, signal, output);
  } finally {
    sessionCalls.delete(index);
  }
}

async function serve(call, fetch, signal, output) {
  const options = callOptions(call, fetch, signal);
  if (!call.request.stream) {
    const result = await ai.generateText(options);
    output.text = result.text;
    result.toolCalls.forEach((c, i) => output.tools.set(i, {
      id: c.toolCallId, name: c.toolName, arguments: JSON.stringify(c.input) }));
    output.finish = result.rawFinishReason ?? result.finishReason;
    output.usage = usageOf(result.usage);
    return;
  }
  const result = ai.streamText({ ...options, onError: () => {} });  // errors come as parts
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
//   shape (`chunk.error` of a failed parse, the same files :1428 and :5442).
function classifyError(error) {
  const e = error?.lastError ?? error;
  if (e?.name === 'AI_APICallError') {
    if (e.responseBody) return classifyStreamError(e.data ?? e.responseBody);
    return e.cause ? classifyNetworkError(e.cause, 'connect') : null;
  }
  if (e?.name === 'AI_JSONParseError' || e?.name === 'AI_TypeValidationError') {
    return failure('MALFORMED_RESPONSE', 'stream', causeText(e));
  }
  if (e && typeof e === 'object' && !(e instanceof Error)) return classifyStreamError(e);
  return null;
}

await runAdapter({
  name: withFallbacks ? 'vercel-ai-fallback' : 'vercel-ai',
  version,
  policy: policyOf,
  dialects: ['openai-chat', 'openai-responses', 'anthropic-messages'],
  classifyError,
  main,
  mode: adapterMode(),
  // Between two runs the session's FallbackModel goes (the index it reached with it): the next
  // run builds its own at its first call with routes, as a new process would.
  reset: resetWith(() => { sessionFallback = null; }),
});
