// faultline's adapter kit for Node.js (ESM, no dependencies): everything an adapter needs to put
// an LLM client library under `faultline run --adapter` (docs/adapter-protocol.md).
//
//   runAdapter({name, version, policy, dialects, main, classifyError})
//     reads the call line, writes adapter/hello, gives main() the call, an AbortSignal that the
//     runner's cancel aborts, an observing fetch (Wire: response/start per request and
//     response/interrupted before each retry, from the wire) and an Output that writes
//     assistant/chunk and assembles the answer; then writes exactly one terminal event and exits
//     (0 committed, 1 failed, 2 bad call line).
//
// main() resolving means the library delivered an answer: it is committed as assembled (or
// failed, when the stream announced an error event). main() throwing means the library failed:
// the failure is, in order, an AdapterFailure's own, what the wire saw on the last attempt (an
// HTTP error status, a network error, a broken body), what `classifyError(error, context)`
// says (library knowledge: its own error types), or the kit's generic classifyThrown. A cancel
// always ends the call ABORTED.
//
// A library that announces its own retries calls wire.retrying({delayMs, source, failure}) before
// its wait (failure: its own classification, else the wire's); a client that discards a failed
// attempt's output calls output.reset() as its new attempt begins (Output keeps what the caller
// got, across attempts). Every event is checked against harness/schema/adapter-protocol.schema.json
// before it is written.
//
// The call line's `limits` (max_attempts and timeouts, when the scenario sets them) are what a
// client is asked to be configured with: apply what the library can (its retry count, its
// deadline) and declare what was applied, with `policy` a function of the call:
//   policy: (call) => ({ extends: 'openai-node', max_attempts: call.limits?.max_attempts ?? 3 })
//
// One call per process, or with `mode: 'session'` every call of a scenario run in this one
// process (docs/adapter-protocol.md, "Session mode"): the hello declares it, each call line runs
// main() concurrently in a scope of its own (its events carry its call, its cancel aborts its
// signal), and the process exits when stdin ends. A client built once, outside main(), then
// serves every call: its breaker and retry budget are judged across them. With `reset` (a
// function, maybe async) the process also serves scenario runs one after another: between two
// runs the runner sends a reset line, and the kit waits for the calls to end, calls reset() to
// drop what the calls shared (rebuild the client), closes the pooled connections of the global
// fetch, answers adapter/reset and writes the next run's hello at its first call.
//
// The pieces are exported for adapters that need them on their own.
import { DIALECTS, PROTOCOL, ProtocolMisuse, emit, guardStdout, inCall, note, readCall,
         readCalls, terminalWritten } from './lib/protocol.mjs';
import { AdapterFailure, aborted, causeText, classifyThrown, failure } from './lib/classify.mjs';
import { Output } from './lib/output.mjs';
import { Wire } from './lib/wire.mjs';

export { DIALECTS, PROTOCOL, ProtocolMisuse, currentCall, emit, inCall, note, readCall,
         readCalls } from './lib/protocol.mjs';
export { AdapterFailure, aborted, awsException, awsType, bodyRetryHint, causeText,
         classifyHttp, classifyNetworkError, classifyStreamError, classifyThrown, errorFields,
         failure, parseGoDuration, parseHttpDate, providerErrorCode,
         retryHint } from './lib/classify.mjs';
export { Output, checkContentType, endpoint, parseEvent, requestBody, requestHeaders,
         streamEvents, streams } from './lib/output.mjs';
export { SseDecoder, isErrorEvent, sseEvents } from './lib/sse.mjs';
export { NdjsonDecoder, ndjsonEvents } from './lib/ndjson.mjs';
export { EventStreamDecoder, eventStreamEvents, messageEvent } from './lib/eventstream.mjs';
export { Wire, responseId } from './lib/wire.mjs';

// How long the process stays up after its terminal event, so that a connection the library
// leaves open is seen open by the provider (the runner checks that cancels and timeouts close
// them) instead of being closed by our exit. The process exits earlier when nothing is pending.
const DEFAULT_LINGER_MS = 1500;

export async function runAdapter({ name, version, policy, dialects = DIALECTS, main,
                                   classifyError, strict = false, baseFetch,
                                   lingerMs = DEFAULT_LINGER_MS, mode = 'per-call', reset }) {
  guardStdout();
  const serve = { main, classifyError, strict, baseFetch };
  if (mode === 'session') {
    return runSession({ name, version, policy, dialects, lingerMs, reset }, serve);
  }
  const io = readCall(dialects);
  let call;
  try {
    call = await io.call;
    // A policy may depend on the call (a router's attempt budget grows with its routes).
    emit('adapter/hello',
         { name, version, policy: typeof policy === 'function' ? policy(call) : policy });
  } catch (error) {
    note(`${name}: ${error.message}`);
    return exitSoon(io, 2, 0);
  }
  const { failed, bug } = await serveCall(call, io.signal, serve);
  if (bug) return exitSoon(io, 1, 0);
  return exitSoon(io, failed ? 1 : 0, lingerMs);
}

