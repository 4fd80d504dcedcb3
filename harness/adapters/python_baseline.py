#!/usr/bin/env python3
"""The no-recovery baseline: one plain HTTP call, standard library only, reported honestly.

This is what a hand-written client without any recovery does, so that the conformance matrix
shows what the SDKs' recovery adds (or breaks) against it. It makes exactly one attempt: no
retries, no backoff, no Retry-After handling and no timeouts at all (the socket blocks for as
long as the server keeps it open; the runner's --timeout stops a hang). It streams the request
the runner gave in any of the three dialects, emits each text or tool-call delta as
assistant/chunk, and ends like a naive client does:

  - committed at the dialect's terminator ([DONE], message_stop, response.completed) and also
    when the connection ends cleanly without one: whatever the stream produced is the answer;
  - failed on an HTTP error status, an in-stream error event, unparseable JSON, or a transport
    error (reset, a chunked body cut short), classified as DESIGN.md §6 says;
  - failed ABORTED when the runner sends {"type":"cancel"}: the socket is shut at once (cancelling
    is the caller's right, not recovery).

Its adapter/hello declares max_attempts 1 and no timeouts, which is the truth.
Usage: python_baseline.py < call line.   Exit code: 0 committed, 1 failed, 2 bad input.
"""
import http.client
import json
import socket
import sys
import threading
from urllib.parse import urlsplit

POLICY = {"max_attempts": 1, "retryable_classes": [],
          "retry_after": {"honor": False}, "timeouts": {}}
ENDPOINTS = {"openai-chat": "/chat/completions", "anthropic-messages": "/messages",
             "openai-responses": "/responses"}
RETRYABLE = {"rate-limit", "timeout", "transport", "provider-overloaded", "provider-unavailable",
             "protocol", "truncated", "empty"}
STATUS = {400: ("INVALID_REQUEST", "invalid-request"), 401: ("AUTH", "auth"),
          402: ("QUOTA", "quota"), 403: ("AUTH", "auth"), 408: ("TIMEOUT", "timeout"),
          429: ("RATE_LIMIT", "rate-limit"), 503: ("UNAVAILABLE", "provider-unavailable"),
          529: ("OVERLOADED", "provider-overloaded")}
# Provider error type/code fragments -> (code, class), first match wins.
ERROR_KINDS = [(("overloaded",), "OVERLOADED", "provider-overloaded"),
               (("quota", "insufficient", "billing"), "QUOTA", "quota"),
               (("context",), "CONTEXT_WINDOW_EXCEEDED", "context-overflow"),
               (("rate_limit",), "RATE_LIMIT", "rate-limit"),
               (("auth", "permission"), "AUTH", "auth"),
               (("invalid_request", "not_found"), "INVALID_REQUEST", "invalid-request"),
               (("unavailable", "timeout"), "UNAVAILABLE", "provider-unavailable")]
CONTEXT_WORDS = ("context length", "context window", "context limit", "too long")


class Failed(Exception):
    """The call failed; `failure` is the protocol's failure object."""

    def __init__(self, code, cls, phase, message, **extra):
        super().__init__(message)
        self.failure = {"code": code, "class": cls, "phase": phase, "retryable": cls in RETRYABLE,
                        "partial_output": "none", "message": message, **extra}


def aborted(phase):
    return Failed("ABORTED", "aborted", phase, "cancelled by the caller").failure


def emit(kind, **fields):
    sys.stdout.write(json.dumps({"type": kind, **fields}) + "\n")
    sys.stdout.flush()


def error_class(obj, fallback_message=""):
    """(code, class, message) of a provider error object in any dialect's shape, or None."""
    err = obj.get("error") if isinstance(obj.get("error"), dict) else obj
    kind = f"{err.get('type') or ''} {err.get('code') or ''}".lower()
    message = str(err.get("message") or fallback_message)
    if any(word in message.lower() for word in CONTEXT_WORDS):
        kind += " context"
    if "current quota" in message.lower() or "credit balance" in message.lower():
        kind += " quota"
    if "currently overloaded" in message.lower():  # OpenAI's "That model is currently ..."
        kind += " overloaded"
    for fragments, code, cls in ERROR_KINDS:
        if any(fragment in kind for fragment in fragments):
            return code, cls, message
    return None


