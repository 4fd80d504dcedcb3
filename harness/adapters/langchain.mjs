#!/usr/bin/env node
// Adapter for LangChain JS: `@langchain/openai` ChatOpenAI and `@langchain/anthropic`
// ChatAnthropic over `@langchain/core` (pinned in frameworks/package.json; opt-in install with
// harness/adapters/setup.sh --frameworks), all three dialects (ChatOpenAI with
// useResponsesApi for openai-responses).
//
// It drives the UNMODIFIED library with its defaults: the chat model constructed with only the
// model name, apiKey, the base URL, maxTokens and `fetch` (the adapter kit's Wire around
// the globalThis.fetch the SDKs underneath use by default, which observes every attempt), tools
// bound when the runner's request has them; then model.stream(messages, {signal}) (invoke()
// when the request is not streamed). LangChain retries through its AsyncCaller (p-retry), which
// has no hook the adapter could read, so each retry is announced by the kit when its request
// goes out (scheduled_retry_ms unknown, left out). Whatever the library delivers is committed,
// what it throws is the failure. No recovery of its own.
//
// With --with-fallbacks and a call line that carries `routes` (docs/routes.md), it builds one chat
// model per route (its base URL, dialect, wire model and tools), in priority order, and calls
// `primary.withFallbacks([...the others])`: LangChain's own router (@langchain/core
// runnables/base.js RunnableWithFallbacks). Each model keeps its own retries (7 attempts); a
// fallback is tried only once the model before it has thrown, and when streaming only if it threw
// before its first chunk (base.js _streamIterator: the stream is taken from the first runnable
// whose stream() resolves; an error while iterating it is rethrown). It has no circuit breaker.
//
// Usage: node harness/adapters/langchain.mjs [--with-fallbacks] [--per-call] < call lines
// (session mode by default: one process serves every call of a scenario run; sdk-common.mjs)
// Exit code: 0 committed, 1 failed, 2 bad input or library not installed.
import { classifyNetworkError, classifyStreamError, runAdapter }
  from './kit/node/faultline-adapter.mjs';
import { adapterMode, conversation, loadPinned, nothingToDrop, stopSequences }
  from './sdk-common.mjs';
import { LANGCHAIN_POLICY, langchainFallbacksPolicy } from './policies.mjs';

const { modules: [langchainOpenai, langchainAnthropic], version } =
    await loadPinned('frameworks', ['@langchain/openai', '@langchain/anthropic']);

function chatModel(call, fetch) {
  const { request } = call;
  const base = call.base_url.replace(/\/+$/, '');
  const common = { model: request.model, apiKey: call.api_key,
                   maxTokens: request.max_tokens ?? request.max_output_tokens };
  const model = call.dialect === 'anthropic-messages'
      ? new langchainAnthropic.ChatAnthropic({ ...common, anthropicApiUrl: base,
                                               clientOptions: { fetch } })
      : new langchainOpenai.ChatOpenAI({ ...common, configuration: { baseURL: `${base}/v1`, fetch },
                                         useResponsesApi: call.dialect === 'openai-responses' });
  return Array.isArray(request.tools) ? model.bindTools(request.tools) : model;
}

// LangChain takes OpenAI-style content blocks for every chat model (ChatAnthropic turns a data:
// URL into a base64 image block); a text-only message stays a string.
const messagesOf = (request) => conversation(request).map(({ role, parts }) => ({
  role,
  content: parts.every((p) => p.type === 'text') ? parts.map((p) => p.text).join('')
      : parts.map((p) => (p.type === 'text' ? { type: 'text', text: p.text }
                                            : { type: 'image_url', image_url: { url: p.url } })),
}));

// One AIMessageChunk (or the whole AIMessage) into the output.
function take(output, message, { whole }) {
  const blocks = typeof message.content === 'string'
      ? [{ type: 'text', text: message.content }] : message.content ?? [];
  for (const block of blocks) {
    if (block.type === 'text' || block.type === 'text_delta') {
      if (whole) output.text += block.text ?? '';
      else output.addText(block.text);
    } else if (block.type === 'thinking') {
      output.reasoning += block.thinking ?? '';
    }
  }
  if (whole) {
    (message.tool_calls ?? []).forEach((c, i) => output.tools.set(i, {
      id: c.id ?? '', name: c.name ?? '', arguments: JSON.stringify(c.args ?? {}) }));
  }
  for (const c of whole ? [] : message.tool_call_chunks ?? []) {
    output.addToolCall(c.index ?? 0, c.id, c.name, c.args);
  }
  const meta = message.response_metadata ?? {};
  output.finish = meta.finish_reason ?? meta.stop_reason ?? meta.status ?? output.finish;
  const usage = message.usage_metadata;
  if (usage) {
    output.usage = { input_tokens: usage.input_tokens ?? output.usage.input_tokens,
                     output_tokens: usage.output_tokens ?? output.usage.output_tokens };
  }
}

const withFallbacks = process.argv.includes('--with-fallbacks');

// The routes of the call line as calls of their own, lowest priority first (the sort is stable:
// scenario order breaks ties, as the runner's primary is chosen).
const routeCalls = (call) => [...(call.routes ?? [])]
    .sort((a, b) => (a.priority ?? 0) - (b.priority ?? 0))
    .map((route) => ({ ...call, base_url: route.base_url, dialect: route.dialect,
                       request: route.request }));

function routedModel(call, fetch) {
  const routes = withFallbacks ? routeCalls(call) : [];
  if (routes.length < 2) return chatModel(call, fetch);
  const [primary, ...fallbacks] = routes.map((route) => chatModel(route, fetch));
  return primary.withFallbacks(fallbacks);
}

// LangChain's defaults, and withFallbacks' own (@langchain/core runnables/base.js,
// RunnableWithFallbacks): the langchain-js-fallbacks preset, which cites them.
function policyOf(call) {
  const routes = withFallbacks ? (call.routes ?? []).length : 0;
  return routes < 2 ? LANGCHAIN_POLICY : langchainFallbacksPolicy(routes);
}

async function main({ call, fetch, signal, output }) {
  const model = routedModel(call, fetch);
  const messages = messagesOf(call.request);
  const options = { signal, stop: stopSequences(call.request) };
  if (!call.request.stream) {
    take(output, await model.invoke(messages, options), { whole: true });
    return;
  }
  for await (const chunk of await model.stream(messages, options)) {
    take(output, chunk, { whole: false });
  }
}

// What the library threw when the wire saw nothing wrong with the last attempt: an SDK error
// event inside a 200 stream (an APIError without a status), or a network error.
function classifyError(error) {
  if (error?.status === undefined && error?.error && typeof error.error === 'object') {
    return classifyStreamError(error.error);
  }
  if (/APIConnection|TimeoutError/.test(`${error?.constructor?.name} ${error?.name}`)) {
    return classifyNetworkError(error.cause ?? error, 'connect');
  }
  return null;
}

await runAdapter({
  name: withFallbacks ? 'langchain-with-fallbacks' : 'langchain',
  version,
  policy: policyOf,
  dialects: ['openai-chat', 'openai-responses', 'anthropic-messages'],
  classifyError,
  main,
  mode: adapterMode(),
  reset: nothingToDrop,  // each call builds its model (and its fallbacks) anew
});
