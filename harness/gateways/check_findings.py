#!/usr/bin/env python3
"""The shipped gateways over the gateway catalogue, against their recorded findings.

Runs `faultline run --gateway NAME` for each gateway of findings.json (beside this file) and
compares the checks that failed, scenario by scenario, with the findings recorded there (which
the README and docs/conformance-matrix.md show). A new failure, a finding that no longer
reproduces, or a run error fails the test, naming the gateway and the difference. A gateway whose
program is not installed is skipped with a note; when none is, the test is skipped (exit 77).

    harness/gateways/check_findings.py path/to/faultline [--repeat N]

Standard library only. tools/setup.sh installs nginx-light, haproxy and caddy; tools/test.sh
installs Portkey (harness/adapters/setup.sh --in harness/gateways/packages).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SKIPPED = 77
PROGRAMS = {"nginx": "nginx", "haproxy": "haproxy", "caddy": "caddy"}
# The npm gateways are installed into harness/gateways/packages (harness/adapters/setup.sh --in).
PACKAGES = {"portkey": os.path.join(HERE, "packages", "node_modules", "@portkey-ai", "gateway")}


def run(faultline, gateway, repeat, out):
    command = [faultline, "run", "--gateway", gateway, "--repeat", str(repeat), "--out", out,
               "--format", "json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if done.returncode not in (0, 1):
        return None, f"exit {done.returncode}: {done.stderr[-2000:]}"
    with open(os.path.join(out, "result.json")) as f:
        result = json.load(f)
    found, errors = set(), []
    for scenario in result["scenarios"]:
        if scenario["verdict"] == "error":
            errors.append(f"{scenario['name']}: {scenario.get('error', '')}")
        for check in scenario["checks"]:
            if check["status"] == "fail":
                found.add(f"{scenario['name']} {check['id']}")
    if errors:
        return None, "run errors: " + "; ".join(errors)
    return found, ""


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    faultline = argv[1]
    repeat = int(argv[argv.index("--repeat") + 1]) if "--repeat" in argv else 2
    with open(os.path.join(HERE, "findings.json")) as f:
        recorded = json.load(f)["gateways"]
    problems, checked = [], 0
    for gateway, record in recorded.items():
        if gateway in PACKAGES:
            installed = os.path.isdir(PACKAGES[gateway]) and shutil.which("node") is not None
        else:
            program = PROGRAMS.get(gateway, gateway)
            installed = shutil.which(program) is not None or os.path.exists(f"/usr/sbin/{program}")
        if not installed:
            print(f"{gateway}: not installed, skipped ({record['version']})")
            continue
        checked += 1
        with tempfile.TemporaryDirectory() as out:
            found, error = run(faultline, gateway, repeat, out)
        if found is None:
            problems.append(f"{gateway}: {error}")
            continue
        expected = set(record["findings"])
        for extra in sorted(found - expected):
            problems.append(f"{gateway}: new finding {extra}")
        for gone in sorted(expected - found):
            problems.append(f"{gateway}: recorded finding no longer shows: {gone}")
        print(f"{gateway}: {len(found)} finding(s), as recorded" if found == expected
              else f"{gateway}: differs")
    if checked == 0:
        print("no gateway installed (tools/setup.sh installs nginx-light, haproxy, caddy): skipped")
        return SKIPPED
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
