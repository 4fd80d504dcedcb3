#!/usr/bin/env node
// Adapter for the `ollama` npm package (ollama-js, pinned in node/package.json; install with
// harness/adapters/setup.sh), dialect ollama: POST /api/chat, newline-delimited JSON.
//
// It drives the UNMODIFIED library with its defaults: `new Ollama({host, fetch})`, where host is
// the runner's base_url (the library appends /api/chat) and `fetch` the adapter kit's Wire around
// the same globalThis.fetch the library uses by default (src/browser.ts:52), which observes every
// attempt. It makes the call the runner asked for, `client.chat(request)` (streamed when the
// request says stream: true, an async iterator of the NDJSON lines), iterates what it yields
// (each line the dialect's own object) and reports it: response/committed when the iteration ends
// normally, whatever it yielded, or response/failed with the classified error it threw. No
// recovery logic of its own (the library has none either: policies.mjs OLLAMA_JS_POLICY).
//
// Cancelling: chat() takes no AbortSignal. The library's own way is `client.abort()`, which
// aborts the streamed requests whose iterator it has handed out (src/browser.ts:58-63,
// 93-104); the cancel line calls it, and a stream handed out after the cancel is aborted at once,
// as an application that was told to stop would do. A request still waiting for its headers, and
// a request that is not streamed (sent without a signal, src/browser.ts:107-109), cannot be
// cancelled through the library: the call then ends ABORTED when the library returns, and its
// connection stays open until then.
//
// Usage: node harness/adapters/ollama-js.mjs [--per-call|--no-reset] < call lines (session mode
// with reset by default: sdk-common.mjs)
// Exit code: 0 committed, 1 failed, 2 bad input or library not installed.
import { failure, runAdapter } from './kit/node/faultline-adapter.mjs';
import { adapterMode, loadPinned, nothingToDrop } from './sdk-common.mjs';
import { OLLAMA_JS_POLICY } from './policies.mjs';

const { modules: [ollama], version } = await loadPinned('node', ['ollama']);

async function start({ call, fetch, output, signal }) {
  const client = new ollama.Ollama({ host: call.base_url.replace(/\/+$/, ''), fetch });
  const cancel = () => client.abort();
  signal.addEventListener('abort', cancel, { once: true });
  try {
    if (!call.request.stream) {
      output.whole(await client.chat({ ...call.request }));
      return;
    }
    const stream = await client.chat({ ...call.request });
    if (signal.aborted) stream.abort();
    for await (const line of stream) output.event(line);
  } finally {
    signal.removeEventListener('abort', cancel);
  }
}

// What the library throws that the wire cannot see: its own check that a stream ended with its
// done line (src/utils.ts:45-59; a line that is not JSON is skipped with a console.warn, :321-327,
// so a stream whose last line is cut short ends here too). An error line becomes a plain
// Error(message.error) (:47-49), which the wire has already classified from the line itself; an
// HTTP error a ResponseError (:67-92), which the wire classified from the status and body.
function classifyOllamaError(error, { wire }) {
  const message = String(error?.message ?? error);
  if (/^Did not receive done or success response in stream/.test(message)) {
    return failure('STREAM_TRUNCATED', wire.phase() === 'connect' ? 'stream' : wire.phase(),
                   `library: ${message}`);
  }
  return null;
}

await runAdapter({
  name: 'ollama-js',
  version,
  policy: OLLAMA_JS_POLICY,
  dialects: ['ollama'],
  mode: adapterMode(),
  reset: nothingToDrop,
  classifyError: classifyOllamaError,
  main: start,
});
