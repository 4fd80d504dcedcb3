// What an adapter needs to make and read a call in any of the six dialects: the request
// (endpoint, headers, body), whether the answer streams and in which framing (SSE, Ollama's
// NDJSON or Bedrock's binary event stream: streamEvents, checkContentType), and Output, which
// assembles text, reasoning, tool calls, finish reason and usage from the dialect's events (or a
// whole non-streamed object), writes assistant/chunk for every text or tool-call delta, and
// builds the terminal event's fields.
//
// Output reports; it does not judge. An SDK adapter feeds it whatever the SDK yielded and
// commits it (so the runner can catch an SDK that accepts a truncated stream); a client of its
// own can ask check() whether the answer is whole, the way the reference client decides.
//
// Output accumulates across attempts: it is what the caller got. A client that retries and
// discards a failed attempt's output (its own retry loop, or a library that says so) calls
// reset() when the new attempt begins, so the committed answer is the last attempt's alone. It is
// not reset on a new response/start by itself: a library that hands its caller the output of
// two attempts has spliced them, and the runner must see that (COMMIT-001). When an attempt adds
// to another attempt's output without a reset, a note on stderr says so.
import { PROTOCOL, emit, note } from './protocol.mjs';
import { AdapterFailure, classifyStreamError, failure } from './classify.mjs';
import { isErrorEvent, sseEvents } from './sse.mjs';
import { ndjsonEvents } from './ndjson.mjs';
import { eventStreamEvents } from './eventstream.mjs';
import { responseId } from './wire.mjs';

// ---- the request -------------------------------------------------------------------------

// The URL of the call's dialect endpoint under base_url (which has no /v1). Gemini's and
// Bedrock's paths name the request's model and method (a stream unless the request's "stream" is
// false; Bedrock's model percent-encoded, its default when the request names none), and a
// base_url ending in Gemini's /v1beta does not repeat it (reference_impl/call.cc RequestPath).
export function endpoint(call) {
  const dialect = PROTOCOL.dialects[call.dialect];
  let base = call.base_url.replace(/\/+$/, '');
  if (!dialect.path_fields) return `${base}${dialect.path}`;
  const prefix = dialect.version_prefix;
  if (prefix && base.endsWith(prefix)) base = base.slice(0, -prefix.length);
  const { model, stream } = call.request ?? {};
  const path = stream === false ? dialect.path_unstreamed : dialect.path;
  const name = typeof model === 'string' && model ? model : dialect.default_model ?? '{model}';
  return `${base}${path.replace('{model}', dialect.model_escaped ? escapeSegment(name) : name)}`;
}

// A path segment percent-encoded as the AWS SDKs do (RFC 3986: all but A-Z a-z 0-9 - _ . ~), so
// that a model id's ':' and an ARN's '/' stay inside their segment.
const escapeSegment = (text) => encodeURIComponent(text)
  .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

// The body to send, as JSON text: the call's request, without what the dialect's path says
// instead (Gemini's and Bedrock's "model" and "stream").
export function requestBody(call) {
  const omit = PROTOCOL.dialects[call.dialect].path_fields ?? [];
  return JSON.stringify(Object.fromEntries(Object.entries(call.request)
    .filter(([key]) => !omit.includes(key))));
}

// The request's headers. Ollama (hosted) and Bedrock (its API keys) take the key as a bearer
// token (a local Ollama ignores it; Bedrock also takes SigV4) and are told which answer is
// expected: their framing's media type for a stream (application/x-ndjson,
// application/vnd.amazon.eventstream), else application/json.
export function requestHeaders(call) {
  const headers = { 'content-type': 'application/json' };
  if (call.dialect === 'anthropic-messages') {
    headers['x-api-key'] = call.api_key;
    headers['anthropic-version'] = '2023-06-01';
  } else if (call.dialect === 'gemini') {
    headers['x-goog-api-key'] = call.api_key;
  } else {
    headers.authorization = `Bearer ${call.api_key}`;
  }
  const framed = framing(call.dialect);
  if (framed !== 'sse') {
    headers.accept = streams(call) ? PROTOCOL.framings[framed] : 'application/json';
  }
  return headers;
}

