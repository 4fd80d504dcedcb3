#!/usr/bin/env python3
"""The no-recovery baseline: one plain HTTP call, standard library only, reported honestly.

This is what a hand-written client without any recovery does, so that the conformance matrix
shows what the SDKs' recovery adds (or breaks) against it. It makes exactly one attempt with
http.client: no retries, no backoff, no Retry-After handling and no timeouts at all (the socket
blocks for as long as the server keeps it open; the runner's --timeout stops a hang). It streams
the request the runner gave in any of the six dialects (SSE, Ollama's NDJSON lines, or Bedrock's
binary event stream) and ends like a naive client does:

  - committed at the dialect's terminator ([DONE], message_stop, response.completed, Gemini's
    chunk with finishReason, Ollama's line with "done": true, Bedrock's messageStop) and also
    when the connection ends cleanly without one: whatever the stream produced is the answer (an
    unfinished last line or event stream message is dropped; the content-type is not checked
    either);
  - failed on an HTTP error status, an in-stream error event (or Bedrock exception), unparseable
    JSON or an event of the wrong shape, an event stream message whose CRC or lengths are wrong,
    or a transport error (reset, a chunked body cut short);
  - failed ABORTED when the runner sends {"type":"cancel"}: the socket is shut at once
    (cancelling is the caller's right, not recovery).

The protocol, the observation of the attempt, classification and assembly are the adapter kit's
(kit/python/faultline_adapter.py); its hello declares NO_RECOVERY_POLICY (policies.py).
Usage: python_baseline.py [--per-call|--no-reset] < call lines.   Exit code: 0 committed, 1
failed, 2 bad input. One process serves every call of a scenario run, and the runs one after
another (the protocol's session mode with reset; each call still opens its own connection,
nothing is shared); --no-reset runs one process per scenario run, --per-call one per call.
"""
import json
import sys
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE / "kit" / "python")]

import faultline_adapter as kit  # noqa: E402
from policies import NO_RECOVERY_POLICY  # noqa: E402


def main(ctx):
    call = ctx.call
    url = urlsplit(kit.endpoint(call))
    conn = ctx.wire.connection(url.hostname, url.port or 80)  # no timeout at all
    try:
        # Gemini's ?alt=sse; Bedrock's model id stays percent-encoded (%3A) in the path.
        target = url.path + ("?" + url.query if url.query else "")
        conn.request("POST", target, kit.request_body(call), kit.request_headers(call))
        resp = conn.getresponse()
        if resp.status >= 300:
            resp.read()  # the wire classifies the status with its body
            raise kit.AdapterFailure(ctx.wire.last_failure())
        if not kit.streams(call):
            ctx.output.whole(json.loads(resp.read()))
            return
        for event, data in kit.stream_events(call, resp):  # SSE, NDJSON lines, or event stream
            if ctx.output.event(kit.parse_event(event, data, call["dialect"])):
                return  # the terminator, or an error event (the kit fails the call with it)
        # A clean end without the terminator: a naive client takes what it has.
    finally:
        conn.close()


if __name__ == "__main__":
    sys.exit(kit.run_adapter(name="python-baseline", version="1", policy=NO_RECOVERY_POLICY,
                             main=main, strict=True,
                             mode="per-call" if "--per-call" in sys.argv else "session",
                             # Each call opens its own connection: nothing is shared to drop.
                             reset=None if "--no-reset" in sys.argv else lambda: None))
