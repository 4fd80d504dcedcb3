#!/usr/bin/env python3
"""The smallest honest faultline adapter in Python: one chat call with plain urllib (any dialect,
streamed when the request says so: SSE, NDJSON for ollama, the AWS event stream for
bedrock-converse). ONE attempt, no retries, no timeout, and its hello says so (the
python-http-client preset). It commits only a whole answer (the content-type it asked for,
terminator seen, not empty).
    faultline run --adapter "python3 harness/adapters/kit/python/example.py" --filter 'success/*'
"""
import json
import sys
import urllib.error
import urllib.request

import faultline_adapter as kit

# The preset by name, not imported from the shipped adapters' policies.py: the kit works copied
# alone into another project.
NO_RECOVERY_POLICY = {"extends": "python-http-client"}


def main(ctx):
    call = ctx.call
    request = urllib.request.Request(kit.endpoint(call), kit.request_body(call),
                                     kit.request_headers(call), method="POST")
    try:
        response = ctx.wire.opener().open(request)  # observed by the kit; no timeout
    except urllib.error.HTTPError as error:
        error.read()  # the wire classifies the status with its body
        raise kit.AdapterFailure(ctx.wire.last_failure()) from None
    wrong_type = kit.check_content_type(call, response)  # not the framing it asked for?
    if wrong_type:
        raise kit.AdapterFailure(wrong_type)
    if not kit.streams(call):
        ctx.output.whole(json.loads(response.read()))
    else:
        for event, data in kit.stream_events(call, response):  # SSE, NDJSON, event stream
            if ctx.output.event(kit.parse_event(event, data, call["dialect"])):
                break  # the dialect's terminator, or an error event
    problem = ctx.output.check()  # truncated, empty, refused, broken tool call?
    if problem:
        raise kit.AdapterFailure(problem)


sys.exit(kit.run_adapter("kit-example-python", "1", NO_RECOVERY_POLICY, main, strict=True))