// Whether the call's answer is a stream: its request's "stream" is true, or it is absent (not a
// boolean) in a dialect that streams by default (Ollama streams unless told "stream": false;
// Gemini's and Bedrock's paths).
export function streams(call) {
  const stream = call.request?.stream;
  if (typeof stream === 'boolean') return stream;
  return PROTOCOL.dialects[call.dialect]?.streams_by_default === true;
}

const framing = (dialect) => PROTOCOL.dialects[dialect]?.framing ?? 'sse';

// The events of a streamed body in the call's dialect's framing: SSE events, NDJSON lines
// (Ollama) or event stream messages (Bedrock), each as {event, data} for parseEvent. `call` may
// be the dialect's name instead.
export function streamEvents(call, body) {
  const dialect = typeof call === 'string' ? call : call.dialect;
  const read = { ndjson: ndjsonEvents, eventstream: eventStreamEvents }[framing(dialect)];
  return (read ?? sseEvents)(body);
}

// The reference client's check of a 2xx response's content-type (assembler.cc CheckContentType):
// a stream must be its framing's media type (text/event-stream, application/x-ndjson for Ollama,
// application/vnd.amazon.eventstream for Bedrock), a whole answer application/json or ...+json;
// another is MALFORMED_RESPONSE in phase response-headers, retryable. No content-type is no
// verdict. `response`: a fetch Response (its status is added), or the content-type header's
// value. Returns the failure, or null.
export function checkContentType(call, response) {
  const value = typeof response === 'string' || response === null || response === undefined
    ? response : response.headers?.get?.('content-type');
  if (value === null || value === undefined) return null;
  const media = value.split(';')[0].replace(/\s+/g, '').toLowerCase();
  const stream = streams(call);
  const want = stream ? PROTOCOL.framings[framing(call.dialect)] : 'application/json';
  if (stream ? media === want : media === want || media.endsWith('+json')) return null;
  const status = Number.isInteger(response?.status) ? { status: response.status } : {};
  return failure('MALFORMED_RESPONSE', 'response-headers',
                 `expected ${want} but the response is \`${value}\``, status);
}

// ---- the stream's events (the framings: sse.mjs, ndjson.mjs) -------------------------------

// One SSE event (or NDJSON line, or event stream message) as the dialect's JSON object; null for
// OpenAI Chat's `[DONE]` (not in an NDJSON dialect, whose every line is an object). An event
// stream's event is the AWS SDKs' union object, its payload under its name ({"messageStop":
// {...}}); its `error` event (an exception) is that object already. Throws an AdapterFailure
// (MALFORMED_RESPONSE) for data that is not a JSON object.
export function parseEvent({ event, data }, dialect = null) {
  const framed = framing(dialect);
  if (data.trim() === '[DONE]' && framed === 'sse') return null;
  let obj;
  try {
    obj = JSON.parse(data);
  } catch {
    throw new AdapterFailure(failure('MALFORMED_RESPONSE', 'stream',
                                     `invalid JSON in an event: ${data.slice(0, 80)}`));
  }
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) {
    throw new AdapterFailure(failure('MALFORMED_RESPONSE', 'stream',
                                     `an event that is not an object: ${data.slice(0, 80)}`));
  }
  if (framed === 'eventstream') return event === 'error' ? obj : { [event]: obj };
  if (event === 'error' && obj.type === undefined) obj.type = 'error';
  return obj;
}

// ---- assembly ----------------------------------------------------------------------------

const emptyUsage = () => ({ input_tokens: null, output_tokens: null });
const count = (v) => (Number.isInteger(v) && v >= 0 ? v : null);

export class Output {
  // `wire`: the call's Wire (chunks carry its current attempt). `strict`: an event of an
  // unexpected shape throws MALFORMED_RESPONSE instead of being skipped with a note.
  constructor(dialect, wire, { strict = false } = {}) {
    this.dialect = dialect;
    this.wire = wire;
    this.strict = strict;
    this.reset();
  }