// Session mode: every call line starts a call at once, beside the others; the hello (the first
// call's policy) goes before the first call's events. Exits when stdin ends and every call ended:
// 0 when all committed. A run's first call line it cannot use ends the process (exit 2); a later
// one is skipped, saying why (the runner then reports that call's missing terminal).
async function runSession({ name, version, policy, dialects, lingerMs, reset }, serve) {
  const io = readCalls(dialects);
  let running = [];
  let failures = 0;
  let hello = false;
  for await (const { index, call, problems, signal, reset: resetting } of io.calls) {
    if (resetting) {
      await Promise.all(running);
      running = [];
      await reset?.();
      await closePooledConnections();
      emit('adapter/reset');
      hello = false;
      continue;
    }
    if (problems.length > 0) {
      note(`${name}: call ${index}: ${problems.join('; ')}`);
      // A run whose first call line it cannot use (another dialect, say) is one it cannot serve:
      // exit as a process of one call would, at once, rather than leave the runner waiting.
      if (!hello) return exitSoon(io, 2, 0);
      continue;
    }
    if (!hello) {
      emit('adapter/hello', { name, version, mode: 'session', ...(reset ? { reset: true } : {}),
                              policy: typeof policy === 'function' ? policy(call) : policy });
      hello = true;
    }
    running.push(inCall(index, () => serveCall(call, signal, serve))
      .then(({ failed, bug }) => { failures += failed || bug ? 1 : 0; }));
  }
  await Promise.all(running);
  exitSoon(io, failures > 0 ? 1 : 0, lingerMs);
}

// Closes the connections the global fetch keeps alive, so that the next run starts with none, as a
// new process would: Node's fetch is undici's, whose global dispatcher lives under the symbol
// every undici version shares (its setGlobalDispatcher); a fresh one of the same class replaces
// it, and the old one closes once its requests are done. Nothing to do before the first fetch.
async function closePooledConnections() {
  const key = Symbol.for('undici.globalDispatcher.1');
  const old = globalThis[key];
  if (!old || typeof old.close !== 'function' || typeof old.constructor !== 'function') return;
  globalThis[key] = new old.constructor();
  await old.close();
}

// One call: main() with the kit's wire and output, then its one terminal event. {failed, bug}.
async function serveCall(call, signal, { main, classifyError, strict, baseFetch }) {
  const wire = new Wire({ baseFetch: baseFetch ?? globalThis.fetch, routes: call.routes ?? [],
                          dialect: call.dialect });
  const output = new Output(call.dialect, wire, { strict });
  const context = { call, signal, fetch: wire.fetch, wire, output };
  let failed = await outcome(main, context, classifyError);
  await wire.settled();  // a retry announced before the library gave up (e.g. cancel in backoff)
  if (failed && output.chunks > 0 && failed.partial_output === 'none') {
    failed = { ...failed, partial_output: 'uncommitted' };
  }
  try {
    const ids = wire.ids();
    const route = ids.route_id ? { route_id: ids.route_id } : {};
    if (failed) emit('response/failed', { ...ids, failure: { ...route, ...failed } });
    else emit('response/committed', { ...ids, ...output.committed() });
  } catch (error) {
    adapterBug(wire, error);
    return { failed: true, bug: true };
  }
  return { failed: Boolean(failed), bug: false };
}

// The failure the call ended with, or null when the library delivered an answer.
async function outcome(main, context, classifyError) {
  const { signal, wire, output } = context;
  try {
    await main(context);
  } catch (error) {
    if (error instanceof ProtocolMisuse) {
      note(`adapter bug: ${error.message}`);
      return failure('UNKNOWN', wire.phase(), `adapter bug: ${error.message}`);
    }
    const failed = signal.aborted ? null : await libraryFailure(error, context, classifyError);
    // A cancel that came while the failure was being read (an error body takes a moment) still
    // decides: the caller gave up before the call ended.
    return signal.aborted ? aborted(wire.phase()) : failed;
  }
  if (signal.aborted) {
    // Libraries often end a stream quietly when its signal aborts; the caller knows why.
    return aborted(wire.phase(), 'cancelled by the caller; the library ended quietly');
  }
  return output.streamFailure;
}

async function libraryFailure(error, context, classifyError) {
  if (error instanceof AdapterFailure) return error.failure;
  const { wire } = context;
  const seen = await wire.lastFailure();
  if (seen) return { ...seen, message: `${seen.message} (the library threw ${causeText(error)})` };
  return classifyError?.(error, context) ?? classifyThrown(error, wire.phase());
}

function adapterBug(wire, error) {
  note(`adapter bug: ${error.message}`);
  if (!terminalWritten()) {
    emit('response/failed', { ...wire.ids(),
                              failure: failure('UNKNOWN', wire.phase(), 'adapter bug') });
  }
}

function exitSoon(io, code, lingerMs) {
  io.close();
  process.exitCode = code;
  setTimeout(() => process.exit(code), lingerMs).unref();
}
