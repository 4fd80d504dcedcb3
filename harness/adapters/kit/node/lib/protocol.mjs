// The adapter protocol's channel (docs/adapter-protocol.md): the call line and cancel on stdin,
// validated event lines on stdout.
//
// stdout belongs to the protocol. Once guardStdout() ran, anything else written to
// process.stdout (console.log of a library, a stray debug print) goes to stderr instead, so the
// runner never sees a line that is not an event. Every event is checked against the protocol's
// JSON Schema (schema.mjs: harness/schema/adapter-protocol.schema.json, which the runner applies
// too) before it is written; a bad one throws ProtocolMisuse and is never written. At most one
// terminal event is written; nothing after it.
// One process per call by default: the module keeps the channel's state. In session mode
// (docs/adapter-protocol.md) one process serves every call of a run: each call runs inside
// inCall(index, fn), an AsyncLocalStorage scope that every event written from it (by the Wire,
// the Output, the terminal) is filed under: its `call` is added and its terminal is its own.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createInterface } from 'node:readline';
import { readFileSync } from 'node:fs';
import { EVENT_TYPES, definitionOf, schemaProblems } from './schema.mjs';

// The classification tables and dialect facts both kits share (the lines' shapes are the schema's).
export const PROTOCOL = JSON.parse(readFileSync(new URL('../../protocol.json', import.meta.url)));
export const DIALECTS = Object.keys(PROTOCOL.dialects);
const TERMINAL = new Set(['response/committed', 'response/failed']);

// An event this process was about to write breaks the protocol (a bug in the adapter).
export class ProtocolMisuse extends Error {
  constructor(message) {
    super(message);
    this.name = 'ProtocolMisuse';
  }
}

const state = { writeOut: null, hello: false, terminal: null };
// Session mode: the call whose events are being written ({call, terminal}); none per call.
const callScope = new AsyncLocalStorage();

// Runs `fn` as call `index` of a session: its events carry `call` and end on their own terminal.
export function inCall(index, fn) {
  return callScope.run({ call: index, terminal: null }, fn);
}

// The index of the session call whose scope the caller runs in (inCall), or undefined outside
// one (one call per process): for a client built once per process whose callbacks must act for
// the call at hand (the vercel-ai adapter sends each request to its own call's base URL).
export function currentCall() {
  return callScope.getStore()?.call;
}

export function guardStdout() {
  if (state.writeOut) return;
  state.writeOut = process.stdout.write.bind(process.stdout);
  process.stdout.write = process.stderr.write.bind(process.stderr);
}

// Free-form diagnostics: stderr is kept in the runner's report.
export function note(...parts) {
  const text = parts.map((p) => (typeof p === 'string' ? p : describe(p))).join(' ');
  process.stderr.write(`${text}\n`);
}