  // Discards everything assembled so far: the output of an attempt the client threw away. Call it
  // when the client's new attempt begins (before its first output).
  reset() {
    this.text = '';
    this.reasoning = '';
    this.refusal = '';
    this.tools = new Map();
    this.finish = null;
    this.usage = emptyUsage();
    this.chunks = 0;
    this.terminated = false;   // the dialect's terminator was seen
    this.streamFailure = null;  // an error the stream announced (an error event)
    this.lastSequence = undefined;  // of a Responses stream, checked when strict
    this.geminiCalls = 0;  // a Gemini attempt's function calls, numbered across its chunks
    this.ollamaCalls = 0;  // an Ollama attempt's tool calls, numbered across its lines
    this.attempt = null;  // of the output held (the wire's attempt number), null while none
    this.spliceNoted = false;
  }

  addText(text) {
    if (typeof text !== 'string' || text === '') return;
    this.text += text;
    this.#chunk({ text });
  }

  addToolCall(key, id, name, args) {
    const entry = this.tools.get(key) ?? { id: '', name: '', arguments: '' };
    entry.id ||= id ?? '';
    entry.name ||= name ?? '';
    this.tools.set(key, entry);
    if (!args) return;
    entry.arguments += args;
    const index = Number.isInteger(key) ? key : [...this.tools.keys()].indexOf(key);
    this.#chunk({ tool_call: { index, ...(entry.id && { id: entry.id }),
                               ...(entry.name && { name: entry.name }), arguments: args } });
  }

  #chunk(fields) {
    this.chunks++;
    this.wire?.sawOutput();
    const ids = this.wire?.ids() ?? {};
    this.#noteSplice(ids.attempt ?? null);
    emit('assistant/chunk', { response_id: ids.response_id ?? responseId(1), ...ids, ...fields,
                              commitment: 'uncommitted' });
  }

  // Output of attempt `attempt` joins what another attempt left: said once, on stderr.
  #noteSplice(attempt) {
    if (this.attempt !== null && attempt !== this.attempt && !this.spliceNoted) {
      this.spliceNoted = true;
      note(`faultline-adapter: attempt ${attempt} adds to the output of attempt ${this.attempt}; ` +
           'a client that discards a failed attempt\'s output calls output.reset() as its new ' +
           'attempt begins (committed as the caller got it)');
    }
    this.attempt = attempt;
  }

  // One parsed event of the dialect (null: `[DONE]`). Returns true at the dialect's terminator.
  // An error event is recorded in streamFailure (and also ends the stream: true).
  event(obj) {
    if (obj === null) return (this.terminated = true);
    try {
      if (isErrorEvent(obj, this.dialect)) {
        this.streamFailure ??= classifyStreamError(obj, 'stream', this.dialect);
        return true;
      }
      return (this.terminated = DECODERS[this.dialect](this, obj) === true || this.terminated);
    } catch (error) {
      if (this.strict) {
        throw new AdapterFailure(failure('MALFORMED_RESPONSE', 'stream',
                                         `unexpected event shape (${error.message})`));
      }
      note(`skipped an event of unexpected shape (${error.message}):`, obj);
      return false;
    }
  }

  // A non-streamed answer: the response's JSON object (missing parts read as empty unless
  // strict).
  whole(obj) {
    try {
      if (this.strict && !WHOLE_SHAPE[this.dialect](obj)) throw new Error('not its shape');
      WHOLE[this.dialect](this, obj);
      this.terminated = true;
    } catch (error) {
      throw new AdapterFailure(failure('MALFORMED_RESPONSE', 'finish',
                                       `unreadable response object (${error.message})`));
    }
  }

  // Why this answer may not be committed, as the reference client decides (a failure), or null.
  check() {
    if (this.streamFailure) return this.streamFailure;
    const partial = this.chunks > 0 ? { partial_output: 'uncommitted' } : {};
    if (!this.terminated) {
      return failure('STREAM_TRUNCATED', this.finish ? 'finish' : 'stream',
                     `the stream ended without ${PROTOCOL.dialects[this.dialect].terminator}`,
                     partial);
    }
    if (PROTOCOL.content_filter_finishes.includes(this.finish) ||
        (this.refusal && !this.hasOutput())) {
      return failure('CONTENT_FILTER', 'finish', `the provider refused (${this.finish})`, partial);
    }
    if (!this.hasOutput()) return failure('EMPTY_RESPONSE', 'finish', 'no text and no tool call');
    for (const [key, call] of this.tools) {
      if (!call.name || !isJson(call.arguments || '{}')) {
        return failure('MALFORMED_RESPONSE', 'finish',
                       `tool call ${key} has no name or incomplete JSON arguments`, partial);
      }
    }
    return null;
  }

  hasOutput() {
    return this.text !== '' || this.tools.size > 0;
  }

  // The fields of response/committed.
  committed() {
    const out = { text: this.text, tool_calls: [...this.tools.values()],
                  finish_reason: this.finish, usage: this.usage };
    if (this.reasoning) out.reasoning = this.reasoning;
    return out;
  }
}

