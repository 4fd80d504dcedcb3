// Drives the unmodified official `openai` npm package against `faultline serve`, one injected
// fault at a time, and asserts what the SDK observed and what the server journaled. This is the
// proof that the fake provider's bytes are the real wire format: the SDK parses them, retries on
// them and fails on them exactly as it does against the real API.
//
//   FAULTLINE=build/release/harness/faultline node --test fake_provider/tests/sdk/
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import OpenAI from 'openai';

const here = path.dirname(fileURLToPath(import.meta.url));
const binary = process.env.FAULTLINE;
let server;
let root;

before(async () => {
  assert.ok(binary, 'set FAULTLINE to the faultline binary');
  server = spawn(binary, ['serve', '--listen', '127.0.0.1:0', '--scenario', path.join(here, 'scenarios')],
                 { stdio: ['ignore', 'pipe', 'inherit'] });
  root = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 10000);
    server.stdout.on('data', (chunk) => {
      out += chunk;
      const m = out.match(/listening on (http:\/\/\S+)/);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    server.on('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
  server.stdout.resume();
});

after(() => { server?.kill('SIGINT'); });

const client = (session, options = {}) =>
  new OpenAI({ apiKey: 'test', baseURL: `${root}/s/${session}/v1`, maxRetries: 2, ...options });

const journal = async (session) => {
  const response = await fetch(`${root}/_faultline/sessions/${session}/journal`);
  assert.equal(response.status, 200);
  return (await response.json()).entries;
};

const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

async function collect(stream) {
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  return text;
}

test('a normal stream is parsed whole', async () => {
  const text = await collect(await client('sdk/ok').chat.completions.create({ ...chat, stream: true }));
  assert.equal(text, 'Hello, world');
});

test('a non-streaming request gets a JSON completion', async () => {
  const completion = await client('sdk/ok').chat.completions.create(chat);
  assert.equal(completion.choices[0].message.content, 'Hello, world');
  assert.ok(completion.usage.total_tokens > 0);
});

test('429 with Retry-After: the SDK waits, retries and succeeds', async () => {
  const text = await collect(await client('sdk/retry-after').chat.completions.create({ ...chat, stream: true }));
  assert.equal(text, 'after the wait');
  const entries = await journal('sdk/retry-after');
  assert.deepEqual(entries.map((e) => e.status), [429, 200]);
  assert.ok(entries[1].arrived_us - entries[0].arrived_us >= 1_000_000 - 50_000, 'waited ~1 s');
});

test('503 with an HTTP-date Retry-After is honoured', async () => {
  const text = await collect(await client('sdk/retry-after-date').chat.completions.create({ ...chat, stream: true }));
  assert.equal(text, 'after the date');
  const entries = await journal('sdk/retry-after-date');
  assert.equal(entries.length, 2);
  // The date has one-second resolution, so the honest wait is between 1 and 2 s.
  assert.ok(entries[1].arrived_us - entries[0].arrived_us >= 1_000_000 - 50_000);
});

test('400 context window exceeded is not retried', async () => {
  await assert.rejects(client('sdk/context-window').chat.completions.create(chat), (err) => {
    assert.equal(err.status, 400);
    assert.equal(err.code, 'context_length_exceeded');
    return true;
  });
  assert.equal((await journal('sdk/context-window')).length, 1);
});

test('a TCP reset mid-stream surfaces as an error from the stream', async () => {
  const stream = await client('sdk/reset-mid-stream').chat.completions.create({ ...chat, stream: true });
  await assert.rejects(collect(stream));
  const [entry] = await journal('sdk/reset-mid-stream');
  assert.equal(entry.end, 'reset_by_server');
});

test('a stream without [DONE] ends without error and yields partial text (SDK weakness)', async () => {
  const text = await collect(await client('sdk/no-done').chat.completions.create({ ...chat, stream: true }));
  assert.ok(text.length > 0 && text !== 'Hello, world, and more', `partial text: ${text}`);
});

test('a stall after three events keeps the SDK waiting past its own timeout (SDK weakness)', async () => {
  // The SDK's `timeout` stops at the response headers, and it swallows the AbortError of our
  // watchdog: the iteration just ends, with the partial text.
  const controller = new AbortController();
  const started = Date.now();
  const stream = await client('sdk/stall', { timeout: 1000 }).chat.completions.create(
    { ...chat, stream: true }, { signal: controller.signal });
  const watchdog = setTimeout(() => controller.abort(), 3000);
  const text = await collect(stream);
  clearTimeout(watchdog);
  assert.ok(Date.now() - started >= 2900, 'only our abort at 3 s ended the stream');
  assert.equal(text, 'Hello, w');
  let entries = [];
  for (let i = 0; i < 50 && entries[0]?.end !== 'stalled_client_gave_up'; i++) {
    await new Promise((r) => setTimeout(r, 100));
    entries = await journal('sdk/stall');
  }
  assert.equal(entries[0].end, 'stalled_client_gave_up');
});

test('an error envelope inside a 200 stream is raised by the SDK', async () => {
  const stream = await client('sdk/error-in-stream').chat.completions.create({ ...chat, stream: true });
  await assert.rejects(collect(stream));
});

test('a reset before headers is retried by the SDK', async () => {
  const text = await collect(await client('sdk/reset-before-headers').chat.completions.create({ ...chat, stream: true }));
  assert.equal(text, 'second try');
  assert.equal((await journal('sdk/reset-before-headers')).length, 2);
});

test('the Responses API stream is parsed whole', async () => {
  const stream = await client('sdk/responses-ok').responses.create({ model: 'gpt-4o-mini', input: 'hi', stream: true });
  let text = '';
  let completed = false;
  for await (const event of stream) {
    if (event.type === 'response.output_text.delta') text += event.delta;
    if (event.type === 'response.completed') completed = true;
  }
  assert.equal(text, 'Hello from responses');
  assert.ok(completed);
});

test('invalid JSON in a data line is raised by the SDK', async () => {
  const stream = await client('sdk/invalid-json').chat.completions.create({ ...chat, stream: true });
  await assert.rejects(collect(stream), SyntaxError);
});

test('a body without its final chunk is an error, not a clean end', async () => {
  const stream = await client('sdk/no-final-chunk').chat.completions.create({ ...chat, stream: true });
  await assert.rejects(collect(stream));
  const [entry] = await journal('sdk/no-final-chunk');
  assert.equal(entry.end, 'closed_by_server');
});

test('connection refused for a window: the SDK retries on its own until the port is back', async () => {
  // Created now, so that the outage window starts now.
  const { readFile } = await import('node:fs/promises');
  const created = await fetch(`${root}/_faultline/sessions`, {
    method: 'POST',
    body: JSON.stringify({ scenario_text: await readFile(path.join(here, 'live', 'refused.yaml'), 'utf8') }),
  });
  assert.equal(created.status, 201);
  const { base_url: base } = await created.json();
  assert.notEqual(new URL(base).port, new URL(root).port, 'a dedicated port');
  const refused = new OpenAI({ apiKey: 'test', baseURL: `${base}/v1`, maxRetries: 6 });
  const started = Date.now();
  const text = await collect(await refused.chat.completions.create({ ...chat, stream: true }));
  assert.equal(text, 'finally');
  assert.ok(Date.now() - started >= 1400, 'the SDK got through only after the window');
  assert.equal((await journal('sdk/refused')).length, 1, 'refused attempts never reach the server');
});