def status_failure(status, body):
    code, cls = STATUS.get(status, ("SERVER", "provider-unavailable") if status >= 500
                           else ("INVALID_REQUEST", "invalid-request"))
    message = body[:200].decode("utf-8", "replace")
    try:
        found = error_class(json.loads(body), message)
        if found:
            message = found[2]
            if found[1] == "provider-overloaded" or (status in (400, 413, 422) and found[1] == (
                    "context-overflow")) or (status in (400, 429) and found[1] == "quota"):
                code, cls = found[0], found[1]
    except (ValueError, AttributeError):
        pass
    return Failed(code, cls, "response-headers", f"HTTP {status}: {message}", status=status)


class Stream:
    """Turns the dialect's events into chunks and the committed answer."""

    def __init__(self, dialect):
        self.dialect, self.text, self.tools, self.finish = dialect, [], {}, None
        self.usage = {"input_tokens": None, "output_tokens": None}
        self.chunks = 0

    def chunk(self, **fields):
        self.chunks += 1
        emit("assistant/chunk", response_id="attempt-1", attempt=1, commitment="uncommitted",
             **fields)

    def add_text(self, text):
        if isinstance(text, str) and text:
            self.text.append(text)
            self.chunk(text=text)

    def tool(self, key, call_id=None, name=None, args=""):
        entry = self.tools.setdefault(key, {"id": "", "name": "", "arguments": ""})
        entry["id"], entry["name"] = call_id or entry["id"], name or entry["name"]
        if args:
            entry["arguments"] += args
            self.chunk(tool_call={"index": key, "id": entry["id"], "name": entry["name"],
                                  "arguments": args})

    def feed(self, event, data):
        """Handles one SSE event; True at the dialect's terminator."""
        if self.dialect == "openai-chat" and data.strip() == "[DONE]":
            return True
        try:
            obj = json.loads(data)
        except ValueError:
            raise Failed("MALFORMED_RESPONSE", "protocol", "stream", f"invalid JSON {data[:80]!r}")
        if not isinstance(obj, dict):
            raise Failed("MALFORMED_RESPONSE", "protocol", "stream", f"not an object {data[:80]!r}")
        if event == "error" or obj.get("type") in ("error", "response.failed") or isinstance(
                obj.get("error"), dict):
            source = obj.get("response", obj) if obj.get("type") == "response.failed" else obj
            code, cls, message = error_class(source) or ("SERVER", "provider-unavailable", data)
            raise Failed(code, cls, "stream", f"in-stream error: {message}")
        try:
            return getattr(self, "on_" + self.dialect.replace("-", "_"))(obj)
        except (AttributeError, TypeError, KeyError) as e:  # where a naive client would crash
            raise Failed("MALFORMED_RESPONSE", "protocol", "stream",
                         f"unexpected event shape ({e!r}): {data[:80]!r}")

    def on_openai_chat(self, obj):
        for choice in obj.get("choices") or []:
            delta = choice.get("delta") or {}
            self.add_text(delta.get("content"))
            for call in delta.get("tool_calls") or []:
                fn = call.get("function") or {}
                self.tool(call.get("index", 0), call.get("id"), fn.get("name"),
                          fn.get("arguments") or "")
            self.finish = choice.get("finish_reason") or self.finish
        if isinstance(obj.get("usage"), dict):
            self.usage = {"input_tokens": obj["usage"].get("prompt_tokens"),
                          "output_tokens": obj["usage"].get("completion_tokens")}
        return False

    def on_anthropic_messages(self, obj):
        kind, delta = obj.get("type"), obj.get("delta") or {}
        if kind == "message_start":
            self.usage["input_tokens"] = ((obj.get("message") or {}).get("usage") or {}).get(
                "input_tokens")
        elif kind == "content_block_start" and (obj.get("content_block") or {}).get(
                "type") == "tool_use":
            self.tool(obj.get("index"), obj["content_block"].get("id"),
                      obj["content_block"].get("name"))
        elif kind == "content_block_delta" and delta.get("type") == "text_delta":
            self.add_text(delta.get("text"))
        elif kind == "content_block_delta" and delta.get("type") == "input_json_delta":
            self.tool(obj.get("index"), args=delta.get("partial_json") or "")
        elif kind == "message_delta":
            self.finish = delta.get("stop_reason") or self.finish
            self.usage["output_tokens"] = (obj.get("usage") or {}).get("output_tokens")
        return kind == "message_stop"

    def on_openai_responses(self, obj):
        kind = obj.get("type")
        if kind == "response.output_text.delta":
            self.add_text(obj.get("delta"))
        elif kind == "response.output_item.added" and (obj.get("item") or {}).get(
                "type") == "function_call":
            self.tool(obj.get("output_index"), obj["item"].get("call_id"), obj["item"].get("name"))
        elif kind == "response.function_call_arguments.delta":
            self.tool(obj.get("output_index"), args=obj.get("delta") or "")
        elif kind in ("response.completed", "response.incomplete"):
            response = obj.get("response") or {}
            usage = response.get("usage") or {}
            self.usage = {"input_tokens": usage.get("input_tokens"),
                          "output_tokens": usage.get("output_tokens")}
            self.finish = response.get("status") or kind.split(".")[1]
            return True
        return False

    def whole(self, body):
        """A non-streamed JSON answer."""
        try:
            obj = json.loads(body)
            if self.dialect == "openai-chat":
                choice = obj["choices"][0]
                self.text = [choice["message"].get("content") or ""]
                self.finish, usage = choice.get("finish_reason"), obj.get("usage") or {}
                self.usage = {"input_tokens": usage.get("prompt_tokens"),
                              "output_tokens": usage.get("completion_tokens")}
            elif self.dialect == "anthropic-messages":
                self.text = [b.get("text", "") for b in obj["content"] if b.get("type") == "text"]
                self.finish = obj.get("stop_reason")
                self.usage = {k: (obj.get("usage") or {}).get(k) for k in self.usage}
            else:
                self.text = [p.get("text", "") for item in obj["output"]
                             for p in item.get("content") or [] if p.get("type") == "output_text"]
                self.finish = obj.get("status")
                self.usage = {k: (obj.get("usage") or {}).get(k) for k in self.usage}
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as e:
            raise Failed("MALFORMED_RESPONSE", "protocol", "finish", f"unreadable JSON: {e!r}")

    def committed(self):
        return {"text": "".join(self.text), "tool_calls": list(self.tools.values()),
                "finish_reason": self.finish, "usage": self.usage}