function isJson(text) {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}


// ---- the dialects' events ----------------------------------------------------------------

// A shape the dialect does not allow (the reference client's decoders reject the same): the
// event is skipped, or in a strict Output the attempt is MALFORMED_RESPONSE.
function need(ok, what) {
  if (!ok) throw new TypeError(what);
}
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const absentOr = (v, test) => v === undefined || v === null || test(v);
const isString = (v) => typeof v === 'string';

function chatChunk(out, obj) {
  need(absentOr(obj.choices, Array.isArray), '`choices` must be an array');
  need(absentOr(obj.usage, isObject), '`usage` must be an object');
  for (const choice of obj.choices ?? []) {
    need(isObject(choice), 'every choice must be an object');
    need(absentOr(choice.delta, isObject), '`delta` must be an object');
    const delta = choice.delta ?? {};
    need(absentOr(delta.content, isString), '`content` must be a string');
    need(absentOr(delta.tool_calls, Array.isArray), '`tool_calls` must be an array');
    out.addText(delta.content);
    if (typeof delta.reasoning_content === 'string') out.reasoning += delta.reasoning_content;
    if (typeof delta.refusal === 'string') out.refusal += delta.refusal;
    for (const call of delta.tool_calls ?? []) {
      need(isObject(call) && absentOr(call.function, isObject), 'a tool call must be an object');
      out.addToolCall(call.index ?? 0, call.id, call.function?.name, call.function?.arguments);
    }
    out.finish = choice.finish_reason ?? out.finish;
  }
  if (obj.usage) {
    out.usage = { input_tokens: count(obj.usage.prompt_tokens),
                  output_tokens: count(obj.usage.completion_tokens) };
  }
  return false;
}

function anthropicEvent(out, obj) {
  const delta = obj.delta ?? {};
  switch (obj.type) {
    case 'message_start':
      out.usage.input_tokens = count(obj.message?.usage?.input_tokens);
      break;
    case 'content_block_start':
      if (obj.content_block?.type === 'tool_use') {
        out.addToolCall(obj.index, obj.content_block.id, obj.content_block.name, '');
      }
      break;
    case 'content_block_delta':
      need(isObject(obj.delta), '`delta` must be an object');
      need(delta.type !== 'text_delta' || isString(delta.text), '`text` must be a string');
      need(delta.type !== 'input_json_delta' || isString(delta.partial_json),
           '`partial_json` must be a string');
      if (delta.type === 'text_delta') out.addText(delta.text);
      else if (delta.type === 'thinking_delta') out.reasoning += delta.thinking ?? '';
      else if (delta.type === 'input_json_delta') {
        out.addToolCall(obj.index, '', '', delta.partial_json);
      }
      break;
    case 'message_delta':
      out.finish = delta.stop_reason ?? out.finish;
      out.usage.output_tokens = count(obj.usage?.output_tokens) ?? out.usage.output_tokens;
      break;
    case 'message_stop':
      return true;
    default:
      break;
  }
  return false;
}

