// Tests of the Node adapter kit: classification against the cases both kits share
// (cases.json, taken from the reference client's tests), event validation against the
// protocol's schema (protocol_cases.json, shared with the runner and the Python kit), SSE
// framing, assembly, and whole adapters (the example, a retrying fixture) run as subprocesses
// against a loopback server; every line they write is then checked by an independent validator
// (validate_lines.py: the jsonschema package).
//   node --test harness/adapters/kit/tests/kit_node.test.mjs
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import zlib from 'node:zlib';
import { test } from 'node:test';
import { PROTOCOL, currentCall, eventProblems, inCall } from '../node/lib/protocol.mjs';
import { Output, checkContentType, endpoint, parseEvent, requestBody, requestHeaders,
         streamEvents, streams } from '../node/lib/output.mjs';
import { isErrorEvent, sseEvents } from '../node/lib/sse.mjs';
import { NdjsonDecoder } from '../node/lib/ndjson.mjs';
import { EventStreamDecoder } from '../node/lib/eventstream.mjs';
import { bodyRetryHint, classifyHttp, classifyNetworkError, classifyStreamError, parseGoDuration,
         parseHttpDate, retryHint } from '../node/lib/classify.mjs';

const CASES = JSON.parse(readFileSync(new URL('cases.json', import.meta.url)));
const LINES = JSON.parse(readFileSync(new URL('protocol_cases.json', import.meta.url)));
const NOW_MS = CASES.now_s * 1000;
const HERE = new URL('.', import.meta.url).pathname;

// ---- classification ------------------------------------------------------------------------

test('HTTP errors classify as the reference client does', () => {
  for (const row of CASES.http) {
    const got = classifyHttp({ status: row.status, headers: row.headers, body: row.body,
                               now: NOW_MS });
    assert.equal(got.code, row.code, row.name);
    assert.equal(got.class, PROTOCOL.codes[row.code][0], row.name);
    assert.equal(got.retryable, row.retryable, row.name);
    assert.equal(got.phase, 'response-headers', row.name);
    assert.equal(got.status, row.status, row.name);
    assert.equal(got.request_id, row.request_id, row.name);
    assert.equal(got.retry_after_ms, row.retry_after_ms, row.name);
    assert.ok(got.message.startsWith(`HTTP ${row.status}`), row.name);
  }
});

test('retry hints: retry-after-ms, delay-seconds, the three date forms, invalid dropped', () => {
  for (const row of CASES.retry_hints) {
    const got = retryHint(row.headers, NOW_MS);
    if (row.ms === null) assert.equal(got, null, row.name);
    else assert.deepEqual(got, { ms: row.ms, source: row.source }, row.name);
  }
  for (const row of CASES.http_dates) {
    const got = parseHttpDate(row.value, NOW_MS);
    assert.equal(got, row.epoch_s === null ? null : row.epoch_s * 1000, row.value);
  }
});

test('in-stream errors classify like their HTTP twins', () => {
  for (const row of CASES.stream_errors) {
    const got = classifyStreamError(row.error, 'stream', row.dialect);
    assert.equal(got.code, row.code, row.name);
    assert.equal(got.phase, 'stream', row.name);
    if ('retryable' in row) assert.equal(got.retryable, row.retryable, row.name);
  }
});

test('Go durations (Google\'s retryDelay) and the error body\'s hint', () => {
  for (const { value, ms } of CASES.go_durations) {
    assert.equal(parseGoDuration(value), ms, JSON.stringify(value));
  }
  const google = JSON.stringify({ error: { code: 429, status: 'RESOURCE_EXHAUSTED', details: [
    { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '30s' }] } });
  assert.deepEqual(bodyRetryHint(google), { ms: 30000, source: 'body' });
  assert.deepEqual(bodyRetryHint(JSON.parse(google)), { ms: 30000, source: 'body' });
  for (const none of ['', '{}', 'not json', '{"error":{"details":[{"retryDelay":"soon"}]}}']) {
    assert.equal(bodyRetryHint(none), null, none);
  }
});

test('network errors: refused, reset, undici timeouts, a library abort', () => {
  const withCause = (message, code) =>
    new TypeError(message, { cause: Object.assign(new Error(`${code} happened`), { code }) });
  const cases = [
    [withCause('fetch failed', 'ECONNREFUSED'), 'response-headers', 'TRANSPORT', 'connect'],
    [withCause('fetch failed', 'ECONNRESET'), 'response-headers', 'TRANSPORT', 'response-headers'],
    [withCause('fetch failed', 'UND_ERR_HEADERS_TIMEOUT'), 'connect', 'TIMEOUT',
     'response-headers'],
    [withCause('terminated', 'UND_ERR_BODY_TIMEOUT'), 'stream', 'TIMEOUT', 'stream'],
    [withCause('fetch failed', 'UND_ERR_CONNECT_TIMEOUT'), 'response-headers', 'TIMEOUT',
     'connect'],
    [withCause('terminated', 'UND_ERR_SOCKET'), 'stream', 'TRANSPORT', 'stream'],
    [new DOMException('This operation was aborted', 'AbortError'), 'response-headers', 'TIMEOUT',
     'response-headers'],
  ];
  for (const [error, phase, code, wantPhase] of cases) {
    const got = classifyNetworkError(error, phase);
    assert.equal(got.code, code, error.cause?.code ?? error.name);
    assert.equal(got.phase, wantPhase, error.cause?.code ?? error.name);
  }
});

// ---- events ------------------------------------------------------------------------------

test('events are checked against the protocol before they are written', () => {
  const problems = (event) => eventProblems(event).filter((p) => !p.includes('adapter/hello'));
  const fail = { code: 'RATE_LIMIT', class: 'rate-limit', phase: 'response-headers',
                 retryable: true, partial_output: 'none', message: 'HTTP 429' };
  assert.deepEqual(problems({ type: 'response/start', response_id: 'attempt-1', attempt: 1 }), []);
  assert.deepEqual(problems({ type: 'response/interrupted', response_id: 'a', failure: fail }), []);
  // at_ms, the subject's own time of a line, is optional on every event.
  assert.deepEqual(problems({ type: 'response/start', response_id: 'a', attempt: 1, at_ms: 3.5 }),
                   []);
  assert.deepEqual(problems({ type: 'response/failed', failure: fail, at_ms: 0 }), []);
  const bad = [
    { type: 'response/start', response_id: 'a', attempt: 1, at_ms: -1 },      // negative
    { type: 'response/failed', failure: { ...fail, at_ms: 1 } },              // not in failure
    { type: 'response/start', attempt: 1 },                                   // no response_id
    { type: 'response/start', response_id: 'a', attempt: 0 },                 // attempt < 1
    { type: 'response/start', response_id: 'a', attempt: 1, extra: true },    // unknown field
    { type: 'assistant/chunk', response_id: 'a', commitment: 'uncommitted' }, // neither
    { type: 'assistant/chunk', response_id: 'a', commitment: 'uncommitted', text: 'x',
      tool_call: { index: 0, arguments: '' } },                              // both
    { type: 'assistant/chunk', response_id: 'a', commitment: 'committed', text: 'x' },
    { type: 'response/interrupted', response_id: 'a', failure: { ...fail, code: 'NOPE' } },
    { type: 'response/interrupted', response_id: 'a', failure: fail, scheduled_retry_ms: 5 },
    { type: 'response/failed', failure: { ...fail, phase: 'later' } },
    { type: 'response/committed', text: 'x', usage: { input_tokens: '5' } },
    { type: 'response/done' },
  ];
  for (const event of bad) assert.notDeepEqual(problems(event), [], JSON.stringify(event));
});

test('the shared protocol cases: valid lines pass, each mistake has the runner\'s message', () => {
  const problems = (event) => eventProblems(event).filter((p) => !p.includes('adapter/hello '));
  for (const line of LINES.valid) assert.deepEqual(problems(line), [], JSON.stringify(line));
  for (const { line, message } of LINES.invalid) {
    assert.deepEqual(problems(line), [message], JSON.stringify(line));
  }
});

// ---- SSE and assembly ----------------------------------------------------------------------

async function collect(parts) {
  const encoder = new TextEncoder();
  const body = new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(encoder.encode(part));
      controller.close();
    },
  });
  const out = [];
  for await (const event of sseEvents(body)) out.push(event);
  return out;
}

