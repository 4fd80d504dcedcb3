"""faultline's adapter kit for Python (standard library only): what an adapter needs to put an
HTTP client under `faultline run --adapter` (docs/adapter-protocol.md).

    sys.exit(run_adapter(name=..., version=..., policy=..., main=main))

run_adapter reads the call line, writes adapter/hello, and calls main(ctx) with the call, a
cancel watcher (a thread reading stdin; a cancel line sets ctx.cancelled and shuts every socket
the call has open, which wakes a blocked read), a Wire that observes every attempt on the wire
(ctx.wire.connection() for http.client, ctx.wire.opener() for urllib: response/start per
request, and the previous attempt's response/interrupted before each new request), and an
Output that writes assistant/chunk and assembles the answer. It then writes exactly one
terminal event and returns the exit code (0 committed, 1 failed, 2 bad call line).

A client that announces its own retries calls ctx.wire.retrying(delay_ms=, source=, failure=)
before its wait (failure: its own classification, else the wire's); a client that discards a
failed attempt's output calls ctx.output.reset() as its new attempt begins (Output keeps what the
caller got, across attempts).

main() returning means the client delivered an answer: it is committed as assembled (or failed,
when the stream announced an error event). main() raising means the client failed: the failure
is, in order, an AdapterFailure's own, what the wire saw on the last attempt (an HTTP error
status, a network error, a broken body), what classify_error(exc, ctx) says, or the kit's
classify_exception. A cancel always ends the call ABORTED.

The call's "limits" (max_attempts and timeouts, when the scenario sets them) are what the client
is asked to be configured with: apply what it can and declare what was applied, with `policy` a
function of the call: policy=lambda call: {"extends": "no-retry", **call.get("limits", {})}.

Every event is checked against the protocol's JSON Schema (harness/schema/
adapter-protocol.schema.json, which the runner applies too) before it is written. The
classification tables (codes, the HTTP and provider-error classification) are data in
../protocol.json, shared with the Node kit; the classification is the reference client's
(reference_impl/classify.h). emit() is safe from any thread.

One call per process by default. With mode="session" (docs/adapter-protocol.md, "Session mode")
one process serves every call of a scenario run: the hello declares it, each call line runs
main() on a thread of its own, concurrently, inside a call scope (a contextvars variable) that
every event written from that thread is filed under (its "call" added, its terminal its own); a
cancel naming the call fires that call's Cancel; run_adapter returns when stdin ends (the runner
closes it once every call has ended) and every call is done. A client built once, outside main(),
then serves every call: its breaker and retry budget are judged across them. With reset=FUNCTION
the process also serves scenario runs one after another: between two runs the runner sends a
reset line; the kit waits for the calls' threads, calls reset() to drop what the calls shared
(rebuild the client), answers adapter/reset, and writes the next run's hello at its first call.
"""
import calendar
import contextvars
import http.client
import json
import math
import re
import socket
import struct
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from pathlib import Path

from faultline_schema import EVENT_TYPES, definition_of, is_integer, schema_problems

with open(Path(__file__).resolve().parent.parent / "protocol.json", encoding="utf-8") as _f:
    PROTOCOL = json.load(_f)  # the classification tables and dialect facts
DIALECTS = list(PROTOCOL["dialects"])
_TERMINAL = ("response/committed", "response/failed")


class ProtocolMisuse(Exception):
    """An event this process was about to write breaks the protocol (a bug in the adapter)."""


class AdapterFailure(Exception):
    """Raised from main() to end the call with `failure` (a protocol failure object)."""

    def __init__(self, failure_object):
        super().__init__(failure_object["message"])
        self.failure = failure_object


# ---- the channel: stdout belongs to the protocol ----------------------------------------------

_channel = {"out": None, "hello": False, "terminal": None}
_emit_lock = threading.Lock()
# Session mode: the call whose events the current thread writes ({"call", "terminal"}); None per
# call (the process's own _channel then keeps the terminal).
_call_scope = contextvars.ContextVar("faultline_call", default=None)


# The events of the process, not of a call: they never carry a "call".
_PROCESS_EVENTS = ("adapter/hello", "adapter/reset")


def _terminal_state(kind):
    """Where the terminal of an event of `kind` is kept: its call's in a session, else the
    process's."""
    scope = _call_scope.get()
    return scope if scope is not None and kind not in _PROCESS_EVENTS else _channel


def guard_stdout():
    """From now on print() and sys.stdout go to stderr; only emit() writes to the real stdout."""
    if _channel["out"] is None:
        _channel["out"] = sys.stdout
        sys.stdout = sys.stderr


def note(*parts):
    """Free-form diagnostics on stderr (kept in the runner's report)."""
    print(*parts, file=sys.stderr, flush=True)


def event_problems(event):
    """The problems of one event (an empty list when it is a valid protocol line now): its shape
    against the schema, then its place in the call."""
    kind = event.get("type")
    if kind not in EVENT_TYPES:
        return [f"unknown event type {kind!r}"]
    problems = [f"{kind}: {p}" for p in schema_problems(event, definition_of(kind))]
    if kind == "adapter/hello" and _channel["hello"]:
        problems.append("adapter/hello written twice")
    if kind != "adapter/hello" and not _channel["hello"]:
        problems.append("adapter/hello must be first")
    terminal = _terminal_state(kind)["terminal"]
    if terminal:
        problems.append(f"{kind} after the terminal {terminal}")
    return problems


def emit(kind, **fields):
    """Writes one event line; raises ProtocolMisuse (writing nothing) if it breaks the protocol."""
    scope = _call_scope.get()
    event = ({"type": kind, "call": scope["call"], **fields}
             if scope is not None and kind not in _PROCESS_EVENTS else {"type": kind, **fields})
    with _emit_lock:
        problems = event_problems(event)
        line = json.dumps(event)
        if len(line.encode()) + 1 > PROTOCOL["max_line_bytes"]:
            problems.append(f"line of {len(line.encode())} bytes (limit "
                            f"{PROTOCOL['max_line_bytes']})")
        if problems:
            raise ProtocolMisuse("; ".join(problems))
        # After adapter/reset the next run begins with a hello again.
        _channel["hello"] = (_channel["hello"] or kind == "adapter/hello") and \
            kind != "adapter/reset"
        if kind in _TERMINAL:
            _terminal_state(kind)["terminal"] = kind
        out = _channel["out"] or sys.stdout
        out.write(line + "\n")
        out.flush()


# ---- stdin: the call line, then cancel ---------------------------------------------------------

def call_problems(call, dialects=DIALECTS):
    """What is wrong with a call line (empty when an adapter of `dialects` can make it)."""
    if not isinstance(call, dict) or call.get("type") != "call":
        return ['not a {"type":"call"} object']
    problems = []
    base = call.get("base_url")
    if not isinstance(base, str) or not urllib.parse.urlsplit(base).hostname:
        problems.append("base_url is not a URL with a host")
    if not isinstance(call.get("api_key"), str):
        problems.append("api_key is not a string")
    if call.get("dialect") not in dialects:
        problems.append(f"dialect {call.get('dialect')!r} is not one of {', '.join(dialects)}")
    if not isinstance(call.get("request"), dict):
        problems.append("request is not an object")
    return problems


def read_call(dialects=DIALECTS, stream=None):
    """The call line from stdin, or raises ValueError."""
    line = (stream or sys.stdin).readline()
    if not line:
        raise ValueError("stdin closed before the call line")
    try:
        call = json.loads(line)
    except ValueError as e:
        raise ValueError(f"the call line is not JSON: {e}") from None
    problems = call_problems(call, dialects)
    if problems:
        raise ValueError("; ".join(problems))
    return call


class Cancel:
    """The runner's cancel: a thread reads stdin lines; {"type":"cancel"} sets `event` and calls
    every registered callback (the Wire's: shut the call's sockets)."""

    def __init__(self):
        self.event = threading.Event()
        self._callbacks = []
        self._lock = threading.Lock()

    def on_cancel(self, callback):
        with self._lock:
            self._callbacks.append(callback)
            fire = self.event.is_set()
        if fire:
            callback()

    def watch(self, stream=None):
        threading.Thread(target=self._watch, args=(stream or sys.stdin,), daemon=True).start()

    def _watch(self, stream):
        for line in stream:
            try:
                is_cancel = json.loads(line).get("type") == "cancel"
            except (ValueError, AttributeError):
                is_cancel = False
            if not is_cancel:
                note(f"faultline-adapter: ignoring stdin line {line[:200]!r}")
                continue
            self.fire()

    def fire(self):
        """The caller gave up: set `event` and call every callback."""
        with self._lock:
            self.event.set()
            callbacks = list(self._callbacks)
        for callback in callbacks:
            callback()


# ---- failures and classification (docs/failure-taxonomy.md; reference_impl/classify.h) -------

def failure(code, phase, message, **extra):
    """A protocol failure object; class and retryable follow from the code unless `extra` says."""
    cls, retryable = PROTOCOL["codes"].get(code, PROTOCOL["codes"]["UNKNOWN"])
    return {"code": code, "class": cls, "phase": phase, "retryable": retryable,
            "partial_output": "none", "message": message, **extra}


def aborted(phase, message=None):
    return failure("ABORTED", phase, message or f"cancelled by the caller during {phase}")


def _text(v):
    if v is None:
        return ""
    return v if isinstance(v, str) else json.dumps(v)


