// Shared plumbing of the Node SDK adapters (openai-node.mjs, anthropic-node.mjs): the adapter
// protocol of DESIGN §5 on stdin/stdout, observation of the SDK's attempts, assembly of what the
// SDK yields, and the mapping of what it throws onto the failure taxonomy of DESIGN §6.
//
// The adapters add no recovery of their own: they make one SDK call and report what happened.
// Attempts are observed without changing the SDK's behaviour:
//   - `fetch` option: a wrapper that calls the same global fetch the SDK would use by default
//     (Shims.getDefaultFetch() returns globalThis.fetch) and emits response/start per request;
//   - `logger` + `logLevel: 'info'`: the SDK logs "... - retrying, N attempts remaining" right
//     before it sleeps and retries (makeRequest), which becomes response/interrupted. The delay
//     it then picks is not logged, so scheduled_retry_ms is left out (unknown), not guessed.
//     The SDK cancels a retried response's body unread; the wrapper reads an error body from a
//     clone (Response.clone(), at most 250 ms) so that the interrupted event's class can use it.
// One process per call; not reentrant.
import { createInterface } from 'node:readline';
import { readFileSync } from 'node:fs';

const NODE_DIR = new URL('./node/', import.meta.url);

// How long the process stays up after the terminal event, so that a connection the SDK leaves
// open is seen open by the provider (CANCEL-003, TIME-001) instead of being closed by our exit.
// The process exits earlier when nothing is pending.
const LINGER_MS = 1500;

export function emit(type, fields = {}) {
  process.stdout.write(`${JSON.stringify({ type, ...fields })}\n`);  // pipes are sync on Linux
}

export function note(...parts) {
  const text = parts.map((p) => (typeof p === 'string' ? p : inspectable(p))).join(' ');
  process.stderr.write(`${text}\n`);
}

