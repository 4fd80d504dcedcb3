// The eventsource-parser peer of reference_impl_bench (../decode_bench.cc): parses a fixture
// written by reference_impl_fixtures, fed in the same piece size, and prints MB/s (1 MB = 1e6 bytes
// of the fixture) for
//   sse:  createParser({onEvent}) only;
//   full: SSE + JSON.parse of every data payload + accumulating the text deltas and noting the
//         terminator (the fair peer of the C++ BodyDecoder, which also assembles the answer).
// The body is cut into pieces and each piece is UTF-8-decoded to a string (streaming TextDecoder)
// BEFORE timing, which is eventsource-parser's best case; the `*_textdecoder` results include that
// decoding in the timed loop, as a fetch() body reader would.
//
// usage: node bench.mjs --fixture FILE --dialect openai-chat|anthropic-messages|openai-responses
//                       [--chunk 4096] [--seconds 2] [--warmup 0.5] [--json]
import { readFileSync } from 'node:fs';
import { createParser } from 'eventsource-parser';

function parseArgs(argv) {
  const args = { chunk: 4096, seconds: 2, warmup: 0.5, json: false };
  for (let i = 0; i < argv.length; ++i) {
    const key = argv[i].replace(/^--/, '');
    if (key === 'json') args.json = true;
    else args[key] = argv[++i];
  }
  if (!args.fixture || !args.dialect) {
    console.error('usage: node bench.mjs --fixture FILE --dialect D [--chunk N] [--seconds S] [--json]');
    process.exit(1);
  }
  args.chunk = Number(args.chunk);
  args.seconds = Number(args.seconds);
  args.warmup = Number(args.warmup);
  return args;
}

// The text delta an event carries in each dialect (undefined when none), and whether it is the
// dialect's committing terminator.
const DIALECTS = {
  'openai-chat': {
    text: (o) => o.choices?.[0]?.delta?.content,
    terminal: (event) => event.data === '[DONE]',
  },
  'anthropic-messages': {
    text: (o) => (o.type === 'content_block_delta' && o.delta?.type === 'text_delta' ? o.delta.text : undefined),
    terminal: (event) => event.event === 'message_stop',
  },
  'openai-responses': {
    text: (o) => (o.type === 'response.output_text.delta' ? o.delta : undefined),
    terminal: (event) => event.event === 'response.completed',
  },
};

function splitBytes(bytes, chunk) {
  const pieces = [];
  for (let at = 0; at < bytes.length; at += chunk) pieces.push(bytes.subarray(at, at + chunk));
  return pieces;
}

function toStrings(pieces) {
  const decoder = new TextDecoder('utf-8');
  return pieces.map((p, i) => decoder.decode(p, { stream: i + 1 < pieces.length }));
}

// One pass over the body: returns { events, textLength, terminated }.
function sseOnce(feed) {
  let events = 0;
  const parser = createParser({ onEvent: () => { ++events; } });
  feed(parser);
  parser.reset({ consume: true });
  return { events };
}

function fullOnce(feed, dialect) {
  let text = '';
  let terminated = false;
  let deltas = 0;
  const parser = createParser({
    onEvent: (event) => {
      if (dialect.terminal(event)) terminated = true;
      if (event.data === '[DONE]') return;
      const delta = dialect.text(JSON.parse(event.data));
      if (delta) { text += delta; ++deltas; }
    },
  });
  feed(parser);
  parser.reset({ consume: true });
  return { deltas, textLength: Buffer.byteLength(text), terminated };
}

function feedStrings(strings) {
  return (parser) => { for (const s of strings) parser.feed(s); };
}

function feedBytes(pieces) {
  return (parser) => {
    const decoder = new TextDecoder('utf-8');
    const last = pieces.length - 1;
    for (let i = 0; i <= last; ++i) parser.feed(decoder.decode(pieces[i], { stream: i < last }));
  };
}

function measure(once, seconds) {
  let iterations = 0;
  const start = process.hrtime.bigint();
  const budget = BigInt(Math.round(seconds * 1e9));
  let elapsed = 0n;
  let sink = 0;
  do {
    sink += once().events ?? 0;
    ++iterations;
    elapsed = process.hrtime.bigint() - start;
  } while (elapsed < budget);
  return { iterations, seconds: Number(elapsed) / 1e9, sink };
}

const args = parseArgs(process.argv.slice(2));
const dialect = DIALECTS[args.dialect];
if (!dialect) { console.error(`unknown dialect ${args.dialect}`); process.exit(1); }
const bytes = readFileSync(args.fixture);
const pieces = splitBytes(bytes, args.chunk);
const strings = toStrings(pieces);

// Check the work is real before timing it.
const check = fullOnce(feedStrings(strings), dialect);
if (!check.terminated || check.deltas === 0) {
  console.error(`bench.mjs: ${args.fixture} did not decode to a terminated answer`);
  process.exit(1);
}

const cases = {
  sse: () => sseOnce(feedStrings(strings)),
  full: () => fullOnce(feedStrings(strings), dialect),
  sse_textdecoder: () => sseOnce(feedBytes(pieces)),
  full_textdecoder: () => fullOnce(feedBytes(pieces), dialect),
};
const results = { dialect: args.dialect, body_bytes: bytes.length, text_bytes: check.textLength,
  deltas: check.deltas, node: process.version, chunk: args.chunk };
for (const [name, once] of Object.entries(cases)) {
  measure(once, args.warmup);
  const run = measure(once, args.seconds);
  results[`${name}_mbps`] = (bytes.length * run.iterations) / run.seconds / 1e6;
}
if (args.json) {
  console.log(JSON.stringify(results));
} else {
  for (const name of Object.keys(cases)) {
    console.log(`${args.dialect} ${name}: ${results[`${name}_mbps`].toFixed(1)} MB/s`);
  }
}
