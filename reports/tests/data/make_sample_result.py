#!/usr/bin/env python3
"""Writes sample-result.json: a realistic run result for the renderer tests and screenshot.sh.

Five scenario runs: a 429 honoured then a committed stream, a stall caught by the idle timeout,
a truncated stream wrongly committed (a failed check with hostile evidence), a cancel during
backoff, and a run whose adapter broke (verdict error). Run it again after changing the shape.
"""
import json
import os

CHECKS = {
    "LIFE-001": "exactly one terminal event, nothing after it",
    "COMMIT-001": "the committed text is exactly the text of one attempt",
    "COMMIT-004": "a truncated, empty or malformed response is never committed",
    "RETRY-001": "non-retryable failures are not retried",
    "RETRY-004": "no attempt before the Retry-After delay",
    "TIME-001": "a stall is detected within the idle timeout plus tolerance",
    "CANCEL-001": "a cancel during backoff ends the call with ABORTED and no further request",
    "RES-001": "no connection is left open at the end of the run",
}


def check(cid, status="pass", evidence=""):
    return {"id": cid, "statement": CHECKS[cid], "status": status, "evidence": evidence}


def ev(t, event):
    return {"t_ms": t, "call": 0, "event": event}


def stream_writes(start, count, every, size, header=180):
    writes = [{"t_ms": start, "bytes": header}]
    writes += [{"t_ms": round(start + every * (i + 1), 3), "bytes": size} for i in range(count)]
    return writes


def chunks(start, count, every, attempt, text="tok "):
    return [ev(round(start + every * (i + 1) + 0.4, 3),
               {"type": "assistant/chunk", "response_id": f"r{attempt}", "attempt": attempt,
                "text": text, "commitment": "uncommitted"}) for i in range(count)]


def failure(code, cls, phase, retryable, status=None, retry_after_ms=None, message=""):
    out = {"code": code, "class": cls, "phase": phase, "retryable": retryable,
           "partial_output": "none", "message": message}
    if status is not None:
        out["status"] = status
    if retry_after_ms is not None:
        out["retry_after_ms"] = retry_after_ms
    return out


def entry(index, attempt, arrived, status, plan, writes, end, ended):
    return {"index": index, "attempt": attempt, "connection": index + 1, "arrived_ms": arrived,
            "status": status, "plan": plan, "bytes_sent": sum(w["bytes"] for w in writes),
            "end": end, "ended_ms": ended, "writes": writes, "body_bytes": 142}


def scenario(name, description, tags, verdict, checks, metrics, trace, fingerprint, wall_ms,
             error=None, black_box=False):
    out = {"name": name, "description": description,
           "source": f"<builtin>/{name}.yaml", "dialect": "openai-chat", "tags": tags,
           "world": "virtual", "seed": 42, "repetition": 0, "verdict": verdict,
           "black_box": black_box, "checks": checks, "metrics": metrics,
           "fingerprint": fingerprint, "wall_ms": wall_ms, "trace": trace}
    if error:
        out["error"] = error
    return out


