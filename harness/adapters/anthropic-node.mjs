#!/usr/bin/env node
// Adapter for the official `@anthropic-ai/sdk` npm package (pinned in node/package.json; install
// with harness/adapters/setup.sh), dialect anthropic-messages. With --node22, the newer release
// pinned in node22/package.json instead (setup.sh --node22), run under the Node 22 installed
// there (the anthropic-node22 shortcut).
//
// It drives the UNMODIFIED SDK with its default options: only apiKey and baseURL are set (the
// SDK appends /v1/messages itself, so the runner's base_url is used as it is). `fetch` and
// `logger` are set to observers that change nothing (the adapter kit's Wire; sdk-common.mjs).
// It makes the call the runner asked for, `client.messages.create(request)` (streamed when the
// request says stream: true), iterates what the SDK yields, and reports it: response/committed
// when the SDK's iteration ends normally, whatever it yielded (an SDK that accepts a truncated
// stream is reported as committing it, so the runner can catch it), or response/failed with the
// classified error the SDK threw. No recovery logic of its own.
//
//   --helper   use the SDK's streaming helper instead: client.messages.stream() + finalMessage(),
//              the way the SDK's documentation recommends to stream.
//   --node22   the Node 22 lane: the SDK from node22/ (needs Node >= 22).
//
// Usage: node harness/adapters/anthropic-node.mjs [--helper] [--node22] [--per-call] < call lines
// (session mode by default: one process serves every call of a scenario run; sdk-common.mjs)
// Exit code: 0 committed, 1 failed, 2 bad input or SDK not installed.
import { loadSdk, runSdkAdapter } from './sdk-common.mjs';
import { ANTHROPIC_NODE22_POLICY, ANTHROPIC_NODE_POLICY } from './policies.mjs';

const { module: sdk, version } = await loadSdk('@anthropic-ai/sdk');
const Anthropic = sdk.default;
const helper = process.argv.includes('--helper');
const node22 = process.argv.includes('--node22');

async function start({ call, fetch, logger, output, signal }) {
  const client = new Anthropic({
    apiKey: call.api_key,
    baseURL: call.base_url,
    fetch,
    logger,
    logLevel: 'info',
  });
  const body = call.request;
  if (!body.stream) {
    output.whole(await client.messages.create(body, { signal }));
    return;
  }
  if (helper) {
    const stream = client.messages.stream(body, { signal });
    for await (const event of stream) output.event(event);
    await stream.finalMessage();
    return;
  }
  const stream = await client.messages.create(body, { signal });
  for await (const event of stream) output.event(event);
}

await runSdkAdapter({
  name: `anthropic-node${node22 ? '22' : ''}${helper ? '-helper' : ''}`,
  version,
  policy: node22 ? ANTHROPIC_NODE22_POLICY : ANTHROPIC_NODE_POLICY,
  dialects: ['anthropic-messages'],
  errors: sdk,
  start,
});