class SseLines:
    """Incremental text/event-stream parsing: CR, LF, CRLF, comments, multi-line data."""

    def __init__(self):
        self.buf, self.event, self.data, self.pending_cr = b"", "", [], False

    def feed(self, chunk):
        if self.pending_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        self.pending_cr = False
        self.buf += chunk
        while True:
            ends = [i for i in (self.buf.find(b"\r"), self.buf.find(b"\n")) if i >= 0]
            if not ends:
                return
            i = min(ends)
            line, cr = self.buf[:i].decode("utf-8", "replace"), self.buf[i:i + 1] == b"\r"
            self.buf = self.buf[i + 1:]
            if cr and self.buf.startswith(b"\n"):
                self.buf = self.buf[1:]
            elif cr and not self.buf:
                self.pending_cr = True
            yield from self.line(line.lstrip("\ufeff"))

    def line(self, text):
        if not text:
            if self.data:
                yield self.event or "message", "\n".join(self.data)
            self.event, self.data = "", []
        elif not text.startswith(":"):
            field, _, value = text.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "data":
                self.data.append(value)
            elif field == "event":
                self.event = value


class Call:
    def __init__(self, call):
        self.call, self.dialect = call, call["dialect"]
        url = urlsplit(call["base_url"])
        self.host, self.port = url.hostname, url.port or 80
        self.path = url.path.rstrip("/") + "/v1" + ENDPOINTS[self.dialect]
        self.cancelled, self.lock, self.sock = threading.Event(), threading.Lock(), None

    def watch_cancel(self):
        for line in sys.stdin:
            try:
                if json.loads(line).get("type") == "cancel":
                    with self.lock:
                        self.cancelled.set()
                        if self.sock is not None:
                            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked read
            except (ValueError, AttributeError, OSError):
                pass

    def headers(self):
        key = self.call.get("api_key", "")
        out = {"Content-Type": "application/json", "User-Agent": "faultline-python-baseline/1"}
        if self.dialect == "anthropic-messages":
            out.update({"x-api-key": key, "anthropic-version": "2023-06-01"})
        else:
            out["Authorization"] = f"Bearer {key}"
        return out

    def run(self):
        emit("adapter/hello", name="python-baseline", version="1", policy=POLICY)
        emit("response/start", response_id="attempt-1", attempt=1)
        stream, phase = Stream(self.dialect), ["connect"]
        try:
            self.exchange(stream, phase)
        except Failed as failed:
            return self.fail(failed.failure, stream)
        except (OSError, http.client.HTTPException) as e:
            if self.cancelled.is_set():
                return self.fail(aborted(phase[0]), stream)
            return self.fail(Failed("TRANSPORT", "transport", phase[0], repr(e)).failure, stream)
        if self.cancelled.is_set():
            return self.fail(aborted(phase[0]), stream)
        emit("response/committed", response_id="attempt-1", attempt=1, **stream.committed())
        return 0

    def fail(self, failure, stream):
        if stream.chunks and failure["partial_output"] == "none":
            failure["partial_output"] = "uncommitted"
        emit("response/failed", response_id="attempt-1", attempt=1, failure=failure)
        return 1

    def exchange(self, stream, phase):
        conn = http.client.HTTPConnection(self.host, self.port)  # no timeout at all
        try:
            conn.connect()
            with self.lock:
                self.sock = conn.sock
                if self.cancelled.is_set():
                    raise Failed("ABORTED", "aborted", "connect", "cancelled before the request")
            phase[0] = "response-headers"
            conn.request("POST", self.path, json.dumps(self.call["request"]).encode(),
                         self.headers())
            resp = conn.getresponse()
            phase[0] = "stream"
            if resp.status >= 300:
                raise status_failure(resp.status, resp.read())
            if not self.call["request"].get("stream"):
                return stream.whole(resp.read())
            parser = SseLines()
            while chunk := resp.read1(65536):
                for event, data in parser.feed(chunk):
                    if stream.feed(event, data):
                        return None  # the terminator: done
            return None  # a clean end without the terminator: a naive client takes it
        finally:
            with self.lock:
                self.sock = None
            conn.close()


def main():
    try:
        call = json.loads(sys.stdin.readline())
        if call.get("type") != "call" or call.get("dialect") not in ENDPOINTS:
            raise ValueError("expected a call line with a known dialect")
        if not urlsplit(call["base_url"]).hostname:
            raise ValueError("base_url has no host")
    except (ValueError, KeyError, AttributeError) as e:
        print(f"python_baseline: bad call line: {e}", file=sys.stderr)
        return 2
    client = Call(call)
    threading.Thread(target=client.watch_cancel, daemon=True).start()
    try:
        return client.run()
    except BrokenPipeError:
        return 1


if __name__ == "__main__":
    sys.exit(main())