def aws_type(value):
    """An AWS error type as Bedrock names it anywhere: "ThrottlingException:http://internal.amazon
    .com/coral/com.amazon.bedrock/" (x-amzn-errortype) or "com.amazon.coral.service#Throttling
    Exception" (a body's __type) is ThrottlingException; "" for anything that is not a string."""
    return value.split(":")[0].split("#")[-1].strip() if isinstance(value, str) else ""


def aws_exception(obj):
    """(type, its object) of the AWS SDKs' union form of an exception, {"throttlingException":
    {"message": ...}} (a key ending in "Exception", in either case, that holds an object), or
    None."""
    if not isinstance(obj, dict):
        return None
    return next(((key, value) for key, value in obj.items()
                 if key.lower().endswith("exception") and isinstance(value, dict)), None)


def error_fields(body):
    """(type, code, message) of a provider error in any envelope, a JSON text, or plain text.
    Google's google.rpc.Status has no `type`: its `status` (RESOURCE_EXHAUSTED) stands for it.
    AWS's: a bare {"message"} with its type in "__type" (or only in the x-amzn-errortype header:
    classify_http), or the SDKs' union form of a stream's exception, {"throttlingException":
    {...}}."""
    if isinstance(body, (bytes, bytearray)):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str):
        try:
            return error_fields(json.loads(body))
        except ValueError:
            return "", "", body
    if not isinstance(body, dict):
        return "", "", _text(body)
    error = body.get("error")
    if isinstance(error, dict):
        return (_text(error.get("type")) or _text(error.get("status")), _text(error.get("code")),
                _text(error.get("message")))
    if isinstance(error, str):
        return "", "", error
    exception = aws_exception(body) if "type" not in body else None
    if exception:
        kind, fields = exception
        message = fields.get("message")
        return kind, "", _text(message if message is not None else fields.get("Message"))
    return (_text(body.get("type")) or aws_type(body.get("__type")), _text(body.get("code")),
            _text(body.get("message")) or _text(body.get("detail")) or _text(body.get("Message")))


def _error_object(body):
    """The provider's error object of a body ({"error": {...}}, as JSON text or parsed), or
    None."""
    if isinstance(body, (bytes, bytearray)):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except ValueError:
            return None
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, dict) else None


def _details(error):
    """The objects of a google.rpc.Status's `details` (Gemini), [] when it has none."""
    details = (error or {}).get("details")
    return [d for d in details if isinstance(d, dict)] if isinstance(details, list) else []


def has_retry_info(body):
    """Whether the error's details[] hold a google.rpc.RetryInfo: the window it names reopens,
    so a quota wording beside it is a rate limit."""
    return any(isinstance(d.get("@type"), str) and d["@type"].endswith(PROTOCOL["retry_info_type"])
               for d in _details(_error_object(body)))


def provider_error_code(kind, code, message=""):
    """The code the shared table gives a provider error (its code first, then its type; an AWS
    type whatever the case of its first letter: protocol.json _aws_types), or None."""
    del message  # the words refine a code elsewhere (stream_refine, the HTTP refinement)
    table = PROTOCOL["provider_errors"]
    lower_first = kind[0].lower() + kind[1:] if isinstance(kind, str) and kind else ""
    return (code and table.get(code)) or (kind and table.get(kind)) or \
        (lower_first and table.get(lower_first)) or None


def _worded(message, entries):
    lower = message.lower()
    return any(all(word in lower for word in entry) for entry in entries)


def classify_stream_error(error_object, phase="stream", dialect=None):
    """An error inside a 200 stream, like its HTTP twin; UNKNOWN when the table does not know.

    `error_object` is the error event (a Responses `response.failed` carries its error in
    `response.error`) or the provider's error object it holds. `dialect`: the stream's; in a
    dialect whose errors name no kind (Ollama's {"error":"text"}), an error with neither type nor
    code is its `untyped_stream_error` (SERVER: the server failed mid-answer), whatever its words.
    """
    if isinstance(error_object, dict) and error_object.get("type") == "response.failed":
        response = error_object.get("response") or {}
        error_object = (response.get("error") if isinstance(response, dict) else None) or response
    kind, code, message = error_fields(error_object)
    label = "/".join(x for x in (kind, code) if x) or "error"
    # Without a status its words refine the table's code (stream_refine): a server or unavailable
    # error saying the model is overloaded is OVERLOADED, a rate limit with quota wording QUOTA.
    code_name = provider_error_code(kind, code, message)
    untyped = PROTOCOL["dialects"].get(dialect or "", {}).get("untyped_stream_error")
    if not code_name and untyped and not kind and not code:
        return failure(untyped, phase, f"in-stream error ({label}): {message}")
    code_name = code_name or "UNKNOWN"
    wording, refined = PROTOCOL["stream_refine"].get(code_name, (None, None))
    if wording and _worded(message, PROTOCOL["wording"][wording]):
        code_name = refined
    return failure(code_name, phase, f"in-stream error ({label}): {message}")


def _status_row(status):
    row = PROTOCOL["http_status"].get(str(status))
    if row:
        return tuple(row)
    if 500 <= status <= 599:
        return "SERVER", True
    if 400 <= status <= 499:
        return "INVALID_REQUEST", False
    return "MALFORMED_RESPONSE", False


def _refine(status, row, kind, code, message, retry_info=False):
    table = provider_error_code(kind, code, message)
    wording, on = PROTOCOL["wording"], PROTOCOL["refine_statuses"]
    if table == "OVERLOADED" or (status >= 500 and _worded(message, wording["overloaded_5xx"])):
        return "OVERLOADED", True
    context = table == "CONTEXT_WINDOW_EXCEEDED" or _worded(message, wording["context_window"])
    if status in on["context_window"] and context:
        return "CONTEXT_WINDOW_EXCEEDED", False
    # A quota wording beside a RetryInfo detail names a window that reopens: a rate limit.
    quota = table == "QUOTA" or (_worded(message, wording["quota"]) and not retry_info)
    if status in on["quota"] and quota:
        return "QUOTA", False
    return row


def _header(headers, name):
    """One header of an http.client.HTTPMessage or a dict (duplicates joined by ", ")."""
    if headers is None:
        return None
    if hasattr(headers, "get_all"):
        values = headers.get_all(name)
        return ", ".join(values) if values else None
    for key, value in headers.items():
        if key.lower() == name:
            return _text(value)
    return None


def classify_http(status, headers, body=b"", now=None):
    """The failure of an HTTP error response (`body`: what of it was read). AWS names its error's
    type in the x-amzn-errortype header: the type of a body that names none."""
    kind, code, message = error_fields(body)
    kind = kind or aws_type(_header(headers, "x-amzn-errortype"))
    code_name, retryable = _refine(status, _status_row(status), kind, code, message,
                                   has_retry_info(body))
    should = (_header(headers, "x-should-retry") or "").strip().lower()
    flat = message.replace("\r", " ").replace("\n", " ")
    flat = flat[:300] + "..." if len(flat) > 300 else flat
    out = failure(code_name, "response-headers", f"HTTP {status}: {flat}" if flat else
                  f"HTTP {status}", status=status,
                  retryable={"true": True, "false": False}.get(should, retryable))
    for name in PROTOCOL["request_id_headers"]:
        value = (_header(headers, name) or "").strip()
        if value:
            out["request_id"] = value
            break
    hint = retry_hint(headers, now) or body_retry_hint(body)
    if hint:
        out["retry_after_ms"] = hint[0]
    return out


_DECIMAL = re.compile(r"^(\d+\.?\d*|\.\d+)$")
_MONTHS = "jan feb mar apr may jun jul aug sep oct nov dec".split()
_DATE_FORMS = [
    re.compile(r"^[a-z]{3}, (\d{2}) ([a-z]{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) (?:gmt|utc)$", re.I),
    re.compile(r"^[a-z]{6,9}, (\d{2})-([a-z]{3})-(\d{2}) (\d{2}):(\d{2}):(\d{2}) (?:gmt|utc)$",
               re.I),
]
_ASCTIME = re.compile(r"^[a-z]{3} ([a-z]{3}) +(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) (\d{4})$", re.I)


def parse_http_date(value, now=None):
    """An HTTP-date in any of RFC 9110's three forms, as seconds since the epoch, or None."""
    value = value.strip()
    parts = None
    for form in _DATE_FORMS:
        m = form.match(value)
        if m:
            parts = m.group(1), m.group(2), m.group(3), m.group(4), m.group(5), m.group(6)
    m = _ASCTIME.match(value)
    if m:
        parts = m.group(2), m.group(1), m.group(6), m.group(3), m.group(4), m.group(5)
    if not parts or parts[1].lower() not in _MONTHS:
        return None
    day, month, year_text, hour, minute, second = parts
    year = int(year_text)
    if len(year_text) == 2:  # RFC 9110 §5.6.7: not more than 50 years in the future
        this_year = time.gmtime(now if now is not None else time.time()).tm_year
        year += this_year // 100 * 100
        if year > this_year + 50:
            year -= 100
    try:
        return calendar.timegm((year, _MONTHS.index(month.lower()) + 1, int(day), int(hour),
                                int(minute), int(second), 0, 0, 0))
    except (ValueError, OverflowError):
        return None


def _hint_ms(ms):
    """Rounded up (never early), but not for binary noise: 1.1 s is 1100.0000000000002 ms."""
    return min(PROTOCOL["max_retry_hint_ms"], max(0, math.ceil(ms - 1e-6)))


