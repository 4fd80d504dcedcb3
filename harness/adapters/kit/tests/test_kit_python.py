"""Tests of the Python adapter kit: classification against the cases both kits share (cases.json,
taken from the reference client's tests), event validation against the protocol's schema
(protocol_cases.json, shared with the runner and the Node kit), SSE framing, assembly, and whole
adapters (the example, a retrying fixture, the baseline) run as subprocesses against a loopback
server, every line they write checked by an independent validator (the jsonschema package, when
installed: validate_lines.py).
    python3 -m unittest discover -s harness/adapters/kit/tests -p 'test_*.py'
"""
import http.server
import json
import socket
import struct
import subprocess
import sys
import threading
import time
import unittest
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "python"))
sys.path.insert(0, str(HERE))
import faultline_adapter as kit  # noqa: E402
import validate_lines  # noqa: E402

CASES = json.loads((HERE / "cases.json").read_text(encoding="utf-8"))
LINES = json.loads((HERE / "protocol_cases.json").read_text(encoding="utf-8"))
ADAPTERS = HERE.parents[1]
JSONSCHEMA = validate_lines.validator()  # None without the jsonschema package


class ClassificationTest(unittest.TestCase):
    def test_http_errors_as_the_reference_client(self):
        for row in CASES["http"]:
            with self.subTest(row["name"]):
                got = kit.classify_http(row["status"], row["headers"], row["body"],
                                        now=CASES["now_s"])
                self.assertEqual(got["code"], row["code"])
                self.assertEqual(got["class"], kit.PROTOCOL["codes"][row["code"]][0])
                self.assertEqual(got["retryable"], row["retryable"])
                self.assertEqual(got["phase"], "response-headers")
                self.assertEqual(got["status"], row["status"])
                self.assertEqual(got.get("request_id"), row.get("request_id"))
                self.assertEqual(got.get("retry_after_ms"), row.get("retry_after_ms"))
                self.assertTrue(got["message"].startswith(f"HTTP {row['status']}"))

    def test_retry_hints_and_dates(self):
        for row in CASES["retry_hints"]:
            with self.subTest(row["name"]):
                got = kit.retry_hint(row["headers"], now=CASES["now_s"])
                self.assertEqual(got, None if row["ms"] is None else (row["ms"], row["source"]))
        for row in CASES["http_dates"]:
            with self.subTest(row["value"]):
                self.assertEqual(kit.parse_http_date(row["value"], CASES["now_s"]), row["epoch_s"])

    def test_stream_errors_like_their_http_twins(self):
        for row in CASES["stream_errors"]:
            with self.subTest(row["name"]):
                got = kit.classify_stream_error(row["error"], "stream", row.get("dialect"))
                self.assertEqual((got["code"], got["phase"]), (row["code"], "stream"))
                if "retryable" in row:
                    self.assertEqual(got["retryable"], row["retryable"])

    def test_go_durations_and_the_body_hint(self):
        for row in CASES["go_durations"]:
            with self.subTest(row["value"]):
                self.assertEqual(kit.parse_go_duration(row["value"]), row["ms"])
        google = json.dumps({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": [
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "30s"}]}})
        self.assertEqual(kit.body_retry_hint(google), (30000, "body"))
        self.assertEqual(kit.body_retry_hint(google.encode()), (30000, "body"))
        self.assertEqual(kit.body_retry_hint(json.loads(google)), (30000, "body"))
        for none in ("", "{}", "not json", '{"error":{"details":[{"retryDelay":"soon"}]}}'):
            with self.subTest(none):
                self.assertIsNone(kit.body_retry_hint(none))

    def test_network_errors(self):
        import socket
        import http.client as hc
        cases = [(ConnectionRefusedError(111, "refused"), "response-headers", "TRANSPORT",
                  "connect"),
                 (ConnectionResetError(104, "reset"), "stream", "TRANSPORT", "stream"),
                 (hc.IncompleteRead(b"x"), "stream", "TRANSPORT", "stream"),
                 (socket.timeout("timed out"), "response-headers", "TIMEOUT", "response-headers"),
                 (socket.gaierror(-2, "Name or service not known"), "response-headers",
                  "TRANSPORT", "connect")]
        for error, phase, code, want_phase in cases:
            with self.subTest(repr(error)):
                got = kit.classify_network_error(error, phase)
                self.assertEqual((got["code"], got["phase"]), (code, want_phase))


class EventTest(unittest.TestCase):
    def problems(self, event):
        # Its shape only: not its place in the call (no hello was written in this process).
        return [p for p in kit.event_problems(event) if not p.startswith("adapter/hello ")]

    def test_valid_and_invalid_events(self):
        fail = {"code": "RATE_LIMIT", "class": "rate-limit", "phase": "response-headers",
                "retryable": True, "partial_output": "none", "message": "HTTP 429"}
        self.assertEqual(self.problems({"type": "response/start", "response_id": "a",
                                        "attempt": 1}), [])
        self.assertEqual(self.problems({"type": "response/failed", "failure": fail}), [])
        # at_ms, the subject's own time of a line, is optional on every event.
        self.assertEqual(self.problems({"type": "response/start", "response_id": "a",
                                        "attempt": 1, "at_ms": 12.5}), [])
        self.assertEqual(self.problems({"type": "response/failed", "failure": fail,
                                        "at_ms": 0}), [])
        bad = [{"type": "response/start", "attempt": 1},
               {"type": "response/start", "response_id": "a", "attempt": 1, "at_ms": -1},
               {"type": "response/start", "response_id": "a", "attempt": 1, "at_ms": "5"},
               {"type": "response/failed", "failure": {**fail, "at_ms": 1}},
               {"type": "response/start", "response_id": "a", "attempt": True},
               {"type": "assistant/chunk", "response_id": "a", "commitment": "uncommitted"},
               {"type": "response/interrupted", "response_id": "a",
                "failure": {**fail, "class": "nope"}},
               {"type": "response/interrupted", "response_id": "a", "failure": fail,
                "delay_source": "backoff"},
               {"type": "response/committed", "text": 5},
               {"type": "response/committed", "text": "", "surprise": 1},
               {"type": "response/done"}]
        for event in bad:
            with self.subTest(json.dumps(event)):
                self.assertNotEqual(self.problems(event), [])


    def test_shared_protocol_cases_with_the_runners_messages(self):
        for line in LINES["valid"]:
            with self.subTest(json.dumps(line)):
                self.assertEqual(self.problems(line), [])
        for case in LINES["invalid"]:
            with self.subTest(json.dumps(case["line"])):
                self.assertEqual(self.problems(case["line"]), [case["message"]])


@unittest.skipIf(JSONSCHEMA is None, validate_lines.MISSING)
class JsonschemaTest(unittest.TestCase):
    """The schema under a validator nobody here wrote: what it accepts and refuses is what the
    runner and the kits accept and refuse (the shared cases)."""

    def test_shared_protocol_cases(self):
        for line in LINES["valid"]:
            with self.subTest(json.dumps(line)):
                self.assertEqual(validate_lines.problems(JSONSCHEMA, [line]), [])
        for case in LINES["invalid"]:
            with self.subTest(json.dumps(case["line"])):
                errors = list(JSONSCHEMA.iter_errors(case["line"]))
                self.assertTrue(errors)
                self.assertTrue(any(self.names(e, case["field"]) for e in errors),
                                [e.message for e in errors])

    @staticmethod
    def names(error, field):
        """Whether a jsonschema error is about `field`: its path or message, or for the
        keywords that relate fields (oneOf, dependentRequired) the fields they relate."""
        related = json.dumps(error.validator_value) if error.validator in (
            "oneOf", "dependentRequired") else ""
        return field in ".".join(map(str, error.absolute_path)) or field in error.message or \
            f'"{field}"' in related


