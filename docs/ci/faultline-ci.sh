#!/bin/sh
# The CI step both examples run (github-actions.yml, gitlab-ci.yml): your scenarios (or the
# built-in catalogue) against your client, the reports in one folder, and the Markdown summary
# appended to the CI's step summary when there is one. Exits with faultline's own code, so the
# job fails exactly when a check fails (1), a subject breaks (3), the run is interrupted (4), a
# report cannot be written (5: a full disk; no earlier run's report is left in the folder to be
# published as this one's) or a threshold is crossed (99).
#
#   faultline-ci.sh [faultline run arguments...]
#
# Environment:
#   FAULTLINE             the faultline binary (default: faultline on PATH)
#   FAULTLINE_REPORTS     the report folder (default: faultline-reports)
#   GITHUB_STEP_SUMMARY   set by GitHub Actions: summary.md is appended to it
set -u
faultline=${FAULTLINE:-faultline}
reports=${FAULTLINE_REPORTS:-faultline-reports}
"$faultline" run --out "$reports" "$@"
status=$?
if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -s "$reports/summary.md" ]; then
  cat "$reports/summary.md" >> "$GITHUB_STEP_SUMMARY"
fi
exit "$status"