def retry_hint(headers, now=None):
    """(ms, source) of the strongest valid header hint, or None: retry-after-ms, then retry-after
    (delay-seconds, or an HTTP-date measured from the response's Date header when it has one).
    Duplicated fields count by their longest valid value."""
    now = time.time() if now is None else now
    values = [v.strip() for v in (_header(headers, "retry-after-ms") or "").split(",")]
    ms = [float(v) for v in values if _DECIMAL.match(v)]
    if ms:
        return _hint_ms(max(ms)), "retry-after-ms"
    value = _header(headers, "retry-after")
    if not value:
        return None
    seconds = [float(v.strip()) for v in value.split(",") if _DECIMAL.match(v.strip())]
    if seconds:
        return _hint_ms(max(seconds) * 1000), "retry-after"
    date_header = _header(headers, "date")
    reference = (parse_http_date(date_header, now) if date_header else None) or now
    dates = [d for d in (parse_http_date(p, now) for p in re.findall(r"[^,]+,[^,]+|[^,]+", value))
             if d is not None]
    if not dates:
        return None
    return _hint_ms(max(0.0, max(dates) - reference) * 1000), "retry-after-date"


_GO_UNITS = {"ms": 1.0, "us": 1e-3, "\u00b5s": 1e-3, "\u03bcs": 1e-3, "ns": 1e-6, "h": 3600000.0,
             "m": 60000.0, "s": 1000.0}
_GO_PART = re.compile(r"([0-9]+\.?[0-9]*|\.[0-9]+)(ms|us|\u00b5s|\u03bcs|ns|h|m|s)")


def parse_go_duration(value):
    """A Go duration ("37s", "1.5s", "6m0s", "250ms", "0") as a hint in ms, or None."""
    value = value.strip()
    if value == "0":
        return 0
    total, pos = 0.0, 0
    while pos < len(value):
        m = _GO_PART.match(value, pos)
        if not m:
            return None
        total, pos = total + float(m.group(1)) * _GO_UNITS[m.group(2)], m.end()
    if not value:
        return None
    return _hint_ms(min(total, PROTOCOL["max_retry_hint_ms"]))


def body_retry_hint(body):
    """(ms, "body") of the error body's hint, or None: Google's error.details[].retryDelay (its
    google.rpc.RetryInfo), the first valid one."""
    for detail in _details(_error_object(body)):
        delay = detail.get("retryDelay")
        ms = parse_go_duration(delay) if isinstance(delay, str) else None
        if ms is not None:
            return ms, "body"
    return None


def classify_network_error(exc, phase="connect"):
    """A socket or http.client error at `phase`: timeouts TIMEOUT, the rest TRANSPORT; refused
    connections and failed lookups are always phase connect."""
    detail = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, urllib.error.URLError) and isinstance(exc.reason, BaseException):
        return classify_network_error(exc.reason, phase)
    if isinstance(exc, (ConnectionRefusedError, socket.gaierror)):
        phase = "connect"
    if isinstance(exc, (TimeoutError, socket.timeout)):
        return failure("TIMEOUT", phase, detail)
    return failure("TRANSPORT", phase, detail)


def classify_exception(exc, phase):
    """An exception no adapter rule knew: JSON errors MALFORMED_RESPONSE, socket and HTTP errors
    by classify_network_error, anything else UNKNOWN."""
    if isinstance(exc, AdapterFailure):
        return exc.failure
    if isinstance(exc, ValueError) and not isinstance(exc, UnicodeError):
        return failure("MALFORMED_RESPONSE", phase, f"{type(exc).__name__}: {exc}")
    if isinstance(exc, (OSError, http.client.HTTPException)):
        return classify_network_error(exc, phase)
    return failure("UNKNOWN", phase, f"{type(exc).__name__}: {exc}")


# ---- the wire: every attempt observed ----------------------------------------------------------

_ERROR_BODY_SECONDS = 0.25
_ERROR_BODY_BYTES = 65536


def response_id(attempt):
    return f"attempt-{attempt}"


class _Attempt:
    def __init__(self, n):
        self.n, self.chunks, self.announced = n, 0, False
        self.status, self.headers, self.response = 0, None, None
        self.body, self.error, self.body_error, self.body_done = bytearray(), None, None, False


class Wire:
    """Observes every request made through its connections. Attempts begin at connect() or at
    the request, whichever comes first; the previous attempt's response/interrupted is written
    first when it failed and was not announced. A client that announces its retries itself
    (before its wait) calls retrying(), with its own classification of the failure when it has
    one; the kit then writes that attempt's one response/interrupted (an adapter never writes it
    itself)."""

    def __init__(self, cancel=None):
        self.attempts = []
        self.sockets = set()
        self._lock = threading.Lock()
        self.cancel = cancel
        if cancel is not None:
            cancel.on_cancel(self.shut_sockets)

    @property
    def current(self):
        return self.attempts[-1] if self.attempts else None

    def ids(self):
        n = len(self.attempts)
        return {"response_id": response_id(n), "attempt": n} if n else {}

    def phase(self):
        """Where the call is now: the phase a cancel or a client error happened in. An attempt
        that got an HTTP error status is at response-headers (where its failure is) until the
        client announces its retry; from then on the call is between attempts, which the
        reference client calls connect (a cancel during backoff is ABORTED at connect)."""
        a = self.current
        if a is None or a.announced or a.error is not None:
            return "connect"
        if not a.status or a.status >= 300:
            return "response-headers"
        return "finish" if a.body_done else "stream"

    def saw_output(self):
        if self.current:
            self.current.chunks += 1

    def begin(self):
        """A new request is about to go out: announce the previous failure, write start."""
        previous = self.current
        if previous is not None and not previous.announced:
            self._announce(previous, {}, "a new request started")
        attempt = _Attempt(len(self.attempts) + 1)
        self.attempts.append(attempt)
        emit("response/start", response_id=response_id(attempt.n), attempt=attempt.n)
        return attempt

    def retrying(self, delay_ms=None, source=None, message=None, failure=None):
        """The client said it will retry the current attempt (call it before the wait): writes
        the attempt's response/interrupted now, and never again. The delay and its delay_source
        only when the client states them. `failure`: the client's own classification of the
        attempt (a whole failure object: failure(code, phase, message, ...)), used instead of
        what the wire saw; its partial_output is filled in from the wire when left at none."""
        a = self.current
        if a is None or a.announced:
            return
        schedule = {} if delay_ms is None else {"scheduled_retry_ms": max(0, round(delay_ms)),
                                                "delay_source": source or "backoff"}
        self._announce(a, schedule, message, failure)

    def _announce(self, a, schedule, why, classified=None):
        a.announced = True
        failed = dict(classified or self._failure_of(a) or failure(
            "UNKNOWN", "finish", "the client sent a new request after this response; the reason "
            "is not visible on the wire"))
        if a.chunks and failed["partial_output"] == "none":
            failed["partial_output"] = "uncommitted"
        if why:
            failed["message"] += f" ({why})"
        emit("response/interrupted", response_id=response_id(a.n), attempt=a.n, failure=failed,
             **schedule)

    def last_failure(self):
        """What the wire saw go wrong on the latest attempt, or None."""
        return self._failure_of(self.current) if self.current else None

    def _failure_of(self, a):
        if a.error is not None:
            return classify_network_error(a.error, "response-headers")
        if a.status >= 300:
            if a.response is not None:
                a.response.drain_error_body()
            return classify_http(a.status, a.headers, bytes(a.body))
        if a.body_error is not None:
            return classify_network_error(a.body_error, "stream")
        return None

    def connection(self, host, port=None, timeout=None, https=False, **kwargs):
        """An http.client connection whose requests are observed."""
        cls = ObservedHTTPSConnection if https else ObservedHTTPConnection
        conn = cls(host, port, timeout=timeout, **kwargs) if timeout is not None else cls(
            host, port, **kwargs)
        conn.wire = self
        return conn

    def opener(self):
        """A urllib opener whose requests are observed (http and https)."""
        wire = self

        class Http(urllib.request.HTTPHandler):
            def http_open(self, req):
                return self.do_open(lambda *a, **k: wire.connection(*a, **k), req)

        class Https(urllib.request.HTTPSHandler):
            def https_open(self, req):
                return self.do_open(lambda *a, **k: wire.connection(*a, https=True, **k), req,
                                    context=self._context)

        return urllib.request.build_opener(Http, Https)

    def shut_sockets(self):
        """Shuts every socket of the call: a blocked read returns at once. Sockets stay listed
        after their connection's close(): http.client closes the connection when a response
        will close and hands the socket to the response, which may still be read. A socket
        really closed has no descriptor any more, and its shutdown fails harmlessly."""
        with self._lock:
            sockets = list(self.sockets)
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class ObservedResponse(http.client.HTTPResponse):
    """An HTTPResponse that records on its attempt what the client reads: an error body (up to
    64 KiB), the end of the body, or the error that broke it."""

    _kit_attempt = None
    _kit_depth = 0

    def _observe(self, method, *args):
        a, outer = self._kit_attempt, self._kit_depth == 0
        self._kit_depth += 1
        try:
            result = method(*args)
        except (OSError, http.client.HTTPException) as e:
            if a is not None and outer and a.body_error is None:
                a.body_error = e
            raise
        finally:
            self._kit_depth -= 1
        if a is not None and outer:
            data = bytes(args[0][:result]) if method.__name__ == "readinto" else result
            if a.status >= 300 and len(a.body) < _ERROR_BODY_BYTES:
                a.body += data[:_ERROR_BODY_BYTES - len(a.body)]
            if self.isclosed():
                a.body_done = True
        return result

    def drain_error_body(self):
        """Reads what the client left unread of an error body, briefly (at most 250 ms and 64
        KiB): clients often abandon a retried response's body, and its class is in there."""
        a = self._kit_attempt
        if a is None or a.status < 300 or self.isclosed() or len(a.body) >= _ERROR_BODY_BYTES:
            return
        sock = getattr(getattr(self.fp, "raw", None), "_sock", None)
        try:
            if sock is not None:
                sock.settimeout(_ERROR_BODY_SECONDS)  # the response is abandoned: no harm
            while not self.isclosed() and len(a.body) < _ERROR_BODY_BYTES:
                if not self.read1(_ERROR_BODY_BYTES):
                    break
        except (OSError, http.client.HTTPException, ValueError):
            pass  # keep what came

    def close(self):
        self.drain_error_body()
        super().close()

    def read(self, amt=None):
        return self._observe(super().read, amt)

    def read1(self, n=-1):
        return self._observe(super().read1, n)

    def readinto(self, b):
        return self._observe(super().readinto, b)

    def readline(self, limit=-1):
        return self._observe(super().readline, limit)


