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
import { test } from 'node:test';
import { PROTOCOL, currentCall, eventProblems, inCall } from '../node/lib/protocol.mjs';
import { Output, checkContentType, endpoint, parseEvent, requestBody, requestHeaders,
         streamEvents, streams } from '../node/lib/output.mjs';
import { sseEvents } from '../node/lib/sse.mjs';
import { NdjsonDecoder } from '../node/lib/ndjson.mjs';
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