function inspectable(value) {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

// The SDK package, imported from harness/adapters/node/node_modules; a clear error when absent.
export async function loadSdk(name) {
  const { load } = await import(new URL('load.mjs', NODE_DIR));
  try {
    const module = await load(name);
    const meta = JSON.parse(readFileSync(new URL(`node_modules/${name}/package.json`, NODE_DIR)));
    return { module, version: meta.version };
  } catch (error) {
    note(`cannot load ${name} (${error.message}); run harness/adapters/setup.sh first`);
    process.exit(2);
  }
}

// Reads the call line, then watches stdin for {"type":"cancel"}, which aborts `controller`.
export function readCall() {
  const controller = new AbortController();
  const lines = createInterface({ input: process.stdin });
  let first = true;
  const call = new Promise((resolve, reject) => {
    lines.on('line', (line) => {
      if (first) {
        first = false;
        try {
          resolve(JSON.parse(line));
        } catch (error) {
          reject(error);
        }
        return;
      }
      try {
        if (JSON.parse(line).type === 'cancel') controller.abort();
      } catch {
        note(`ignoring stdin line ${JSON.stringify(line)}`);
      }
    });
    lines.on('close', () => first && reject(new Error('stdin closed before the call line')));
  });
  return { call, controller, close: () => { lines.close(); process.stdin.destroy(); } };
}

// --- classification (DESIGN §6) -------------------------------------------------------------

const RETRYABLE = new Set(['rate-limit', 'timeout', 'transport', 'provider-overloaded',
                           'provider-unavailable', 'protocol', 'truncated', 'empty']);

const STATUS = {
  400: ['INVALID_REQUEST', 'invalid-request'], 401: ['AUTH', 'auth'], 402: ['QUOTA', 'quota'],
  403: ['AUTH', 'auth'], 408: ['TIMEOUT', 'timeout'], 429: ['RATE_LIMIT', 'rate-limit'],
  503: ['UNAVAILABLE', 'provider-unavailable'], 529: ['OVERLOADED', 'provider-overloaded'],
};

// Provider error type/code fragments -> [code, class], first match wins (by type/code, not by
// message: "The server is overloaded or not ready yet." also comes with plain 503s).
const ERROR_KINDS = [
  [['overloaded'], 'OVERLOADED', 'provider-overloaded'],
  [['quota', 'insufficient', 'billing'], 'QUOTA', 'quota'],
  [['context'], 'CONTEXT_WINDOW_EXCEEDED', 'context-overflow'],
  [['rate_limit'], 'RATE_LIMIT', 'rate-limit'],
  [['auth', 'permission'], 'AUTH', 'auth'],
  [['invalid_request', 'not_found'], 'INVALID_REQUEST', 'invalid-request'],
  [['unavailable', 'timeout'], 'UNAVAILABLE', 'provider-unavailable'],
  [['server_error', 'api_error'], 'SERVER', 'provider-unavailable'],
];
const CONTEXT_WORDS = ['context length', 'context window', 'context limit', 'too long'];

function classifyError(kind, message) {
  let k = (kind || '').toLowerCase();
  const m = (message || '').toLowerCase();
  if (CONTEXT_WORDS.some((w) => m.includes(w))) k += ' context';
  if (m.includes('current quota') || m.includes('credit balance')) k += ' quota';
  if (m.includes('currently overloaded')) k += ' overloaded';  // OpenAI's "That model is ..."
  for (const [fragments, code, cls] of ERROR_KINDS) {
    if (fragments.some((f) => k.includes(f))) return [code, cls];
  }
  return null;
}

// [kind, message] of an error object in either SDK's shape: openai keeps body.error in
// `err.error`, anthropic keeps the whole body ({type: "error", error: {...}}).
function errorFields(body, fallback) {
  if (!body || typeof body !== 'object') return ['', typeof body === 'string' ? body : fallback];
  const obj = body.error && typeof body.error === 'object' ? body.error : body;
  return [`${obj.type ?? ''} ${obj.code ?? ''}`, String(obj.message ?? fallback ?? '')];
}

export function failure(code, cls, phase, message, extra = {}) {
  return { code, class: cls, phase, retryable: RETRYABLE.has(cls), partial_output: 'none',
           message, ...extra };
}

function byStatus(status, body, message, headers) {
  let [code, cls] = STATUS[status] ??
      (status >= 500 ? ['SERVER', 'provider-unavailable'] : ['INVALID_REQUEST', 'invalid-request']);
  const [kind, text] = errorFields(body, message);
  const refined = classifyError(kind, text);
  // The body refines the status only where the status is ambiguous.
  if (refined && (refined[1] === 'provider-overloaded' ||
                  ([400, 413, 422].includes(status) && refined[1] === 'context-overflow') ||
                  ([400, 429].includes(status) && refined[1] === 'quota'))) {
    [code, cls] = refined;
  }
  const extra = { status };
  const hint = retryAfterMs(headers);
  if (hint !== undefined) extra.retry_after_ms = hint;
  return failure(code, cls, 'response-headers', `HTTP ${status}: ${text}`, extra);
}

// The server's hint in ms as the headers state it (informative only: the SDK does its own parse).
function retryAfterMs(headers) {
  const get = (name) => (typeof headers?.get === 'function' ? headers.get(name) : undefined);
  const ms = Number.parseFloat(get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return Math.ceil(ms);
  const value = get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

function causeText(error) {
  let text = '';
  for (let e = error, depth = 0; e && depth < 5; e = e.cause, depth++) {
    text += ` ${e.name ?? ''} ${e.code ?? ''} ${e.message ?? ''}`;
  }
  return text;
}

// What the SDK threw, as a DESIGN §6 failure. `errors` holds the SDK's error classes.
export function classifyThrown(error, errors, phase) {
  // The streaming helpers wrap what they caught in a plain SDK error with the original as cause.
  if (error?.cause instanceof Error && !(error instanceof errors.APIError)) {
    return classifyThrown(error.cause, errors, phase);
  }
  const message = String(error?.message ?? error);
  const extra = error?.requestID ? { request_id: error.requestID } : {};
  if (error instanceof errors.APIUserAbortError || error?.name === 'AbortError') {
    return failure('ABORTED', 'aborted', phase, `aborted: ${message}`, extra);
  }
  if (error instanceof errors.APIConnectionTimeoutError) {
    return failure('TIMEOUT', 'timeout', 'response-headers',
                   `${error.constructor.name}: ${message}`);
  }
  if (error instanceof errors.APIConnectionError) {
    const text = causeText(error);
    return /timed? ?out/i.test(text)
        ? failure('TIMEOUT', 'timeout', 'connect', `${error.constructor.name}:${text}`)
        : failure('TRANSPORT', 'transport', 'connect', `${error.constructor.name}:${text}`);
  }
  if (error instanceof errors.APIError && typeof error.status === 'number') {
    return { ...byStatus(error.status, error.error, message, error.headers), ...extra };
  }
  if (error instanceof errors.APIError) {  // an error event inside the stream: like its HTTP twin
    const [kind, text] = errorFields(error.error, message);
    const [code, cls] = classifyError(kind, text) ?? ['SERVER', 'provider-unavailable'];
    return failure(code, cls, 'stream', `in-stream error (${kind.trim()}): ${text}`, extra);
  }
  if (error instanceof SyntaxError) {
    return failure('MALFORMED_RESPONSE', 'protocol', phase, `SyntaxError: ${message}`);
  }
  if (!(error instanceof Error) && error && typeof error === 'object') {  // a raw error event
    const [kind, text] = errorFields(error, message);
    const [code, cls] = classifyError(kind, text) ?? ['SERVER', 'provider-unavailable'];
    return failure(code, cls, 'stream', `thrown error event (${kind.trim()}): ${text}`);
  }
  // The streaming helpers' own checks of the end and the shape of the stream.
  if (/without sending any (chunks|events)/.test(message)) {
    return failure('EMPTY_RESPONSE', 'empty', 'finish', `helper: ${message}`);
  }
  if (/missing finish_reason|ended without producing/.test(message)) {
    return failure('STREAM_TRUNCATED', 'truncated', 'finish', `helper: ${message}`);
  }
  if (/missing (output|content) at index|expected content to be/.test(message) ||
      /Unexpected event order|Cannot read prop|Unable to parse/.test(message)) {
    return failure('MALFORMED_RESPONSE', 'protocol', 'stream', `helper: ${message}`);
  }
  const text = causeText(error);
  if (/BODY_TIMEOUT|HEADERS_TIMEOUT|timed? ?out/i.test(text)) {
    return failure('TIMEOUT', 'timeout', phase, `${error?.name}:${text}`);
  }
  if (/terminated|UND_ERR_SOCKET|ECONNRESET|EPIPE|other side closed|socket/i.test(text)) {
    return failure('TRANSPORT', 'transport', phase, `${error?.name}:${text}`);
  }
  return failure('UNKNOWN', 'unknown', phase, `${error?.name}:${text}`);
}

// --- attempts ------------------------------------------------------------------------------

// Counts the SDK's HTTP requests and reports each retry decision it logs.
export class AttemptObserver {
  constructor() {
    this.attempt = 0;
    this.last = null;      // {status, headers, body} or {error} of the latest request
    this.pending = null;   // the response/interrupted being written (it waits for the body)
    const baseFetch = globalThis.fetch;  // what the SDK would use without our option
    this.fetch = async (url, init) => {
      await this.pending;  // normally long settled: the SDK sleeps before a retry
      const attempt = ++this.attempt;
      this.last = null;
      emit('response/start', { response_id: responseId(attempt), attempt });
      try {
        const response = await baseFetch(url, init);
        this.last = { status: response.status, headers: response.headers };
        // An error body is read from a clone: the SDK cancels the body of a response it
        // retries unread, and its class (429 quota vs rate limit, 503 overloaded) is in there.
        if (!response.ok && response.body) this.last.body = readBriefly(response.clone());
        return response;
      } catch (error) {
        this.last = { error };
        throw error;
      }
    };
    const toStderr = (level) => (message, ...rest) => note(`[sdk ${level}]`, message, ...rest);
    this.logger = {
      error: toStderr('error'),
      warn: toStderr('warn'),
      info: (message, ...rest) => {
        if (/retrying, \d+ attempts? remaining/.test(String(message))) {
          this.pending = this.interrupted(String(message), this.attempt, this.last ?? {});
        }
        note('[sdk info]', message, ...rest);
      },
      debug: () => {},
    };
  }

  // The SDK decided to retry request `attempt`; it logs this before its backoff sleep.
  async interrupted(logLine, attempt, last) {
    let failed;
    if (last.error) {
      failed = /timed? ?out/i.test(causeText(last.error)) || last.error.name === 'AbortError'
          ? failure('TIMEOUT', 'timeout', 'response-headers', `SDK: ${logLine}`)
          : failure('TRANSPORT', 'transport', 'connect', `SDK: ${logLine}${causeText(last.error)}`);
    } else if (last.status) {
      const text = await last.body ?? '';
      let body = null;
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
      failed = byStatus(last.status, body, '', last.headers);
      failed.message = `SDK: ${logLine}; ${failed.message}`;
    } else {
      failed = failure('UNKNOWN', 'unknown', 'connect', `SDK: ${logLine}`);
    }
    emit('response/interrupted', { response_id: responseId(attempt), attempt, failure: failed });
  }
}

// The text of a response body, or what of it arrives within `ms`; never throws.
async function readBriefly(response, ms = 250) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const timer = setTimeout(() => reader.cancel().catch(() => {}), ms);
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || text.length > 65536) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    // cut short: keep what came
  } finally {
    clearTimeout(timer);
    reader.cancel().catch(() => {});
  }
  return text;
}