class _Observed:
    """Mixin for http.client connections: each request is one attempt of `wire`."""

    response_class = ObservedResponse
    wire = None
    _kit_attempt = None

    def _kit_begin(self):
        if self._kit_attempt is None and self.wire is not None:
            self._kit_attempt = self.wire.begin()
        return self._kit_attempt

    def connect(self):
        attempt = self._kit_begin()
        try:
            super().connect()
        except OSError as e:
            if attempt is not None:
                attempt.error = e
            self._kit_attempt = None
            raise
        if self.wire is not None:
            with self.wire._lock:
                self.wire.sockets.add(self.sock)
            if self.wire.cancel is not None and self.wire.cancel.event.is_set():
                self.wire.shut_sockets()

    def putrequest(self, *args, **kwargs):
        self._kit_begin()
        return super().putrequest(*args, **kwargs)

    def getresponse(self):
        attempt, self._kit_attempt = self._kit_attempt, None
        try:
            response = super().getresponse()
        except (OSError, http.client.HTTPException) as e:
            if attempt is not None:
                attempt.error = e
            raise
        if attempt is not None:
            attempt.status, attempt.headers, attempt.response = (response.status, response.msg,
                                                                 response)
            response._kit_attempt = attempt
        return response


class ObservedHTTPConnection(_Observed, http.client.HTTPConnection):
    pass


class ObservedHTTPSConnection(_Observed, http.client.HTTPSConnection):
    pass


# ---- the request and the stream ----------------------------------------------------------------

def endpoint(call):
    """The URL of the call's dialect endpoint under base_url (which has no /v1). Gemini's and
    Bedrock's paths name the request's model and method (a stream unless the request's "stream"
    is false; Bedrock's model percent-encoded as the AWS SDKs do, all but A-Z a-z 0-9 - _ . ~, its
    default when the request names none), and a base_url ending in Gemini's /v1beta does not
    repeat it (reference_impl/call.cc RequestPath)."""
    dialect = PROTOCOL["dialects"][call["dialect"]]
    base = call["base_url"].rstrip("/")
    if "path_fields" not in dialect:
        return base + dialect["path"]
    if dialect.get("version_prefix"):
        base = base.removesuffix(dialect["version_prefix"])
    request = call.get("request") or {}
    model = request.get("model")
    path = dialect["path_unstreamed"] if request.get("stream") is False else dialect["path"]
    name = model if isinstance(model, str) and model else dialect.get("default_model", "{model}")
    if dialect.get("model_escaped"):
        name = urllib.parse.quote(name, safe="")
    return base + path.replace("{model}", name)


def request_body(call):
    """The body to send, as JSON bytes: the call's request, without what the dialect's path says
    instead (Gemini's and Bedrock's "model" and "stream")."""
    omit = PROTOCOL["dialects"][call["dialect"]].get("path_fields", [])
    return json.dumps({k: v for k, v in call["request"].items() if k not in omit}).encode()


def request_headers(call):
    """The request's headers. Ollama (hosted) and Bedrock (its API keys) take the key as a bearer
    token (a local Ollama ignores it; Bedrock also takes SigV4) and are told which answer is
    expected: their framing's media type for a stream (application/x-ndjson,
    application/vnd.amazon.eventstream), else application/json."""
    headers = {"Content-Type": "application/json"}
    if call["dialect"] == "anthropic-messages":
        headers.update({"x-api-key": call["api_key"], "anthropic-version": "2023-06-01"})
    elif call["dialect"] == "gemini":
        headers["x-goog-api-key"] = call["api_key"]
    else:
        headers["Authorization"] = f"Bearer {call['api_key']}"
    framing = _framing(call["dialect"])
    if framing != "sse":
        headers["Accept"] = PROTOCOL["framings"][framing] if streams(call) else "application/json"
    return headers


def _framing(dialect):
    return PROTOCOL["dialects"].get(dialect or "", {}).get("framing", "sse")


def streams(call):
    """Whether the call's answer is a stream: its request's "stream" is true, or it is absent (not
    a boolean) in a dialect that streams by default (Ollama streams unless told "stream": false;
    Gemini's and Bedrock's paths)."""
    stream = (call.get("request") or {}).get("stream")
    if isinstance(stream, bool):
        return stream
    return PROTOCOL["dialects"].get(call.get("dialect"), {}).get("streams_by_default") is True


def check_content_type(call, response):
    """The reference client's check of a 2xx response's content-type (assembler.cc
    CheckContentType): a stream must be its framing's media type (text/event-stream,
    application/x-ndjson for Ollama, application/vnd.amazon.eventstream for Bedrock), a whole
    answer application/json or ...+json; another is
    MALFORMED_RESPONSE in phase response-headers, retryable. No content-type is no verdict.
    `response`: an http.client / urllib response (its status is added), or the header's value.
    Returns the failure, or None."""
    value = response if response is None or isinstance(response, str) else \
        response.getheader("content-type")
    if value is None:
        return None
    media = re.sub(r"\s+", "", value.split(";")[0]).lower()
    stream = streams(call)
    want = PROTOCOL["framings"][_framing(call["dialect"])] if stream else "application/json"
    if media == want or (not stream and media.endswith("+json")):
        return None
    status = getattr(response, "status", None)
    return failure("MALFORMED_RESPONSE", "response-headers",
                   f"expected {want} but the response is `{value}`",
                   **({"status": status} if is_integer(status) else {}))


class SseParser:
    """Incremental text/event-stream parsing: CR, LF, CRLF, comments, multi-line data, BOM."""

    def __init__(self):
        self.buf, self.event, self.data, self.pending_cr, self.first = b"", "", [], False, True

    def feed(self, chunk):
        """Yields (event, data) for every event completed by `chunk`."""
        if self.pending_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        self.pending_cr = False
        self.buf += chunk
        if self.first and self.buf:
            self.buf, self.first = self.buf.removeprefix(b"\xef\xbb\xbf"), False
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
            yield from self._line(line)

    def _line(self, text):
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


def sse_events(response, size=65536):
    """(event, data) of a streamed response body, as the bytes arrive."""
    parser = SseParser()
    while chunk := response.read1(size):
        yield from parser.feed(chunk)


class NdjsonParser:
    """Incremental application/x-ndjson parsing (Ollama's streams), as the reference client reads
    it (reference_impl/ndjson_decoder.cc): a line ends at LF, a CR before it is dropped, blank
    lines are skipped, an unfinished last line when the body ends is discarded (finish()). Each
    line comes as ("message", line), the shape of an SSE event, for parse_event and Output."""

    def __init__(self):
        self.buf = b""

    def feed(self, chunk):
        """Yields ("message", line) for every line completed by `chunk`."""
        self.buf += chunk
        while (i := self.buf.find(b"\n")) >= 0:
            line, self.buf = self.buf[:i], self.buf[i + 1:]
            line = line.removesuffix(b"\r")
            if line.strip(b" \t\r"):
                yield "message", line.decode("utf-8", "replace")

    def finish(self):
        """The body ended: an unfinished last line is discarded (a cut stream); returns its
        bytes."""
        discarded = len(self.buf) if self.buf.strip(b" \t\r") else 0
        self.buf = b""
        return discarded


def ndjson_events(response, size=65536):
    """("message", line) of a streamed application/x-ndjson body, as the bytes arrive; an
    unfinished last line is not one."""
    parser = NdjsonParser()
    while chunk := response.read1(size):
        yield from parser.feed(chunk)
    parser.finish()


def _eventstream_malformed(why):
    return AdapterFailure(failure("MALFORMED_RESPONSE", "stream", f"malformed event stream: {why}"))