function responsesEvent(out, obj) {
  if (out.strict && Number.isInteger(obj.sequence_number)) {  // only a strict reader judges
    need(out.lastSequence === undefined || obj.sequence_number === out.lastSequence + 1,
         `sequence_number ${obj.sequence_number} after ${out.lastSequence}`);
    out.lastSequence = obj.sequence_number;
  }
  switch (obj.type) {
    case 'response.output_text.delta':
      need(isString(obj.delta), '`delta` must be a string');
      out.addText(obj.delta);
      break;
    case 'response.reasoning_summary_text.delta':
    case 'response.reasoning_text.delta':
      out.reasoning += obj.delta ?? '';
      break;
    case 'response.refusal.delta':
      out.refusal += obj.delta ?? '';
      break;
    case 'response.output_item.added':
      if (obj.item?.type === 'function_call') {
        out.addToolCall(obj.output_index, obj.item.call_id, obj.item.name, '');
      }
      break;
    case 'response.function_call_arguments.delta':
      need(isString(obj.delta), '`delta` must be a string');
      out.addToolCall(obj.output_index, '', '', obj.delta);
      break;
    case 'response.completed':
    case 'response.incomplete':
      out.finish = obj.response?.status ?? obj.type.split('.')[1];
      out.usage = { input_tokens: count(obj.response?.usage?.input_tokens),
                    output_tokens: count(obj.response?.usage?.output_tokens) };
      return true;
    default:
      break;
  }
  return false;
}

// Gemini: one GenerateContentResponse (a stream's chunk, or a whole answer) read as
// {parts, finish, usage}: the first candidate's parts ({text}, {reasoning} for a thought, {call}
// for a function call, which comes whole in one part: its `args` re-serialised), its
// finishReason, or a blocked prompt's promptFeedback.blockReason (reference_impl/decode_gemini.cc).
function geminiResponse(obj) {
  const parts = [];
  let finish = '';
  if (obj.candidates !== undefined && obj.candidates !== null) {
    need(Array.isArray(obj.candidates), '`candidates` must be an array');
    for (const candidate of obj.candidates) {
      need(isObject(candidate), 'every candidate must be an object');
      if ((candidate.index ?? 0) !== 0) continue;  // the first candidate only
      need(absentOr(candidate.content, isObject), '`content` must be an object');
      need(absentOr(candidate.content?.parts, Array.isArray), '`parts` must be an array');
      for (const part of candidate.content?.parts ?? []) {
        need(isObject(part), 'every part must be an object');
        const call = part.functionCall;
        if (call !== undefined && call !== null) {
          need(isObject(call), '`functionCall` must be an object');
          need(isString(call.name), 'a function call needs a `name`');
          const args = call.args === undefined || call.args === null ? '{}'
            : isString(call.args) ? call.args : JSON.stringify(call.args);
          parts.push({ call: { id: isString(call.id) ? call.id : '', name: call.name, args } });
          continue;
        }
        need(absentOr(part.text, isString), '`text` must be a string');
        if (!part.text) continue;
        need(absentOr(part.thought, (v) => typeof v === 'boolean'), '`thought` must be a bool');
        parts.push(part.thought ? { reasoning: part.text } : { text: part.text });
      }
      need(absentOr(candidate.finishReason, isString), '`finishReason` must be a string');
      finish = candidate.finishReason ?? '';
    }
  } else if (obj.promptFeedback !== undefined && obj.promptFeedback !== null) {
    need(isObject(obj.promptFeedback), '`promptFeedback` must be an object');
    finish = obj.promptFeedback.blockReason;
    need(isString(finish) && finish !== '', 'a response needs `candidates` or a `blockReason`');
  } else {
    need(false, 'a response needs `candidates` (or `promptFeedback`)');
  }
  need(absentOr(obj.usageMetadata, isObject), '`usageMetadata` must be an object');
  return { parts, finish, usage: obj.usageMetadata ?? null };
}

// Gemini's usage counts, each kept when a chunk leaves it out.
function geminiUsage(out, usage) {
  const input = count(usage?.promptTokenCount);
  const output = count(usage?.candidatesTokenCount);
  if (input !== null) out.usage.input_tokens = input;
  if (output !== null) out.usage.output_tokens = output;
}

// A Gemini chunk. There is no terminator event: the chunk with a finish reason ends the answer.
function geminiChunk(out, obj) {
  const { parts, finish, usage } = geminiResponse(obj);
  for (const part of parts) {
    if (part.call) out.addToolCall(out.geminiCalls++, part.call.id, part.call.name, part.call.args);
    else if (part.reasoning) out.reasoning += part.reasoning;
    else out.addText(part.text);
  }
  geminiUsage(out, usage);
  if (finish) out.finish = finish;
  return finish !== '';
}

