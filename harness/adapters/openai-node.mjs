#!/usr/bin/env node
// Adapter for the official `openai` npm package (pinned in node/package.json; install with
// harness/adapters/setup.sh), dialects openai-chat and openai-responses. With --node22, the
// openai 7 line pinned in node22/package.json instead (setup.sh --node22), run under the Node 22
// installed there (the openai-node7 shortcut).
//
// It drives the UNMODIFIED SDK with its default options: only apiKey and baseURL are set (the
// runner's base_url has no /v1; the SDK expects it in baseURL). `fetch` and `logger` are set to
// observers that change nothing (the adapter kit's Wire; sdk-common.mjs). It makes the call the
// runner asked for, `client.chat.completions.create(request)` or
// `client.responses.create(request)` (streamed when the request says stream: true), iterates
// what the SDK yields, and reports it:
// response/committed when the SDK's iteration ends normally, whatever it yielded (an SDK that
// accepts a truncated stream is reported as committing it, so the runner can catch it), or
// response/failed with the classified error the SDK threw. No recovery logic of its own.
//
//   --helper   use the SDK's streaming helpers instead (client.chat.completions.stream() +
//              finalChatCompletion(), client.responses.stream() + finalResponse()), which
//              check the end of the stream themselves.
//   --node22   the Node 22 lane: openai 7 from node22/ (needs Node >= 22).
//
// Usage: node harness/adapters/openai-node.mjs [--helper] [--node22] [--per-call] < call lines
// (session mode by default: one process serves every call of a scenario run; sdk-common.mjs)
// Exit code: 0 committed, 1 failed, 2 bad input or SDK not installed.
import { loadSdk, runSdkAdapter } from './sdk-common.mjs';
import { OPENAI_NODE7_POLICY, OPENAI_NODE_POLICY } from './policies.mjs';

const { module: sdk, version } = await loadSdk('openai');
const OpenAI = sdk.default;
const helper = process.argv.includes('--helper');
const node22 = process.argv.includes('--node22');

async function start({ call, fetch, logger, output, signal }) {
  const client = new OpenAI({
    apiKey: call.api_key,
    baseURL: `${call.base_url.replace(/\/+$/, '')}/v1`,
    fetch,
    logger,
    logLevel: 'info',
  });
  const chat = call.dialect === 'openai-chat';
  const api = chat ? client.chat.completions : client.responses;
  const body = call.request;
  if (!body.stream) {
    output.whole(await api.create(body, { signal }));
    return;
  }
  if (helper) {
    const stream = api.stream(body, { signal });
    for await (const event of stream) output.event(event);
    await (chat ? stream.finalChatCompletion() : stream.finalResponse());
    return;
  }
  const stream = await api.create(body, { signal });
  for await (const event of stream) output.event(event);
}

await runSdkAdapter({
  name: `openai-node${node22 ? '7' : ''}${helper ? '-helper' : ''}`,
  version,
  policy: node22 ? OPENAI_NODE7_POLICY : OPENAI_NODE_POLICY,
  dialects: ['openai-chat', 'openai-responses'],
  errors: sdk,
  start,
});