class SseAndOutputTest(unittest.TestCase):
    def test_framing(self):
        parser = kit.SseParser()
        events = []
        for part in (b'\xef\xbb\xbfdata: {"a"', b":1}\r", b"\n\r\n: comment\n",
                     b"event: error\ndata: x\ndata: y\n\n", b"data: tail"):
            events += parser.feed(part)
        self.assertEqual(events, [("message", '{"a":1}'), ("error", "x\ny")])
        parser = kit.SseParser()  # CR-only framing whose last event ends the body
        events = [e for part in (b"data: a\r", b"\r", b"data: b\r\r") for e in parser.feed(part)]
        self.assertEqual(events, [("message", "a"), ("message", "b")])

    def test_check_decides_like_the_reference(self):
        out = kit.Output("anthropic-messages", strict=True)
        out.event({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}})
        self.assertEqual(out.check()["code"], "STREAM_TRUNCATED")
        out.event({"type": "message_stop"})
        self.assertEqual(out.check()["code"], "EMPTY_RESPONSE")
        failed = kit.Output("anthropic-messages")
        failed.event({"type": "error", "error": {"type": "overloaded_error", "message": "x"}})
        self.assertEqual(failed.check()["code"], "OVERLOADED")
        with self.assertRaises(kit.AdapterFailure):
            kit.Output("openai-chat", strict=True).whole({"id": "x"})
        lenient = kit.Output("openai-chat")
        lenient.whole({"id": "x"})
        self.assertEqual(lenient.committed()["text"], "")


    def test_strict_rejects_what_the_reference_rejects(self):
        for case in CASES["wrong_shapes"]:
            with self.subTest(json.dumps(case)):
                strict = kit.Output(case["dialect"], strict=True)
                *first, last = case["events"]
                for event in first:
                    strict.event(event)
                with self.assertRaises(kit.AdapterFailure) as caught:
                    strict.event(last)
                self.assertEqual(caught.exception.failure["code"], "MALFORMED_RESPONSE")
                lenient = kit.Output(case["dialect"])
                self.assertEqual([lenient.event(e) for e in case["events"]],
                                 [False] * len(case["events"]))


# ---- gemini ------------------------------------------------------------------------------------

def gemini_response(parts, finish=None, usage=None):
    candidate = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "usageMetadata": usage or {"promptTokenCount": 9},
            "modelVersion": "gemini-2.5-flash", "responseId": "r1"}


def google_error(code, status_name, message, details=None):
    error = {"code": code, "message": message, "status": status_name}
    if details:
        error["details"] = details
    return {"error": error}


class GeminiTest(unittest.TestCase):
    def test_the_model_and_method_in_the_path_the_rest_in_the_body(self):
        contents = [{"role": "user", "parts": [{"text": "hi"}]}]
        call = {"dialect": "gemini", "base_url": "http://127.0.0.1:9/s/run/x/", "api_key": "k",
                "request": {"model": "gemini-2.5-flash", "contents": contents, "stream": True}}
        self.assertEqual(kit.endpoint(call), "http://127.0.0.1:9/s/run/x/v1beta/models/"
                         "gemini-2.5-flash:streamGenerateContent?alt=sse")
        unstreamed = {**call, "base_url": "http://127.0.0.1:9/v1beta",
                      "request": {**call["request"], "stream": False}}
        self.assertEqual(kit.endpoint(unstreamed),
                         "http://127.0.0.1:9/v1beta/models/gemini-2.5-flash:generateContent",
                         "a base URL ending in /v1beta does not repeat it")
        self.assertEqual(json.loads(kit.request_body(call)), {"contents": contents})
        self.assertEqual(kit.request_headers(call),
                         {"Content-Type": "application/json", "x-goog-api-key": "k"})
        chat = {**call, "dialect": "openai-chat"}  # the other dialects send the request as is
        self.assertEqual(kit.endpoint(chat), "http://127.0.0.1:9/s/run/x/v1/chat/completions")
        self.assertEqual(json.loads(kit.request_body(chat)), call["request"])

    def test_whole_answers_reasoning_usage_refusals_cut_streams_error_chunks(self):
        # No wire and no hello here: only what writes no assistant/chunk (a whole answer, thoughts).
        whole = kit.Output("gemini", strict=True)
        whole.whole(gemini_response(
            [{"text": "hm", "thought": True}, {"text": "Hello"},
             {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}],
            "STOP", {"promptTokenCount": 9, "candidatesTokenCount": 3}))
        self.assertIsNone(whole.check())
        self.assertEqual(whole.committed(), {
            "text": "Hello", "reasoning": "hm", "finish_reason": "STOP",
            "tool_calls": [{"id": "", "name": "get_weather", "arguments": '{"city":"Paris"}'}],
            "usage": {"input_tokens": 9, "output_tokens": 3}})
        stream = kit.Output("gemini", strict=True)
        self.assertFalse(stream.event(gemini_response([{"text": "hm", "thought": True}])))
        self.assertEqual(stream.check()["code"], "STREAM_TRUNCATED")
        self.assertIn("without a chunk with finishReason", stream.check()["message"])
        self.assertTrue(stream.event(gemini_response(
            [{"text": ""}], "STOP", {"promptTokenCount": 9, "candidatesTokenCount": 0})))
        self.assertEqual(stream.check()["code"], "EMPTY_RESPONSE")
        self.assertEqual((stream.reasoning, stream.committed()["usage"]),
                         ("hm", {"input_tokens": 9, "output_tokens": 0}))
        safety = kit.Output("gemini", strict=True)
        self.assertTrue(safety.event(gemini_response([], "SAFETY")))
        self.assertEqual(safety.check()["code"], "CONTENT_FILTER")
        blocked = kit.Output("gemini", strict=True)
        self.assertTrue(blocked.event({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}}))
        self.assertEqual((blocked.check()["code"], blocked.finish),
                         ("CONTENT_FILTER", "PROHIBITED_CONTENT"))
        failed = kit.Output("gemini", strict=True)
        data = json.dumps(google_error(503, "UNAVAILABLE",
                                       "The model is overloaded. Please try again later."))
        self.assertTrue(failed.event(kit.parse_event("message", data)))
        got = failed.check()
        self.assertEqual((got["code"], got["phase"], got["retryable"]),
                         ("OVERLOADED", "stream", True))


# ---- ollama ------------------------------------------------------------------------------------

def ollama_line(message=None, **extra):
    return {"model": "llama3.2", "created_at": "2026-12-05T11:00:00.000000000Z",
            "message": {"role": "assistant", "content": "", **(message or {})}, "done": False,
            **extra}


def ollama_done(**extra):
    return ollama_line(**{"done": True, "done_reason": "stop", "total_duration": 4883583458,
                          "prompt_eval_count": 26, "eval_count": 3, **extra})


def ndjson(*objs):
    return "".join(json.dumps(o) + "\n" for o in objs)