test('currentCall names the session call a callback runs for, across awaits and timers',
     async () => {
  assert.equal(currentCall(), undefined, 'outside a session call');
  const seen = await Promise.all([1, 2].map((index) => inCall(index, async () => {
    await new Promise((resolve) => setTimeout(resolve, 3 - index));
    return currentCall();
  })));
  assert.deepEqual(seen, [1, 2]);
  assert.equal(currentCall(), undefined);
});

test('SSE framing: split writes, CRLF across writes, BOM, comments, multi-line data', async () => {
  assert.deepEqual(await collect(['\uFEFFdata: {"a"', ':1}\r', '\n\r\n: comment\n',
                                  'event: error\ndata: x\ndata: y\n\n', 'data: tail']), [
    { event: 'message', data: '{"a":1}' },
    { event: 'error', data: 'x\ny' },
  ]);
  assert.deepEqual(await collect(['data: a\r\rdata: b\n\n']), [
    { event: 'message', data: 'a' }, { event: 'message', data: 'b' },
  ]);
  // CR-only framing whose last event ends the body: its blank line is the final CR.
  assert.deepEqual(await collect(['data: a\r', '\r', 'data: b\r\r']), [
    { event: 'message', data: 'a' }, { event: 'message', data: 'b' },
  ]);
});

