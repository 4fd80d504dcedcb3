#!/usr/bin/env python3
"""A small streaming LLM client speaking faultline's adapter protocol, with optional bugs.

With `--bug none` this is a correct recovery client (docs/adapter-protocol.md,
docs/failure-taxonomy.md and README.md's invariants): it streams one call in any of the three
dialects (openai-chat, anthropic-messages, openai-responses), commits only on the dialect's
terminator ([DONE] / message_stop / response.completed), retries transient failures with full-jitter
backoff, honours Retry-After (retry-after-ms, delay-seconds and HTTP-dates), enforces connect /
response-headers / idle / total timeouts, and stops promptly when the runner writes
{"type":"cancel"}. Its `adapter/hello` declares exactly that policy.

Each `--bug` is one minimal deviation from the declared policy, so that the conformance
runner's invariants can be shown to catch it (a checker that never fails proves nothing):

  retries-400              every status >= 400 counts as retryable, so a plain 400 is retried.
                           Caught by "Retry: non-retryable failures are not retried".
  splices-attempts         the text of a failed attempt is kept and the next attempt's text is
                           appended to it. Caught by "Commit: no splice".
  ignores-retry-after      retries after its own 50 ms, whatever Retry-After says.
                           Caught by "Retry: Retry-After is honoured".
  no-idle-timeout          no socket timeout while streaming: a stalled stream hangs forever.
                           Caught by "Time: a stall is detected within the idle timeout".
  commits-truncated        a stream that ends cleanly without its terminator is committed.
                           Caught by "Commit: a truncated response is never committed".
  retries-after-cancel     a cancel during the backoff wait is swallowed; the next attempt is
                           made anyway. Caught by "Cancellation: no request after cancel".
  different-body-on-retry  retries add a field to the request body.
                           Caught by "Retry: the request body is identical on every attempt".
  deadline-ignores-sleeps  the total deadline stops while it sleeps between attempts, so the
                           backoff waits never count toward it. Caught by "Time: the total
                           deadline holds" on a scenario whose Retry-After waits outlast it.
  reuses-stalled-connection  a stream abandoned at its idle timeout keeps its connection, and
                           the next attempt is sent on it. Caught by "Resources: a connection is
                           reused only when healthy".

When the call line carries `limits`, the client applies the ones it can honour (max_attempts and
timeouts.total_ms) and declares the result.

`--startup-ms N` waits N ms after the hello before the call begins, as a library that loads
slowly does (the runner counts time from the first request, never from the hello).

Standard library only. Usage: broken_adapter.py [--bug NAME] [--seed N] [--startup-ms N] < call line
Exit code: 0 committed, 1 failed, 2 bad input.
"""
import argparse
import http.client
import json
import math
import random
import re
import socket
import sys
import threading
import time
from datetime import timezone
from email.utils import parsedate_to_datetime
from urllib.parse import urlsplit

BUGS = ("none", "retries-400", "splices-attempts", "ignores-retry-after", "no-idle-timeout",
        "commits-truncated", "retries-after-cancel", "different-body-on-retry",
        "deadline-ignores-sleeps", "reuses-stalled-connection")
RETRYABLE = ["rate-limit", "timeout", "transport", "provider-overloaded",
             "provider-unavailable", "protocol", "truncated", "empty"]
POLICY = {
    # Whole: what it does not state is the reference client's (docs/policy.md, presets).
    "extends": "reference",
    "max_attempts": 3,
    "retryable_classes": RETRYABLE,
    "backoff": {"strategy": "full-jitter", "base_ms": 100, "cap_ms": 2000, "multiplier": 2},
    "retry_after": {"honor": True, "cap_ms": 60000, "jitter": 0, "over_cap": "give-up"},
    "timeouts": {"connect_ms": 5000, "response_headers_ms": 30000, "idle_ms": 2000,
                 "total_ms": 120000, "heartbeats_reset_idle": False},
    # One endpoint, the call line's base_url: no failover between routes, no circuit breaker.
    "routing": {"failover": False, "breaker": None},
}
TIMEOUTS = {k: v / 1000.0 for k, v in POLICY["timeouts"].items() if k.endswith("_ms")}
ENDPOINTS = {"openai-chat": "/chat/completions", "anthropic-messages": "/messages",
             "openai-responses": "/responses"}