class EventStreamParser:
    """Incremental application/vnd.amazon.eventstream parsing (Amazon Bedrock's ConverseStream).
    A message is a prelude (total length and headers length, uint32 big-endian, then the CRC-32
    of those 8 bytes), its headers, its payload and the CRC-32 of everything before it.
    messages(chunk) returns the messages a chunk completes as (headers, payload), a message split
    across reads waiting for its rest; feed(chunk) yields them as (event, data), the shape of an
    SSE event, for parse_event and Output: an event message is its :event-type and its payload's
    text; an exception (:message-type exception) is ("error", the AWS SDKs' union object as JSON,
    {"throttlingException": {"message": ...}}). finish() ends the body and returns how many bytes
    of an unfinished message it discarded (a cut stream: the dialect then misses its terminator).

    A wrong CRC, a total length under 16, headers that run past the payload or a header value of
    an unknown type is a malformed stream: AdapterFailure (MALFORMED_RESPONSE), raised once the
    whole messages before it were returned, and again by every later call."""

    _PRELUDE = 12
    _MIN_MESSAGE = 16  # a prelude and the message CRC: no headers, no payload
    # Value types of a fixed size (2 byte, 3 short, 4 integer, 5 long, 8 timestamp, 9 uuid); 0 and
    # 1 (true, false) have no value, 6 (bytes) and 7 (string) a uint16 length first.
    _FIXED = {2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}

    def __init__(self):
        self.buf, self.broken = b"", None

    def messages(self, chunk):
        """The messages completed by `chunk`, as (headers {name: value}, payload bytes)."""
        if self.broken:
            raise self.broken
        buf, out, offset = self.buf + bytes(chunk), [], 0
        try:
            while (length := self._length(buf, offset)) is not None and len(buf) - offset >= length:
                out.append(self._message(buf[offset:offset + length]))
                offset += length
        except AdapterFailure as e:
            self.broken, self.buf = e, b""
            if not out:
                raise
            return out
        self.buf = buf[offset:]
        return out

    def feed(self, chunk):
        """Yields (event, data) for every message completed by `chunk`."""
        for message in self.messages(chunk):
            event = eventstream_event(*message)
            if event is not None:
                yield event

    def finish(self):
        """The body ended: an unfinished message is discarded (a cut stream); returns its bytes.
        Raises when the stream was malformed."""
        if self.broken:
            raise self.broken
        discarded, self.buf = len(self.buf), b""
        return discarded

    def _length(self, buf, offset):
        """The total length of the message at `offset` once its prelude is there (checked)."""
        if len(buf) - offset < self._PRELUDE:
            return None
        total, headers, crc = struct.unpack_from(">III", buf, offset)
        if zlib.crc32(buf[offset:offset + 8]) != crc:
            raise _eventstream_malformed("the prelude CRC does not match")
        if total < self._MIN_MESSAGE:
            raise _eventstream_malformed(f"a message of {total} bytes (16 at least)")
        if headers > total - self._MIN_MESSAGE:
            raise _eventstream_malformed(f"{headers} bytes of headers in a message of {total}")
        return total

    def _message(self, message):
        """One whole message (its prelude checked): the message CRC, then headers and payload."""
        if zlib.crc32(message[:-4]) != struct.unpack_from(">I", message, len(message) - 4)[0]:
            raise _eventstream_malformed("the message CRC does not match")
        headers_end = self._PRELUDE + struct.unpack_from(">I", message, 4)[0]
        return self._headers(message[self._PRELUDE:headers_end]), message[headers_end:-4]

    def _headers(self, block):
        """The headers block as {name: value}: strings as text, bools as bools, the rest as
        bytes."""
        headers, at = {}, 0

        def take(start, n):
            if start + n > len(block):
                raise _eventstream_malformed("a header runs past the headers")
            return block[start:start + n]

        while at < len(block):
            name_length = take(at, 1)[0]
            name = take(at + 1, name_length).decode("utf-8", "replace")
            at += 1 + name_length
            kind = take(at, 1)[0]
            at += 1
            if kind in (0, 1):
                value = kind == 0
            elif kind in (6, 7):
                length = struct.unpack(">H", take(at, 2))[0]
                value = take(at + 2, length)
                value = value.decode("utf-8", "replace") if kind == 7 else value
                at += 2 + length
            elif kind in self._FIXED:
                value = take(at, self._FIXED[kind])
                at += self._FIXED[kind]
            else:
                raise _eventstream_malformed(f"a header of unknown value type {kind}")
            headers[name] = value
        return headers


def eventstream_event(headers, payload):
    """One event stream message as (event, data), or None for a message type that is neither an
    event nor an error: an event (:message-type event, or none) is its :event-type and its
    payload's text; an exception is ("error", the union object {"<:exception-type>": payload} as
    JSON; a payload that is not a JSON object is its message), and an error message (:message-type
    error: :error-code and :error-message) ("error", {"error": {"type", "message"}})."""
    text = payload.decode("utf-8", "replace")
    kind = headers.get(":message-type", "event")
    if kind == "event":
        name = headers.get(":event-type")
        if not isinstance(name, str) or not name:
            raise _eventstream_malformed("an event without :event-type")
        return name, text
    if kind == "exception":
        name = headers.get(":exception-type")
        try:
            body = json.loads(text)
        except ValueError:
            body = None
        name = name if isinstance(name, str) and name else "unknownException"
        return "error", json.dumps({name: body if isinstance(body, dict) else {"message": text}})
    if kind == "error":
        code, message = headers.get(":error-code"), headers.get(":error-message")
        return "error", json.dumps({"error": {
            "type": code if isinstance(code, str) else "",
            "message": message if isinstance(message, str) else text}})
    return None


def eventstream_events(response, size=65536):
    """(event, data) of a streamed application/vnd.amazon.eventstream body, as the bytes arrive;
    an unfinished last message is not one."""
    parser = EventStreamParser()
    while chunk := response.read1(size):
        yield from parser.feed(chunk)
    parser.finish()


def stream_events(call, response, size=65536):
    """(event, data) of a streamed body in the call's dialect's framing: SSE events, NDJSON lines
    (Ollama) or event stream messages (Bedrock). `call` may be the dialect's name instead."""
    dialect = call if isinstance(call, str) else call["dialect"]
    reader = {"ndjson": ndjson_events, "eventstream": eventstream_events}.get(
        _framing(dialect), sse_events)
    return reader(response, size)


def parse_event(event, data, dialect=None):
    """One SSE event (or NDJSON line, or event stream message) as the dialect's JSON object; None
    for `[DONE]` (not in an NDJSON dialect, whose every line is an object). An event stream's
    event is the AWS SDKs' union object, its payload under its name ({"messageStop": {...}}); its
    "error" event (an exception) is that object already. AdapterFailure (MALFORMED_RESPONSE) for
    data that is not a JSON object."""
    framing = _framing(dialect)
    if data.strip() == "[DONE]" and framing == "sse":
        return None
    try:
        obj = json.loads(data)
    except ValueError:
        raise AdapterFailure(failure("MALFORMED_RESPONSE", "stream",
                                     f"invalid JSON in an event: {data[:80]!r}")) from None
    if not isinstance(obj, dict):
        raise AdapterFailure(failure("MALFORMED_RESPONSE", "stream",
                                     f"an event that is not an object: {data[:80]!r}"))
    if framing == "eventstream":
        return obj if event == "error" else {event: obj}
    if event == "error" and "type" not in obj:
        obj["type"] = "error"
    return obj


# ---- assembly ----------------------------------------------------------------------------------

def _count(v):
    return v if is_integer(v) and v >= 0 else None


def _need(ok, what):
    """A shape the dialect does not allow (the reference client's decoders reject the same): the
    event is skipped, or in a strict Output the attempt is MALFORMED_RESPONSE."""
    if not ok:
        raise TypeError(what)


def _absent_or(value, kind):
    return value is None or isinstance(value, kind)


def _gemini_response(obj):
    """One Gemini GenerateContentResponse (a stream's chunk, or a whole answer) as (parts, finish,
    usage): the first candidate's parts (("text", t), ("reasoning", t) for a thought, ("call",
    {id, name, arguments}) for a function call, which comes whole in one part: its `args`
    re-serialised), its finishReason, or a blocked prompt's promptFeedback.blockReason
    (reference_impl/decode_gemini.cc)."""
    parts, finish = [], ""
    candidates, feedback = obj.get("candidates"), obj.get("promptFeedback")
    if candidates is not None:
        _need(isinstance(candidates, list), "`candidates` must be an array")
        for candidate in candidates:
            _need(isinstance(candidate, dict), "every candidate must be an object")
            if candidate.get("index", 0) not in (0, None):
                continue  # the first candidate only
            content = candidate.get("content")
            _need(_absent_or(content, dict), "`content` must be an object")
            _need(_absent_or((content or {}).get("parts"), list), "`parts` must be an array")
            for part in (content or {}).get("parts") or []:
                _need(isinstance(part, dict), "every part must be an object")
                call = part.get("functionCall")
                if call is not None:
                    _need(isinstance(call, dict), "`functionCall` must be an object")
                    _need(isinstance(call.get("name"), str), "a function call needs a `name`")
                    args = call.get("args")
                    args = "{}" if args is None else args if isinstance(args, str) else \
                        json.dumps(args, separators=(",", ":"))
                    call_id = call.get("id") if isinstance(call.get("id"), str) else ""
                    parts.append(("call", {"id": call_id, "name": call["name"],
                                           "arguments": args}))
                    continue
                _need(_absent_or(part.get("text"), str), "`text` must be a string")
                if not part.get("text"):
                    continue
                _need(_absent_or(part.get("thought"), bool), "`thought` must be a bool")
                parts.append(("reasoning" if part.get("thought") else "text", part["text"]))
            _need(_absent_or(candidate.get("finishReason"), str), "`finishReason` must be a string")
            finish = candidate.get("finishReason") or ""
    elif feedback is not None:
        _need(isinstance(feedback, dict), "`promptFeedback` must be an object")
        finish = feedback.get("blockReason")
        _need(isinstance(finish, str) and finish,
              "a response needs `candidates` or a `blockReason`")
    else:
        _need(False, "a response needs `candidates` (or `promptFeedback`)")
    _need(_absent_or(obj.get("usageMetadata"), dict), "`usageMetadata` must be an object")
    return parts, finish, obj.get("usageMetadata")


