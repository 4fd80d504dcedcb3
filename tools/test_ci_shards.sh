#!/bin/sh
# Runs the sharded CI examples' shards here, as their engines would, and checks that merging
# them gives the unsharded run: the GitHub matrix (docs/ci/github-actions-matrix.yml: its
# FAULTLINE_SHARD_INDEX/FAULTLINE_SHARD_TOTAL through ci/faultline-ci.sh), GitLab's parallel:
# (CI_NODE_INDEX/CI_NODE_TOTAL) and the Kubernetes Indexed Job (docs/ci/kubernetes-indexed-job.yaml:
# its container's command with JOB_COMPLETION_INDEX), each with 1, 3 and 7 shards of a small
# catalogue slice in virtual time, every shard with `--shard auto`; `faultline report merge` of
# the shards must have the unsharded fingerprint and runs. Both example files are read first
# (they parse, shard with auto, and keep their counts in one place). Used by ctest
# (docs.ci_shards).
#   tools/test_ci_shards.sh FAULTLINE_BINARY
set -eu
binary=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/faultline-ci-shards.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir ci bin
cp "$root/docs/ci/faultline-ci.sh" ci/
ln -s "$binary" bin/faultline  # the Job's command calls `faultline`, as installed in its image
# Whatever engine runs this test, only the variables each step sets are seen.
unset FAULTLINE_SHARD_INDEX FAULTLINE_SHARD_TOTAL CI_NODE_INDEX CI_NODE_TOTAL JOB_COMPLETION_INDEX
filter='demo/*,rate-limit/*'
slice="--time virtual --filter $filter --repeat 2"

# The example files: what the jobs run, and where their shard counts live.
python3 - "$root/docs/ci/github-actions-matrix.yml" "$root/docs/ci/kubernetes-indexed-job.yaml" \
  > job-command <<'PY'
import re, sys
try:
    import yaml
except ImportError:
    sys.exit("python3-yaml is missing (tools/setup.sh installs it)")
github, job = (yaml.safe_load(open(path)) for path in sys.argv[1:])
jobs = github["jobs"]
shards = jobs["conformance"]["strategy"]["matrix"]["shard"]
assert shards == list(range(1, len(shards) + 1)), shards
env = jobs["conformance"]["env"]
assert env["FAULTLINE_SHARD_INDEX"] == "${{ matrix.shard }}", env
assert env["FAULTLINE_SHARD_TOTAL"] == "${{ strategy.job-total }}", "the count in one place"
runs = [step.get("run", "") for step in jobs["conformance"]["steps"]]
assert any("ci/faultline-ci.sh" in run and "--shard auto" in run for run in runs), runs
installs = [run for run in runs if "apt-get install" in run]
assert installs and "./faultline_*.deb" in installs[0], "shards install the package artifact"
assert "cpack -G DEB" in "".join(s.get("run", "") for s in jobs["package"]["steps"])
assert "package" in str(jobs["conformance"]["needs"])
assert any("faultline report merge" in s.get("run", "") for s in jobs["merge"]["steps"])
assert job["kind"] == "Job" and job["spec"]["completionMode"] == "Indexed"
container = job["spec"]["template"]["spec"]["containers"][0]
command = " ".join(container["args"])
count = re.search(r"--shard-count (\d+)", command)
assert "--shard auto" in command and count, command
assert int(count.group(1)) == job["spec"]["completions"], "--shard-count is the completions"
print(command)
PY

fingerprint() {
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(r["fingerprint"], len(r["scenarios"]))' "$1"
}
"$binary" run $slice --format json --out whole > whole.out 2>&1 || { cat whole.out; exit 1; }
expected=$(fingerprint whole/result.json)

# Merges the shards in $1/*/ and compares with the unsharded run.
check() {
  "$binary" report merge "$1"/*/result.json -o "$1/merged.json" || exit 1
  got=$(fingerprint "$1/merged.json")
  test "$got" = "$expected" || {
    echo "$1: merged fingerprint and runs '$got', unsharded '$expected'"; exit 1; }
  sizes=$(for part in "$1"/*/result.json; do fingerprint "$part" | cut -d' ' -f2; done | paste -sd/)
  echo "$1: runs per shard $sizes; merged $got (the unsharded run's)"
}

for total in 1 3 7; do
  index=1
  while [ "$index" -le "$total" ]; do
    # GitHub: the matrix's variables, through the shared step script.
    FAULTLINE=$binary FAULTLINE_SHARD_INDEX=$index FAULTLINE_SHARD_TOTAL=$total \
      FAULTLINE_REPORTS=github-$total/shard-$index \
      ci/faultline-ci.sh $slice --shard auto --format json > out 2>&1 || { cat out; exit 1; }
    # GitLab's parallel:.
    CI_NODE_INDEX=$index CI_NODE_TOTAL=$total "$binary" run $slice --shard auto --format json \
      --out "gitlab-$total/shard-$index" > out 2>&1 || { cat out; exit 1; }
    # The Kubernetes Job's container command, its count and its volume made this run's.
    command=$(sed -e "s|--shard-count [0-9]*|--shard-count $total|" \
      -e "s|/reports/|$work/kubernetes-$total/|" job-command)
    JOB_COMPLETION_INDEX=$((index - 1)) PATH="$work/bin:$PATH" \
      sh -c "$command --format json --filter '$filter' --repeat 2" > out 2>&1 || { cat out; exit 1; }
    index=$((index + 1))
  done
  for engine in github gitlab kubernetes; do check "$engine-$total"; done
done
echo "docs.ci_shards: 1, 3 and 7 shards of three engines merged to the unsharded fingerprint"
