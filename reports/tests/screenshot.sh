#!/usr/bin/env bash
# Renders a run result as the HTML report and screenshots it with headless Chromium, to look at
# the page the way a person would.
#   reports/tests/screenshot.sh RESULT.json OUT.png [WIDTHxHEIGHT]
# The renderer is $REPORTS_RENDER when set (the reports_render test tool), else `faultline report
# render` when the newest built faultline (or $FAULTLINE) has it, else the newest reports_render.
# Needs chromium (apt-get install -y chromium).
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 RESULT.json OUT.png [WIDTHxHEIGHT]" >&2
  exit 2
fi
result=$1
out=$2
size=${3:-1400x2000}
repo=$(cd "$(dirname "$0")/../.." && pwd)

find_built() {  # the newest build of target $1 under build/
  find "$repo/build" -type f -name "$1" -perm -u+x -printf '%T@ %p\n' 2>/dev/null |
    sort -rn | head -n1 | cut -d' ' -f2-
}

html=$(mktemp --suffix=.html)
trap 'rm -f "$html"' EXIT

render_with_tool() {
  "$1" html "$result" >"$html"
}

if [[ -n "${REPORTS_RENDER:-}" ]]; then
  render_with_tool "$REPORTS_RENDER"
else
  faultline=${FAULTLINE:-$(find_built faultline)}
  # `faultline report render` once the CLI has it (its --help then names the subcommand).
  if [[ -n "$faultline" ]] && "$faultline" --help 2>/dev/null | grep -qE '^ +report '; then
    "$faultline" report render --format html --output "$html" "$result"
  else
    render=$(find_built reports_render)
    if [[ -z "$render" ]]; then
      echo "no renderer: build the reports_render target (or faultline)" >&2
      exit 2
    fi
    render_with_tool "$render"
  fi
fi

browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [[ -z "$browser" ]]; then
  echo "chromium not found (apt-get install -y chromium)" >&2
  exit 2
fi
"$browser" --headless --disable-gpu --no-sandbox --hide-scrollbars \
  --screenshot="$(realpath -m "$out")" --window-size="${size/x/,}" "file://$html" 2>/dev/null
echo "$out"