// Ollama: one /api/chat object (a stream's line, or a whole answer) read as {parts, done, finish,
// usage}: message.thinking (reasoning), message.content (text), message.tool_calls (each whole:
// {function: {name, arguments}}, its `arguments` object re-serialised, its id usually absent);
// the line with "done": true has done_reason ("stop" when absent) and prompt_eval_count /
// eval_count (reference_impl/decode_ollama.cc). Every shape is checked before anything is taken.
function ollamaResponse(obj) {
  need(typeof obj.done === 'boolean', '`done` must be a boolean');
  const parts = [];
  const message = obj.message ?? null;
  if (message !== null) {
    need(isObject(message), '`message` must be an object');
    need(absentOr(message.thinking, isString), '`thinking` must be a string');
    need(absentOr(message.content, isString), '`content` must be a string');
    need(absentOr(message.tool_calls, Array.isArray), '`tool_calls` must be an array');
    if (message.thinking) parts.push({ reasoning: message.thinking });
    if (message.content) parts.push({ text: message.content });
    for (const call of message.tool_calls ?? []) {
      need(isObject(call), 'every tool call must be an object');
      need(isObject(call.function), '`function` must be an object');
      need(isString(call.function.name), '`name` must be a string');
      need(absentOr(call.id, isString), '`id` must be a string');
      const args = call.function.arguments;
      parts.push({ call: { id: call.id ?? '', name: call.function.name,
                           args: args === undefined || args === null ? '{}'
                             : isString(args) ? args : JSON.stringify(args) } });
    }
  }
  if (!obj.done) return { parts, done: false, finish: '', usage: null };
  const int = (v) => absentOr(v, Number.isInteger);
  need(int(obj.prompt_eval_count) && int(obj.eval_count), 'the counts must be integers');
  need(absentOr(obj.done_reason, isString), '`done_reason` must be a string');
  return { parts, done: true, finish: obj.done_reason || 'stop',
           usage: { input: count(obj.prompt_eval_count), output: count(obj.eval_count) } };
}

// Ollama's usage counts (the done line's), each kept when it leaves one out.
function ollamaUsage(out, usage) {
  if (usage?.input !== null && usage?.input !== undefined) out.usage.input_tokens = usage.input;
  if (usage?.output !== null && usage?.output !== undefined) out.usage.output_tokens = usage.output;
}

// An Ollama line. The line with "done": true ends the answer.
function ollamaLine(out, obj) {
  const { parts, done, finish, usage } = ollamaResponse(obj);
  for (const part of parts) {
    if (part.call) out.addToolCall(out.ollamaCalls++, part.call.id, part.call.name, part.call.args);
    else if (part.reasoning) out.reasoning += part.reasoning;
    else out.addText(part.text);
  }
  if (!done) return false;
  ollamaUsage(out, usage);
  out.finish = finish;
  return true;
}

// Bedrock ConverseStream: the block index of an event (0 when absent).
function blockIndex(event) {
  need(absentOr(event.contentBlockIndex, Number.isInteger),
       '`contentBlockIndex` must be an integer');
  return event.contentBlockIndex ?? 0;
}

// Bedrock's usage counts ({inputTokens, outputTokens}), each kept when it leaves one out.
function bedrockUsage(out, usage) {
  need(absentOr(usage, isObject), '`usage` must be an object');
  const input = count(usage?.inputTokens);
  const output = count(usage?.outputTokens);
  if (input !== null) out.usage.input_tokens = input;
  if (output !== null) out.usage.output_tokens = output;
}