# HTTP status -> (code, class); other 4xx are INVALID_REQUEST, other 5xx SERVER.
STATUS = {400: ("INVALID_REQUEST", "invalid-request"), 401: ("AUTH", "auth"),
          402: ("QUOTA", "quota"), 403: ("AUTH", "auth"), 408: ("TIMEOUT", "timeout"),
          429: ("RATE_LIMIT", "rate-limit"), 503: ("UNAVAILABLE", "provider-unavailable"),
          529: ("OVERLOADED", "provider-overloaded")}


def applied_policy(asked):
    """POLICY with the call line's limits (max_attempts, timeouts.total_ms) applied."""
    policy = json.loads(json.dumps(POLICY))
    if not isinstance(asked, dict):
        return policy
    if isinstance(asked.get("max_attempts"), int):
        policy["max_attempts"] = asked["max_attempts"]
    total = asked.get("timeouts", {}).get("total_ms") if isinstance(asked.get("timeouts"), dict) \
        else None
    if isinstance(total, int) and total > 0:
        policy["timeouts"]["total_ms"] = total
    return policy


class AttemptFailed(Exception):
    """One attempt failed; `failure` is the protocol's failure object."""

    def __init__(self, failure, hint=None):
        super().__init__(failure["message"])
        self.failure = failure
        self.hint = hint  # (delay_ms, delay_source) from Retry-After headers, or None


def make_failure(code, cls, phase, message, status=None, bug=None):
    # BUG retries-400: the classifier calls every HTTP error retryable.
    retryable = cls in RETRYABLE or (bug == "retries-400" and (status or 0) >= 400)
    failure = {"code": code, "class": cls, "phase": phase, "retryable": retryable,
               "partial_output": "none", "message": message}
    if status is not None:
        failure["status"] = status
    return failure


# Provider error type/code fragments -> (code, class), first match wins. By type/code, not by
# message: "The server is overloaded or not ready yet." comes with plain 503s and server_errors.
ERROR_KINDS = [(("overloaded",), "OVERLOADED", "provider-overloaded"),
               (("quota", "insufficient", "billing"), "QUOTA", "quota"),
               (("context",), "CONTEXT_WINDOW_EXCEEDED", "context-overflow"),
               (("rate_limit",), "RATE_LIMIT", "rate-limit"),
               (("auth", "permission"), "AUTH", "auth"),
               (("invalid_request", "not_found"), "INVALID_REQUEST", "invalid-request"),
               (("unavailable",), "UNAVAILABLE", "provider-unavailable")]
CONTEXT_WORDS = ("context length", "context window", "context limit", "too long")
QUOTA_WORDS = ("current quota", "credit balance is too low", "insufficient balance")


def classify_error(kind, message):
    """(code, class) of a provider error from its type/code (and message), or None."""
    kind, message = (kind or "").lower(), (message or "").lower()
    if any(word in message for word in CONTEXT_WORDS):
        kind += " context"
    if any(words in message for words in QUOTA_WORDS):
        kind += " quota"
    for fragments, code, cls in ERROR_KINDS:
        if any(fragment in kind for fragment in fragments):
            return code, cls
    return None


def error_fields(obj):
    """(kind, message) of an error object in any dialect's shape (flat or nested)."""
    err = obj.get("error") if isinstance(obj.get("error"), dict) else obj
    return f"{err.get('type') or ''} {err.get('code') or ''}", str(err.get("message") or "")


def classify_status(status, body, bug):
    code, cls = STATUS.get(status, ("SERVER", "provider-unavailable") if status >= 500
                           else ("INVALID_REQUEST", "invalid-request"))
    kind, message = "", body[:200].decode("utf-8", "replace")
    try:
        kind, message = error_fields(json.loads(body))
    except (ValueError, AttributeError):
        pass
    refined = classify_error(kind, message)
    # The body refines the status only where the status is ambiguous.
    if status >= 500 and "currently overloaded" in message.lower():
        refined = ("OVERLOADED", "provider-overloaded")  # a 503 "engine is currently overloaded"
    if refined and (refined[1] == "provider-overloaded" or
                    (status in (400, 413, 422) and refined[1] == "context-overflow") or
                    (status in (400, 429) and refined[1] == "quota")):
        code, cls = refined
    return make_failure(code, cls, "response-headers", f"HTTP {status}: {message}", status, bug)