def rate_limit():
    hello = {"type": "adapter/hello", "name": "faultline-ref", "version": "0.1.0", "policy": {}}
    client = [ev(0.1, hello),
              ev(0.3, {"type": "response/start", "response_id": "r1", "attempt": 1}),
              ev(1.3, {"type": "response/interrupted", "response_id": "r1", "attempt": 1,
                       "failure": failure("RATE_LIMIT", "rate-limit", "response-headers", True,
                                          429, 2000, "Rate limit reached for requests"),
                       "scheduled_retry_ms": 2000, "delay_source": "retry-after",
                       "wasted": {"bytes": 312, "approx_tokens": 0}}),
              ev(2001.5, {"type": "response/start", "response_id": "r2", "attempt": 2})]
    client += chunks(2002.5, 12, 10, 2, "Hello")
    client.append(ev(2126.0, {"type": "response/committed", "response_id": "r2",
                              "text": "Hello" * 12, "finish_reason": "stop", "tool_calls": [],
                              "usage": {"input_tokens": 12, "output_tokens": 12}}))
    journal = [entry(0, 1, 0.4, 429, "429 rate_limit, Retry-After: 2", [{"t_ms": 0.9, "bytes": 312}],
                     "completed", 1.0),
               entry(1, 2, 2001.8, 200, "stream 12 chunks x 10ms, [DONE]",
                     stream_writes(2002.5, 12, 10, 92), "completed", 2125.0)]
    checks = [check(c) for c in ["LIFE-001", "COMMIT-001", "RETRY-004", "RES-001"]]
    metrics = {"first_token_ms": 2012.9, "terminal_ms": 2126.0, "forced_minimum_ms": 2000.0,
               "recovery_overhead_ms": 126.0, "attempts": 2, "wasted_bytes": 312,
               "wasted_tokens": 0}
    return scenario("rate-limit/retry-after-seconds",
                    "429 with Retry-After: 2, then a normal stream of 12 chunks.",
                    ["rate-limit", "retry-after"], "pass", checks, metrics,
                    {"client": client, "journal": journal}, "3f9c1a7e5b20d4c8", 0.41)


def stall():
    client = [ev(0.2, {"type": "response/start", "response_id": "r1", "attempt": 1})]
    client += chunks(1.0, 3, 15, 1, "Once ")
    client += [ev(5046.0, {"type": "response/interrupted", "response_id": "r1", "attempt": 1,
                           "failure": failure("TIMEOUT", "timeout", "stream", True,
                                              message="no bytes for 5000 ms (idle timeout)"),
                           "scheduled_retry_ms": 450, "delay_source": "backoff",
                           "wasted": {"bytes": 456, "approx_tokens": 6}}),
               ev(5497.0, {"type": "response/start", "response_id": "r2", "attempt": 2})]
    client += chunks(5498.0, 6, 15, 2, "upon ")
    client.append(ev(5600.0, {"type": "response/committed", "response_id": "r2",
                              "text": "upon " * 6, "finish_reason": "stop", "tool_calls": [],
                              "usage": {"input_tokens": 12, "output_tokens": 6}}))
    journal = [entry(0, 1, 0.5, 200, "stream 3 chunks, then stall forever",
                     stream_writes(1.0, 3, 15, 92), "stalled-client-gave-up", 5046.5),
               entry(1, 2, 5497.3, 200, "stream 6 chunks x 15ms, [DONE]",
                     stream_writes(5498.0, 6, 15, 92), "completed", 5599.5)]
    checks = [check(c) for c in ["LIFE-001", "COMMIT-001", "TIME-001", "RES-001"]]
    metrics = {"first_token_ms": 5513.4, "terminal_ms": 5600.0, "forced_minimum_ms": 5000.0,
               "recovery_overhead_ms": 600.0, "attempts": 2, "wasted_bytes": 456,
               "wasted_tokens": 6}
    return scenario("timeout/stall-after-headers",
                    "Headers and three chunks, then silence; the idle timeout (5 s) must fire.",
                    ["timeout", "stall"], "pass", checks, metrics,
                    {"client": client, "journal": journal}, "a1b2c3d4e5f60718", 0.38)