// Each ConverseStream event's reader, given its payload (real Bedrock pads payloads with a "p"
// field, which nothing reads). Every shape is checked before anything is taken. messageStop
// ends the answer; metadata (the usage) follows it.
const BEDROCK_EVENTS = {
  messageStart(out, event) {
    need(absentOr(event.role, isString), '`role` must be a string');
  },
  // A tool call's block opens with its id and name; its arguments come as text in the deltas.
  contentBlockStart(out, event) {
    const index = blockIndex(event);
    need(isObject(event.start), '`start` must be an object');
    const tool = event.start.toolUse;
    if (tool === undefined || tool === null) return;
    need(isObject(tool), '`toolUse` must be an object');
    need(isString(tool.name), 'a tool use needs a `name`');
    need(absentOr(tool.toolUseId, isString), '`toolUseId` must be a string');
    out.addToolCall(index, tool.toolUseId, tool.name, '');
  },
  contentBlockDelta(out, event) {
    const index = blockIndex(event);
    need(isObject(event.delta), '`delta` must be an object');
    const { text, reasoningContent: reasoning, toolUse: tool } = event.delta;
    need(absentOr(text, isString), '`text` must be a string');
    need(absentOr(reasoning, isObject), '`reasoningContent` must be an object');
    need(absentOr(reasoning?.text, isString), '`reasoningContent.text` must be a string');
    need(absentOr(tool, isObject), '`toolUse` must be an object');
    need(absentOr(tool?.input, isString), '`toolUse.input` must be a string');
    out.addText(text);
    if (reasoning?.text) out.reasoning += reasoning.text;
    if (tool?.input) out.addToolCall(index, '', '', tool.input);
  },
  contentBlockStop(out, event) {
    blockIndex(event);
  },
  messageStop(out, event) {
    need(isString(event.stopReason), '`stopReason` must be a string');
    out.finish = event.stopReason;
    return true;
  },
  metadata(out, event) {
    bedrockUsage(out, event.usage);
  },
};

// A Bedrock ConverseStream event, as the AWS SDKs' union object ({"contentBlockDelta": {...}}:
// parseEvent's). Events of other names are ignored.
function bedrockEvent(out, obj) {
  let done = false;
  for (const [name, event] of Object.entries(obj)) {
    const read = Object.hasOwn(BEDROCK_EVENTS, name) ? BEDROCK_EVENTS[name] : null;
    if (!read) continue;
    need(isObject(event), `\`${name}\` must be an object`);
    done = read(out, event) === true || done;
  }
  return done;
}

const DECODERS = {
  'openai-chat': chatChunk,
  'anthropic-messages': anthropicEvent,
  'openai-responses': responsesEvent,
  gemini: geminiChunk,
  ollama: ollamaLine,
  'bedrock-converse': bedrockEvent,
};

// ---- the dialects' whole answers ---------------------------------------------------------

// What a strict reader requires of a whole answer.
const WHOLE_SHAPE = {
  'openai-chat': (obj) => Array.isArray(obj?.choices) && obj.choices.length > 0,
  'anthropic-messages': (obj) => Array.isArray(obj?.content),
  'openai-responses': (obj) => Array.isArray(obj?.output),
  gemini: (obj) => Array.isArray(obj?.candidates) || isObject(obj?.promptFeedback),
  ollama: (obj) => obj?.done === true || isErrorEvent(obj ?? {}, 'ollama'),
  'bedrock-converse': (obj) => isObject(obj?.output) && isObject(obj.output.message) &&
      Array.isArray(obj.output.message.content),
};

function setTool(out, i, id, name, args) {
  out.tools.set(i, { id: id ?? '', name: name ?? '', arguments: args ?? '' });
}

// The parts of a whole answer (Gemini's, Ollama's, Bedrock's) in order: text, reasoning, whole
// tool calls numbered by arrival.
function applyWholeParts(out, parts) {
  let calls = 0;
  for (const part of parts) {
    if (part.call) setTool(out, calls++, part.call.id, part.call.name, part.call.args);
    else if (part.reasoning) out.reasoning += part.reasoning;
    else out.text += part.text;
  }
}


