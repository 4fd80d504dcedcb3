#!/usr/bin/env python3
"""A Python app that streams one chat completion with only the standard library, retrying the way
many hand-written clients do: 3 attempts, 0.5 s then 1 s apart, a Retry-After in seconds replacing
that wait (one over 60 s ends the call), and only failures before the response (connection
errors, timeouts, 408, 409, 429, 5xx). A stream that breaks is not retried: the app fails. It reads OPENAI_BASE_URL and OPENAI_API_KEY.

    faultline run --exec 'python3 docs/examples/apps/python_app.py' \\
      --policy docs/examples/apps/python_app.policy.json --filter 'tag:openai-chat'
"""
import http.client
import json
import os
import re
import sys
import time
import urllib.error
import urllib.request

BASE = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1")
KEY = os.environ["OPENAI_API_KEY"]
BODY = json.dumps({"model": "gpt-4o-mini", "stream": True,
                   "messages": [{"role": "user", "content": "Say hello"}]}).encode()
RETRIED_STATUSES = {408, 409, 429} | set(range(500, 600))
ATTEMPTS = 3
TIMEOUT_S = 10  # connect, and each read
MAX_HINT_S = 60  # a longer Retry-After ends the call


def hinted_wait(retry_after):
    """The server's Retry-After in seconds (delay-seconds only), or None."""
    if retry_after is not None and re.fullmatch(r"\d+(\.\d+)?", retry_after.strip()):
        return float(retry_after)
    return None


def stream_answer(response):
    """The answer's text, or an exception when the stream does not end with [DONE]."""
    text = []
    for raw in response:
        line = raw.decode("utf-8").strip()
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            return "".join(text)
        event = json.loads(data)
        if "error" in event:
            raise RuntimeError(f"error in the stream: {event['error']}")
        for choice in event.get("choices", []):
            text.append((choice.get("delta") or {}).get("content") or "")
    raise RuntimeError("the stream ended without data: [DONE]")


def main():
    request = urllib.request.Request(
        BASE + "/chat/completions", data=BODY, method="POST",
        headers={"authorization": f"Bearer {KEY}", "content-type": "application/json"})
    for attempt in range(ATTEMPTS):
        wait = 0.5 * 2 ** attempt
        try:
            response = urllib.request.urlopen(request, timeout=TIMEOUT_S)
        except urllib.error.HTTPError as error:
            if error.code not in RETRIED_STATUSES:
                print(f"python_app: HTTP {error.code}, not retried", file=sys.stderr)
                return 1
            print(f"python_app: attempt {attempt + 1}: HTTP {error.code}", file=sys.stderr)
            hint = hinted_wait(error.headers.get("retry-after"))
            if hint is not None and hint > MAX_HINT_S:
                print(f"python_app: the server asks for {hint} s; giving up", file=sys.stderr)
                return 1
            wait = wait if hint is None else hint
        except (urllib.error.URLError, http.client.HTTPException, OSError) as error:
            print(f"python_app: attempt {attempt + 1}: {error}", file=sys.stderr)
        else:
            with response:  # the response has begun: a broken stream fails the app
                try:
                    print(stream_answer(response))
                    return 0
                except (RuntimeError, ValueError, OSError, http.client.HTTPException) as error:
                    print(f"python_app: {error}", file=sys.stderr)
                    return 1
        if attempt + 1 < ATTEMPTS:
            time.sleep(wait)
    return 1


if __name__ == "__main__":
    sys.exit(main())
