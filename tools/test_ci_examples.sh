#!/bin/sh
# Exercises the copyable CI examples in docs/ci/ as their jobs would run them: the shared step
# script against a built faultline, passing and failing, with the step summary and the reports
# where the GitHub workflow uploads them and the GitLab job reads its JUnit report; and both job
# files parse and call that script. Used by ctest (docs.ci_examples).
#   tools/test_ci_examples.sh FAULTLINE_BINARY
set -eu
binary=$1
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/faultline-ci.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir ci scenarios
cp "$root/docs/ci/faultline-ci.sh" ci/

# Both job files parse, run ci/faultline-ci.sh and keep faultline-reports/.
python3 - "$root/docs/ci/github-actions.yml" "$root/docs/ci/gitlab-ci.yml" <<'PY'
import sys
try:
    import yaml
except ImportError:
    sys.exit("python3-yaml is missing (tools/setup.sh installs it)")
github, gitlab = (yaml.safe_load(open(path)) for path in sys.argv[1:])
steps = github["jobs"]["conformance"]["steps"]
runs = [step.get("run", "") for step in steps]
assert any("ci/faultline-ci.sh" in run for run in runs), "the workflow never runs the script"
uploads = [s for s in steps if s.get("uses", "").startswith("actions/upload-artifact")]
assert uploads and uploads[0]["with"]["path"].rstrip("/") == "faultline-reports", uploads
job = gitlab["faultline"]
assert any("ci/faultline-ci.sh" in line for line in job["script"]), "the job never runs it"
assert job["artifacts"]["reports"]["junit"] == "faultline-reports/junit.xml"
PY

# A passing run: exit 0, the reports in faultline-reports/, summary.md added to the summary.
summary=$work/step-summary.md
echo "# earlier steps" > "$summary"
FAULTLINE=$binary GITHUB_STEP_SUMMARY=$summary \
  ci/faultline-ci.sh --time virtual --filter 'demo/*' > pass.out 2>&1 || {
  cat pass.out; echo "a passing run failed the job"; exit 1; }
for report in result.json junit.xml summary.md report.html; do
  test -s "faultline-reports/$report" || { echo "no faultline-reports/$report"; exit 1; }
done
grep -q '^# earlier steps' "$summary"
test "$(wc -c < "$summary")" -gt 100 || { echo "summary.md was not appended"; exit 1; }

# A failing check fails the job with faultline's exit code 1, and still reports.
cat > scenarios/wrong.yaml <<'YAML'
faultline: 1
name: ci/wrong-expectation
description: The expectation is wrong on purpose, so that the job must fail.
dialect: openai-chat
responses:
  - content: {text: "Hello, world"}
expect: {outcome: failed}
YAML
rm -rf faultline-reports
status=0
FAULTLINE=$binary GITHUB_STEP_SUMMARY=$summary \
  ci/faultline-ci.sh scenarios/ --time virtual > fail.out 2>&1 || status=$?
test "$status" -eq 1 || { cat fail.out; echo "exit $status for a failed check, expected 1"; exit 1; }
test -s faultline-reports/junit.xml
grep -q 'ci/wrong-expectation' "$summary"
echo "docs.ci_examples: both jobs' steps ran as written"