function describe(value) {
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

// ---- validation --------------------------------------------------------------------------

// The problems of one event (an empty list when it is a valid protocol line now): its shape
// against the schema, then its place in the call.
export function eventProblems(event) {
  const type = event?.type;
  if (!EVENT_TYPES.includes(type)) return [`unknown event type ${JSON.stringify(type)}`];
  const problems = schemaProblems(event, definitionOf(type)).map((p) => `${type}: ${p}`);
  if (type === 'adapter/hello' && state.hello) problems.push('adapter/hello written twice');
  if (type !== 'adapter/hello' && !state.hello) problems.push('adapter/hello must be first');
  const { terminal } = callState(type);
  if (terminal) problems.push(`${type} after the terminal ${terminal}`);
  return problems;
}

// Where the current event's terminal is kept: its call's in a session (not the hello's), else
// the process's.
function callState(type) {
  const scope = callScope.getStore();
  return scope && !PROCESS_EVENTS.has(type) ? scope : state;
}

// The events of the process, not of a call: they never carry a `call`.
const PROCESS_EVENTS = new Set(['adapter/hello', 'adapter/reset']);

// Writes one event line; throws ProtocolMisuse (writing nothing) when it would break the protocol.
export function emit(type, fields = {}) {
  const scope = callScope.getStore();
  const event = scope && !PROCESS_EVENTS.has(type) ? { type, call: scope.call, ...fields }
                                                    : { type, ...fields };
  const problems = eventProblems(event);
  const line = JSON.stringify(event);
  if (Buffer.byteLength(line) + 1 > PROTOCOL.max_line_bytes) {
    problems.push(`line of ${Buffer.byteLength(line)} bytes (limit ${PROTOCOL.max_line_bytes})`);
  }
  if (problems.length > 0) throw new ProtocolMisuse(problems.join('; '));
  if (type === 'adapter/hello') state.hello = true;
  if (type === 'adapter/reset') state.hello = false;  // the next run begins with a hello again
  if (TERMINAL.has(type)) callState(type).terminal = type;
  (state.writeOut ?? process.stdout.write.bind(process.stdout))(`${line}\n`);
}

export const terminalWritten = () => callState('').terminal;

// ---- stdin: the call line, then cancel -----------------------------------------------------

// What is wrong with a call line (an empty list when it is usable by an adapter of `dialects`).
export function callProblems(call, dialects = DIALECTS) {
  if (!call || typeof call !== 'object' || Array.isArray(call) || call.type !== 'call') {
    return ['not a {"type":"call"} object'];
  }
  const problems = [];
  try {
    if (!new URL(call.base_url).host) problems.push('base_url has no host');
  } catch {
    problems.push('base_url is not a URL');
  }
  if (typeof call.api_key !== 'string') problems.push('api_key is not a string');
  if (!dialects.includes(call.dialect)) {
    problems.push(`dialect ${JSON.stringify(call.dialect)} is not one of ${dialects.join(', ')}`);
  }
  const { request } = call;
  if (!request || typeof request !== 'object' || Array.isArray(request)) {
    problems.push('request is not an object');
  }
  return problems;
}

// Reads the call line; later {"type":"cancel"} lines abort the returned signal. `call` rejects
// when stdin ends first or the line is not a usable call.
export function readCall(dialects = DIALECTS) {
  const controller = new AbortController();
  const lines = createInterface({ input: process.stdin });
  let first = true;
  const call = new Promise((resolve, reject) => {
    lines.on('line', (line) => {
      if (!first) return onLaterLine(line, controller);
      first = false;
      let parsed;
      try {
        parsed = JSON.parse(line);
      } catch (error) {
        return reject(new Error(`the call line is not JSON: ${error.message}`));
      }
      const problems = callProblems(parsed, dialects);
      return problems.length ? reject(new Error(problems.join('; '))) : resolve(parsed);
    });
    lines.on('close', () => first && reject(new Error('stdin closed before the call line')));
  });
  const close = () => {
    lines.close();
    process.stdin.destroy();
  };
  return { call, signal: controller.signal, close };
}

// Session mode: every call line, the first being call 0, as an async iterator of {index, call,
// problems, signal}; a {"type":"cancel","call":i} line aborts call i's signal; a {"type":"reset"}
// line comes as {reset: true} (the run is over; the next run's calls follow). The iterator ends
// when stdin does (the runner closes it once every call has ended).
export function readCalls(dialects = DIALECTS) {
  const lines = createInterface({ input: process.stdin });
  const controllers = new Map();
  const queue = [];
  let wake = () => {};
  let closed = false;
  lines.on('line', (line) => {
    let parsed;
    try {
      parsed = JSON.parse(line);
    } catch {
      return note(`faultline-adapter: ignoring stdin line ${JSON.stringify(line.slice(0, 200))}`);
    }
    const index = Number.isInteger(parsed?.call) ? parsed.call : 0;
    if (parsed?.type === 'cancel') return controllers.get(index)?.abort();
    if (parsed?.type === 'reset') {  // the run is over: the next one numbers its calls from 0
      controllers.clear();
      queue.push({ reset: true });
      return wake();
    }
    const controller = new AbortController();
    controllers.set(index, controller);
    queue.push({ index, call: parsed, problems: callProblems(parsed, dialects),
                 signal: controller.signal });
    return wake();
  });
  lines.on('close', () => {
    closed = true;
    wake();
  });
  async function* calls() {
    for (;;) {
      if (queue.length > 0) {
        yield queue.shift();
      } else if (closed) {
        return;
      } else {
        await new Promise((resolve) => { wake = resolve; });
      }
    }
  }
  const close = () => {
    lines.close();
    process.stdin.destroy();
  };
  return { calls: calls(), close };
}

function onLaterLine(line, controller) {
  try {
    if (JSON.parse(line).type === 'cancel') return controller.abort();
  } catch {
    // reported below
  }
  return note(`faultline-adapter: ignoring stdin line ${JSON.stringify(line.slice(0, 200))}`);
}
