// The adapter protocol's channel (docs/adapter-protocol.md): the call line and cancel on stdin,
// validated event lines on stdout.
//
// stdout belongs to the protocol. Once guardStdout() ran, anything else written to
// process.stdout (console.log of a library, a stray debug print) goes to stderr instead, so the
// runner never sees a line that is not an event. Every event is checked against the protocol's
// field table (../protocol.json) before it is written; a bad one throws ProtocolMisuse and is
// never written. At most one terminal event is written; nothing after it.
// One process per call: the module keeps the channel's state. Not reentrant across calls.
import { createInterface } from 'node:readline';
import { readFileSync } from 'node:fs';

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

const isInt = (v) => Number.isInteger(v);
const TYPES = {
  string: (v) => typeof v === 'string',
  boolean: (v) => typeof v === 'boolean',
  object: (v) => v !== null && typeof v === 'object' && !Array.isArray(v),
  attempt: (v) => isInt(v) && v >= 1,
  status: (v) => isInt(v) && v >= 100 && v <= 599,
  duration: (v) => typeof v === 'number' && Number.isFinite(v) && v >= 0,
  uncommitted: (v) => v === 'uncommitted',
  string_or_null: (v) => v === null || typeof v === 'string',
  code: (v) => Object.hasOwn(PROTOCOL.codes, v),
  class: (v) => PROTOCOL.classes.includes(v),
  phase: (v) => PROTOCOL.phases.includes(v),
  partial_output: (v) => PROTOCOL.partial_output.includes(v),
  delay_source: (v) => PROTOCOL.delay_sources.includes(v),
  failure: (v) => TYPES.object(v) && fieldProblems(v, PROTOCOL.failure, 'failure').length === 0,
  tool_call: (v) => TYPES.object(v) && isInt(v.index) && typeof v.arguments === 'string',
  tool_calls: (v) => Array.isArray(v) && v.every((c) => TYPES.object(c) &&
      ['id', 'name', 'arguments'].every((k) => typeof c[k] === 'string')),
  usage: (v) => TYPES.object(v) && ['input_tokens', 'output_tokens'].every(
      (k) => v[k] === null || v[k] === undefined || (isInt(v[k]) && v[k] >= 0)),
};

function fieldProblems(object, spec, where) {
  const problems = [];
  for (const [key, type] of Object.entries(spec.required)) {
    if (!(key in object)) problems.push(`${where}: missing "${key}"`);
    else if (!TYPES[type](object[key])) problems.push(`${where}.${key}: not a valid ${type}`);
  }
  for (const [key, value] of Object.entries(object)) {
    if (key === 'type' || key in spec.required) continue;
    const type = spec.optional[key];
    if (!type) problems.push(`${where}: unknown field "${key}"`);
    else if (!TYPES[type](value)) problems.push(`${where}.${key}: not a valid ${type}`);
  }
  if (spec.one_of && spec.one_of.filter((k) => k in object).length !== 1) {
    problems.push(`${where}: exactly one of ${spec.one_of.join(', ')}`);
  }
  if (spec.together && new Set(spec.together.map((k) => k in object)).size > 1) {
    problems.push(`${where}: ${spec.together.join(' and ')} go together`);
  }
  return problems;
}

// The problems of one event (an empty list when it is a valid protocol line).
export function eventProblems(event) {
  const spec = PROTOCOL.events[event?.type];
  if (!spec) return [`unknown event type ${JSON.stringify(event?.type)}`];
  // Fields any event may carry (at_ms) join each event's own optional ones.
  const withCommon = { ...spec, optional: { ...PROTOCOL.any_event, ...spec.optional } };
  const problems = fieldProblems(event, withCommon, event.type);
  if (event.type === 'adapter/hello' && state.hello) problems.push('adapter/hello written twice');
  if (event.type !== 'adapter/hello' && !state.hello) problems.push('adapter/hello must be first');
  if (state.terminal) problems.push(`${event.type} after the terminal ${state.terminal}`);
  return problems;
}

// Writes one event line; throws ProtocolMisuse (writing nothing) when it would break the protocol.
export function emit(type, fields = {}) {
  const event = { type, ...fields };
  const problems = eventProblems(event);
  const line = JSON.stringify(event);
  if (Buffer.byteLength(line) + 1 > PROTOCOL.max_line_bytes) {
    problems.push(`line of ${Buffer.byteLength(line)} bytes (limit ${PROTOCOL.max_line_bytes})`);
  }
  if (problems.length > 0) throw new ProtocolMisuse(problems.join('; '));
  if (type === 'adapter/hello') state.hello = true;
  if (TERMINAL.has(type)) state.terminal = type;
  (state.writeOut ?? process.stdout.write.bind(process.stdout))(`${line}\n`);
}

export const terminalWritten = () => state.terminal;

// ---- stdin: the call line, then cancel -----------------------------------------------------

// What is wrong with a call line (an empty list when it is usable by an adapter of `dialects`).
export function callProblems(call, dialects = DIALECTS) {
  if (!TYPES.object(call) || call.type !== 'call') return ['not a {"type":"call"} object'];
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
  if (!TYPES.object(call.request)) problems.push('request is not an object');
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

function onLaterLine(line, controller) {
  try {
    if (JSON.parse(line).type === 'cancel') return controller.abort();
  } catch {
    // reported below
  }
  return note(`faultline-adapter: ignoring stdin line ${JSON.stringify(line.slice(0, 200))}`);
}