export const responseId = (attempt) => `attempt-${attempt}`;

// --- assembly of what the SDK yields ------------------------------------------------------

// Accumulates one call's output from the SDK's parsed events or whole objects, and emits
// assistant/chunk for each text or tool-call delta of the current attempt.
export class Assembler {
  constructor(dialect, observer) {
    this.dialect = dialect;
    this.observer = observer;
    this.reset();
  }

  reset() {
    this.text = '';
    this.reasoning = '';
    this.tools = new Map();
    this.finish = null;
    this.usage = { input_tokens: null, output_tokens: null };
    this.chunks = 0;
    this.failedEvent = null;  // a failure the SDK yielded as a typed event (Responses API)
  }

  chunk(fields) {
    this.chunks++;
    const attempt = this.observer.attempt;
    emit('assistant/chunk', { response_id: responseId(attempt), attempt, ...fields,
                              commitment: 'uncommitted' });
  }

  addText(text) {
    if (typeof text !== 'string' || text === '') return;
    this.text += text;
    this.chunk({ text });
  }

  tool(key, id, name, args) {
    const entry = this.tools.get(key) ?? { id: '', name: '', arguments: '' };
    entry.id = id || entry.id;
    entry.name = name || entry.name;
    this.tools.set(key, entry);
    if (args) {
      entry.arguments += args;
      this.chunk({ tool_call: { index: key, ...(entry.id && { id: entry.id }),
                                ...(entry.name && { name: entry.name }), arguments: args } });
    }
  }

