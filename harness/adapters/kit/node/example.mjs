#!/usr/bin/env node
// The smallest honest faultline adapter: one chat call with Node's plain fetch, in any dialect,
// streamed when the runner's request says so (SSE, NDJSON for ollama, the AWS event stream for
// bedrock-converse). It makes ONE attempt
// and never retries, and its hello says exactly that (the node-fetch preset: one attempt and
// undici's own timeouts). It commits only a whole answer (the content-type it asked for, the
// dialect's terminator seen, not empty) and fails otherwise.
//   faultline run --adapter "node harness/adapters/kit/node/example.mjs" --filter 'success/*'
import { AdapterFailure, checkContentType, endpoint, parseEvent, requestBody, requestHeaders,
         runAdapter, streamEvents, streams } from './faultline-adapter.mjs';

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
    const wrongType = checkContentType(call, response);  // not the framing it asked for?
    if (wrongType) throw new AdapterFailure(wrongType);
    if (!streams(call)) {
      output.whole(await response.json());
    } else {
      for await (const event of streamEvents(call, response.body)) {  // SSE, NDJSON, event stream
        // The dialect's terminator (or an error event) ends it.
        if (output.event(parseEvent(event, call.dialect))) break;
      }
    }
    const problem = output.check();  // truncated, empty, refused, broken tool call?
    if (problem) throw new AdapterFailure(problem);
  },
});