const WHOLE = {
  'openai-chat'(out, obj) {
    const choice = obj.choices?.[0] ?? {};
    out.text = choice.message?.content ?? '';
    out.refusal = choice.message?.refusal ?? '';
    (choice.message?.tool_calls ?? []).forEach(
        (c, i) => setTool(out, i, c.id, c.function?.name, c.function?.arguments));
    out.finish = choice.finish_reason ?? null;
    out.usage = { input_tokens: count(obj.usage?.prompt_tokens),
                  output_tokens: count(obj.usage?.completion_tokens) };
  },
  'anthropic-messages'(out, obj) {
    (obj.content ?? []).forEach((block, i) => {
      if (block.type === 'text') out.text += block.text ?? '';
      if (block.type === 'thinking') out.reasoning += block.thinking ?? '';
      if (block.type === 'tool_use') {
        setTool(out, i, block.id, block.name, JSON.stringify(block.input));
      }
    });
    out.finish = obj.stop_reason ?? null;
    out.usage = { input_tokens: count(obj.usage?.input_tokens),
                  output_tokens: count(obj.usage?.output_tokens) };
  },
  'openai-responses'(out, obj) {
    (obj.output ?? []).forEach((item, i) => {
      for (const part of item.content ?? []) {
        if (part.type === 'output_text') out.text += part.text ?? '';
        if (part.type === 'refusal') out.refusal += part.refusal ?? '';
      }
      if (item.type === 'function_call') setTool(out, i, item.call_id, item.name, item.arguments);
    });
    out.finish = obj.status ?? null;
    out.usage = { input_tokens: count(obj.usage?.input_tokens),
                  output_tokens: count(obj.usage?.output_tokens) };
  },
  gemini(out, obj) {
    if (!WHOLE_SHAPE.gemini(obj)) return;  // missing parts read as empty (not strict)
    const { parts, finish, usage } = geminiResponse(obj);
    applyWholeParts(out, parts);
    out.finish = finish || null;
    geminiUsage(out, usage);
  },
  // An Ollama body: the one object with "done": true and the whole message, or {"error": ...}
  // (the provider failed the answer: as an error line would).
  ollama(out, obj) {
    if (isErrorEvent(obj ?? {}, 'ollama')) {
      out.streamFailure ??= classifyStreamError(obj, 'stream', 'ollama');
      return;
    }
    if (typeof obj?.done !== 'boolean') return;  // missing parts read as empty (not strict)
    const { parts, finish, usage } = ollamaResponse(obj);
    applyWholeParts(out, parts);
    out.finish = finish || null;
    ollamaUsage(out, usage);
  },
  'bedrock-converse'(out, obj) {
    if (!WHOLE_SHAPE['bedrock-converse'](obj)) return;  // missing parts read as empty (not strict)
    applyWholeParts(out, bedrockContent(obj.output.message.content));
    need(absentOr(obj.stopReason, isString), '`stopReason` must be a string');
    out.finish = obj.stopReason || null;
    bedrockUsage(out, obj.usage);
  },
};

// The content blocks of a Bedrock Converse answer as parts: {text}, {reasoningContent:
// {reasoningText: {text}}} (reasoning), {toolUse: {toolUseId, name, input}} (a whole call: its
// `input` object serialised); other blocks (an image, a document) are not output.
function bedrockContent(blocks) {
  const parts = [];
  for (const block of blocks) {
    need(isObject(block), 'every content block must be an object');
    need(absentOr(block.text, isString), '`text` must be a string');
    if (block.text) parts.push({ text: block.text });
    const reasoning = block.reasoningContent;
    need(absentOr(reasoning, isObject), '`reasoningContent` must be an object');
    need(absentOr(reasoning?.reasoningText, isObject), '`reasoningText` must be an object');
    need(absentOr(reasoning?.reasoningText?.text, isString),
         '`reasoningText.text` must be a string');
    if (reasoning?.reasoningText?.text) parts.push({ reasoning: reasoning.reasoningText.text });
    const tool = block.toolUse;
    if (tool === undefined || tool === null) continue;
    need(isObject(tool), '`toolUse` must be an object');
    need(isString(tool.name), 'a tool use needs a `name`');
    need(absentOr(tool.toolUseId, isString), '`toolUseId` must be a string');
    const args = tool.input === undefined || tool.input === null ? '{}'
      : isString(tool.input) ? tool.input : JSON.stringify(tool.input);
    parts.push({ call: { id: tool.toolUseId ?? '', name: tool.name, args } });
  }
  return parts;
}