def retry_hint(headers):
    """(delay_ms, source) from retry-after-ms or Retry-After, or None when absent/unusable."""
    ms = number(headers.get("retry-after-ms"))
    if ms is not None:
        return ms, "retry-after-ms"
    value = headers.get("retry-after")
    if not value:
        return None
    # delay-seconds is digits (with a fraction, as the OpenAI SDK reads it): "9e99", "-5" and
    # "inf" are not delays, so they are ignored like garbage; a huge one is over the cap.
    if re.fullmatch(r"\s*[0-9]+(\.[0-9]+)?\s*", value):
        return float(value) * 1000, "retry-after"
    try:  # an HTTP-date: measured against the server's own Date header, so skew cancels out
        when = http_date(value)
        now = http_date(headers["date"]) if headers.get("date") else time.time()
        return max(0.0, (when - now) * 1000), "retry-after-date"
    except (TypeError, ValueError, IndexError, OverflowError):
        return None  # garbage: fall back to our own backoff


def number(value, finite=True):
    """A non-negative float from a header value, or None."""
    try:
        result = float(value)
    except (TypeError, ValueError):
        return None
    return result if result >= 0 and (math.isfinite(result) or not finite) else None


def http_date(value):
    """Seconds since the epoch of an HTTP-date (IMF-fixdate, RFC 850 or asctime: all GMT)."""
    when = parsedate_to_datetime(value)
    return (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).timestamp()


class SseDecoder:
    """Incremental text/event-stream decoder: CR, LF and CRLF, BOM, comments, multi-line data."""

    def __init__(self):
        self.buf, self.skip_lf, self.first = b"", False, True
        self.event, self.data = "", []
        self.progress = False  # set by lines that are not heartbeats (comments, `ping` events)

    def feed(self, chunk):
        if self.skip_lf and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        self.skip_lf = False
        self.buf += chunk
        events = []
        while True:
            ends = [i for i in (self.buf.find(b"\r"), self.buf.find(b"\n")) if i >= 0]
            if not ends:
                return events
            i = min(ends)
            line, sep = self.buf[:i], self.buf[i:i + 1]
            self.buf = self.buf[i + 1:]
            if sep == b"\r":
                if self.buf.startswith(b"\n"):
                    self.buf = self.buf[1:]
                elif not self.buf:
                    self.skip_lf = True  # the LF of this CRLF may come in the next read
            self.line(line.decode("utf-8", "replace"), events)

    def line(self, text, events):
        if self.first:
            text, self.first = text.lstrip("\ufeff"), False
        if not text:
            if self.data:
                events.append((self.event or "message", "\n".join(self.data)))
            self.event, self.data = "", []
            return
        if text.startswith(":"):
            return  # a comment: keep-alive only
        field, _, value = text.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "data":
            self.data.append(value)
        elif field == "event":
            self.event = value
        self.progress = self.progress or self.event != "ping"

    def made_progress(self):
        """Whether content (not heartbeats) arrived since the last call; a partial line counts."""
        progress = self.progress or (self.buf and not self.buf.startswith(b":"))
        self.progress = False
        return progress


