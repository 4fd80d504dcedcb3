#!/usr/bin/python3
"""The storm scenario of fleet/bench/storm_bench.cc as a SimPy 3 model, for a speed comparison.

2,000 calls/s (Poisson) for 60 s of simulated time; the provider admits 1,000 requests/s
(a token bucket of depth 10) and answers the rest 429 without Retry-After; served requests take
50 ms. Each call follows openai-node's policy: 3 attempts, backoff min(0.5 s * 2^n, 8 s) *
(1 - 0.25 * random). Prints one JSON line: attempts, CPU seconds, attempts per CPU second.

Run with Debian's interpreter (python3-simpy3): /usr/bin/python3 fleet/bench/simpy_storm.py
"""
import json
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


def call(env, provider, rng, stats):
    for attempt in range(1, MAX_ATTEMPTS + 1):
        stats["attempts"] += 1
        if provider.admit():
            yield env.timeout(SERVICE)
            stats["succeeded"] += 1
            return
        if attempt == MAX_ATTEMPTS:
            return
        delay = min(0.5 * 2 ** (attempt - 1), 8.0) * (1 - 0.25 * rng.random())
        yield env.timeout(delay)


def arrivals(env, provider, rng, stats):
    while True:
        yield env.timeout(rng.expovariate(RATE))
        if env.now >= HORIZON:
            return
        env.process(call(env, provider, rng, stats))


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    rng = random.Random(seed)
    env = simpy.Environment()
    stats = {"attempts": 0, "succeeded": 0}
    provider = Provider(env)
    env.process(arrivals(env, provider, rng, stats))
    start = time.process_time()  # CPU seconds, as the C++ benchmark counts (shared machines)
    env.run()
    wall = time.process_time() - start
    print(json.dumps({"attempts": stats["attempts"], "succeeded": stats["succeeded"],
                      "wall_s": wall, "attempts_per_s": stats["attempts"] / wall}))


if __name__ == "__main__":
    main()