def truncated():
    client = [ev(0.2, {"type": "response/start", "response_id": "r1", "attempt": 1})]
    client += chunks(0.8, 5, 20, 1, "Hello, wor")
    client.append(ev(101.5, {"type": "response/committed", "response_id": "r1",
                             "text": "Hello, wor", "finish_reason": "stop", "tool_calls": [],
                             "usage": {"input_tokens": None, "output_tokens": None}}))
    journal = [entry(0, 1, 0.4, 200, "stream 9 chunks, close mid-line after event 5",
                     stream_writes(0.8, 5, 20, 82), "closed-by-server", 101.0)]
    evidence = ('attempt 1: the server closed the connection mid-line after 590 bytes '
                '(event 5 of 9, no [DONE]);\nthe client committed "Hello, wor" at 101.5 ms.\n'
                'last bytes: data: {"choices":[{"delta":{"content":"<script>alert(1)</script> '
                '& \'x\' | \x01"}}]')
    checks = [check("LIFE-001"), check("COMMIT-004", "fail", evidence), check("RES-001"),
              check("RETRY-004", "n/a", "no Retry-After was sent")]
    metrics = {"first_token_ms": 21.2, "terminal_ms": 101.5, "forced_minimum_ms": 0,
               "recovery_overhead_ms": 101.5, "attempts": 1, "wasted_bytes": 0,
               "wasted_tokens": 0}
    return scenario("truncation/closed-mid-line",
                    "The stream is cut inside an event, without [DONE]: it must not be committed.",
                    ["truncation"], "fail", checks, metrics,
                    {"client": client, "journal": journal}, "0f1e2d3c4b5a6978", 0.12)


def cancel():
    client = [ev(0.2, {"type": "response/start", "response_id": "r1", "attempt": 1}),
              ev(3.2, {"type": "response/interrupted", "response_id": "r1", "attempt": 1,
                       "failure": failure("SERVER", "provider-unavailable", "response-headers",
                                          True, 503, message="503 Service Unavailable"),
                       "scheduled_retry_ms": 4000, "delay_source": "backoff",
                       "wasted": {"bytes": 230, "approx_tokens": 0}}),
              ev(1502.1, {"type": "response/failed", "response_id": "r1",
                          "failure": failure("ABORTED", "aborted", "connect", False,
                                             message="cancelled by the caller"),
                          "wasted": {"bytes": 230, "approx_tokens": 0}})]
    journal = [entry(0, 1, 0.5, 503, "503 overloaded", [{"t_ms": 2.8, "bytes": 230}],
                     "completed", 2.9)]
    checks = [check(c) for c in ["LIFE-001", "CANCEL-001", "RES-001"]]
    metrics = {"terminal_ms": 1502.1, "forced_minimum_ms": 1500.0, "recovery_overhead_ms": 2.1,
               "attempts": 1, "wasted_bytes": 230, "wasted_tokens": 0}
    return scenario("cancel/during-backoff",
                    "503, then the caller cancels at 1.5 s while the client waits to retry.",
                    ["cancel"], "pass", checks, metrics,
                    {"client": client, "journal": journal, "cancel_ms": 1500.0},
                    "99aa88bb77cc66dd", 0.09)


def broken():
    trace = {"client": [ev(0.3, {"type": "adapter/hello", "name": "my-adapter",
                                 "version": "2.3", "policy": {}})],
             "journal": [],
             "stderr": "Traceback (most recent call last):\n  File \"adapter.py\", line 41\n"
                       "KeyError: 'choices'\n"}
    return scenario("malformed/invalid-json-in-data",
                    "A data: line that is not JSON.", ["malformed"], "error", [],
                    {"attempts": 0, "wasted_bytes": 0, "wasted_tokens": 0}, trace, "", 30000.0,
                    error="adapter exited with status 1 before a terminal event (see stderr)")


def main():
    scenarios = [rate_limit(), stall(), truncated(), cancel(), broken()]
    result = {"format": 1, "tool_version": "faultline 0.1.0",
              "started_at": "2025-01-15T10:24:07Z",
              "subject": "faultline-ref 0.1.0 (in-process)", "world": "virtual", "seed": 42,
              "shard": "", "fingerprint": "5c1d0e9f3a7b2468", "wall_ms": 30001.2,
              "scenarios": scenarios, "latency": []}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sample-result.json")
    with open(path, "w", encoding="utf-8") as out:
        json.dump(result, out, indent=2, ensure_ascii=False)
        out.write("\n")


if __name__ == "__main__":
    main()