test('Output.check decides like the reference client; committed() reports what came', () => {
  const make = () => new Output('anthropic-messages', null, { strict: true });
  const done = make();
  // No wire: chunks go to stdout as events, so only assemble what needs no chunk here.
  done.event({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: {} });
  assert.equal(done.check().code, 'STREAM_TRUNCATED');
  done.event({ type: 'message_stop' });
  assert.equal(done.check().code, 'EMPTY_RESPONSE');
  const failed = make();
  failed.event({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
  assert.equal(failed.check().code, 'OVERLOADED');
  const whole = new Output('openai-chat', null, { strict: true });
  assert.throws(() => whole.whole({ id: 'x' }), /MALFORMED|shape/);
  const lenient = new Output('openai-chat', null);
  lenient.whole({ id: 'x' });
  assert.deepEqual(lenient.committed().text, '');
});

test('a strict Output rejects the shapes the reference client rejects; a lenient one skips them',
     () => {
  for (const { dialect, events } of CASES.wrong_shapes) {
    const strict = new Output(dialect, null, { strict: true });
    const last = events.at(-1);
    for (const event of events.slice(0, -1)) strict.event(event);
    assert.throws(() => strict.event(last), (e) => e.failure?.code === 'MALFORMED_RESPONSE',
                  JSON.stringify(last));
    const lenient = new Output(dialect, null);
    for (const event of events) assert.equal(lenient.event(event), false);
  }
});

// ---- gemini --------------------------------------------------------------------------------

const geminiResponse = (parts, { finish, usage = { promptTokenCount: 9 } } = {}) => ({
  candidates: [{ content: { parts, role: 'model' }, ...(finish && { finishReason: finish }),
                 index: 0 }],
  usageMetadata: usage, modelVersion: 'gemini-2.5-flash', responseId: 'r1',
});
const googleError = (code, status, message, details) =>
  ({ error: { code, message, status, ...(details && { details }) } });

test('gemini: the model and the method go in the path, the rest in the body; x-goog-api-key',
     () => {
  const contents = [{ role: 'user', parts: [{ text: 'hi' }] }];
  const call = { dialect: 'gemini', base_url: 'http://127.0.0.1:9/s/run/x/', api_key: 'k',
                 request: { model: 'gemini-2.5-flash', contents, stream: true } };
  assert.equal(endpoint(call), 'http://127.0.0.1:9/s/run/x/v1beta/models/gemini-2.5-flash:' +
               'streamGenerateContent?alt=sse');
  assert.equal(endpoint({ ...call, base_url: 'http://127.0.0.1:9/v1beta',
                          request: { ...call.request, stream: false } }),
               'http://127.0.0.1:9/v1beta/models/gemini-2.5-flash:generateContent',
               'a base URL ending in /v1beta does not repeat it');
  assert.deepEqual(JSON.parse(requestBody(call)), { contents });
  assert.deepEqual(requestHeaders(call),
                   { 'content-type': 'application/json', 'x-goog-api-key': 'k' });
  const chat = { ...call, dialect: 'openai-chat' };  // the other dialects send the request as is
  assert.equal(endpoint(chat), 'http://127.0.0.1:9/s/run/x/v1/chat/completions');
  assert.deepEqual(JSON.parse(requestBody(chat)), call.request);
});

test('gemini: a whole answer, reasoning, usage, refusals, a cut stream, an error chunk', () => {
  // No wire and no hello here: only what writes no assistant/chunk (a whole answer, thoughts).
  const whole = new Output('gemini', null, { strict: true });
  whole.whole(geminiResponse([{ text: 'hm', thought: true }, { text: 'Hello' },
                              { functionCall: { name: 'get_weather', args: { city: 'Paris' } } }],
                             { finish: 'STOP',
                               usage: { promptTokenCount: 9, candidatesTokenCount: 3 } }));
  assert.equal(whole.check(), null);
  assert.deepEqual(whole.committed(), {
    text: 'Hello', reasoning: 'hm', finish_reason: 'STOP',
    tool_calls: [{ id: '', name: 'get_weather', arguments: '{"city":"Paris"}' }],
    usage: { input_tokens: 9, output_tokens: 3 } });
  const stream = new Output('gemini', null, { strict: true });
  assert.equal(stream.event(geminiResponse([{ text: 'hm', thought: true }])), false);
  assert.equal(stream.check().code, 'STREAM_TRUNCATED', 'no chunk with a finishReason yet');
  assert.match(stream.check().message, /without a chunk with finishReason/);
  assert.equal(stream.event(geminiResponse([{ text: '' }], {
    finish: 'STOP', usage: { promptTokenCount: 9, candidatesTokenCount: 0 } })), true);
  assert.equal(stream.check().code, 'EMPTY_RESPONSE');
  assert.deepEqual([stream.reasoning, stream.committed().usage],
                   ['hm', { input_tokens: 9, output_tokens: 0 }]);
  const safety = new Output('gemini', null, { strict: true });
  assert.equal(safety.event(geminiResponse([], { finish: 'SAFETY' })), true);
  assert.equal(safety.check().code, 'CONTENT_FILTER');
  const blocked = new Output('gemini', null, { strict: true });
  assert.equal(blocked.event({ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' } }), true);
  assert.deepEqual([blocked.check().code, blocked.finish],
                   ['CONTENT_FILTER', 'PROHIBITED_CONTENT']);
  const failed = new Output('gemini', null, { strict: true });
  const data = JSON.stringify(googleError(503, 'UNAVAILABLE',
                                          'The model is overloaded. Please try again later.'));
  assert.equal(failed.event(parseEvent({ event: 'message', data })), true);
  assert.deepEqual([failed.check().code, failed.check().phase, failed.check().retryable],
                   ['OVERLOADED', 'stream', true]);
});

// ---- ollama --------------------------------------------------------------------------------

const ollamaLine = (message, extra = {}) => ({
  model: 'llama3.2', created_at: '2026-12-05T11:00:00.000000000Z',
  message: { role: 'assistant', content: '', ...message }, done: false, ...extra });
const ollamaDone = (extra = {}) => ollamaLine({}, {
  done: true, done_reason: 'stop', total_duration: 4883583458, prompt_eval_count: 26,
  eval_count: 3, ...extra });
const ndjson = (objs) => objs.map((o) => `${JSON.stringify(o)}\n`).join('');

test('ollama: /api/chat (no /v1), the request as is, a bearer key, accept by the stream', () => {
  const messages = [{ role: 'user', content: 'hi' }];
  const request = { model: 'llama3.2', messages, stream: true,
                    options: { num_predict: 64, stop: ['END'] } };
  const call = { dialect: 'ollama', base_url: 'http://127.0.0.1:9/s/run/x/', api_key: 'k',
                 request };
  assert.equal(endpoint(call), 'http://127.0.0.1:9/s/run/x/api/chat');
  assert.deepEqual(JSON.parse(requestBody(call)), request);
  assert.deepEqual(requestHeaders(call), { 'content-type': 'application/json',
                                           authorization: 'Bearer k',
                                           accept: 'application/x-ndjson' });
  const whole = { ...call, request: { ...request, stream: false } };
  assert.equal(requestHeaders(whole).accept, 'application/json');
  assert.deepEqual([streams(call), streams(whole), streams({ ...call, request: { messages } })],
                   [true, false, true], 'Ollama streams unless told "stream": false');
  assert.equal(streams({ dialect: 'openai-chat', request: { messages } }), false);
  // The content-type the reference client requires (assembler.cc CheckContentType).
  assert.equal(checkContentType(call, 'application/x-ndjson; charset=utf-8'), null);
  assert.equal(checkContentType(call, null), null, 'no content-type, no verdict');
  const wrong = checkContentType(call, 'text/event-stream');
  assert.deepEqual([wrong.code, wrong.phase, wrong.retryable],
                   ['MALFORMED_RESPONSE', 'response-headers', true]);
  assert.equal(checkContentType(whole, 'application/json; charset=utf-8'), null);
  assert.equal(checkContentType(whole, 'application/x-ndjson').code, 'MALFORMED_RESPONSE');
  const chat = { dialect: 'openai-chat', request: { stream: true } };
  assert.equal(checkContentType(chat, 'text/event-stream'), null);
  assert.equal(checkContentType(chat, 'application/x-ndjson').code, 'MALFORMED_RESPONSE');
});

test('NDJSON framing: split writes, CRLF, blank lines, an unfinished last line discarded',
     async () => {
  const decoder = new NdjsonDecoder();
  const encoder = new TextEncoder();
  const lines = [];
  for (const part of ['{"a"', ':1}\r', '\n\n  \r\n{"b":"\u00e9', '"}\n{"c":']) {
    lines.push(...decoder.push(encoder.encode(part)));
  }
  assert.deepEqual(lines, [{ event: 'message', data: '{"a":1}' },
                           { event: 'message', data: '{"b":"\u00e9"}' }]);
  assert.equal(decoder.finish(), 5, 'the cut line\'s bytes');
  const body = new ReadableStream({
    start(controller) {
      controller.enqueue(encoder.encode('{"x":1}\n{"y"'));
      controller.close();
    },
  });
  const events = [];
  for await (const event of streamEvents('ollama', body)) events.push(event);
  assert.deepEqual(events, [{ event: 'message', data: '{"x":1}' }]);
  // A line is an object of the dialect: `[DONE]` means nothing in NDJSON.
  assert.throws(() => parseEvent({ event: 'message', data: '[DONE]' }, 'ollama'),
                (e) => e.failure?.code === 'MALFORMED_RESPONSE');
  assert.equal(parseEvent({ event: 'message', data: '[DONE]' }), null);
});

test('ollama: a whole answer, thinking, the done line, a cut stream, an error line', () => {
  // No wire and no hello here: only what writes no assistant/chunk (a whole answer, thinking).
  const whole = new Output('ollama', null, { strict: true });
  whole.whole(ollamaDone({ message: { role: 'assistant', content: 'Hello', thinking: 'hm',
    tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris' } } }] } }));
  assert.equal(whole.check(), null);
  assert.deepEqual(whole.committed(), {
    text: 'Hello', reasoning: 'hm', finish_reason: 'stop',
    tool_calls: [{ id: '', name: 'get_weather', arguments: '{"city":"Paris"}' }],
    usage: { input_tokens: 26, output_tokens: 3 } });
  const stream = new Output('ollama', null, { strict: true });
  assert.equal(stream.event(ollamaLine({ thinking: 'hm' })), false);
  assert.equal(stream.check().code, 'STREAM_TRUNCATED', 'no line with "done": true yet');
  assert.match(stream.check().message, /without a line with "done": true/);
  assert.equal(stream.event(ollamaDone({ done_reason: undefined })), true);
  assert.deepEqual([stream.check().code, stream.finish, stream.reasoning, stream.usage],
                   ['EMPTY_RESPONSE', 'stop', 'hm', { input_tokens: 26, output_tokens: 3 }]);
  const long = new Output('ollama', null, { strict: true });
  assert.equal(long.event(ollamaDone({ done_reason: 'length' })), true);
  assert.equal(long.finish, 'length');
  for (const [error, code] of [
    [{ error: 'an error was encountered while running the model: unexpected EOF' }, 'SERVER'],
    [{ error: 'the model is overloaded' }, 'SERVER'],  // no kind: SERVER, whatever it says
    [{ error: { type: 'rate_limit_error', message: 'slow down' } }, 'RATE_LIMIT']]) {
    const failed = new Output('ollama', null, { strict: true });
    const data = JSON.stringify(error);
    assert.equal(failed.event(parseEvent({ event: 'message', data }, 'ollama')), true);
    assert.deepEqual([failed.check().code, failed.check().phase], [code, 'stream'], data);
  }
  const body = new Output('ollama', null, { strict: true });  // a 200 body that is an error
  body.whole({ error: 'unexpected server error' });
  assert.equal(body.check().code, 'SERVER');
  assert.throws(() => new Output('ollama', null, { strict: true }).whole(ollamaLine({})),
                (e) => e.failure?.code === 'MALFORMED_RESPONSE', 'a whole answer must be done');
});

// ---- bedrock-converse ----------------------------------------------------------------------

// The tests' own event stream encoder, written apart from the kit's decoder: CRC-32 bit by bit
// (the kit's is by table), checked against its check value and zlib's where Node has it.
function crc32Bitwise(bytes) {
  let c = 0xFFFFFFFF;
  for (const byte of bytes) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xEDB88320 & -(c & 1));
  }
  return (c ^ 0xFFFFFFFF) >>> 0;
}
const be32 = (n) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};
// One message: string headers (value type 7), the payload (an object is its JSON); `lie` bends
// what the prelude says ({total, headers}) while the CRCs stay right.
function encodeMessage(headers, payload, lie = {}) {
  const block = Buffer.concat(Object.entries(headers).map(([name, value]) => {
    const [n, v] = [Buffer.from(name), Buffer.from(value)];
    const length = Buffer.alloc(2);
    length.writeUInt16BE(v.length);
    return Buffer.concat([Buffer.from([n.length]), n, Buffer.from([7]), length, v]);
  }));
  const body = Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload));
  const prelude = Buffer.concat([be32(lie.total ?? 16 + block.length + body.length),
                                 be32(lie.headers ?? block.length)]);
  const head = Buffer.concat([prelude, be32(crc32Bitwise(prelude)), block, body]);
  return Buffer.concat([head, be32(crc32Bitwise(head))]);
}
const PADDING = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
// A ConverseStream event as Bedrock sends it, its payload padded with "p" as real Bedrock does.
const bedrockEvent = (name, payload, padding = 7) => encodeMessage(
  { ':event-type': name, ':content-type': 'application/json', ':message-type': 'event' },
  { ...payload, p: PADDING.slice(0, padding) });
const bedrockException = (type, message) => encodeMessage(
  { ':exception-type': type, ':content-type': 'application/json',
    ':message-type': 'exception' }, { message });
const textDelta = (text, index = 0) =>
  bedrockEvent('contentBlockDelta', { contentBlockIndex: index, delta: { text } });
// A whole ConverseStream body: text pieces, reasoning, a tool call whose arguments come in
// pieces, messageStop (unless `stop` is null: a stream that never says it ended), metadata.
function bedrockStream({ text = ['Hel', 'lo'], reasoning = null, tool = null, stop = 'end_turn',
                         usage = { inputTokens: 12, outputTokens: 5, totalTokens: 17 } } = {}) {
  const parts = [bedrockEvent('messageStart', { role: 'assistant' })];
  if (reasoning) {
    parts.push(bedrockEvent('contentBlockDelta', {
      contentBlockIndex: 0, delta: { reasoningContent: { text: reasoning } } }));
  }
  parts.push(...text.map((t) => textDelta(t)),
             bedrockEvent('contentBlockStop', { contentBlockIndex: 0 }));
  if (tool) {
    parts.push(bedrockEvent('contentBlockStart', { contentBlockIndex: 1, start: { toolUse: {
      toolUseId: tool.id, name: tool.name } } }));
    for (const input of tool.pieces) {
      parts.push(bedrockEvent('contentBlockDelta', { contentBlockIndex: 1,
                                                     delta: { toolUse: { input } } }));
    }
    parts.push(bedrockEvent('contentBlockStop', { contentBlockIndex: 1 }));
  }
  if (stop) {
    parts.push(bedrockEvent('messageStop', { stopReason: stop }),
               bedrockEvent('metadata', { usage, metrics: { latencyMs: 312 } }));
  }
  return Buffer.concat(parts);
}
const BEDROCK_MODEL = 'anthropic.claude-3-5-haiku-20241022-v1:0';
const malformedStream = (e) => e.failure?.code === 'MALFORMED_RESPONSE' &&
    e.failure.phase === 'stream';

test('the tests\' CRC-32 is CRC-32/IEEE', () => {
  assert.equal(crc32Bitwise(Buffer.from('123456789')), 0xCBF43926);
  const stream = bedrockStream();
  if (typeof zlib.crc32 === 'function') assert.equal(crc32Bitwise(stream), zlib.crc32(stream));
});

// Header values as the cases write them: strings and bools as they are, bytes as {hex}.
const plainHeaders = (headers) => Object.fromEntries(Object.entries(headers).map(([k, v]) =>
  [k, v instanceof Uint8Array ? { hex: Buffer.from(v).toString('hex') } : v]));

test('event stream framing: AWS\'s published vectors, every header type', () => {
  for (const vector of CASES.eventstream_vectors) {
    const decoder = new EventStreamDecoder();
    const messages = decoder.messages(Buffer.from(vector.hex, 'hex'));
    assert.equal(messages.length, 1, vector.name);
    assert.deepEqual(plainHeaders(messages[0].headers), vector.headers, vector.name);
    assert.equal(Buffer.from(messages[0].payload).toString(), vector.payload, vector.name);
    assert.equal(decoder.finish(), 0, vector.name);
  }
});

test('event stream framing: a message split across reads, at every byte offset', () => {
  const stream = bedrockStream({ reasoning: 'hm', tool: { id: 'tooluse_1', name: 'get_weather',
                                                         pieces: ['{"city":', '"Paris"}'] } });
  const whole = new EventStreamDecoder().push(stream);
  assert.equal(whole.length, 11);
  assert.deepEqual(whole[1], { event: 'contentBlockDelta', data: JSON.stringify({
    contentBlockIndex: 0, delta: { reasoningContent: { text: 'hm' } }, p: 'abcdefg' }) });
  for (let cut = 1; cut < stream.length; cut++) {
    const decoder = new EventStreamDecoder();
    const events = [...decoder.push(stream.subarray(0, cut)),
                    ...decoder.push(stream.subarray(cut))];
    assert.deepEqual(events, whole, `cut at ${cut}`);
    assert.equal(decoder.finish(), 0, `cut at ${cut}`);
  }
  const decoder = new EventStreamDecoder();  // a byte at a time
  const events = [];
  for (const byte of stream) events.push(...decoder.push(Uint8Array.of(byte)));
  assert.deepEqual(events, whole);
});

test('event stream framing: a wrong CRC, a short or overlong length is a malformed stream', () => {
  const first = textDelta('Hel');
  const flip = (message, at) => {
    const copy = Buffer.from(message);
    copy[at] ^= 0x01;
    return copy;
  };
  const cases = [
    ['the prelude CRC', flip(textDelta('lo'), 9)],
    ['the prelude CRC', flip(textDelta('lo'), 3)],  // the total length, which that CRC covers
    ['the message CRC', flip(textDelta('lo'), 40)],  // a header byte
    ['the message CRC', flip(textDelta('lo'), textDelta('lo').length - 6)],  // the payload
    ['the message CRC', flip(textDelta('lo'), textDelta('lo').length - 1)],  // that CRC itself
    ['16 at least', encodeMessage({}, '', { total: 15 })],
    ['bytes of headers', encodeMessage({ ':event-type': 'x' }, '{}', { headers: 200 })],
    ['runs past the headers', encodeMessage({ ':event-type': 'messageStart' }, '{}',
                                            { headers: 10 })],
  ];
  for (const [why, bad] of cases) {
    const decoder = new EventStreamDecoder();
    // The whole message before it comes first, as it would in a read of its own; then the throw.
    assert.deepEqual(decoder.push(Buffer.concat([first, bad])).map((e) => e.event),
                     ['contentBlockDelta'], why);
    const check = (e) => malformedStream(e) && e.failure.message.includes(why);
    assert.throws(() => decoder.push(textDelta('!')), check, why);
    assert.throws(() => decoder.finish(), check, `${why}, again`);
    assert.throws(() => new EventStreamDecoder().push(bad), check, `${why}, alone`);
  }
  // A header of a value type the encoding does not have (10), the CRCs right.
  const header = Buffer.concat([Buffer.from([1]), Buffer.from('x'), Buffer.from([10])]);
  const prelude = Buffer.concat([be32(16 + header.length), be32(header.length)]);
  const head = Buffer.concat([prelude, be32(crc32Bitwise(prelude)), header]);
  const unknownType = Buffer.concat([head, be32(crc32Bitwise(head))]);
  assert.throws(() => new EventStreamDecoder().messages(unknownType),
                (e) => malformedStream(e) && /unknown value type 10/.test(e.failure.message));
  const unnamed = encodeMessage({ ':message-type': 'event' }, '{}');
  assert.throws(() => new EventStreamDecoder().push(unnamed),
                (e) => malformedStream(e) && /without :event-type/.test(e.failure.message));
});

test('event stream framing: a body cut mid-message leaves bytes that are no message', () => {
  const stream = bedrockStream();
  const decoder = new EventStreamDecoder();
  const events = decoder.push(stream.subarray(0, stream.length - 5));
  assert.deepEqual(events.map((e) => e.event), ['messageStart', 'contentBlockDelta',
                                                'contentBlockDelta', 'contentBlockStop',
                                                'messageStop']);
  assert.equal(decoder.finish(), bedrockEvent('metadata', {
    usage: { inputTokens: 12, outputTokens: 5, totalTokens: 17 },
    metrics: { latencyMs: 312 } }).length - 5, 'the cut message\'s bytes');
});

test('event stream framing: exceptions are error events in the AWS SDKs\' union form', () => {
  const decoder = new EventStreamDecoder();
  const events = decoder.push(Buffer.concat([
    bedrockException('throttlingException', 'Too many requests, please wait before trying again.'),
    encodeMessage({ ':message-type': 'exception', ':exception-type': 'modelStreamErrorException' },
                  'upstream said no'),  // not JSON: its text is the message
    encodeMessage({ ':message-type': 'error', ':error-code': 'InternalFailure',
                    ':error-message': 'boom' }, ''),
    encodeMessage({ ':message-type': 'initial-response' }, '{}'),  // not ours: skipped
  ]));
  assert.deepEqual(events, [
    { event: 'error', data: JSON.stringify({ throttlingException: {
      message: 'Too many requests, please wait before trying again.' } }) },
    { event: 'error', data: JSON.stringify({ modelStreamErrorException: {
      message: 'upstream said no' } }) },
    { event: 'error', data: JSON.stringify({ error: { type: 'InternalFailure',
                                                      message: 'boom' } }) }]);
  const parsed = events.map((e) => parseEvent(e, 'bedrock-converse'));
  assert.ok(parsed.every((obj) => isErrorEvent(obj, 'bedrock-converse')));
  assert.deepEqual(parsed.map((obj) => classifyStreamError(obj, 'stream', 'bedrock-converse').code),
                   ['RATE_LIMIT', 'SERVER', 'UNKNOWN']);
});

test('bedrock-converse: the model and the method in the path, a bearer key, the stream\'s accept',
     () => {
  const messages = [{ role: 'user', content: [{ text: 'hi' }] }];
  const request = { model: BEDROCK_MODEL, messages, inferenceConfig: { maxTokens: 64 },
                    system: [{ text: 'Be brief.' }], stream: true };
  const call = { dialect: 'bedrock-converse', base_url: 'http://127.0.0.1:9/s/run/x/',
                 api_key: 'k', request };
  assert.equal(endpoint(call), 'http://127.0.0.1:9/s/run/x/model/' +
               'anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream');
  const whole = { ...call, request: { ...request, stream: false } };
  assert.equal(endpoint(whole), 'http://127.0.0.1:9/s/run/x/model/' +
               'anthropic.claude-3-5-haiku-20241022-v1%3A0/converse');
  assert.equal(endpoint({ ...call, request: { messages } }), endpoint(call),
               'the default model, streamed by default');
  assert.equal(endpoint({ ...call, request: { model: 'arn:aws:bedrock:us-east-1:123456789012:' +
                                              "inference-profile/us.model(1)!*'", messages } }),
               'http://127.0.0.1:9/s/run/x/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012' +
               '%3Ainference-profile%2Fus.model%281%29%21%2A%27/converse-stream',
               'an ARN stays one segment, encoded as the AWS SDKs do');
  assert.deepEqual(JSON.parse(requestBody(call)), { messages, inferenceConfig: { maxTokens: 64 },
                                                    system: [{ text: 'Be brief.' }] });
  assert.deepEqual(requestHeaders(call), { 'content-type': 'application/json',
                                           authorization: 'Bearer k',
                                           accept: 'application/vnd.amazon.eventstream' });
  assert.equal(requestHeaders(whole).accept, 'application/json');
  assert.deepEqual([streams(call), streams(whole), streams({ ...call, request: { messages } })],
                   [true, false, true]);
  assert.equal(checkContentType(call, 'application/vnd.amazon.eventstream'), null);
  assert.equal(checkContentType(call, 'text/event-stream').code, 'MALFORMED_RESPONSE');
  assert.equal(checkContentType(whole, 'application/json'), null);
  // The other dialects' requests are as they were: no accept for an SSE dialect.
  assert.equal(requestHeaders({ ...call, dialect: 'openai-chat' }).accept, undefined);
});

test('bedrock-converse: events as union objects; a whole answer, reasoning, usage after the ' +
     'terminator, a cut stream, exceptions', () => {
  const union = parseEvent({ event: 'messageStop', data: '{"stopReason":"end_turn","p":"abc"}' },
                           'bedrock-converse');
  assert.deepEqual(union, { messageStop: { stopReason: 'end_turn', p: 'abc' } });
  for (const data of ['{"stopReason":', '[1]', '"end_turn"', '[DONE]']) {
    assert.throws(() => parseEvent({ event: 'messageStop', data }, 'bedrock-converse'),
                  (e) => e.failure?.code === 'MALFORMED_RESPONSE', data);
  }
  // No wire and no hello here: only what writes no assistant/chunk (a whole answer, reasoning).
  const whole = new Output('bedrock-converse', null, { strict: true });
  whole.whole({ output: { message: { role: 'assistant', content: [
    { reasoningContent: { reasoningText: { text: 'hm', signature: 'sig' } } }, { text: 'Hello' },
    { toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Paris' } } }] } },
  stopReason: 'tool_use', usage: { inputTokens: 12, outputTokens: 5, totalTokens: 17 },
  metrics: { latencyMs: 312 } });
  assert.equal(whole.check(), null);
  assert.deepEqual(whole.committed(), {
    text: 'Hello', reasoning: 'hm', finish_reason: 'tool_use',
    tool_calls: [{ id: 'tooluse_1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
    usage: { input_tokens: 12, output_tokens: 5 } });
  assert.throws(() => new Output('bedrock-converse', null, { strict: true }).whole({ output: {} }),
                (e) => e.failure?.code === 'MALFORMED_RESPONSE');
  const stream = new Output('bedrock-converse', null, { strict: true });
  const feed = (name, payload) => stream.event({ [name]: payload });
  assert.equal(feed('messageStart', { role: 'assistant' }), false);
  assert.equal(feed('contentBlockDelta', { contentBlockIndex: 0,
                                           delta: { reasoningContent: { text: 'hm' } } }), false);
  assert.equal(feed('contentBlockStart', { contentBlockIndex: 1, start: { toolUse: {
    toolUseId: 'tooluse_1', name: 'get_weather' } } }), false);
  assert.equal(feed('someFutureEvent', { whatever: 1 }), false, 'unknown events are ignored');
  assert.equal(stream.check().code, 'STREAM_TRUNCATED', 'no messageStop yet');
  assert.match(stream.check().message, /without messageStop/);
  assert.equal(feed('messageStop', { stopReason: 'tool_use' }), true, 'the terminator');
  assert.equal(feed('metadata', { usage: { inputTokens: 12, outputTokens: 5 },
                                  metrics: { latencyMs: 312 } }), true, 'still ended');
  assert.deepEqual([stream.check(), stream.finish, stream.reasoning, stream.usage],
                   [null, 'tool_use', 'hm', { input_tokens: 12, output_tokens: 5 }]);
  assert.deepEqual(stream.committed().tool_calls,
                   [{ id: 'tooluse_1', name: 'get_weather', arguments: '' }]);
  const empty = new Output('bedrock-converse', null, { strict: true });
  empty.event({ messageStop: { stopReason: 'end_turn' } });
  assert.equal(empty.check().code, 'EMPTY_RESPONSE');
  for (const [type, message, code] of [
    ['throttlingException', 'Too many requests, please wait before trying again.', 'RATE_LIMIT'],
    ['serviceUnavailableException', 'Too many connections, please wait before trying again.',
     'OVERLOADED'],
    ['validationException', 'Input is too long for requested model.', 'CONTEXT_WINDOW_EXCEEDED']]) {
    const failed = new Output('bedrock-converse', null, { strict: true });
    const data = JSON.stringify({ [type]: { message } });
    assert.equal(failed.event(parseEvent({ event: 'error', data }, 'bedrock-converse')), true);
    assert.deepEqual([failed.check().code, failed.check().phase], [code, 'stream'], type);
  }
});

// ---- whole adapters against a loopback server ----------------------------------------------

const sse = (obj) => `data: ${JSON.stringify(obj)}\n\n`;
const chatChunk = (text) =>
  sse({ choices: [{ index: 0, delta: { content: text }, finish_reason: null }] });
const chatEnd =
  `${sse({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}data: [DONE]\n\n`;

// Serves `plan[i]` to request i (the last entry again after the plan ends).
async function serve(plan) {
  const arrivals = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (data) => (body += data));
    req.on('end', () => {
      req.body = body;
      arrivals.push(Date.now());
      plan[Math.min(arrivals.length, plan.length) - 1](req, res);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, arrivals, server,
           close: () => new Promise((resolve) => server.close(resolve)) };
}

const ok = (parts = ['Hel', 'lo']) => (req, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.end(parts.map(chatChunk).join('') + chatEnd);
};
const status = (code, body, headers = {}) => (req, res) => {
  res.writeHead(code, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};
const reset = (req) => req.socket.destroy();

// Every line the adapters of these tests wrote, for the independent validator at the end.
const written = [];

// Runs an adapter command on one call; resolves {events, stderr, code}. `onEvent(event, stdin)`
// may write to the adapter's stdin (a cancel); `extra` adds fields to the call line.
function runAdapter(args, baseUrl, onEvent = () => {}, extra = {}) {
  return new Promise((resolve) => {
    const child = spawn(args[0], args.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] });
    const lines = [];
    const times = [];  // receipt of each line
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (data) => {
      stdout += data;
      let newline;
      while ((newline = stdout.indexOf('\n')) >= 0) {
        const line = stdout.slice(0, newline);
        stdout = stdout.slice(newline + 1);
        lines.push(line);
        times.push(performance.now());
        onEvent(JSON.parse(line), child.stdin);
      }
    });
    child.stderr.on('data', (data) => (stderr += data));
    child.on('close', (code) => {
      written.push(...lines);
      resolve({ lines, times, events: lines.map((l) => JSON.parse(l)), stderr, code, rest: stdout });
    });
    child.stdin.write(`${JSON.stringify({
      type: 'call', base_url: baseUrl, api_key: 'sk-test', dialect: 'openai-chat',
      request: { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true },
      scenario: 'kit-test', ...extra,
    })}\n`);
  });
}

const types = (events) => events.map((e) => e.type);
const EXAMPLE = ['node', `${HERE}../node/example.mjs`];
const RETRY_LOOP = ['node', `${HERE}fixtures/retry_loop.mjs`];
const TWO_ROUTES = ['node', `${HERE}fixtures/two_routes.mjs`];
const SESSION = ['node', `${HERE}fixtures/session_breaker.mjs`];

test('the example commits a whole stream and fails a rate limit, classified', async () => {
  const server = await serve([ok(), status(429, { error: { type: 'requests',
      code: 'rate_limit_exceeded', message: 'Rate limit reached' } }, { 'retry-after': '2' })]);
  try {
    const good = await runAdapter(EXAMPLE, server.url);
    assert.deepEqual(types(good.events), ['adapter/hello', 'response/start', 'assistant/chunk',
                                          'assistant/chunk', 'response/committed']);
    assert.equal(good.events.at(-1).text, 'Hello');
    assert.equal(good.events[0].policy.extends, 'node-fetch');
    assert.equal(good.code, 0);
    const limited = await runAdapter(EXAMPLE, server.url);
    const { failure } = limited.events.at(-1);
    assert.equal(limited.events.at(-1).type, 'response/failed');
    assert.deepEqual([failure.code, failure.status, failure.retry_after_ms],
                     ['RATE_LIMIT', 429, 2000]);
    assert.equal(limited.code, 1);
  } finally {
    await server.close();
  }
});

test('the example speaks gemini: a stream committed, a 429 with its retryDelay, an error chunk',
     async () => {
  const seen = [];
  const contents = [{ role: 'user', parts: [{ text: 'hi' }] }];
  const stream = (events) => (req, res) => {
    seen.push({ url: req.url, key: req.headers['x-goog-api-key'],
                authorization: req.headers.authorization, body: JSON.parse(req.body) });
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(events.map(sse).join(''));
  };
  const server = await serve([
    stream([geminiResponse([{ text: 'Hel' }]), geminiResponse([{ text: 'lo' }]),
            geminiResponse([{ text: '' }], { finish: 'STOP',
                            usage: { promptTokenCount: 9, candidatesTokenCount: 2 } })]),
    status(429, googleError(429, 'RESOURCE_EXHAUSTED', 'Resource has been exhausted (e.g. ' +
                            'check quota).', [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo',
                                                retryDelay: '37s' }])),
    stream([geminiResponse([{ text: 'Hel' }]),
            googleError(503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.')]),
    stream([geminiResponse([{ text: 'Hel' }])]),  // cut: no chunk with a finishReason
  ]);
  const gemini = { dialect: 'gemini', request: { model: 'gemini-2.5-flash', contents,
                                                 stream: true } };
  try {
    const good = await runAdapter(EXAMPLE, server.url, () => {}, gemini);
    assert.deepEqual(types(good.events), ['adapter/hello', 'response/start', 'assistant/chunk',
                                          'assistant/chunk', 'response/committed']);
    const committed = good.events.at(-1);
    assert.deepEqual([committed.text, committed.finish_reason, committed.usage],
                     ['Hello', 'STOP', { input_tokens: 9, output_tokens: 2 }]);
    assert.deepEqual(seen[0], {
      url: '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', key: 'sk-test',
      authorization: undefined, body: { contents } });
    const limited = (await runAdapter(EXAMPLE, server.url, () => {}, gemini)).events.at(-1);
    assert.deepEqual(
      [limited.failure.code, limited.failure.status, limited.failure.retry_after_ms],
      ['RATE_LIMIT', 429, 37000], 'Google\'s retryDelay is the hint');
    const overloaded = (await runAdapter(EXAMPLE, server.url, () => {}, gemini)).events.at(-1);
    assert.deepEqual([overloaded.failure.code, overloaded.failure.phase,
                      overloaded.failure.partial_output], ['OVERLOADED', 'stream', 'uncommitted']);
    const cut = (await runAdapter(EXAMPLE, server.url, () => {}, gemini)).events.at(-1);
    assert.equal(cut.failure.code, 'STREAM_TRUNCATED');
  } finally {
    await server.close();
  }
});

test('the example speaks ollama: NDJSON committed, a cut stream, an error line, HTTP errors',
     async () => {
  const seen = [];
  const messages = [{ role: 'user', content: 'hi' }];
  const lines = (text, type = 'application/x-ndjson') => (req, res) => {
    seen.push({ url: req.url, authorization: req.headers.authorization,
                accept: req.headers.accept, body: JSON.parse(req.body) });
    res.writeHead(200, { 'content-type': type });
    res.end(text);
  };
  const call = { name: 'get_weather', arguments: { city: 'Paris' } };
  const server = await serve([
    lines(ndjson([ollamaLine({ thinking: 'hm' }), ollamaLine({ content: 'Hel' }),
                  ollamaLine({ content: 'lo' }), ollamaLine({ tool_calls: [{ function: call }] }),
                  ollamaDone()]).replaceAll('\n', '\r\n')),
    // Cut: the done line never came whole.
    lines(ndjson([ollamaLine({ content: 'Hel' })]) + JSON.stringify(ollamaDone()).slice(0, 40)),
    lines(ndjson([ollamaLine({ content: 'Hel' }),
                  { error: 'an error was encountered while running the model: unexpected EOF' }])),
    status(400, { error: 'the input length exceeds the context length' }),
    status(429, { error: 'you have exceeded your current quota, please upgrade your plan' }),
    lines(ndjson([ollamaDone()]), 'text/event-stream'),  // not the framing asked for
    (req, res) => {  // "stream": false: one object, done, the whole message
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(ollamaDone({ message: { role: 'assistant', content: 'Hello' } })));
    },
  ]);
  const ollama = { dialect: 'ollama', request: { model: 'llama3.2', messages, stream: true,
                                                 options: { num_predict: 64 } } };
  const last = async (extra = ollama) =>
    (await runAdapter(EXAMPLE, server.url, () => {}, extra)).events;
  try {
    const good = await last();
    assert.deepEqual(types(good), ['adapter/hello', 'response/start', 'assistant/chunk',
                                   'assistant/chunk', 'assistant/chunk', 'response/committed']);
    assert.deepEqual(good[4].tool_call, { index: 0, name: 'get_weather',
                                          arguments: '{"city":"Paris"}' });
    const committed = good.at(-1);
    assert.deepEqual([committed.text, committed.reasoning, committed.finish_reason,
                      committed.usage, committed.tool_calls],
                     ['Hello', 'hm', 'stop', { input_tokens: 26, output_tokens: 3 },
                      [{ id: '', name: 'get_weather', arguments: '{"city":"Paris"}' }]]);
    assert.deepEqual(seen[0], { url: '/api/chat', authorization: 'Bearer sk-test',
                                accept: 'application/x-ndjson', body: ollama.request });
    const cut = (await last()).at(-1).failure;
    assert.deepEqual([cut.code, cut.phase, cut.partial_output],
                     ['STREAM_TRUNCATED', 'stream', 'uncommitted']);
    assert.match(cut.message, /without a line with "done": true/);
    const failed = (await last()).at(-1).failure;
    assert.deepEqual([failed.code, failed.phase, failed.retryable, failed.partial_output],
                     ['SERVER', 'stream', true, 'uncommitted'], 'an error line names no kind');
    const context = (await last()).at(-1).failure;
    assert.deepEqual([context.code, context.status, context.retryable],
                     ['CONTEXT_WINDOW_EXCEEDED', 400, false]);
    assert.match(context.message, /exceeds the context length/);
    const quota = (await last()).at(-1).failure;
    assert.deepEqual([quota.code, quota.status], ['QUOTA', 429]);
    const wrong = (await last()).at(-1).failure;
    assert.deepEqual([wrong.code, wrong.phase, wrong.status],
                     ['MALFORMED_RESPONSE', 'response-headers', 200]);
    const whole = await last({ ...ollama, request: { ...ollama.request, stream: false } });
    assert.deepEqual([whole.at(-1).type, whole.at(-1).text], ['response/committed', 'Hello']);
  } finally {
    await server.close();
  }
});

test('the example speaks bedrock-converse: an event stream committed, exceptions, HTTP errors, ' +
     'bad CRCs, cut streams, a JSON answer', async () => {
  const seen = [];
  const messages = [{ role: 'user', content: [{ text: 'hi' }] }];
  const binary = (bytes, type = 'application/vnd.amazon.eventstream') => (req, res) => {
    seen.push({ url: req.url, authorization: req.headers.authorization,
                accept: req.headers.accept, body: JSON.parse(req.body) });
    res.writeHead(200, { 'content-type': type,
                         'x-amzn-requestid': '7c1f0d2e-5b8a-4a51-9e63-2f0c6d1a9b44' });
    res.end(bytes);
  };
  const flipped = (bytes, at) => {
    const copy = Buffer.from(bytes);
    copy[at] ^= 0x01;
    return copy;
  };
  const tool = { id: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', name: 'get_weather',
                 pieces: ['{"city":', '"Paris"}'] };
  const good = bedrockStream({ reasoning: 'hm', tool, stop: 'tool_use' });
  const head = Buffer.concat([bedrockEvent('messageStart', { role: 'assistant' }),
                              textDelta('Hel')]);
  const server = await serve([
    binary(good),
    binary(bedrockStream({ stop: null })),  // ends cleanly without messageStop
    binary(bedrockStream().subarray(0, head.length + 7)),  // cut in the middle of a message
    ...CASES.stream_errors.filter((row) => row.dialect === 'bedrock-converse' &&
                                           !('error' in row.error)).map((row) => {
      const [[type, { message }]] = Object.entries(row.error);
      return binary(Buffer.concat([head, bedrockException(type, message)]));
    }),
    status(429, { message: 'Too many requests, please wait before trying again.' }, {
      'x-amzn-ErrorType':
        'ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/',
      'x-amzn-RequestId': '0b4b0a4e-9a53-4d44-8a3b-6a1d5c2e7f10', 'retry-after': '2' }),
    binary(Buffer.concat([head, flipped(textDelta('lo'), 9)])),  // the prelude CRC
    binary(Buffer.concat([head, flipped(textDelta('lo'), 30)])),  // the message CRC
    binary(good, 'text/event-stream'),  // not the framing asked for
    (req, res) => {  // "stream": false: /converse, one JSON answer
      seen.push({ url: req.url, accept: req.headers.accept });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ output: { message: { role: 'assistant', content: [
        { reasoningContent: { reasoningText: { text: 'hm' } } }, { text: 'Hello' },
        { toolUse: { toolUseId: tool.id, name: tool.name, input: { city: 'Paris' } } }] } },
      stopReason: 'tool_use', usage: { inputTokens: 12, outputTokens: 5, totalTokens: 17 },
      metrics: { latencyMs: 312 } }));
    },
  ]);
  const bedrock = { dialect: 'bedrock-converse', request: {
    model: BEDROCK_MODEL, messages, inferenceConfig: { maxTokens: 64 }, stream: true } };
  const last = async (extra = bedrock) =>
    (await runAdapter(EXAMPLE, server.url, () => {}, extra)).events;
  try {
    const events = await last();
    assert.deepEqual(types(events), ['adapter/hello', 'response/start', 'assistant/chunk',
                                     'assistant/chunk', 'assistant/chunk', 'assistant/chunk',
                                     'response/committed']);
    assert.deepEqual(events.slice(2, 6).map((e) => e.text ?? e.tool_call), [
      'Hel', 'lo', { index: 1, id: tool.id, name: 'get_weather', arguments: '{"city":' },
      { index: 1, id: tool.id, name: 'get_weather', arguments: '"Paris"}' }]);
    const committed = events.at(-1);
    assert.deepEqual([committed.text, committed.reasoning, committed.finish_reason,
                      committed.tool_calls, committed.usage],
                     ['Hello', 'hm', 'tool_use',
                      [{ id: tool.id, name: 'get_weather', arguments: '{"city":"Paris"}' }],
                      { input_tokens: null, output_tokens: null }],
                     'the usage comes after messageStop, where the example stops reading');
    assert.deepEqual(seen[0], {
      url: '/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream',
      authorization: 'Bearer sk-test', accept: 'application/vnd.amazon.eventstream',
      body: { messages, inferenceConfig: { maxTokens: 64 } } });
    for (const why of ['without messageStop', 'cut mid-message']) {
      const cut = (await last()).at(-1).failure;
      assert.deepEqual([cut.code, cut.phase, cut.partial_output],
                       ['STREAM_TRUNCATED', 'stream', 'uncommitted'], why);
      assert.match(cut.message, /without messageStop/, why);
    }
    for (const row of CASES.stream_errors.filter((r) => r.dialect === 'bedrock-converse' &&
                                                        !('error' in r.error))) {
      const failed = (await last()).at(-1).failure;
      assert.deepEqual([failed.code, failed.phase, failed.retryable, failed.partial_output],
                       [row.code, 'stream', row.retryable, 'uncommitted'], row.name);
      assert.ok(failed.message.startsWith(`in-stream error (${Object.keys(row.error)[0]})`),
                failed.message);
    }
    const limited = (await last()).at(-1).failure;
    assert.deepEqual([limited.code, limited.status, limited.retryable, limited.retry_after_ms,
                      limited.request_id],
                     ['RATE_LIMIT', 429, true, 2000, '0b4b0a4e-9a53-4d44-8a3b-6a1d5c2e7f10']);
    for (const why of ['the prelude CRC', 'the message CRC']) {
      const broken = (await last()).at(-1).failure;
      assert.deepEqual([broken.code, broken.phase, broken.partial_output],
                       ['MALFORMED_RESPONSE', 'stream', 'uncommitted'], why);
      assert.match(broken.message, new RegExp(why));
    }
    const wrong = (await last()).at(-1).failure;
    assert.deepEqual([wrong.code, wrong.phase, wrong.status],
                     ['MALFORMED_RESPONSE', 'response-headers', 200]);
    const whole = await last({ ...bedrock, request: { ...bedrock.request, stream: false } });
    assert.deepEqual(seen.at(-1), { url: '/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/' +
                                         'converse', accept: 'application/json' });
    assert.deepEqual(whole.at(-1), {
      type: 'response/committed', response_id: 'attempt-1', attempt: 1, text: 'Hello',
      tool_calls: [{ id: tool.id, name: 'get_weather', arguments: '{"city":"Paris"}' }],
      finish_reason: 'tool_use', usage: { input_tokens: 12, output_tokens: 5 },
      reasoning: 'hm' });
  } finally {
    await server.close();
  }
});

test('a Bedrock exception that a library retries silently is announced with its class',
     async () => {
  const binary = (bytes) => (req, res) => {
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
    res.end(bytes);
  };
  const server = await serve([
    binary(Buffer.concat([
      bedrockEvent('messageStart', { role: 'assistant' }),
      bedrockException('serviceUnavailableException',
                       'Too many connections, please wait before trying again.')])),
    binary(bedrockStream())]);
  try {
    const run = await runAdapter(RETRY_LOOP, server.url, () => {}, {
      dialect: 'bedrock-converse',
      request: { model: BEDROCK_MODEL, messages: [{ role: 'user', content: [{ text: 'hi' }] }],
                 stream: true } });
    const interrupted = run.events.find((e) => e.type === 'response/interrupted');
    assert.deepEqual([interrupted.attempt, interrupted.failure.code, interrupted.failure.phase],
                     [1, 'OVERLOADED', 'stream'], 'seen on the wire, in the call\'s dialect');
    assert.deepEqual([run.events.at(-1).type, run.events.at(-1).text],
                     ['response/committed', 'Hello']);
  } finally {
    await server.close();
  }
});

test('an Ollama error line that a library retries silently is announced as SERVER', async () => {
  const messages = [{ role: 'user', content: 'hi' }];
  const lines = (objs) => (req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    res.end(ndjson(objs));
  };
  const server = await serve([lines([{ error: 'model runner has unexpectedly stopped' }]),
                              lines([ollamaLine({ content: 'Hello' }), ollamaDone()])]);
  try {
    const run = await runAdapter(RETRY_LOOP, server.url, () => {}, {
      dialect: 'ollama', request: { model: 'llama3.2', messages, stream: true } });
    const interrupted = run.events.find((e) => e.type === 'response/interrupted');
    assert.deepEqual([interrupted.attempt, interrupted.failure.code, interrupted.failure.phase],
                     [1, 'SERVER', 'stream'], 'seen on the wire in the call\'s dialect');
    assert.deepEqual([run.events.at(-1).type, run.events.at(-1).text],
                     ['response/committed', 'Hello']);
  } finally {
    await server.close();
  }
});

test('a library without a retry hook: each failed attempt is announced before the next request',
     async () => {
  const server = await serve([status(429, { error: { type: 'insufficient_quota',
                                  message: 'You exceeded your current quota' } }), reset, ok()]);
  try {
    const run = await runAdapter([...RETRY_LOOP, '--noisy'], server.url);
    assert.deepEqual(types(run.events), [
      'adapter/hello', 'response/start', 'response/interrupted', 'response/start',
      'response/interrupted', 'response/start', 'assistant/chunk', 'assistant/chunk',
      'response/committed']);
    const [first, second] = run.events.filter((e) => e.type === 'response/interrupted');
    assert.deepEqual([first.attempt, first.failure.code, first.failure.status], [1, 'QUOTA', 429]);
    assert.deepEqual([second.attempt, second.failure.code], [2, 'TRANSPORT']);
    assert.ok(!('scheduled_retry_ms' in first), 'a delay nobody stated is not guessed');
    assert.equal(run.events.at(-1).attempt, 3);
    assert.equal(server.arrivals.length, 3);
    assert.match(run.stderr, /a library printing to stdout/);
    assert.equal(run.rest, '');
  } finally {
    await server.close();
  }
});

test('an error event that a library retries silently is announced with its class', async () => {
  const inStreamError = (req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`data: ${JSON.stringify({ error: { type: 'requests', code: 'rate_limit_exceeded',
                                               message: 'Rate limit reached' } })}\n\n`);
  };
  const server = await serve([inStreamError, ok()]);
  try {
    const run = await runAdapter(RETRY_LOOP, server.url);
    const interrupted = run.events.find((e) => e.type === 'response/interrupted');
    assert.deepEqual([interrupted.attempt, interrupted.failure.code, interrupted.failure.phase],
                     [1, 'RATE_LIMIT', 'stream'], 'seen on the wire, not UNKNOWN');
    assert.equal(run.events.at(-1).type, 'response/committed');
  } finally {
    await server.close();
  }
});

test('with routes, every event of an attempt names the route its request went to', async () => {
  const server = await serve([status(503, { error: { type: 'server_error', message: 'down' } }),
                              ok()]);
  try {
    const routes = ['primary', 'primary-eu'].map((id) => ({
      id, base_url: `${server.url}/route/${id}`, dialect: 'openai-chat',
    }));
    const run = await runAdapter(TWO_ROUTES, server.url, () => {}, { routes });
    const routed = run.events.filter((e) => e.type !== 'adapter/hello');
    assert.deepEqual(routed.map((e) => [e.type, e.route_id]), [
      ['response/start', 'primary'], ['response/interrupted', 'primary'],
      ['response/start', 'primary-eu'], ['assistant/chunk', 'primary-eu'],
      ['assistant/chunk', 'primary-eu'], ['response/committed', 'primary-eu']]);
    assert.equal(routed[1].failure.route_id, 'primary', 'the failure names its route too');
    const plain = await runAdapter(EXAMPLE, server.url);  // no routes: no route_id anywhere
    assert.ok(plain.events.every((e) => !('route_id' in e)));
  } finally {
    await server.close();
  }
});

test('a cancel mid-stream ends the call ABORTED with its partial output', async () => {
  const server = await serve([(req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chatChunk('Hel'));  // then silence
  }]);
  try {
    let cancelledAt = 0;
    const run = await runAdapter(EXAMPLE, server.url, (event, stdin) => {
      if (event.type !== 'assistant/chunk') return;
      cancelledAt = performance.now();
      stdin.write('{"type":"cancel"}\n');
    });
    const last = run.events.at(-1);
    assert.equal(last.type, 'response/failed');
    assert.deepEqual([last.failure.code, last.failure.phase, last.failure.partial_output],
                     ['ABORTED', 'stream', 'uncommitted']);
    assert.ok(run.times.at(-1) - cancelledAt < 3000, 'the terminal event follows the cancel');
  } finally {
    server.server.closeAllConnections();
    await server.close();
  }
});

test('a library\'s own classification announces its retry, once; the phase follows', async () => {
  const server = await serve([status(503, { error: { type: 'server_error', message: 'down' } }),
                              ok()]);
  try {
    const run = await runAdapter([...RETRY_LOOP, '--classify'], server.url);
    assert.deepEqual(types(run.events), [
      'adapter/hello', 'response/start', 'response/interrupted', 'response/start',
      'assistant/chunk', 'assistant/chunk', 'response/committed']);
    const interrupted = run.events[2];
    assert.deepEqual(
      [interrupted.failure.code, interrupted.failure.class, interrupted.failure.status,
       interrupted.failure.message, interrupted.scheduled_retry_ms, interrupted.delay_source],
      ['OVERLOADED', 'provider-overloaded', 503, 'the library says: overloaded', 50, 'backoff'],
      'the library\'s classification, not the wire\'s UNAVAILABLE');
    assert.equal(interrupted.failure.phase, 'response-headers', 'an error status, not connect');
    assert.match(run.stderr, /phase before the announcement: response-headers/);
    assert.match(run.stderr, /phase after the announcement: connect/);
  } finally {
    await server.close();
  }
});

test('a client that retries a broken stream resets its output; one that does not is noted',
     async () => {
  const brokenMidStream = (req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chatChunk('Hel'));
    setTimeout(() => req.socket.destroy(), 50);
  };
  const server = await serve([brokenMidStream, ok()]);
  try {
    const reset = await runAdapter([...RETRY_LOOP, '--mid-stream'], server.url);
    assert.deepEqual(types(reset.events), [
      'adapter/hello', 'response/start', 'assistant/chunk', 'response/interrupted',
      'response/start', 'assistant/chunk', 'assistant/chunk', 'response/committed']);
    assert.equal(reset.events[3].failure.partial_output, 'uncommitted');
    assert.equal(reset.events.at(-1).text, 'Hello', 'the last attempt alone');
    assert.doesNotMatch(reset.stderr, /adds to the output/);
  } finally {
    await server.close();
  }
  const again = await serve([brokenMidStream, ok()]);
  try {
    const kept = await runAdapter([...RETRY_LOOP, '--mid-stream', '--keep-output'], again.url);
    assert.equal(kept.events.at(-1).text, 'HelHello', 'committed as the caller got it');
    assert.match(kept.stderr, /attempt 2 adds to the output of attempt 1/);
  } finally {
    await again.close();
  }
});

test('session mode: one process serves every call, each event names its call, state lives on',
     async () => {
  const server = await serve([status(503, { error: { message: 'down' } })]);
  try {
    const call = (index) => `${JSON.stringify({
      type: 'call', base_url: server.url, api_key: 'sk-test', dialect: 'openai-chat',
      request: { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true },
      scenario: 'kit-test', ...(index > 0 ? { call: index } : {}) })}\n`;
    // Call 1 goes out once call 0 has ended; stdin ends once call 1 has: as the runner does.
    const run = await runAdapter(SESSION, server.url, (event, stdin) => {
      if (event.type !== 'response/failed') return;
      if ((event.call ?? 0) === 0) stdin.write(call(1));
      else stdin.end();
    });
    assert.equal(run.events[0].mode, 'session');
    assert.deepEqual(run.events.map((e) => [e.type, e.call]), [
      ['adapter/hello', undefined], ['response/start', 0], ['response/failed', 0],
      ['response/failed', 1]]);
    assert.equal(run.events.at(-1).failure.message, 'breaker open');
    assert.equal(server.arrivals.length, 1, 'the open breaker kept call 1 off the wire');
    assert.equal(run.code, 1);
  } finally {
    await server.close();
  }
});

test('session mode with reset: the runs share one process, and nothing of the calls\' state',
     async () => {
  const server = await serve([status(503, { error: { message: 'down' } })]);
  try {
    // Run 1's call 0 opens the breaker; the reset closes it; run 2's call 0 reaches the server.
    let runs = 1;
    const run = await runAdapter(SESSION, server.url, (event, stdin) => {
      if (event.type === 'response/failed' && runs === 1) stdin.write('{"type":"reset"}\n');
      else if (event.type === 'adapter/reset') {
        runs += 1;
        stdin.write(`${JSON.stringify({
          type: 'call', base_url: server.url, api_key: 'sk-test', dialect: 'openai-chat',
          request: { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true },
          scenario: 'kit-test-2' })}\n`);
      } else if (event.type === 'response/failed') stdin.end();
    });
    assert.equal(run.events[0].reset, true, 'the hello declares reset');
    assert.deepEqual(run.events.map((e) => [e.type, e.call]), [
      ['adapter/hello', undefined], ['response/start', 0], ['response/failed', 0],
      ['adapter/reset', undefined],
      ['adapter/hello', undefined], ['response/start', 0], ['response/failed', 0]]);
    assert.equal(run.events.at(-1).failure.status, 503, 'the breaker did not outlive the reset');
    assert.equal(server.arrivals.length, 2);
  } finally {
    await server.close();
  }
});

test('a bad call line: exit 2, nothing on stdout', async () => {
  const child = spawn('node', [EXAMPLE[1]], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stdin.end('{"type":"call","dialect":"klingon"}\n');
  const code = await new Promise((resolve) => child.on('close', resolve));
  assert.equal(code, 2);
  assert.equal(stdout, '');
});

// Last: what every adapter above wrote, through a validator nobody here wrote (the jsonschema
// package, via validate_lines.py), so that the kit's own schema validator cannot drift from the
// schema unnoticed. Python rather than a second validator in JavaScript: the kit's validator is
// already JavaScript, and checking it with a twin written by the same hands proves little.
test('every line the adapters wrote validates against the schema (jsonschema)', (t) => {
  assert.ok(written.length > 30, `${written.length} lines`);
  const run = spawnSync('python3', [`${HERE}validate_lines.py`], { input: written.join('\n') });
  if (run.error?.code === 'ENOENT' || run.status === 77) {
    t.skip(`not checked: ${run.error ? 'python3 is not installed' : run.stderr.toString().trim()}`);
    return;
  }
  assert.equal(run.status, 0, run.stdout.toString() + run.stderr.toString());
});