def _ollama_response(obj):
    """One Ollama /api/chat object (a stream's line, or a whole answer) as (parts, done, finish,
    usage): message.thinking (("reasoning", t)), message.content (("text", t)),
    message.tool_calls (("call", {id, name, arguments}), each whole: {function: {name,
    arguments}}, its `arguments` object re-serialised, its id usually absent); the line with
    "done": true has done_reason ("stop" when absent) and prompt_eval_count / eval_count
    (reference_impl/decode_ollama.cc). Every shape is checked before anything is taken."""
    _need(isinstance(obj.get("done"), bool), "`done` must be a boolean")
    parts = []
    message = obj.get("message")
    if message is not None:
        _need(isinstance(message, dict), "`message` must be an object")
        for key in ("thinking", "content"):
            _need(_absent_or(message.get(key), str), f"`{key}` must be a string")
        _need(_absent_or(message.get("tool_calls"), list), "`tool_calls` must be an array")
        if message.get("thinking"):
            parts.append(("reasoning", message["thinking"]))
        if message.get("content"):
            parts.append(("text", message["content"]))
        for call in message.get("tool_calls") or []:
            _need(isinstance(call, dict), "every tool call must be an object")
            function = call.get("function")
            _need(isinstance(function, dict), "`function` must be an object")
            _need(isinstance(function.get("name"), str), "`name` must be a string")
            _need(_absent_or(call.get("id"), str), "`id` must be a string")
            args = function.get("arguments")
            args = "{}" if args is None else args if isinstance(args, str) else \
                json.dumps(args, separators=(",", ":"))
            parts.append(("call", {"id": call.get("id") or "", "name": function["name"],
                                   "arguments": args}))
    if not obj["done"]:
        return parts, False, "", None
    for key in ("prompt_eval_count", "eval_count"):
        _need(obj.get(key) is None or is_integer(obj[key]), f"`{key}` must be an integer")
    _need(_absent_or(obj.get("done_reason"), str), "`done_reason` must be a string")
    return parts, True, obj.get("done_reason") or "stop", (_count(obj.get("prompt_eval_count")),
                                                           _count(obj.get("eval_count")))


def _bedrock_content(blocks):
    """The content blocks of a Bedrock Converse answer as parts: {"text"}, {"reasoningContent":
    {"reasoningText": {"text"}}} (("reasoning", t)), {"toolUse": {toolUseId, name, input}} (("call",
    {id, name, arguments}), a whole call: its `input` object serialised); other blocks (an image,
    a document) are not output."""
    parts = []
    for block in blocks:
        _need(isinstance(block, dict), "every content block must be an object")
        _need(_absent_or(block.get("text"), str), "`text` must be a string")
        if block.get("text"):
            parts.append(("text", block["text"]))
        reasoning = block.get("reasoningContent")
        _need(_absent_or(reasoning, dict), "`reasoningContent` must be an object")
        reasoning_text = (reasoning or {}).get("reasoningText")
        _need(_absent_or(reasoning_text, dict), "`reasoningText` must be an object")
        _need(_absent_or((reasoning_text or {}).get("text"), str),
              "`reasoningText.text` must be a string")
        if (reasoning_text or {}).get("text"):
            parts.append(("reasoning", reasoning_text["text"]))
        tool = block.get("toolUse")
        if tool is None:
            continue
        _need(isinstance(tool, dict), "`toolUse` must be an object")
        _need(isinstance(tool.get("name"), str), "a tool use needs a `name`")
        _need(_absent_or(tool.get("toolUseId"), str), "`toolUseId` must be a string")
        args = tool.get("input")
        args = "{}" if args is None else args if isinstance(args, str) else \
            json.dumps(args, separators=(",", ":"))
        parts.append(("call", {"id": tool.get("toolUseId") or "", "name": tool["name"],
                               "arguments": args}))
    return parts


def _is_error_event(obj, dialect=None):
    """Whether a dialect's event object reports a provider error: Anthropic's and the Responses
    API's `error`, a Responses `response.failed`, OpenAI Chat's and Gemini's bare {"error":
    {...}}; an Ollama line whenever it has an `error`, most often a bare string; a Bedrock event
    (the AWS SDKs' union object) when it names an exception ({"throttlingException": {...}}) or
    is an event stream error message ({"error": {...}})."""
    if dialect == "ollama":
        return obj.get("error") is not None
    if dialect == "bedrock-converse":
        return aws_exception(obj) is not None or isinstance(obj.get("error"), dict)
    return obj.get("type") in ("error", "response.failed") or (
        isinstance(obj.get("error"), dict) and "type" not in obj)