class OllamaTest(unittest.TestCase):
    def test_api_chat_the_request_as_is_a_bearer_key_accept_by_the_stream(self):
        messages = [{"role": "user", "content": "hi"}]
        request = {"model": "llama3.2", "messages": messages, "stream": True,
                   "options": {"num_predict": 64, "stop": ["END"]}}
        call = {"dialect": "ollama", "base_url": "http://127.0.0.1:9/s/run/x/", "api_key": "k",
                "request": request}
        self.assertEqual(kit.endpoint(call), "http://127.0.0.1:9/s/run/x/api/chat")
        self.assertEqual(json.loads(kit.request_body(call)), request)
        self.assertEqual(kit.request_headers(call), {"Content-Type": "application/json",
                                                     "Authorization": "Bearer k",
                                                     "Accept": "application/x-ndjson"})
        whole = {**call, "request": {**request, "stream": False}}
        self.assertEqual(kit.request_headers(whole)["Accept"], "application/json")
        self.assertEqual([kit.streams(call), kit.streams(whole),
                          kit.streams({**call, "request": {"messages": messages}})],
                         [True, False, True], 'Ollama streams unless told "stream": false')
        self.assertFalse(kit.streams({"dialect": "openai-chat", "request": {}}))
        self.assertIsNone(kit.check_content_type(call, "application/x-ndjson; charset=utf-8"))
        self.assertIsNone(kit.check_content_type(call, None), "no content-type, no verdict")
        wrong = kit.check_content_type(call, "text/event-stream")
        self.assertEqual((wrong["code"], wrong["phase"], wrong["retryable"]),
                         ("MALFORMED_RESPONSE", "response-headers", True))
        self.assertIsNone(kit.check_content_type(whole, "application/json; charset=utf-8"))
        self.assertEqual(kit.check_content_type(whole, "application/x-ndjson")["code"],
                         "MALFORMED_RESPONSE")
        chat = {"dialect": "openai-chat", "request": {"stream": True}}
        self.assertIsNone(kit.check_content_type(chat, "text/event-stream"))
        self.assertEqual(kit.check_content_type(chat, "application/x-ndjson")["code"],
                         "MALFORMED_RESPONSE")

    def test_ndjson_framing(self):
        parser = kit.NdjsonParser()
        lines = []
        for part in (b'{"a"', b":1}\r", b'\n\n  \r\n{"b":"\xc3', b'\xa9"}\n{"c":'):
            lines += parser.feed(part)
        self.assertEqual(lines, [("message", '{"a":1}'), ("message", '{"b":"\u00e9"}')])
        self.assertEqual(parser.finish(), 5, "the cut line's bytes")

        class Body:
            def __init__(self, *parts):
                self.parts = list(parts)

            def read1(self, _size):
                return self.parts.pop(0) if self.parts else b""

        self.assertEqual(list(kit.stream_events("ollama", Body(b'{"x":1}\n{"y"'))),
                         [("message", '{"x":1}')])
        with self.assertRaises(kit.AdapterFailure) as caught:
            kit.parse_event("message", "[DONE]", "ollama")  # nothing in NDJSON
        self.assertEqual(caught.exception.failure["code"], "MALFORMED_RESPONSE")
        self.assertIsNone(kit.parse_event("message", "[DONE]"))

    def test_whole_answers_thinking_the_done_line_cut_streams_error_lines(self):
        # No wire and no hello here: only what writes no assistant/chunk (a whole answer,
        # thinking).
        whole = kit.Output("ollama", strict=True)
        whole.whole(ollama_done(message={
            "role": "assistant", "content": "Hello", "thinking": "hm",
            "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]}))
        self.assertIsNone(whole.check())
        self.assertEqual(whole.committed(), {
            "text": "Hello", "reasoning": "hm", "finish_reason": "stop",
            "tool_calls": [{"id": "", "name": "get_weather", "arguments": '{"city":"Paris"}'}],
            "usage": {"input_tokens": 26, "output_tokens": 3}})
        stream = kit.Output("ollama", strict=True)
        self.assertFalse(stream.event(ollama_line({"thinking": "hm"})))
        self.assertEqual(stream.check()["code"], "STREAM_TRUNCATED")
        self.assertIn('without a line with "done": true', stream.check()["message"])
        done = ollama_done()
        del done["done_reason"]
        self.assertTrue(stream.event(done))
        self.assertEqual((stream.check()["code"], stream.finish, stream.reasoning, stream.usage),
                         ("EMPTY_RESPONSE", "stop", "hm",
                          {"input_tokens": 26, "output_tokens": 3}))
        long = kit.Output("ollama", strict=True)
        self.assertTrue(long.event(ollama_done(done_reason="length")))
        self.assertEqual(long.finish, "length")
        for error, code in (
                ({"error": "an error was encountered while running the model: unexpected EOF"},
                 "SERVER"),
                ({"error": "the model is overloaded"}, "SERVER"),  # no kind: SERVER, whatever
                ({"error": {"type": "rate_limit_error", "message": "slow down"}}, "RATE_LIMIT")):
            with self.subTest(error):
                failed = kit.Output("ollama", strict=True)
                self.assertTrue(failed.event(kit.parse_event("message", json.dumps(error),
                                                             "ollama")))
                self.assertEqual((failed.check()["code"], failed.check()["phase"]),
                                 (code, "stream"))
        body = kit.Output("ollama", strict=True)  # a 200 body that is an error
        body.whole({"error": "unexpected server error"})
        self.assertEqual(body.check()["code"], "SERVER")
        with self.assertRaises(kit.AdapterFailure) as caught:
            kit.Output("ollama", strict=True).whole(ollama_line())
        self.assertEqual(caught.exception.failure["code"], "MALFORMED_RESPONSE",
                         "a whole answer must be done")


# ---- bedrock-converse --------------------------------------------------------------------------
# The tests' own event stream encoder, written apart from the kit's parser, its CRC zlib's.

def encode_message(headers, payload, total=None, headers_length=None):
    """One message: string headers (value type 7), the payload (a dict is its JSON); `total` and
    `headers_length` bend what the prelude says while the CRCs stay right."""
    block = b"".join(bytes([len(name.encode())]) + name.encode() + b"\x07" +
                     struct.pack(">H", len(value.encode())) + value.encode()
                     for name, value in headers.items())
    body = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
    prelude = struct.pack(">II", 16 + len(block) + len(body) if total is None else total,
                          len(block) if headers_length is None else headers_length)
    head = prelude + struct.pack(">I", zlib.crc32(prelude)) + block + body
    return head + struct.pack(">I", zlib.crc32(head))


PADDING = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
BEDROCK_MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"


def bedrock_event(name, payload, padding=7):
    """A ConverseStream event as Bedrock sends it, its payload padded with "p" as it does."""
    return encode_message({":event-type": name, ":content-type": "application/json",
                           ":message-type": "event"}, {**payload, "p": PADDING[:padding]})


def bedrock_exception(kind, message):
    return encode_message({":exception-type": kind, ":content-type": "application/json",
                           ":message-type": "exception"}, {"message": message})


def text_delta(text, index=0):
    return bedrock_event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": text}})


def bedrock_stream(text=("Hel", "lo"), reasoning=None, tool=None, stop="end_turn"):
    """A whole ConverseStream body: text pieces, reasoning, a tool call whose arguments come in
    pieces, messageStop (unless `stop` is None: a stream that never says it ended), metadata."""
    parts = [bedrock_event("messageStart", {"role": "assistant"})]
    if reasoning:
        parts.append(bedrock_event("contentBlockDelta", {
            "contentBlockIndex": 0, "delta": {"reasoningContent": {"text": reasoning}}}))
    parts += [text_delta(t) for t in text]
    parts.append(bedrock_event("contentBlockStop", {"contentBlockIndex": 0}))
    if tool:
        parts.append(bedrock_event("contentBlockStart", {"contentBlockIndex": 1, "start": {
            "toolUse": {"toolUseId": tool["id"], "name": tool["name"]}}}))
        parts += [bedrock_event("contentBlockDelta", {"contentBlockIndex": 1,
                                                      "delta": {"toolUse": {"input": piece}}})
                  for piece in tool["pieces"]]
        parts.append(bedrock_event("contentBlockStop", {"contentBlockIndex": 1}))
    if stop:
        parts += [bedrock_event("messageStop", {"stopReason": stop}),
                  bedrock_event("metadata", {"usage": {"inputTokens": 12, "outputTokens": 5,
                                                       "totalTokens": 17},
                                             "metrics": {"latencyMs": 312}})]
    return b"".join(parts)


def flipped(data, at):
    """`data` with one bit of byte `at` flipped."""
    copy = bytearray(data)
    copy[at] ^= 0x01
    return bytes(copy)


def plain_headers(headers):
    """Header values as the cases write them: strings and bools as they are, bytes as {hex}."""
    return {k: {"hex": v.hex()} if isinstance(v, bytes) else v for k, v in headers.items()}


TOOL = {"id": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "name": "get_weather",
        "pieces": ['{"city":', '"Paris"}']}


class BedrockFramingTest(unittest.TestCase):
    def assert_malformed(self, caught, why):
        failure = caught.exception.failure
        self.assertEqual((failure["code"], failure["phase"]), ("MALFORMED_RESPONSE", "stream"))
        self.assertIn(why, failure["message"])

    def test_aws_published_vectors_every_header_type(self):
        for vector in CASES["eventstream_vectors"]:
            with self.subTest(vector["name"]):
                parser = kit.EventStreamParser()
                [(headers, payload)] = parser.messages(bytes.fromhex(vector["hex"]))
                self.assertEqual(plain_headers(headers), vector["headers"])
                self.assertEqual(payload.decode(), vector["payload"])
                self.assertEqual(parser.finish(), 0)

    def test_a_message_split_across_reads_at_every_byte_offset(self):
        stream = bedrock_stream(reasoning="hm", tool=TOOL)
        whole = list(kit.EventStreamParser().feed(stream))
        self.assertEqual(len(whole), 11)
        self.assertEqual(whole[1], ("contentBlockDelta", json.dumps({
            "contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "hm"}},
            "p": "abcdefg"})))
        for cut in range(1, len(stream)):
            parser = kit.EventStreamParser()
            events = list(parser.feed(stream[:cut])) + list(parser.feed(stream[cut:]))
            self.assertEqual(events, whole, f"cut at {cut}")
            self.assertEqual(parser.finish(), 0, f"cut at {cut}")
        parser = kit.EventStreamParser()  # a byte at a time
        self.assertEqual([e for i in range(len(stream)) for e in parser.feed(stream[i:i + 1])],
                         whole)

    def test_a_wrong_crc_a_short_or_overlong_length_is_a_malformed_stream(self):
        first, second = text_delta("Hel"), text_delta("lo")
        cases = [("the prelude CRC", flipped(second, 9)),
                 ("the prelude CRC", flipped(second, 3)),  # the total length, which it covers
                 ("the message CRC", flipped(second, 40)),  # a header byte
                 ("the message CRC", flipped(second, len(second) - 6)),  # the payload
                 ("the message CRC", flipped(second, len(second) - 1)),  # that CRC itself
                 ("16 at least", encode_message({}, "", total=15)),
                 ("bytes of headers", encode_message({":event-type": "x"}, "{}",
                                                     headers_length=200)),
                 ("runs past the headers", encode_message({":event-type": "messageStart"}, "{}",
                                                          headers_length=10))]
        for why, bad in cases:
            with self.subTest(why=why, bad=bad.hex()):
                parser = kit.EventStreamParser()
                # The whole message before it comes first, as in a read of its own; then the raise.
                self.assertEqual([e for e, _ in parser.feed(first + bad)], ["contentBlockDelta"])
                with self.assertRaises(kit.AdapterFailure) as caught:
                    list(parser.feed(text_delta("!")))
                self.assert_malformed(caught, why)
                with self.assertRaises(kit.AdapterFailure) as caught:
                    parser.finish()
                self.assert_malformed(caught, why)
                with self.assertRaises(kit.AdapterFailure) as caught:
                    list(kit.EventStreamParser().feed(bad))
                self.assert_malformed(caught, why)
        # A header of a value type the encoding does not have (10), the CRCs right.
        header = b"\x01x\x0a"
        prelude = struct.pack(">II", 16 + len(header), len(header))
        head = prelude + struct.pack(">I", zlib.crc32(prelude)) + header
        with self.assertRaises(kit.AdapterFailure) as caught:
            kit.EventStreamParser().messages(head + struct.pack(">I", zlib.crc32(head)))
        self.assert_malformed(caught, "unknown value type 10")
        with self.assertRaises(kit.AdapterFailure) as caught:
            list(kit.EventStreamParser().feed(encode_message({":message-type": "event"}, "{}")))
        self.assert_malformed(caught, "without :event-type")

    def test_a_body_cut_mid_message_leaves_bytes_that_are_no_message(self):
        stream = bedrock_stream()
        parser = kit.EventStreamParser()
        self.assertEqual([e for e, _ in parser.feed(stream[:-5])],
                         ["messageStart", "contentBlockDelta", "contentBlockDelta",
                          "contentBlockStop", "messageStop"])
        metadata = bedrock_event("metadata", {"usage": {"inputTokens": 12, "outputTokens": 5,
                                                        "totalTokens": 17},
                                              "metrics": {"latencyMs": 312}})
        self.assertEqual(parser.finish(), len(metadata) - 5, "the cut message's bytes")

    def test_exceptions_are_error_events_in_the_aws_sdks_union_form(self):
        events = list(kit.EventStreamParser().feed(
            bedrock_exception("throttlingException",
                              "Too many requests, please wait before trying again.") +
            encode_message({":message-type": "exception",
                            ":exception-type": "modelStreamErrorException"},
                           "upstream said no") +  # not JSON: its text is the message
            encode_message({":message-type": "error", ":error-code": "InternalFailure",
                            ":error-message": "boom"}, "") +
            encode_message({":message-type": "initial-response"}, "{}")))  # not ours: skipped
        self.assertEqual(events, [
            ("error", json.dumps({"throttlingException": {
                "message": "Too many requests, please wait before trying again."}})),
            ("error", json.dumps({"modelStreamErrorException": {"message": "upstream said no"}})),
            ("error", json.dumps({"error": {"type": "InternalFailure", "message": "boom"}}))])
        parsed = [kit.parse_event(e, d, "bedrock-converse") for e, d in events]
        self.assertTrue(all(kit._is_error_event(o, "bedrock-converse") for o in parsed))
        self.assertEqual([kit.classify_stream_error(o, "stream", "bedrock-converse")["code"]
                          for o in parsed], ["RATE_LIMIT", "SERVER", "UNKNOWN"])


class BedrockTest(unittest.TestCase):
    def test_the_model_and_method_in_the_path_a_bearer_key_the_streams_accept(self):
        messages = [{"role": "user", "content": [{"text": "hi"}]}]
        request = {"model": BEDROCK_MODEL, "messages": messages,
                   "inferenceConfig": {"maxTokens": 64}, "system": [{"text": "Be brief."}],
                   "stream": True}
        call = {"dialect": "bedrock-converse", "base_url": "http://127.0.0.1:9/s/run/x/",
                "api_key": "k", "request": request}
        self.assertEqual(kit.endpoint(call), "http://127.0.0.1:9/s/run/x/model/"
                         "anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream")
        whole = {**call, "request": {**request, "stream": False}}
        self.assertEqual(kit.endpoint(whole), "http://127.0.0.1:9/s/run/x/model/"
                         "anthropic.claude-3-5-haiku-20241022-v1%3A0/converse")
        self.assertEqual(kit.endpoint({**call, "request": {"messages": messages}}),
                         kit.endpoint(call), "the default model, streamed by default")
        self.assertEqual(
            kit.endpoint({**call, "request": {"messages": messages, "model": (
                "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.model(1)!*'")}}),
            "http://127.0.0.1:9/s/run/x/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012"
            "%3Ainference-profile%2Fus.model%281%29%21%2A%27/converse-stream",
            "an ARN stays one segment, encoded as the AWS SDKs do")
        self.assertEqual(json.loads(kit.request_body(call)), {
            "messages": messages, "inferenceConfig": {"maxTokens": 64},
            "system": [{"text": "Be brief."}]})
        self.assertEqual(kit.request_headers(call), {
            "Content-Type": "application/json", "Authorization": "Bearer k",
            "Accept": "application/vnd.amazon.eventstream"})
        self.assertEqual(kit.request_headers(whole)["Accept"], "application/json")
        self.assertEqual((kit.streams(call), kit.streams(whole),
                          kit.streams({**call, "request": {"messages": messages}})),
                         (True, False, True))
        self.assertIsNone(kit.check_content_type(call, "application/vnd.amazon.eventstream"))
        self.assertEqual(kit.check_content_type(call, "text/event-stream")["code"],
                         "MALFORMED_RESPONSE")
        self.assertIsNone(kit.check_content_type(whole, "application/json"))
        # The other dialects' requests are as they were: no Accept for an SSE dialect.
        self.assertNotIn("Accept", kit.request_headers({**call, "dialect": "openai-chat"}))

    def test_union_events_whole_answers_usage_after_the_terminator_cut_streams_exceptions(self):
        self.assertEqual(kit.parse_event("messageStop", '{"stopReason":"end_turn","p":"abc"}',
                                         "bedrock-converse"),
                         {"messageStop": {"stopReason": "end_turn", "p": "abc"}})
        for data in ('{"stopReason":', "[1]", '"end_turn"', "[DONE]"):
            with self.subTest(data), self.assertRaises(kit.AdapterFailure) as caught:
                kit.parse_event("messageStop", data, "bedrock-converse")
            self.assertEqual(caught.exception.failure["code"], "MALFORMED_RESPONSE")
        # No wire and no hello here: only what writes no assistant/chunk (a whole answer,
        # reasoning).
        whole = kit.Output("bedrock-converse", strict=True)
        whole.whole({"output": {"message": {"role": "assistant", "content": [
            {"reasoningContent": {"reasoningText": {"text": "hm", "signature": "sig"}}},
            {"text": "Hello"},
            {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather",
                         "input": {"city": "Paris"}}}]}},
            "stopReason": "tool_use", "usage": {"inputTokens": 12, "outputTokens": 5,
                                                "totalTokens": 17},
            "metrics": {"latencyMs": 312}})
        self.assertIsNone(whole.check())
        self.assertEqual(whole.committed(), {
            "text": "Hello", "reasoning": "hm", "finish_reason": "tool_use",
            "tool_calls": [{"id": "tooluse_1", "name": "get_weather",
                            "arguments": '{"city":"Paris"}'}],
            "usage": {"input_tokens": 12, "output_tokens": 5}})
        with self.assertRaises(kit.AdapterFailure):
            kit.Output("bedrock-converse", strict=True).whole({"output": {}})
        stream = kit.Output("bedrock-converse", strict=True)

        def feed(name, payload):
            return stream.event({name: payload})

        self.assertFalse(feed("messageStart", {"role": "assistant"}))
        self.assertFalse(feed("contentBlockDelta", {
            "contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "hm"}}}))
        self.assertFalse(feed("contentBlockStart", {"contentBlockIndex": 1, "start": {
            "toolUse": {"toolUseId": "tooluse_1", "name": "get_weather"}}}))
        self.assertFalse(feed("someFutureEvent", {"whatever": 1}), "unknown events are ignored")
        self.assertEqual(stream.check()["code"], "STREAM_TRUNCATED", "no messageStop yet")
        self.assertIn("without messageStop", stream.check()["message"])
        self.assertTrue(feed("messageStop", {"stopReason": "tool_use"}), "the terminator")
        feed("metadata", {"usage": {"inputTokens": 12, "outputTokens": 5},
                          "metrics": {"latencyMs": 312}})
        self.assertEqual((stream.check(), stream.finish, stream.reasoning, stream.usage),
                         (None, "tool_use", "hm", {"input_tokens": 12, "output_tokens": 5}))
        self.assertEqual(stream.committed()["tool_calls"],
                         [{"id": "tooluse_1", "name": "get_weather", "arguments": ""}])
        empty = kit.Output("bedrock-converse", strict=True)
        empty.event({"messageStop": {"stopReason": "end_turn"}})
        self.assertEqual(empty.check()["code"], "EMPTY_RESPONSE")
        for kind, message, code in (
                ("throttlingException", "Too many requests, please wait before trying again.",
                 "RATE_LIMIT"),
                ("serviceUnavailableException",
                 "Too many connections, please wait before trying again.", "OVERLOADED"),
                ("validationException", "Input is too long for requested model.",
                 "CONTEXT_WINDOW_EXCEEDED")):
            with self.subTest(kind):
                failed = kit.Output("bedrock-converse", strict=True)
                data = json.dumps({kind: {"message": message}})
                self.assertTrue(failed.event(kit.parse_event("error", data, "bedrock-converse")))
                self.assertEqual((failed.check()["code"], failed.check()["phase"]),
                                 (code, "stream"))

    def test_the_example_and_the_baseline_speak_bedrock_converse(self):
        def binary(data, content_type="application/vnd.amazon.eventstream"):
            def answer(handler):
                handler.send_response(200)
                handler.send_header("content-type", content_type)
                handler.send_header("x-amzn-requestid", "7c1f0d2e-5b8a-4a51-9e63-2f0c6d1a9b44")
                handler.send_header("content-length", str(len(data)))
                handler.end_headers()
                handler.wfile.write(data)
            return answer

        def whole(handler):  # "stream": false: /converse, one JSON answer
            body = json.dumps({"output": {"message": {"role": "assistant", "content": [
                {"reasoningContent": {"reasoningText": {"text": "hm"}}}, {"text": "Hello"},
                {"toolUse": {"toolUseId": TOOL["id"], "name": TOOL["name"],
                             "input": {"city": "Paris"}}}]}},
                "stopReason": "tool_use", "usage": {"inputTokens": 12, "outputTokens": 5,
                                                    "totalTokens": 17},
                "metrics": {"latencyMs": 312}}).encode()
            handler.send_response(200)
            handler.send_header("content-type", "application/json")
            handler.send_header("content-length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body)

        good = bedrock_stream(reasoning="hm", tool=TOOL, stop="tool_use")
        head = bedrock_event("messageStart", {"role": "assistant"}) + text_delta("Hel")
        exceptions = [row for row in CASES["stream_errors"]
                      if row.get("dialect") == "bedrock-converse" and "error" not in row["error"]]
        server = Server([
            binary(good),
            binary(bedrock_stream(stop=None)),  # ends cleanly without messageStop
            binary(bedrock_stream()[:len(head) + 7]),  # cut in the middle of a message
            *[binary(head + bedrock_exception(kind, body["message"]))
              for kind, body in (next(iter(row["error"].items())) for row in exceptions)],
            status(429, {"message": "Too many requests, please wait before trying again."}, {
                "x-amzn-ErrorType": "ThrottlingException:http://internal.amazon.com/coral/"
                                    "com.amazon.bedrock/",
                "x-amzn-RequestId": "0b4b0a4e-9a53-4d44-8a3b-6a1d5c2e7f10", "retry-after": "2"}),
            binary(head + flipped(text_delta("lo"), 9)),  # the prelude CRC
            binary(head + flipped(text_delta("lo"), 30)),  # the message CRC
            binary(good, "text/event-stream"),  # not the framing asked for
            whole,
            # The baseline: a good stream, one without messageStop, a bad CRC, an exception.
            binary(good), binary(bedrock_stream(stop=None)),
            binary(head + flipped(text_delta("lo"), 30)),
            binary(head + bedrock_exception("throttlingException", "Too many requests")),
        ])
        messages = [{"role": "user", "content": [{"text": "hi"}]}]
        bedrock = {"dialect": "bedrock-converse", "request": {
            "model": BEDROCK_MODEL, "messages": messages, "inferenceConfig": {"maxTokens": 64},
            "stream": True}}

        def last(command=EXAMPLE, extra=bedrock):
            return run(command, server.url, extra=extra)[0]

        try:
            events = last()
            self.assertEqual(types(events), [
                "adapter/hello", "response/start", "assistant/chunk", "assistant/chunk",
                "assistant/chunk", "assistant/chunk", "response/committed"])
            self.assertEqual([e.get("text") or e.get("tool_call") for e in events[2:6]], [
                "Hel", "lo",
                {"index": 1, "id": TOOL["id"], "name": "get_weather", "arguments": '{"city":'},
                {"index": 1, "id": TOOL["id"], "name": "get_weather", "arguments": '"Paris"}'}])
            committed = events[-1]
            self.assertEqual((committed["text"], committed["reasoning"],
                              committed["finish_reason"], committed["tool_calls"],
                              committed["usage"]),
                             ("Hello", "hm", "tool_use",
                              [{"id": TOOL["id"], "name": "get_weather",
                                "arguments": '{"city":"Paris"}'}],
                              {"input_tokens": None, "output_tokens": None}),
                             "the usage comes after messageStop, where the example stops")
            path, headers, body = server.requests[0]
            self.assertEqual((path, headers.get("authorization"), headers.get("accept")), (
                "/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream",
                "Bearer sk-test", "application/vnd.amazon.eventstream"))
            self.assertEqual(json.loads(body), {"messages": messages,
                                                "inferenceConfig": {"maxTokens": 64}})
            for why in ("without messageStop", "cut mid-message"):
                failure = last()[-1]["failure"]
                self.assertEqual((failure["code"], failure["phase"], failure["partial_output"]),
                                 ("STREAM_TRUNCATED", "stream", "uncommitted"), why)
                self.assertIn("without messageStop", failure["message"], why)
            for row in exceptions:
                failure = last()[-1]["failure"]
                self.assertEqual((failure["code"], failure["phase"], failure["retryable"],
                                  failure["partial_output"]),
                                 (row["code"], "stream", row["retryable"], "uncommitted"),
                                 row["name"])
                self.assertIn(f"in-stream error ({next(iter(row['error']))})", failure["message"])
            failure = last()[-1]["failure"]
            self.assertEqual((failure["code"], failure["status"], failure["retryable"],
                              failure["retry_after_ms"], failure["request_id"]),
                             ("RATE_LIMIT", 429, True, 2000,
                              "0b4b0a4e-9a53-4d44-8a3b-6a1d5c2e7f10"))
            for why in ("the prelude CRC", "the message CRC"):
                failure = last()[-1]["failure"]
                self.assertEqual((failure["code"], failure["phase"], failure["partial_output"]),
                                 ("MALFORMED_RESPONSE", "stream", "uncommitted"), why)
                self.assertIn(why, failure["message"])
            failure = last()[-1]["failure"]
            self.assertEqual((failure["code"], failure["phase"], failure["status"]),
                             ("MALFORMED_RESPONSE", "response-headers", 200))
            events = last(extra={**bedrock, "request": {**bedrock["request"], "stream": False}})
            path, headers, _ = server.requests[-1]
            self.assertEqual((path, headers.get("accept")), (
                "/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse", "application/json"))
            self.assertEqual({k: v for k, v in events[-1].items() if k != "received"}, {
                "type": "response/committed", "response_id": "attempt-1", "attempt": 1,
                "text": "Hello", "tool_calls": [{"id": TOOL["id"], "name": "get_weather",
                                                 "arguments": '{"city":"Paris"}'}],
                "finish_reason": "tool_use", "usage": {"input_tokens": 12, "output_tokens": 5},
                "reasoning": "hm"})
            # The baseline reads the event stream too; a stream without messageStop is its
            # answer, naively; a bad CRC and an exception fail it.
            events = last(BASELINE)
            self.assertEqual((events[-1]["type"], events[-1]["text"]),
                             ("response/committed", "Hello"))
            events = last(BASELINE)
            self.assertEqual((events[-1]["type"], events[-1]["text"]),
                             ("response/committed", "Hello"))
            failure = last(BASELINE)[-1]["failure"]
            self.assertEqual((failure["code"], failure["phase"]), ("MALFORMED_RESPONSE", "stream"))
            failure = last(BASELINE)[-1]["failure"]
            self.assertEqual((failure["code"], failure["retryable"]), ("RATE_LIMIT", True))
        finally:
            server.close()


# ---- whole adapters against a loopback server --------------------------------------------------

def chat_chunk(text):
    return "data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": text},
                                               "finish_reason": None}]}) + "\n\n"


CHAT_END = ("data: " + json.dumps({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
            + "\n\ndata: [DONE]\n\n")


def ok(handler):
    body = (chat_chunk("Hel") + chat_chunk("lo") + CHAT_END).encode()
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("content-length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def status(code, body, headers=None):
    def answer(handler):
        data = json.dumps(body).encode()
        handler.send_response(code)
        for name, value in {"content-type": "application/json", **(headers or {})}.items():
            handler.send_header(name, value)
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
    return answer


def reset(handler):
    handler.close_connection = True
    handler.connection.shutdown(2)


def broken_mid_stream(handler):
    """One chunk of a chunked event stream, then the connection ends mid-body."""
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("transfer-encoding", "chunked")
    handler.end_headers()
    data = chat_chunk("Hel").encode()
    handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
    handler.wfile.flush()
    time.sleep(0.05)
    handler.close_connection = True
    handler.connection.shutdown(socket.SHUT_RDWR)


def stall_after_one_chunk(handler):
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.end_headers()
    handler.wfile.write(chat_chunk("Hel").encode())
    handler.wfile.flush()
    handler.server.release.wait(10)


class Server:
    """Serves plan[i] to request i (the last entry again after the plan ends)."""

    def __init__(self, plan):
        self.arrivals = 0
        self.requests = []  # (path, headers, body) of each
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                outer.requests.append((self.path, self.headers, body))
                outer.arrivals += 1
                plan[min(outer.arrivals, len(plan)) - 1](self)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.release = threading.Event()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def run(command, base_url, cancel_after_chunk=False, cancelled=None, extra=None):
    """Runs an adapter on one call: (events with their receipt time, stderr, exit code). With
    cancel_after_chunk, the cancel goes after the first chunk and its time into `cancelled`.
    `extra` adds fields to the call line."""
    cancelled = [] if cancelled is None else cancelled
    call = {"type": "call", "base_url": base_url, "api_key": "sk-test", "dialect": "openai-chat",
            "request": {"model": "m", "messages": [{"role": "user", "content": "hi"}],
                        "stream": True}, "scenario": "kit-test", **(extra or {})}
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    proc.stdin.write(json.dumps(call) + "\n")
    proc.stdin.flush()
    events = []
    for line in proc.stdout:
        events.append(json.loads(line))
        events[-1]["received"] = time.monotonic()
        if cancel_after_chunk and events[-1]["type"] == "assistant/chunk" and not cancelled:
            cancelled.append(time.monotonic())
            proc.stdin.write('{"type":"cancel"}\n')
            proc.stdin.flush()
    stderr = proc.stderr.read()
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        pipe.close()
    if JSONSCHEMA is not None:  # every line the kit wrote, by an independent validator
        written = [{k: v for k, v in e.items() if k != "received"} for e in events]
        problems = validate_lines.problems(JSONSCHEMA, written)
        if problems:
            raise AssertionError("lines the schema refuses: " + "\n".join(problems))
    return events, stderr, proc.wait(timeout=30)


def run_against(plan, command):
    """`command` on one call against a Server answering `plan`: (events, stderr, exit code,
    requests the server saw)."""
    server = Server(plan)
    try:
        events, stderr, code = run(command, server.url)
    finally:
        server.close()
    return events, stderr, code, server.arrivals


def types(events):
    return [e["type"] for e in events]


EXAMPLE = [sys.executable, str(HERE.parent / "python" / "example.py")]
RETRY_LOOP = [sys.executable, str(HERE / "fixtures" / "retry_loop.py")]
# One call line each here, stdin left open as the runner leaves it for a per-call adapter.
BASELINE = [sys.executable, str(ADAPTERS / "python_baseline.py"), "--per-call"]
SESSION = [sys.executable, str(HERE / "fixtures" / "session_breaker.py")]


class AdapterTest(unittest.TestCase):
    def test_example_commits_and_fails_classified(self):
        server = Server([ok, status(429, {"error": {"type": "requests", "message": "slow"}},
                                    {"retry-after": "2"})])
        try:
            events, _, code = run(EXAMPLE, server.url)
            self.assertEqual(types(events), ["adapter/hello", "response/start", "assistant/chunk",
                                             "assistant/chunk", "response/committed"])
            self.assertEqual((events[-1]["text"], code), ("Hello", 0))
            self.assertEqual(events[0]["policy"]["extends"], "python-http-client")
            events, _, code = run(EXAMPLE, server.url)
            failure = events[-1]["failure"]
            self.assertEqual((failure["code"], failure["status"], failure["retry_after_ms"], code),
                             ("RATE_LIMIT", 429, 2000, 1))
        finally:
            server.close()

    def test_example_speaks_gemini(self):
        def stream(*events):
            def answer(handler):
                body = "".join("data: " + json.dumps(e) + "\n\n" for e in events).encode()
                handler.send_response(200)
                handler.send_header("content-type", "text/event-stream")
                handler.send_header("content-length", str(len(body)))
                handler.end_headers()
                handler.wfile.write(body)
            return answer

        contents = [{"role": "user", "parts": [{"text": "hi"}]}]
        gemini = {"dialect": "gemini",
                  "request": {"model": "gemini-2.5-flash", "contents": contents, "stream": True}}
        retry_info = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"}]
        server = Server([
            stream(gemini_response([{"text": "Hel"}]), gemini_response([{"text": "lo"}]),
                   gemini_response([{"text": ""}], "STOP",
                                   {"promptTokenCount": 9, "candidatesTokenCount": 2})),
            status(429, google_error(429, "RESOURCE_EXHAUSTED",
                                     "Resource has been exhausted (e.g. check quota).",
                                     retry_info)),
            stream(gemini_response([{"text": "Hel"}]), google_error(
                503, "UNAVAILABLE", "The model is overloaded. Please try again later.")),
            stream(gemini_response([{"text": "Hel"}])),  # cut: no chunk with a finishReason
        ])
        try:
            events, _, code = run(EXAMPLE, server.url, extra=gemini)
            self.assertEqual(types(events), ["adapter/hello", "response/start", "assistant/chunk",
                                             "assistant/chunk", "response/committed"])
            self.assertEqual((events[-1]["text"], events[-1]["finish_reason"],
                              events[-1]["usage"], code),
                             ("Hello", "STOP", {"input_tokens": 9, "output_tokens": 2}, 0))
            path, headers, body = server.requests[0]
            self.assertEqual(path, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
            self.assertEqual((headers.get("x-goog-api-key"), headers.get("authorization")),
                             ("sk-test", None))
            self.assertEqual(json.loads(body), {"contents": contents})
            failure = run(EXAMPLE, server.url, extra=gemini)[0][-1]["failure"]
            self.assertEqual((failure["code"], failure["status"], failure["retry_after_ms"]),
                             ("RATE_LIMIT", 429, 37000), "Google's retryDelay is the hint")
            failure = run(EXAMPLE, server.url, extra=gemini)[0][-1]["failure"]
            self.assertEqual((failure["code"], failure["phase"], failure["partial_output"]),
                             ("OVERLOADED", "stream", "uncommitted"))
            failure = run(EXAMPLE, server.url, extra=gemini)[0][-1]["failure"]
            self.assertEqual(failure["code"], "STREAM_TRUNCATED")
        finally:
            server.close()

    def test_example_and_baseline_speak_ollama(self):
        def lines(text, content_type="application/x-ndjson"):
            def answer(handler):
                body = text.encode()
                handler.send_response(200)
                handler.send_header("content-type", content_type)
                handler.send_header("content-length", str(len(body)))
                handler.end_headers()
                handler.wfile.write(body)
            return answer

        def whole(handler):  # "stream": false: one object, done, the whole message
            body = json.dumps(ollama_done(message={"role": "assistant",
                                                   "content": "Hello"})).encode()
            handler.send_response(200)
            handler.send_header("content-type", "application/json; charset=utf-8")
            handler.send_header("content-length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body)

        messages = [{"role": "user", "content": "hi"}]
        ollama = {"dialect": "ollama", "request": {"model": "llama3.2", "messages": messages,
                                                   "stream": True,
                                                   "options": {"num_predict": 64}}}
        tool = {"name": "get_weather", "arguments": {"city": "Paris"}}
        good = lines(ndjson(ollama_line({"thinking": "hm"}), ollama_line({"content": "Hel"}),
                            ollama_line({"content": "lo"}),
                            ollama_line({"tool_calls": [{"function": tool}]}),
                            ollama_done()).replace("\n", "\r\n"))
        # Cut: the done line never came whole.
        cut = lines(ndjson(ollama_line({"content": "Hel"})) + json.dumps(ollama_done())[:40])
        error_line = lines(ndjson(ollama_line({"content": "Hel"}), {
            "error": "an error was encountered while running the model: unexpected EOF"}))
        server = Server([
            good, cut, error_line,
            status(400, {"error": "the input length exceeds the context length"}),
            status(429, {"error": "you have exceeded your current quota, please upgrade your "
                                  "plan"}),
            lines(ndjson(ollama_done()), "text/event-stream"),  # not the framing asked for
            whole,
            good, cut,  # the baseline
        ])
        try:
            events, _, code = run(EXAMPLE, server.url, extra=ollama)
            self.assertEqual(types(events), [
                "adapter/hello", "response/start", "assistant/chunk", "assistant/chunk",
                "assistant/chunk", "response/committed"])
            self.assertEqual(events[4]["tool_call"], {"index": 0, "name": "get_weather",
                                                      "arguments": '{"city":"Paris"}'})
            committed = events[-1]
            self.assertEqual((committed["text"], committed["reasoning"],
                              committed["finish_reason"], committed["usage"],
                              committed["tool_calls"], code),
                             ("Hello", "hm", "stop", {"input_tokens": 26, "output_tokens": 3},
                              [{"id": "", "name": "get_weather",
                                "arguments": '{"city":"Paris"}'}], 0))
            path, headers, body = server.requests[0]
            self.assertEqual((path, headers.get("authorization"), headers.get("accept")),
                             ("/api/chat", "Bearer sk-test", "application/x-ndjson"))
            self.assertEqual(json.loads(body), ollama["request"])
            failure = run(EXAMPLE, server.url, extra=ollama)[0][-1]["failure"]
            self.assertEqual((failure["code"], failure["phase"], failure["partial_output"]),
                             ("STREAM_TRUNCATED", "stream", "uncommitted"))
            self.assertIn('without a line with "done": true', failure["message"])
            failure = run(EXAMPLE, server.url, extra=ollama)[0][-1]["failure"]
            self.assertEqual((failure["code"], failure["phase"], failure["retryable"],
                              failure["partial_output"]),
                             ("SERVER", "stream", True, "uncommitted"),
                             "an error line names no kind")
            failure = run(EXAMPLE, server.url, extra=ollama)[0][-1]["failure"]
            self.assertEqual((failure["code"], failure["status"], failure["retryable"]),
                             ("CONTEXT_WINDOW_EXCEEDED", 400, False))
            self.assertIn("exceeds the context length", failure["message"])
            failure = run(EXAMPLE, server.url, extra=ollama)[0][-1]["failure"]
            self.assertEqual((failure["code"], failure["status"]), ("QUOTA", 429))
            failure = run(EXAMPLE, server.url, extra=ollama)[0][-1]["failure"]
            self.assertEqual((failure["code"], failure["phase"], failure["status"]),
                             ("MALFORMED_RESPONSE", "response-headers", 200))
            unstreamed = {**ollama, "request": {**ollama["request"], "stream": False}}
            events = run(EXAMPLE, server.url, extra=unstreamed)[0]
            self.assertEqual((events[-1]["type"], events[-1]["text"]),
                             ("response/committed", "Hello"))
            # The baseline reads Ollama's lines too; a cut stream is its answer, naively.
            events = run(BASELINE, server.url, extra=ollama)[0]
            self.assertEqual((events[-1]["type"], events[-1]["text"], events[-1]["usage"]),
                             ("response/committed", "Hello",
                              {"input_tokens": 26, "output_tokens": 3}))
            events = run(BASELINE, server.url, extra=ollama)[0]
            self.assertEqual((events[-1]["type"], events[-1]["text"]),
                             ("response/committed", "Hel"))
        finally:
            server.close()

    def test_retries_without_a_hook_are_announced_before_the_next_request(self):
        events, stderr, code, arrivals = run_against(
            [status(429, {"error": {"type": "insufficient_quota",
                                    "message": "You exceeded your current quota"}}), reset, ok],
            RETRY_LOOP + ["--noisy"])
        self.assertEqual(types(events), [
            "adapter/hello", "response/start", "response/interrupted", "response/start",
            "response/interrupted", "response/start", "assistant/chunk", "assistant/chunk",
            "response/committed"])
        first, second = [e for e in events if e["type"] == "response/interrupted"]
        self.assertEqual((first["attempt"], first["failure"]["code"], first["failure"]["status"]),
                         (1, "QUOTA", 429))
        self.assertEqual((second["attempt"], second["failure"]["code"]), (2, "TRANSPORT"))
        self.assertNotIn("scheduled_retry_ms", first)
        self.assertEqual((events[-1]["attempt"], arrivals, code), (3, 3, 0))
        self.assertIn("a library printing to stdout", stderr)

    def test_a_clients_own_classification_announces_its_retry_once(self):
        events, stderr, code, _ = run_against(
            [status(503, {"error": {"type": "server_error", "message": "down"}}), ok],
            RETRY_LOOP + ["--classify"])
        self.assertEqual(types(events), [
            "adapter/hello", "response/start", "response/interrupted", "response/start",
            "assistant/chunk", "assistant/chunk", "response/committed"])
        interrupted = events[2]
        failure = interrupted["failure"]
        self.assertEqual((failure["code"], failure["class"], failure["status"], failure["message"],
                          interrupted["scheduled_retry_ms"], interrupted["delay_source"]),
                         ("OVERLOADED", "provider-overloaded", 503, "the library says: overloaded",
                          50, "backoff"), "the client's classification, not the wire's")
        self.assertEqual(failure["phase"], "response-headers", "an error status, not connect")
        self.assertIn("phase before the announcement: response-headers", stderr)
        self.assertIn("phase after the announcement: connect", stderr)
        self.assertEqual(code, 0)

    def test_a_client_that_retries_a_broken_stream_resets_its_output(self):
        events, stderr, _, _ = run_against([broken_mid_stream, ok], RETRY_LOOP + ["--mid-stream"])
        self.assertEqual(types(events), [
            "adapter/hello", "response/start", "assistant/chunk", "response/interrupted",
            "response/start", "assistant/chunk", "assistant/chunk", "response/committed"])
        self.assertEqual(events[3]["failure"]["partial_output"], "uncommitted")
        self.assertEqual(events[-1]["text"], "Hello", "the last attempt alone")
        self.assertNotIn("adds to the output", stderr)
        events, stderr, _, _ = run_against([broken_mid_stream, ok],
                                           RETRY_LOOP + ["--mid-stream", "--keep-output"])
        self.assertEqual(events[-1]["text"], "HelHello", "committed as the caller got it")
        self.assertIn("attempt 2 adds to the output of attempt 1", stderr)

    def test_cancel_mid_stream_is_aborted_with_partial_output(self):
        for command in (EXAMPLE, BASELINE):
            server = Server([stall_after_one_chunk])  # an HTTP/1.0 server: responses will close
            cancelled = []
            try:
                events, _, code = run(command, server.url, True, cancelled)
            finally:
                server.close()
            failure = events[-1]["failure"]
            self.assertEqual((failure["code"], failure["partial_output"], code),
                             ("ABORTED", "uncommitted", 1), command)
            # Promptly: the stalled read is woken by the shut socket, not by the server's end.
            self.assertLess(events[-1]["received"] - cancelled[0], 3.0, command)

    def test_baseline_commits_a_truncated_stream_as_a_naive_client_does(self):
        def truncated(handler):
            handler.send_response(200)
            handler.send_header("content-type", "text/event-stream")
            handler.send_header("connection", "close")
            handler.end_headers()
            handler.wfile.write(chat_chunk("Hel").encode())
            handler.close_connection = True

        server = Server([truncated])
        try:
            baseline, _, _ = run(BASELINE, server.url)
            example, _, _ = run(EXAMPLE, server.url)
        finally:
            server.close()
        self.assertEqual((baseline[-1]["type"], baseline[-1]["text"]),
                         ("response/committed", "Hel"))
        self.assertEqual(example[-1]["failure"]["code"], "STREAM_TRUNCATED")

    def test_session_mode_serves_every_call_in_one_process_with_state_across_them(self):
        server = Server([status(503, {"error": {"message": "down"}})])
        proc = subprocess.Popen(SESSION, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

        def call(index):
            line = {"type": "call", "base_url": server.url, "api_key": "sk-test",
                    "dialect": "openai-chat", "scenario": "kit-test",
                    "request": {"model": "m", "messages": [{"role": "user", "content": "hi"}],
                                "stream": True}}
            return json.dumps({**line, "call": index} if index else line) + "\n"

        try:
            # Call 1 goes out once call 0 has ended, stdin ends once call 1 has: as the runner.
            proc.stdin.write(call(0))
            proc.stdin.flush()
            events = []
            for line in proc.stdout:
                events.append(json.loads(line))
                if events[-1]["type"] != "response/failed":
                    continue
                if events[-1].get("call", 0) == 0:
                    proc.stdin.write(call(1))
                    proc.stdin.flush()
                else:
                    proc.stdin.close()
            code = proc.wait(timeout=30)
        finally:
            proc.stderr.close()
            proc.stdout.close()
            server.close()
        self.assertEqual(events[0]["mode"], "session")
        self.assertEqual([(e["type"], e.get("call")) for e in events],
                         [("adapter/hello", None), ("response/start", 0), ("response/failed", 0),
                          ("response/failed", 1)])
        self.assertEqual(events[-1]["failure"]["message"], "breaker open")
        self.assertEqual(server.arrivals, 1, "the open breaker kept call 1 off the wire")
        self.assertEqual(code, 1)
        if JSONSCHEMA is not None:
            self.assertEqual(validate_lines.problems(JSONSCHEMA, events), [])

    def test_session_mode_with_reset_shares_the_process_and_none_of_the_calls_state(self):
        server = Server([status(503, {"error": {"message": "down"}})])
        proc = subprocess.Popen(SESSION, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        line = json.dumps({"type": "call", "base_url": server.url, "api_key": "sk-test",
                           "dialect": "openai-chat", "scenario": "kit-test",
                           "request": {"model": "m", "stream": True,
                                       "messages": [{"role": "user", "content": "hi"}]}}) + "\n"
        try:
            # Run 1's call 0 opens the breaker; the reset closes it; run 2's call 0 reaches the
            # server.
            proc.stdin.write(line)
            proc.stdin.flush()
            events, runs = [], 1
            for text in proc.stdout:
                events.append(json.loads(text))
                kind = events[-1]["type"]
                if kind == "response/failed" and runs == 1:
                    proc.stdin.write('{"type":"reset"}\n')
                    proc.stdin.flush()
                elif kind == "adapter/reset":
                    runs += 1
                    proc.stdin.write(line)
                    proc.stdin.flush()
                elif kind == "response/failed":
                    proc.stdin.close()
            proc.wait(timeout=30)
        finally:
            proc.stderr.close()
            proc.stdout.close()
            server.close()
        self.assertTrue(events[0]["reset"], "the hello declares reset")
        self.assertEqual([(e["type"], e.get("call")) for e in events],
                         [("adapter/hello", None), ("response/start", 0), ("response/failed", 0),
                          ("adapter/reset", None),
                          ("adapter/hello", None), ("response/start", 0), ("response/failed", 0)])
        self.assertEqual(events[-1]["failure"]["status"], 503,
                         "the breaker did not outlive the reset")
        self.assertEqual(server.arrivals, 2)
        if JSONSCHEMA is not None:
            self.assertEqual(validate_lines.problems(JSONSCHEMA, events), [])

    def test_bad_call_line(self):
        proc = subprocess.run(EXAMPLE, input='{"type":"call","dialect":"klingon"}\n',
                              capture_output=True, text=True, timeout=30)
        self.assertEqual((proc.returncode, proc.stdout), (2, ""))


if __name__ == "__main__":
    unittest.main()
