#!/usr/bin/env python3
"""A tiny openai-chat adapter that makes each protocol mistake the runner must refuse.

It makes the call once (urllib, no retries), reports it with the adapter protocol's events, and
breaks exactly one line the way --mistake says; with --mistake none every line is valid. The
runner (and `faultline adapter check`) must end the run with a subject error that names the
event and the field (harness/tests/subject_error_test.cc, run_cli_test.cc):

  unknown-field        response/start carries "zz": 1
  missing-commitment   assistant/chunk without "commitment"
  missing-response-id  response/start without "response_id"
  string-attempt       response/committed with "attempt": "1"
  null-usage           response/committed with "usage": null
  deep-field           response/committed with a field nested 30,000 arrays deep (a 60 KB line)

Standard library only. Usage: protocol_mistakes.py --mistake NAME < call line
"""
import argparse
import json
import sys
import urllib.error
import urllib.request

MISTAKES = ("none", "unknown-field", "missing-commitment", "missing-response-id",
            "string-attempt", "null-usage", "deep-field")


def broken(event, mistake):
    """`event` with the mistake applied, when it is the line the mistake is about."""
    kind = event["type"]
    if kind == "response/start" and mistake == "unknown-field":
        return {**event, "zz": 1}
    if kind == "response/start" and mistake == "missing-response-id":
        return {k: v for k, v in event.items() if k != "response_id"}
    if kind == "assistant/chunk" and mistake == "missing-commitment":
        return {k: v for k, v in event.items() if k != "commitment"}
    if kind == "response/committed" and mistake == "string-attempt":
        return {**event, "attempt": "1"}
    if kind == "response/committed" and mistake == "null-usage":
        return {**event, "usage": None}
    return event


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mistake", choices=MISTAKES, default="none")
    mistake = parser.parse_args().mistake
    call = json.loads(sys.stdin.readline())

    def emit(kind, **fields):
        line = json.dumps(broken({"type": kind, **fields}, mistake))
        if kind == "response/committed" and mistake == "deep-field":
            line = line[:-1] + ', "zz": ' + "[" * 30_000 + "]" * 30_000 + "}"
        print(line, flush=True)

    emit("adapter/hello", name="protocol-mistakes", version="1", policy={"max_attempts": 1})
    ids = {"response_id": "attempt-1", "attempt": 1}
    emit("response/start", **ids)
    request = urllib.request.Request(
        call["base_url"].rstrip("/") + "/v1/chat/completions", json.dumps(call["request"]).encode(),
        {"Content-Type": "application/json", "Authorization": f"Bearer {call['api_key']}"})
    text = ""
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            for raw in response:
                data = raw.decode().strip().removeprefix("data:").strip()
                if not data or data == "[DONE]" or not raw.startswith(b"data:"):
                    continue
                for choice in json.loads(data).get("choices") or []:
                    delta = (choice.get("delta") or {}).get("content")
                    if delta:
                        text += delta
                        emit("assistant/chunk", **ids, text=delta, commitment="uncommitted")
    except (urllib.error.URLError, OSError, ValueError) as e:
        status = getattr(e, "code", None)
        failure = {"code": "UNKNOWN", "class": "unknown", "phase": "response-headers",
                   "retryable": False, "partial_output": "uncommitted" if text else "none",
                   "message": str(e)}
        emit("response/failed", **ids, failure={**failure, **({"status": status} if status
                                                              else {})})
        return 1
    emit("response/committed", **ids, text=text, usage={"input_tokens": None,
                                                        "output_tokens": None})
    return 0


if __name__ == "__main__":
    sys.exit(main())