class Assembler:
    """Turns one attempt's dialect events into text, tool calls, finish reason and usage."""

    def __init__(self, dialect, on_text):
        self.dialect, self.on_text = dialect, on_text
        self.text, self.tools, self.finish, self.seq = [], {}, None, None
        self.usage = {"input_tokens": None, "output_tokens": None}

    def malformed(self, why):
        raise AttemptFailed(make_failure("MALFORMED_RESPONSE", "protocol", "stream", why))

    def add_text(self, text):
        if not isinstance(text, str):
            self.malformed(f"text delta is not a string: {text!r}")
        if text:
            self.text.append(text)
            self.on_text(text)

    def tool(self, key, call_id="", name=""):
        entry = self.tools.setdefault(key, {"id": "", "name": "", "arguments": ""})
        entry["id"], entry["name"] = call_id or entry["id"], name or entry["name"]
        return entry

    def feed(self, event, data):
        """Handles one SSE event; True when it is the dialect's terminator."""
        if self.dialect == "openai-chat" and data.strip() == "[DONE]":
            return True
        try:
            obj = json.loads(data)
        except ValueError:
            self.malformed(f"invalid JSON in data: {data[:80]!r}")
        if not isinstance(obj, dict):
            self.malformed(f"data is not a JSON object: {data[:80]!r}")
        if isinstance(obj.get("error"), dict) or obj.get("type") in ("error", "response.failed"):
            self.provider_error(obj.get("response", obj) if obj.get("type") == "response.failed"
                                else obj)
        return getattr(self, "on_" + self.dialect.replace("-", "_"))(obj)

    def provider_error(self, obj):
        kind, message = error_fields(obj)  # an in-stream error maps like its HTTP twin
        code, cls = classify_error(kind, message) or ("SERVER", "provider-unavailable")
        raise AttemptFailed(make_failure(code, cls, "stream", f"in-stream error: {message}"))

    def on_openai_chat(self, obj):
        choices = obj.get("choices")
        if not isinstance(choices, list):
            self.malformed("chat chunk without a choices list")
        for choice in choices:
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if not isinstance(delta, dict):
                self.malformed("chat choice without a delta object")
            if delta.get("content") is not None:
                self.add_text(delta["content"])
            for call in delta.get("tool_calls") or []:
                fn = call.get("function") or {}
                entry = self.tool(call.get("index", 0), call.get("id"), fn.get("name"))
                entry["arguments"] += fn.get("arguments") or ""
            self.finish = choice.get("finish_reason") or self.finish
        if isinstance(obj.get("usage"), dict):
            self.usage = {"input_tokens": obj["usage"].get("prompt_tokens"),
                          "output_tokens": obj["usage"].get("completion_tokens")}
        return False

    def on_anthropic_messages(self, obj):
        kind = obj.get("type")
        if kind == "message_start":
            usage = (obj.get("message") or {}).get("usage") or {}
            self.usage["input_tokens"] = usage.get("input_tokens")
        elif kind == "content_block_start":
            block = obj.get("content_block") or {}
            if block.get("type") == "tool_use":
                self.tool(obj.get("index"), block.get("id"), block.get("name"))
        elif kind == "content_block_delta":
            delta = obj.get("delta")
            if not isinstance(delta, dict):
                self.malformed("content_block_delta without a delta object")
            if delta.get("type") == "text_delta":
                self.add_text(delta.get("text"))
            elif delta.get("type") == "input_json_delta":
                self.tool(obj.get("index"))["arguments"] += delta.get("partial_json") or ""
        elif kind == "message_delta":
            self.finish = (obj.get("delta") or {}).get("stop_reason") or self.finish
            self.usage["output_tokens"] = (obj.get("usage") or {}).get("output_tokens")
        return kind == "message_stop"

    def on_openai_responses(self, obj):
        seq = obj.get("sequence_number")
        if isinstance(seq, int):
            if self.seq is not None and seq != self.seq + 1:
                self.malformed(f"sequence_number {seq} after {self.seq}")
            self.seq = seq
        kind = obj.get("type")
        if kind == "response.output_text.delta":
            self.add_text(obj.get("delta"))
        elif kind == "response.output_item.added" and (obj.get("item") or {}).get(
                "type") == "function_call":
            self.tool(obj.get("output_index"), obj["item"].get("call_id"), obj["item"].get("name"))
        elif kind == "response.function_call_arguments.delta":
            self.tool(obj.get("output_index"))["arguments"] += obj.get("delta") or ""
        elif kind in ("response.completed", "response.incomplete"):
            response = obj.get("response") or {}
            usage = response.get("usage") or {}
            self.usage = {"input_tokens": usage.get("input_tokens"),
                          "output_tokens": usage.get("output_tokens")}
            self.finish = response.get("status") or kind.split(".")[1]
            return True
        return False

    def whole_body(self, body):
        """A non-streamed JSON answer (the request asked for stream: false)."""
        try:
            obj = json.loads(body)
            if self.dialect == "openai-chat":
                message = obj["choices"][0]["message"]
                self.add_text(message.get("content") or "")
                self.finish = obj["choices"][0].get("finish_reason")
                usage = obj.get("usage") or {}
                self.usage = {"input_tokens": usage.get("prompt_tokens"),
                              "output_tokens": usage.get("completion_tokens")}
            elif self.dialect == "anthropic-messages":
                for block in obj["content"]:
                    self.add_text(block.get("text", "") if block.get("type") == "text" else "")
                self.finish = obj.get("stop_reason")
                self.usage = {k: (obj.get("usage") or {}).get(k) for k in self.usage}
            else:
                for item in obj["output"]:
                    for part in item.get("content") or []:
                        self.add_text(part.get("text", ""))
                self.finish = obj.get("status")
                self.usage = {k: (obj.get("usage") or {}).get(k) for k in self.usage}
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as e:
            self.malformed(f"unreadable JSON body: {e!r}")

    def result(self, prefix=""):
        return {"text": prefix + "".join(self.text), "tool_calls": list(self.tools.values()),
                "finish_reason": self.finish, "usage": self.usage}


