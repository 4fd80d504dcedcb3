#!/usr/bin/env node
// The smallest honest faultline adapter: one chat call with Node's plain fetch, in any dialect,
// streamed when the runner's request says so. It makes ONE attempt and never retries, and its
// hello says exactly that (the node-fetch preset: one attempt and undici's own timeouts). It commits only a whole answer (the dialect's terminator seen, not empty) and
// fails otherwise.
//   faultline run --adapter "node harness/adapters/kit/node/example.mjs" --filter 'success/*'
import { AdapterFailure, endpoint, parseEvent, requestBody, requestHeaders, runAdapter,
         sseEvents } from './faultline-adapter.mjs';

await runAdapter({
  name: 'kit-example-node',
  version: '1',
  // The preset by name, not imported from the shipped adapters' policies.mjs: the kit works
  // copied alone into another project.
  policy: { extends: 'node-fetch' },
  strict: true,  // an event of an unexpected shape is MALFORMED_RESPONSE, not skipped
  async main({ call, fetch, signal, wire, output }) {
    const response = await fetch(endpoint(call), {
      method: 'POST', headers: requestHeaders(call), body: requestBody(call), signal,
    });
    if (!response.ok) throw new AdapterFailure(await wire.lastFailure());  // classified
    if (!call.request.stream) {
      output.whole(await response.json());
    } else {
      for await (const sse of sseEvents(response.body)) {
        if (output.event(parseEvent(sse))) break;  // the dialect's terminator (or an error event)
      }
    }
    const problem = output.check();  // truncated, empty, refused, broken tool call?
    if (problem) throw new AdapterFailure(problem);
  },
});