class Output:
    """Assembles one call's answer from the dialect's events or a whole object, writing
    assistant/chunk for each text or tool-call delta (of the wire's current attempt). It reports;
    check() says whether the answer is whole, as the reference client decides. `strict`: an
    event or object of an unexpected shape is MALFORMED_RESPONSE instead of being skipped.

    Output accumulates across attempts: it is what the caller got. A client that retries and
    discards a failed attempt's output (its own retry loop, or a library that says so) calls
    reset() when the new attempt begins, so the committed answer is the last attempt's alone. It
    is not reset on a new response/start by itself: a library that hands its caller the output of
    two attempts has spliced them, and the runner must see that (COMMIT-001). When an attempt adds
    to another attempt's output without a reset, a note on stderr says so."""

    def __init__(self, dialect, wire=None, strict=False):
        self.dialect, self.wire, self.strict = dialect, wire, strict
        self.reset()

    def reset(self):
        """Discards everything assembled so far: the output of an attempt the client threw away.
        Call it when the client's new attempt begins (before its first output)."""
        self.text, self.reasoning, self.refusal, self.tools = "", "", "", {}
        self.finish, self.usage = None, {"input_tokens": None, "output_tokens": None}
        self.chunks, self.terminated, self.stream_failure = 0, False, None
        self.last_sequence = None  # of a Responses stream, checked when strict
        self.gemini_calls = 0  # a Gemini attempt's function calls, numbered across its chunks
        self.ollama_calls = 0  # an Ollama attempt's tool calls, numbered across its lines
        self.attempt = None  # of the output held (the wire's attempt number), None while none
        self.splice_noted = False

    def _chunk(self, **fields):
        self.chunks += 1
        ids = self.wire.ids() if self.wire else {}
        if self.wire:
            self.wire.saw_output()
        self._note_splice(ids.get("attempt"))
        emit("assistant/chunk", **{"response_id": response_id(1), **ids}, **fields,
             commitment="uncommitted")

    def _note_splice(self, attempt):
        """Output of `attempt` joins what another attempt left: said once, on stderr."""
        if self.attempt is not None and attempt != self.attempt and not self.splice_noted:
            self.splice_noted = True
            note(f"faultline-adapter: attempt {attempt} adds to the output of attempt "
                 f"{self.attempt}; a client that discards a failed attempt's output calls "
                 "output.reset() as its new attempt begins (committed as the caller got it)")
        self.attempt = attempt

    def add_text(self, text):
        if isinstance(text, str) and text:
            self.text += text
            self._chunk(text=text)

    def add_tool_call(self, key, call_id=None, name=None, args=""):
        entry = self.tools.setdefault(key, {"id": "", "name": "", "arguments": ""})
        entry["id"] = entry["id"] or call_id or ""
        entry["name"] = entry["name"] or name or ""
        if args:
            entry["arguments"] += args
            index = key if is_integer(key) else list(self.tools).index(key)
            fragment = {"index": index, "arguments": args}
            fragment.update({k: entry[k] for k in ("id", "name") if entry[k]})
            self._chunk(tool_call=fragment)

    def event(self, obj):
        """One parsed event (None: `[DONE]`); True at the dialect's terminator or an error event
        (recorded in stream_failure)."""
        if obj is None:
            self.terminated = True
            return True
        try:
            if _is_error_event(obj, self.dialect):
                self.stream_failure = self.stream_failure or classify_stream_error(
                    obj, "stream", self.dialect)
                return True
            done = getattr(self, "_" + self.dialect.replace("-", "_"))(obj)
        except (AttributeError, TypeError, KeyError, ValueError) as e:
            if self.strict:
                raise AdapterFailure(failure("MALFORMED_RESPONSE", "stream",
                                             f"unexpected event shape ({e!r})")) from None
            note(f"skipped an event of unexpected shape ({e!r}): {obj!r:.200}")
            return False
        self.terminated = self.terminated or done
        return done

    def _openai_chat(self, obj):
        _need(_absent_or(obj.get("choices"), list), "`choices` must be an array")
        _need(_absent_or(obj.get("usage"), dict), "`usage` must be an object")
        for choice in obj.get("choices") or []:
            _need(isinstance(choice, dict), "every choice must be an object")
            _need(_absent_or(choice.get("delta"), dict), "`delta` must be an object")
            delta = choice.get("delta") or {}
            _need(_absent_or(delta.get("content"), str), "`content` must be a string")
            _need(_absent_or(delta.get("tool_calls"), list), "`tool_calls` must be an array")
            self.add_text(delta.get("content"))
            if isinstance(delta.get("reasoning_content"), str):
                self.reasoning += delta["reasoning_content"]
            if isinstance(delta.get("refusal"), str):
                self.refusal += delta["refusal"]
            for call in delta.get("tool_calls") or []:
                _need(isinstance(call, dict) and _absent_or(call.get("function"), dict),
                      "a tool call must be an object")
                fn = call.get("function") or {}
                self.add_tool_call(call.get("index", 0), call.get("id"), fn.get("name"),
                                   fn.get("arguments") or "")
            self.finish = choice.get("finish_reason") or self.finish
        usage = obj.get("usage")
        if isinstance(usage, dict):
            self.usage = {"input_tokens": _count(usage.get("prompt_tokens")),
                          "output_tokens": _count(usage.get("completion_tokens"))}
        return False

    def _anthropic_messages(self, obj):
        kind, delta = obj.get("type"), obj.get("delta") or {}
        if kind == "message_start":
            usage = (obj.get("message") or {}).get("usage") or {}
            self.usage["input_tokens"] = _count(usage.get("input_tokens"))
        elif kind == "content_block_start":
            block = obj.get("content_block") or {}
            if block.get("type") == "tool_use":
                self.add_tool_call(obj.get("index"), block.get("id"), block.get("name"))
        elif kind == "content_block_delta":
            _need(isinstance(obj.get("delta"), dict), "`delta` must be an object")
            _need(delta.get("type") != "text_delta" or isinstance(delta.get("text"), str),
                  "`text` must be a string")
            _need(delta.get("type") != "input_json_delta" or isinstance(
                delta.get("partial_json"), str), "`partial_json` must be a string")
            if delta.get("type") == "text_delta":
                self.add_text(delta.get("text"))
            elif delta.get("type") == "thinking_delta":
                self.reasoning += delta.get("thinking") or ""
            elif delta.get("type") == "input_json_delta":
                self.add_tool_call(obj.get("index"), args=delta.get("partial_json") or "")
        elif kind == "message_delta":
            self.finish = delta.get("stop_reason") or self.finish
            output_tokens = _count((obj.get("usage") or {}).get("output_tokens"))
            self.usage["output_tokens"] = output_tokens if output_tokens is not None else (
                self.usage["output_tokens"])
        return kind == "message_stop"

    def _openai_responses(self, obj):
        kind, number = obj.get("type"), obj.get("sequence_number")
        if self.strict and is_integer(number):  # only a strict reader judges
            last = self.last_sequence
            _need(last is None or number == last + 1, f"sequence_number {number} after {last}")
            self.last_sequence = number
        if kind in ("response.output_text.delta", "response.function_call_arguments.delta"):
            _need(isinstance(obj.get("delta"), str), "`delta` must be a string")
        if kind == "response.output_text.delta":
            self.add_text(obj.get("delta"))
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            self.reasoning += obj.get("delta") or ""
        elif kind == "response.refusal.delta":
            self.refusal += obj.get("delta") or ""
        elif kind == "response.output_item.added":
            item = obj.get("item") or {}
            if item.get("type") == "function_call":
                self.add_tool_call(obj.get("output_index"), item.get("call_id"), item.get("name"))
        elif kind == "response.function_call_arguments.delta":
            self.add_tool_call(obj.get("output_index"), args=obj.get("delta") or "")
        elif kind in ("response.completed", "response.incomplete"):
            response = obj.get("response") or {}
            usage = response.get("usage") or {}
            self.usage = {"input_tokens": _count(usage.get("input_tokens")),
                          "output_tokens": _count(usage.get("output_tokens"))}
            self.finish = response.get("status") or kind.split(".")[1]
            return True
        return False

    def _gemini(self, obj):
        """A Gemini chunk. There is no terminator event: the chunk with a finish reason ends the
        answer."""
        parts, finish, usage = _gemini_response(obj)
        for kind, value in parts:
            if kind == "call":
                self.add_tool_call(self.gemini_calls, value["id"], value["name"],
                                   value["arguments"])
                self.gemini_calls += 1
            elif kind == "reasoning":
                self.reasoning += value
            else:
                self.add_text(value)
        self._gemini_usage(usage)
        self.finish = finish or self.finish
        return bool(finish)

    def _apply_whole_parts(self, parts):
        """The parts of a whole answer (Gemini's, Ollama's, Bedrock's) in order: text, reasoning,
        whole tool calls numbered by arrival."""
        calls = 0
        for kind, value in parts:
            if kind == "call":
                self.tools[calls] = value
                calls += 1
            elif kind == "reasoning":
                self.reasoning += value
            else:
                self.text += value

    def _gemini_usage(self, usage):
        """Gemini's usage counts, each kept when a chunk leaves it out."""
        for key, field in (("input_tokens", "promptTokenCount"),
                           ("output_tokens", "candidatesTokenCount")):
            value = _count((usage or {}).get(field))
            if value is not None:
                self.usage[key] = value

    def _ollama(self, obj):
        """An Ollama line. The line with "done": true ends the answer."""
        parts, done, finish, usage = _ollama_response(obj)
        for kind, value in parts:
            if kind == "call":
                self.add_tool_call(self.ollama_calls, value["id"], value["name"],
                                   value["arguments"])
                self.ollama_calls += 1
            elif kind == "reasoning":
                self.reasoning += value
            else:
                self.add_text(value)
        if not done:
            return False
        self._ollama_usage(usage)
        self.finish = finish
        return True

    def _ollama_usage(self, usage):
        """Ollama's usage counts (the done line's), each kept when it leaves one out."""
        for key, value in zip(("input_tokens", "output_tokens"), usage or (None, None)):
            if value is not None:
                self.usage[key] = value

    def _bedrock_converse(self, obj):
        """A Bedrock ConverseStream event, as the AWS SDKs' union object ({"contentBlockDelta":
        {...}}: parse_event's); events of other names are ignored. Real Bedrock pads payloads
        with a "p" field, which nothing reads. Every shape is checked before anything is taken.
        messageStop ends the answer; metadata (the usage) follows it."""
        done = False
        for name, event in obj.items():
            read = self._BEDROCK_EVENTS.get(name)
            if read is None:
                continue
            _need(isinstance(event, dict), f"`{name}` must be an object")
            done = read(self, event) is True or done
        return done

    @staticmethod
    def _block_index(event):
        index = event.get("contentBlockIndex")
        _need(index is None or is_integer(index), "`contentBlockIndex` must be an integer")
        return 0 if index is None else index

    def _bedrock_message_start(self, event):
        _need(_absent_or(event.get("role"), str), "`role` must be a string")

    def _bedrock_block_start(self, event):
        """A tool call's block opens with its id and name; its arguments come in the deltas."""
        index = self._block_index(event)
        _need(isinstance(event.get("start"), dict), "`start` must be an object")
        tool = event["start"].get("toolUse")
        if tool is None:
            return
        _need(isinstance(tool, dict), "`toolUse` must be an object")
        _need(isinstance(tool.get("name"), str), "a tool use needs a `name`")
        _need(_absent_or(tool.get("toolUseId"), str), "`toolUseId` must be a string")
        self.add_tool_call(index, tool.get("toolUseId"), tool["name"])

    def _bedrock_block_delta(self, event):
        index = self._block_index(event)
        delta = event.get("delta")
        _need(isinstance(delta, dict), "`delta` must be an object")
        reasoning, tool = delta.get("reasoningContent"), delta.get("toolUse")
        _need(_absent_or(delta.get("text"), str), "`text` must be a string")
        _need(_absent_or(reasoning, dict), "`reasoningContent` must be an object")
        _need(_absent_or((reasoning or {}).get("text"), str),
              "`reasoningContent.text` must be a string")
        _need(_absent_or(tool, dict), "`toolUse` must be an object")
        _need(_absent_or((tool or {}).get("input"), str), "`toolUse.input` must be a string")
        self.add_text(delta.get("text"))
        self.reasoning += (reasoning or {}).get("text") or ""
        if (tool or {}).get("input"):
            self.add_tool_call(index, args=tool["input"])

    def _bedrock_block_stop(self, event):
        self._block_index(event)

    def _bedrock_message_stop(self, event):
        _need(isinstance(event.get("stopReason"), str), "`stopReason` must be a string")
        self.finish = event["stopReason"]
        return True

    def _bedrock_usage(self, usage):
        """Bedrock's usage counts ({inputTokens, outputTokens}), each kept when it leaves one
        out."""
        _need(_absent_or(usage, dict), "`usage` must be an object")
        for key, field in (("input_tokens", "inputTokens"), ("output_tokens", "outputTokens")):
            value = _count((usage or {}).get(field))
            if value is not None:
                self.usage[key] = value

    def _bedrock_metadata(self, event):
        self._bedrock_usage(event.get("usage"))

    _BEDROCK_EVENTS = {"messageStart": _bedrock_message_start,
                       "contentBlockStart": _bedrock_block_start,
                       "contentBlockDelta": _bedrock_block_delta,
                       "contentBlockStop": _bedrock_block_stop,
                       "messageStop": _bedrock_message_stop,
                       "metadata": _bedrock_metadata}

    _WHOLE_SHAPE = {"openai-chat": lambda o: isinstance(o.get("choices"), list) and o["choices"],
                    "anthropic-messages": lambda o: isinstance(o.get("content"), list),
                    "openai-responses": lambda o: isinstance(o.get("output"), list),
                    "gemini": lambda o: isinstance(o.get("candidates"), list) or isinstance(
                        o.get("promptFeedback"), dict),
                    "ollama": lambda o: o.get("done") is True or _is_error_event(o, "ollama"),
                    "bedrock-converse": lambda o: isinstance(o.get("output"), dict) and isinstance(
                        o["output"].get("message"), dict) and isinstance(
                        o["output"]["message"].get("content"), list)}

    def whole(self, obj):
        """A non-streamed answer: the response's JSON object (missing parts read as empty
        unless strict)."""
        try:
            if not isinstance(obj, dict) or (self.strict and not self._WHOLE_SHAPE[self.dialect](
                    obj)):
                raise TypeError("not the dialect's response object")
            self._whole(obj)
            self.terminated = True
        except (AttributeError, TypeError, KeyError, IndexError) as e:
            raise AdapterFailure(failure("MALFORMED_RESPONSE", "finish",
                                         f"unreadable response object ({e!r})")) from None

    def _whole(self, obj):
        if self.dialect == "bedrock-converse":
            if not self._WHOLE_SHAPE["bedrock-converse"](obj):
                return  # missing parts read as empty (not strict)
            self._apply_whole_parts(_bedrock_content(obj["output"]["message"]["content"]))
            _need(_absent_or(obj.get("stopReason"), str), "`stopReason` must be a string")
            self.finish = obj.get("stopReason") or None
            self._bedrock_usage(obj.get("usage"))
            return
        if self.dialect == "ollama":
            # The one object with "done": true and the whole message, or {"error": ...} (the
            # provider failed the answer: as an error line would).
            if _is_error_event(obj, "ollama"):
                self.stream_failure = self.stream_failure or classify_stream_error(
                    obj, "stream", "ollama")
                return
            if not isinstance(obj.get("done"), bool):
                return  # missing parts read as empty (not strict)
            parts, _, finish, usage = _ollama_response(obj)
            self._apply_whole_parts(parts)
            self.finish = finish or None
            self._ollama_usage(usage)
            return
        if self.dialect == "gemini":
            if not self._WHOLE_SHAPE["gemini"](obj):
                return  # missing parts read as empty (not strict)
            parts, finish, usage = _gemini_response(obj)
            self._apply_whole_parts(parts)
            self.finish = finish or None
            self._gemini_usage(usage)
            return
        usage = obj.get("usage") or {}
        if self.dialect == "openai-chat":
            choice = (obj.get("choices") or [{}])[0]
            message = choice.get("message") or {}
            self.text, self.refusal = message.get("content") or "", message.get("refusal") or ""
            for i, c in enumerate(message.get("tool_calls") or []):
                fn = c.get("function") or {}
                self.tools[i] = {"id": c.get("id") or "", "name": fn.get("name") or "",
                                 "arguments": fn.get("arguments") or ""}
            self.finish = choice.get("finish_reason")
            self.usage = {"input_tokens": _count(usage.get("prompt_tokens")),
                          "output_tokens": _count(usage.get("completion_tokens"))}
            return
        if self.dialect == "anthropic-messages":
            for i, block in enumerate(obj.get("content") or []):
                if block.get("type") == "text":
                    self.text += block.get("text") or ""
                elif block.get("type") == "thinking":
                    self.reasoning += block.get("thinking") or ""
                elif block.get("type") == "tool_use":
                    self.tools[i] = {"id": block.get("id") or "", "name": block.get("name") or "",
                                     "arguments": json.dumps(block.get("input"))}
            self.finish = obj.get("stop_reason")
        else:
            for i, item in enumerate(obj.get("output") or []):
                for part in item.get("content") or []:
                    if part.get("type") == "output_text":
                        self.text += part.get("text") or ""
                    elif part.get("type") == "refusal":
                        self.refusal += part.get("refusal") or ""
                if item.get("type") == "function_call":
                    self.tools[i] = {"id": item.get("call_id") or "",
                                     "name": item.get("name") or "",
                                     "arguments": item.get("arguments") or ""}
            self.finish = obj.get("status")
        self.usage = {"input_tokens": _count(usage.get("input_tokens")),
                      "output_tokens": _count(usage.get("output_tokens"))}

    def has_output(self):
        return bool(self.text) or bool(self.tools)

    def check(self):
        """Why this answer may not be committed (a failure), as the reference client decides;
        None when it is whole."""
        if self.stream_failure:
            return self.stream_failure
        partial = {"partial_output": "uncommitted"} if self.chunks else {}
        if not self.terminated:
            return failure("STREAM_TRUNCATED", "finish" if self.finish else "stream",
                           "the stream ended without "
                           f"{PROTOCOL['dialects'][self.dialect]['terminator']}", **partial)
        if self.finish in PROTOCOL["content_filter_finishes"] or (
                self.refusal and not self.has_output()):
            return failure("CONTENT_FILTER", "finish", f"the provider refused ({self.finish})",
                           **partial)
        if not self.has_output():
            return failure("EMPTY_RESPONSE", "finish", "no text and no tool call")
        for key, call in self.tools.items():
            try:
                json.loads(call["arguments"] or "{}")
            except ValueError:
                call = None
            if call is None or not call["name"]:
                return failure("MALFORMED_RESPONSE", "finish",
                               f"tool call {key} has no name or incomplete JSON arguments",
                               **partial)
        return None

    def committed(self):
        """The fields of response/committed."""
        out = {"text": self.text, "tool_calls": list(self.tools.values()),
               "finish_reason": self.finish, "usage": self.usage}
        if self.reasoning:
            out["reasoning"] = self.reasoning
        return out


