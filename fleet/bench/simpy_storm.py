#!/usr/bin/python3
"""The storm scenario of fleet/bench/storm_bench.cc as a SimPy 3 model, for a speed comparison.

2,000 calls/s (Poisson) for 60 s of simulated time; the provider admits 1,000 requests/s
(a token bucket of depth 10) and answers the rest 429 without Retry-After; served requests take
50 ms. Each call follows openai-node's policy: 3 attempts, backoff min(0.5 s * 2^n, 8 s) *
(1 - 0.25 * random), rounded to whole milliseconds as the reference client sleeps them.

It keeps what the fleet simulator measures on this storm, so that both do the same work: the
counters (calls, attempts, retries, overload answers, successes, give-ups), one-second series of
offered calls, attempts, retries, overload answers, successes and failures, and every call's
latency, summarised at the end as amplification, success rate and p50/p95/p99/p99.9.

Prints one JSON line: the measures, CPU seconds, attempts per CPU second.
Run with Debian's interpreter (python3-simpy3): /usr/bin/python3 fleet/bench/simpy_storm.py [SEED]
"""
import json
import math
import random
import sys
import time

import simpy

RATE = 2000.0
HORIZON = 60.0
PROVIDER_RATE = 1000.0
BURST = 10.0
SERVICE = 0.05
MAX_ATTEMPTS = 3
BASE_MS = 500.0
CAP_MS = 8000.0
JITTER = 0.25
SERIES = ("offered", "attempts", "retries", "overloaded", "succeeded", "failed")


class Provider:
    def __init__(self, env):
        self.env = env
        self.tokens = BURST
        self.updated = 0.0

    def admit(self):
        now = self.env.now
        self.tokens = min(BURST, self.tokens + PROVIDER_RATE * (now - self.updated))
        self.updated = now
        if self.tokens < 1.0:
            return False
        self.tokens -= 1.0
        return True


class Stats:
    def __init__(self):
        self.counters = dict.fromkeys(
            ("calls", "attempts", "retries", "overloaded", "succeeded", "failed"), 0)
        self.series = {name: [] for name in SERIES}
        self.latencies = []

    def step(self, name, now):
        """Counts one `name` in the series step (one second) holding `now`."""
        steps = self.series[name]
        index = int(now)
        while len(steps) <= index:
            steps.append(0)
        steps[index] += 1


def backoff_s(attempt, rng):
    """openai-node's delay after failed attempt `attempt`, in whole milliseconds."""
    delay_ms = min(BASE_MS * 2 ** (attempt - 1), CAP_MS) * (1 - JITTER * rng.random())
    return math.floor(delay_ms + 0.5) / 1000.0


def call(env, provider, rng, stats):
    start = env.now
    stats.counters["calls"] += 1
    stats.step("offered", start)
    for attempt in range(1, MAX_ATTEMPTS + 1):
        stats.counters["attempts"] += 1
        stats.step("attempts", env.now)
        if attempt > 1:
            stats.counters["retries"] += 1
            stats.step("retries", env.now)
        if provider.admit():
            yield env.timeout(SERVICE)
            stats.counters["succeeded"] += 1
            stats.step("succeeded", env.now)
            stats.latencies.append(env.now - start)
            return
        stats.counters["overloaded"] += 1
        stats.step("overloaded", env.now)
        if attempt == MAX_ATTEMPTS:
            stats.counters["failed"] += 1  # attempts exhausted
            stats.step("failed", env.now)
            stats.latencies.append(env.now - start)
            return
        yield env.timeout(backoff_s(attempt, rng))


def arrivals(env, provider, rng, stats):
    while True:
        yield env.timeout(rng.expovariate(RATE))
        if env.now >= HORIZON:
            return
        env.process(call(env, provider, rng, stats))


def summary(stats):
    counters = stats.counters
    latencies = sorted(stats.latencies)
    def quantile_ms(q):
        rank = max(math.ceil(q * len(latencies)), 1)
        return latencies[rank - 1] * 1000.0 if latencies else 0.0
    return {
        "amplification": counters["attempts"] / max(counters["calls"], 1),
        "success_rate": counters["succeeded"] / max(counters["calls"], 1),
        "p50_ms": quantile_ms(0.5), "p95_ms": quantile_ms(0.95),
        "p99_ms": quantile_ms(0.99), "p999_ms": quantile_ms(0.999),
    }


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    rng = random.Random(seed)
    env = simpy.Environment()
    stats = Stats()
    provider = Provider(env)
    env.process(arrivals(env, provider, rng, stats))
    start = time.process_time()  # CPU seconds, as the C++ benchmark counts (shared machines)
    env.run()
    measures = summary(stats)
    cpu = time.process_time() - start
    attempts = stats.counters["attempts"]
    print(json.dumps({**stats.counters, **measures, "cpu_s": cpu, "attempts_per_s": attempts / cpu}))


if __name__ == "__main__":
    main()