  // One event the SDK yielded. The SDK does not check event shapes; what it passes on is
  // reported as it is, and a shape this code cannot read is skipped (noted on stderr) rather
  // than turned into a failure the SDK never raised.
  event(obj) {
    try {
      if (this.dialect === 'openai-chat') this.chatChunk(obj);
      else if (this.dialect === 'anthropic-messages') this.anthropicEvent(obj);
      else this.responsesEvent(obj);
    } catch (error) {
      note(`skipped an event of unexpected shape (${error.message}):`, obj);
    }
  }

  chatChunk(obj) {
    for (const choice of obj.choices ?? []) {
      const delta = choice.delta ?? {};
      this.addText(delta.content);
      if (typeof delta.reasoning_content === 'string') this.reasoning += delta.reasoning_content;
      for (const call of delta.tool_calls ?? []) {
        this.tool(call.index ?? 0, call.id, call.function?.name, call.function?.arguments);
      }
      this.finish = choice.finish_reason ?? this.finish;
    }
    if (obj.usage) {
      this.usage = { input_tokens: obj.usage.prompt_tokens ?? null,
                     output_tokens: obj.usage.completion_tokens ?? null };
    }
  }

  anthropicEvent(obj) {
    if (obj.type === 'message_start') {
      this.usage.input_tokens = obj.message?.usage?.input_tokens ?? null;
    } else if (obj.type === 'content_block_start' && obj.content_block?.type === 'tool_use') {
      this.tool(obj.index, obj.content_block.id, obj.content_block.name, '');
    } else if (obj.type === 'content_block_delta') {
      const delta = obj.delta ?? {};
      if (delta.type === 'text_delta') this.addText(delta.text);
      else if (delta.type === 'thinking_delta') this.reasoning += delta.thinking ?? '';
      else if (delta.type === 'input_json_delta') this.tool(obj.index, '', '', delta.partial_json);
    } else if (obj.type === 'message_delta') {
      this.finish = obj.delta?.stop_reason ?? this.finish;
      this.usage.output_tokens = obj.usage?.output_tokens ?? this.usage.output_tokens;
    }
  }

  responsesEvent(obj) {
    switch (obj.type) {
      case 'response.output_text.delta':
        return this.addText(obj.delta);
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        this.reasoning += obj.delta ?? '';
        return undefined;
      case 'response.output_item.added':
        if (obj.item?.type === 'function_call') {
          this.tool(obj.output_index, obj.item.call_id, obj.item.name, '');
        }
        return undefined;
      case 'response.function_call_arguments.delta':
        return this.tool(obj.output_index, '', '', obj.delta);
      case 'response.completed':
      case 'response.incomplete':
        this.finish = obj.response?.status ?? obj.type.split('.')[1];
        this.usage = { input_tokens: obj.response?.usage?.input_tokens ?? null,
                       output_tokens: obj.response?.usage?.output_tokens ?? null };
        return undefined;
      case 'response.failed':  // the SDK yields these as ordinary events; they are its only
      case 'error':            // way to tell the caller that the response failed
        this.failedEvent ??= obj;
        return undefined;
      default:
        return undefined;
    }
  }