class CancelWatch:
    """Reads {"type":"cancel"} lines from stdin on a thread; a cancel also shuts the live socket."""

    def __init__(self, stream):
        self.event, self.lock, self.sock = threading.Event(), threading.Lock(), None
        threading.Thread(target=self.read, args=(stream,), daemon=True).start()

    def read(self, stream):
        for line in stream:
            try:
                if json.loads(line).get("type") == "cancel":
                    self.cancel()
            except (ValueError, AttributeError):
                print(f"broken_adapter: ignoring stdin line {line!r}", file=sys.stderr)

    def cancel(self):
        with self.lock:
            self.event.set()
            self.shut()

    def attach(self, sock):
        with self.lock:
            self.sock = sock
            if self.event.is_set():
                self.shut()

    def shut(self):
        if self.sock is not None:
            try:
                self.sock.shutdown(socket.SHUT_RDWR)  # wakes a blocked recv in the main thread
            except OSError:
                pass


class Client:
    def __init__(self, call, bug, rng, cancel, startup_ms=0):
        self.call, self.bug, self.rng, self.cancel = call, bug, rng, cancel
        self.startup_ms = startup_ms
        self.dialect = call["dialect"]
        url = urlsplit(call["base_url"])
        self.host, self.port = url.hostname, url.port or 80
        prefix = url.path.rstrip("/")
        self.path = prefix + ("" if prefix.endswith("/v1") else "/v1") + ENDPOINTS[self.dialect]
        self.body = json.dumps(call["request"], separators=(",", ":")).encode()
        self.policy = applied_policy(call.get("limits"))
        self.deadline = time.monotonic() + self.policy["timeouts"]["total_ms"] / 1000
        self.carry = ""  # text carried across attempts: only ever non-empty with splices-attempts
        self.kept = None  # an abandoned attempt's socket: only ever kept with reuses-stalled-...

    def emit(self, kind, **fields):
        sys.stdout.write(json.dumps({"type": kind, **fields}) + "\n")
        sys.stdout.flush()

    def limit(self, seconds):
        return max(0.001, min(seconds, self.deadline - time.monotonic()))

    def headers(self):
        key = self.call.get("api_key", "")
        out = {"Content-Type": "application/json", "Accept": "text/event-stream",
               "User-Agent": "broken-adapter/1.0"}
        if self.dialect == "anthropic-messages":
            out.update({"x-api-key": key, "anthropic-version": "2023-06-01"})
        else:
            out["Authorization"] = f"Bearer {key}"
        return out

    def request_body(self, attempt):
        if self.bug == "different-body-on-retry" and attempt > 1:
            # BUG: the retry "helpfully" tags the request, so the server sees another body.
            return json.dumps({**self.call["request"], "metadata": {"retry": str(attempt)}},
                              separators=(",", ":")).encode()
        return self.body

    def run(self):
        self.emit("adapter/hello", name="broken-adapter", version=f"1.0+{self.bug}",
                  policy=self.policy)
        if self.startup_ms > 0:  # a library loading: the call, and its deadline, start after it
            time.sleep(self.startup_ms / 1000)
            self.deadline = time.monotonic() + self.policy["timeouts"]["total_ms"] / 1000
        max_attempts = self.policy["max_attempts"]
        for attempt in range(1, max_attempts + 1):
            rid = f"resp-{attempt}"
            if self.cancel.event.is_set():  # only before the first attempt: waits check it too
                return self.fail(None, None, self.aborted("connect", "before the first attempt"))
            self.emit("response/start", response_id=rid, attempt=attempt)
            asm = Assembler(self.dialect, lambda text, r=rid, a=attempt: self.emit(
                "assistant/chunk", response_id=r, attempt=a, text=text, commitment="uncommitted"))
            try:
                self.attempt(attempt, asm)
            except AttemptFailed as failed:
                failure = failed.failure
                if asm.text or asm.tools:
                    failure["partial_output"] = "uncommitted"
                if failure["class"] == "aborted" or not failure["retryable"]:
                    return self.fail(rid, attempt, failure)
                if self.bug == "splices-attempts":
                    self.carry += "".join(asm.text)  # BUG: a failed attempt's text survives
                delay = self.delay(attempt, failed.hint, failure)
                if attempt == max_attempts or delay is None:
                    return self.fail(rid, attempt, failure)
                if not self.wait(rid, attempt, failure, *delay):
                    return self.fail(rid, attempt, self.aborted("connect", "during backoff"))
                continue
            self.emit("response/committed", response_id=rid, attempt=attempt,
                      **asm.result(self.carry))
            return 0
        return 1  # unreachable: the last attempt either commits or fails

    def delay(self, attempt, hint, failure):
        """(ms, source) before the next attempt, or None to give up."""
        if hint is not None:
            failure["retry_after_ms"] = math.ceil(min(hint[0], 2.0**53))  # "9e99", "inf"
        if self.bug == "ignores-retry-after":
            return 50.0, "backoff"  # BUG: its own short backoff wins over the server's hint
        if hint is not None:
            if hint[0] > POLICY["retry_after"]["cap_ms"]:
                return None  # over_cap: give-up
            ms, source = hint
        else:
            b = POLICY["backoff"]  # full jitter: uniform in [0, min(cap, base * mult^(n-1))]
            ceiling = min(b["cap_ms"], b["base_ms"] * b["multiplier"] ** (attempt - 1))
            ms = self.rng.uniform(0, ceiling)
            source = "backoff"
        if self.bug == "deadline-ignores-sleeps":
            self.deadline += ms / 1000  # BUG: the clock of the total deadline stops while asleep
        elif time.monotonic() + ms / 1000 >= self.deadline:
            return None  # the next attempt could not start before the total deadline
        return ms, source

    def wait(self, rid, attempt, failure, ms, source):
        """Announces the retry, then waits; False when cancelled during the wait."""
        self.emit("response/interrupted", response_id=rid, attempt=attempt, failure=failure,
                  scheduled_retry_ms=math.ceil(ms), delay_source=source)
        until = time.monotonic() + ms / 1000
        while (left := until - time.monotonic()) > 0:
            if self.cancel.event.wait(left):
                if self.bug != "retries-after-cancel":
                    return False
                self.cancel.event.clear()  # BUG: the cancel is swallowed; the wait goes on
        return True

    def aborted(self, phase, where):
        return make_failure("ABORTED", "aborted", phase, f"cancelled by the caller {where}")

    def fail(self, rid, attempt, failure):
        ids = {"response_id": rid, "attempt": attempt} if rid else {}
        self.emit("response/failed", **ids, failure=failure)
        return 1

    def attempt(self, attempt, asm):
        """One HTTP exchange; returns when committed, raises AttemptFailed otherwise."""
        conn = http.client.HTTPConnection(self.host, self.port,
                                          timeout=self.limit(TIMEOUTS["connect_ms"]))
        phase = "connect"
        keep = False
        try:
            if self.kept is not None:  # BUG reuses-stalled-connection: the old socket, as it is
                conn.sock, self.kept = self.kept, None
            else:
                conn.connect()
            sock = conn.sock  # kept: http.client drops conn.sock for "Connection: close"
            self.cancel.attach(sock)
            sock.settimeout(self.limit(TIMEOUTS["response_headers_ms"]))
            phase = "response-headers"
            conn.request("POST", self.path, self.request_body(attempt), self.headers())
            resp = conn.getresponse()
            phase = "stream"
            self.read_response(resp, sock, asm)
        except AttemptFailed:
            raise
        except TimeoutError:  # socket.timeout: connect, headers, idle or total deadline
            if self.cancel.event.is_set():
                raise AttemptFailed(self.aborted(phase, f"during {phase}"))
            if self.bug == "reuses-stalled-connection" and phase == "stream":
                keep, self.kept = True, sock  # BUG: back to the "pool" with its response unread
            what = "total deadline" if time.monotonic() >= self.deadline else (
                "idle timeout" if phase == "stream" else f"{phase} timeout")
            raise AttemptFailed(make_failure("TIMEOUT", "timeout", phase, f"{what} expired"))
        except (OSError, http.client.HTTPException) as e:
            if self.cancel.event.is_set():
                raise AttemptFailed(self.aborted(phase, f"during {phase}"))
            raise AttemptFailed(make_failure("TRANSPORT", "transport", phase, repr(e)))
        finally:
            self.cancel.attach(None)
            if keep:
                conn.sock = None  # close() must leave the kept socket open
            conn.close()

    def read_response(self, resp, sock, asm):
        sock.settimeout(self.limit(TIMEOUTS["idle_ms"]))
        if resp.status >= 300:
            try:
                body = resp.read()
            except (OSError, http.client.HTTPException):
                body = b""
            failure = classify_status(resp.status, body, self.bug)
            # x-should-retry decides first (the declared should_retry_header is the default,
            # true), but never makes a class retryable that the policy does not retry.
            should = (resp.getheader("x-should-retry") or "").strip().lower()
            if should in ("true", "false") and self.bug != "retries-400":
                failure["retryable"] = should == "true" and failure["class"] in RETRYABLE
            raise AttemptFailed(failure, retry_hint(resp.headers))
        ctype = (resp.getheader("content-type") or "").lower()
        if "json" in ctype:
            asm.whole_body(resp.read())
            return self.check_complete(asm)
        if "event-stream" not in ctype:
            raise AttemptFailed(make_failure("MALFORMED_RESPONSE", "protocol", "response-headers",
                                             f"unexpected content-type {ctype!r}", resp.status))
        decoder, last_progress = SseDecoder(), time.monotonic()
        while True:
            # The idle clock runs from the last content byte: heartbeats alone are a stall.
            # BUG no-idle-timeout: no timeout at all once the headers are in.
            left = TIMEOUTS["idle_ms"] - (time.monotonic() - last_progress)
            if left <= 0 and self.bug != "no-idle-timeout":
                raise TimeoutError("only heartbeats within the idle timeout")
            sock.settimeout(None if self.bug == "no-idle-timeout" else self.limit(left))
            chunk = resp.read1(65536)
            if self.cancel.event.is_set():
                raise AttemptFailed(self.aborted("stream", "during stream"))
            if not chunk:
                break
            events = decoder.feed(chunk)
            if decoder.made_progress():
                last_progress = time.monotonic()
            for event, data in events:
                if asm.feed(event, data):
                    return self.check_complete(asm)
        if self.bug == "commits-truncated":
            return  # BUG: the end of the body is taken for the end of the answer
        raise AttemptFailed(make_failure("STREAM_TRUNCATED", "truncated", "finish",
                                         "the stream ended cleanly without its terminator"))

    def check_complete(self, asm):
        if not asm.text and not asm.tools:
            raise AttemptFailed(make_failure("EMPTY_RESPONSE", "empty", "finish",
                                             "the response carried no text and no tool call"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bug", choices=BUGS, default="none")
    parser.add_argument("--seed", type=int, default=None, help="seed of the backoff jitter")
    parser.add_argument("--startup-ms", type=int, default=0,
                        help="wait this long after the hello before the call begins")
    args = parser.parse_args()
    try:
        call = json.loads(sys.stdin.readline())
        if call.get("type") != "call" or call.get("dialect") not in ENDPOINTS:
            raise ValueError("expected a call line with a known dialect")
        if not urlsplit(call["base_url"]).hostname:
            raise ValueError("base_url has no host")
    except (ValueError, KeyError, AttributeError) as e:
        print(f"broken_adapter: bad call line: {e}", file=sys.stderr)
        return 2
    cancel = CancelWatch(sys.stdin)
    try:
        return Client(call, args.bug, random.Random(args.seed), cancel, args.startup_ms).run()
    except BrokenPipeError:
        return 1


if __name__ == "__main__":
    sys.exit(main())
