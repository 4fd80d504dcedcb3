#!/usr/bin/env python3
"""Runs an adapter and rewrites the policy its adapter/hello declares: the same client, declared
another way (a partial declaration, or `extends` a preset), so that a test can hold one client to
several declarations of what it does.

Usage: declare_as.py POLICY_JSON -- COMMAND [ARG...]

Every stdin line goes to COMMAND (the call, a later cancel); every stdout line of COMMAND comes
back unchanged but the first adapter/hello, whose `policy` becomes POLICY_JSON. The exit status
is COMMAND's.
"""
import json
import subprocess
import sys
import threading


def forward_stdin(child):
    for line in sys.stdin:
        try:
            child.stdin.write(line)
            child.stdin.flush()
        except (BrokenPipeError, ValueError):
            return
    try:
        child.stdin.close()
    except (BrokenPipeError, ValueError):
        pass


def main(argv):
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write(__doc__)
        return 2
    policy = json.loads(argv[1])
    child = subprocess.Popen(argv[3:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             bufsize=1)
    threading.Thread(target=forward_stdin, args=(child,), daemon=True).start()
    rewritten = False
    for line in child.stdout:
        if not rewritten:
            event = json.loads(line)
            if event.get("type") == "adapter/hello":
                event["policy"] = policy
                line = json.dumps(event) + "\n"
                rewritten = True
        sys.stdout.write(line)
        sys.stdout.flush()
    return child.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