  // A non-streamed answer: the object the SDK returned.
  whole(obj) {
    const tool = (i, id, name, args) =>
      this.tools.set(i, { id: id ?? '', name: name ?? '', arguments: args ?? '' });
    const usage = (input, output) =>
      ({ input_tokens: input ?? null, output_tokens: output ?? null });
    if (this.dialect === 'openai-chat') {
      const choice = obj.choices?.[0] ?? {};
      this.text = choice.message?.content ?? '';
      (choice.message?.tool_calls ?? []).forEach(
          (call, i) => tool(i, call.id, call.function?.name, call.function?.arguments));
      this.finish = choice.finish_reason ?? null;
      this.usage = usage(obj.usage?.prompt_tokens, obj.usage?.completion_tokens);
    } else if (this.dialect === 'anthropic-messages') {
      (obj.content ?? []).forEach((block, i) => {
        if (block.type === 'text') this.text += block.text ?? '';
        if (block.type === 'tool_use') tool(i, block.id, block.name, JSON.stringify(block.input));
      });
      this.finish = obj.stop_reason ?? null;
      this.usage = usage(obj.usage?.input_tokens, obj.usage?.output_tokens);
    } else {
      (obj.output ?? []).forEach((item, i) => {
        for (const part of item.content ?? []) {
          if (part.type === 'output_text') this.text += part.text ?? '';
        }
        if (item.type === 'function_call') tool(i, item.call_id, item.name, item.arguments);
      });
      this.finish = obj.status ?? null;
      this.usage = usage(obj.usage?.input_tokens, obj.usage?.output_tokens);
    }
  }

  // The failure a Responses stream announced with a typed event, or null.
  eventFailure() {
    const obj = this.failedEvent;
    if (!obj) return null;
    const err = obj.type === 'response.failed' ? obj.response?.error ?? {} : obj;
    const [kind, text] = errorFields(err, obj.type);
    const [code, cls] = classifyError(kind, text) ?? ['SERVER', 'provider-unavailable'];
    return failure(code, cls, 'stream', `${obj.type} event (${kind.trim()}): ${text}`);
  }

  committed() {
    const out = { text: this.text, tool_calls: [...this.tools.values()], finish_reason: this.finish,
                  usage: this.usage };
    if (this.reasoning) out.reasoning = this.reasoning;
    return out;
  }
}

// --- the call ------------------------------------------------------------------------------

// Runs one call: `start({call, observer, assembler, signal, state})` drives the SDK and resolves
// when its iteration ends normally (a non-streamed call passes its object to assembler.whole).
// Emits hello first and exactly one terminal event; then exits.
export async function runCall({ name, version, policy, dialects, errors, start }) {
  const io = readCall();
  let call;
  try {
    call = await io.call;
    if (call.type !== 'call' || !dialects.includes(call.dialect)) {
      throw new Error(`expected a call line with dialect ${dialects.join(' or ')}`);
    }
  } catch (error) {
    note(`${name}: bad call line: ${error.message}`);
    return finish(io, 2);
  }
  emit('adapter/hello', { name, version, policy });
  const observer = new AttemptObserver();
  const assembler = new Assembler(call.dialect, observer);
  const failed = await outcome(start, { call, observer, assembler, signal: io.controller.signal,
                                         state: { phase: 'connect' } }, errors);
  await observer.pending;  // a retry announced before the SDK gave up (e.g. a cancel in backoff)
  const attempt = observer.attempt;
  const ids = attempt > 0 ? { response_id: responseId(attempt), attempt } : {};
  if (failed) {
    if (assembler.chunks > 0 && failed.partial_output === 'none') {
      failed.partial_output = 'uncommitted';
    }
    emit('response/failed', { ...ids, failure: failed });
    return finish(io, 1);
  }
  emit('response/committed', { ...ids, ...assembler.committed() });
  return finish(io, 0);
}

// The failure the call ended with, or null when the SDK's iteration ended normally.
async function outcome(start, context, errors) {
  const { assembler, signal, state } = context;
  try {
    await start(context);
  } catch (error) {
    return signal.aborted
        ? failure('ABORTED', 'aborted', state.phase, `aborted: ${error?.name}: ${error?.message}`)
        : classifyThrown(error, errors, state.phase);
  }
  if (signal.aborted) {
    // The SDKs end a stream silently when its signal aborts (core/streaming.ts: "If the user
    // calls stream.controller.abort(), we should exit without throwing"): the caller knows.
    return failure('ABORTED', 'aborted', state.phase, 'aborted: the SDK ended the stream quietly');
  }
  return assembler.eventFailure();
}

function finish(io, code) {
  io.close();
  process.exitCode = code;
  setTimeout(() => process.exit(code), LINGER_MS).unref();
}