# ---- the call ----------------------------------------------------------------------------------

class Context:
    """What main() gets: the call, the cancel (`cancelled` is its threading.Event), the wire and
    the output."""

    def __init__(self, call, cancel, wire, output):
        self.call, self.cancel, self.wire, self.output = call, cancel, wire, output
        self.cancelled = cancel.event


def run_adapter(name, version, policy, main, dialects=DIALECTS, classify_error=None,
                strict=False, mode="per-call", reset=None):
    """Runs one call, or with mode="session" every call of a run, and with `reset` runs one after
    another (see the module docstring); returns the process exit code."""
    guard_stdout()
    if mode == "session":
        return _run_session(name, version, policy, main, dialects, classify_error, strict, reset)
    try:
        call = read_call(dialects)
        # A policy may depend on the call: the limits the client was set to (call["limits"]).
        emit("adapter/hello", name=name, version=version,
             policy=policy(call) if callable(policy) else policy)
    except (ValueError, ProtocolMisuse) as e:
        note(f"{name}: {e}")
        return 2
    cancel = Cancel()
    cancel.watch()
    return 1 if _serve_call(call, cancel, main, classify_error, strict) else 0


def _run_session(name, version, policy, main, dialects, classify_error, strict, reset):
    """Session mode: a thread per call line, as it comes; the hello (the first call's policy)
    before the first call's events. A run's first call line it cannot use ends the process (2); a
    later one is skipped, saying why (the runner then reports that call's missing terminal). A reset line (with `reset` only) ends a run. 0
    when every call committed."""
    cancels, threads, failed = {}, [], []
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            note(f"faultline-adapter: ignoring stdin line {line[:200]!r}")
            continue
        index = message.get("call", 0) if isinstance(message, dict) else 0
        index = index if is_integer(index) else 0
        if isinstance(message, dict) and message.get("type") == "cancel":
            if index in cancels:
                cancels[index].fire()
            continue
        if isinstance(message, dict) and message.get("type") == "reset" and reset is not None:
            for thread in threads:
                thread.join()
            cancels, threads = {}, []
            reset()
            emit("adapter/reset")
            continue
        problems = call_problems(message, dialects)
        if problems:
            note(f"{name}: call {index}: {'; '.join(problems)}")
            if not _channel["hello"]:
                # A run whose first call line it cannot use (another dialect, say) is one it
                # cannot serve: exit as a process of one call would, rather than leave the runner
                # waiting.
                return 2
            continue
        if not _channel["hello"]:
            emit("adapter/hello", name=name, version=version, mode="session",
                 **({"reset": True} if reset is not None else {}),
                 policy=policy(message) if callable(policy) else policy)
        cancels[index] = Cancel()

        def serve(index=index, call=message, cancel=cancels[index]):
            _call_scope.set({"call": index, "terminal": None})
            if _serve_call(call, cancel, main, classify_error, strict):
                failed.append(index)

        threads.append(threading.Thread(target=serve, daemon=True))
        threads[-1].start()
    for thread in threads:
        thread.join()
    return 1 if failed else 0


def _serve_call(call, cancel, main, classify_error, strict):
    """One call: main(ctx) with the kit's wire and output, then its one terminal event. True when
    it failed."""
    wire = Wire(cancel)
    ctx = Context(call, cancel, wire, Output(call["dialect"], wire, strict))
    try:
        failed = _outcome(main, ctx, classify_error)
        if failed and ctx.output.chunks and failed["partial_output"] == "none":
            failed = {**failed, "partial_output": "uncommitted"}
        if failed:
            emit("response/failed", **wire.ids(), failure=failed)
        else:
            emit("response/committed", **wire.ids(), **ctx.output.committed())
    except ProtocolMisuse as e:
        note(f"adapter bug: {e}")
        if not _terminal_state("")["terminal"]:
            emit("response/failed", **wire.ids(), failure=failure("UNKNOWN", wire.phase(),
                                                                  "adapter bug"))
        return True
    except BrokenPipeError:
        return True
    return bool(failed)


def _outcome(main, ctx, classify_error):
    """The failure the call ended with, or None when the client delivered an answer."""
    try:
        main(ctx)
    except ProtocolMisuse:
        raise
    except Exception as e:  # noqa: BLE001 - whatever the client raised is classified
        if ctx.cancelled.is_set():
            return aborted(ctx.wire.phase())
        if isinstance(e, AdapterFailure):
            return e.failure
        seen = ctx.wire.last_failure()  # may read the rest of an error body, briefly
        if seen:
            seen["message"] += f" (the client raised {type(e).__name__}: {e})"
        else:
            known = classify_error(e, ctx) if classify_error else None
            seen = known or classify_exception(e, ctx.wire.phase())
        # A cancel that came while the failure was being read still decides.
        return aborted(ctx.wire.phase()) if ctx.cancelled.is_set() else seen
    if ctx.cancelled.is_set():
        return aborted(ctx.wire.phase(), "cancelled by the caller; the client ended quietly")
    return ctx.output.stream_failure
