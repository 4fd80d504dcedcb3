#!/usr/bin/env bash
# Measures what the README's main command costs on a bare Debian 12: a `debootstrap
# --variant=minbase bookworm` root (no compiler, no Python, no ccache), a fresh clone of this
# repository's HEAD in it, then `tools/run.sh` inside it with every output line timestamped.
# Prints when the packages were in, when the binary was linked, when the virtual verdicts were
# all out, and when the run ended, in seconds from the start.
#
#   tools/bare_first_verdict.sh [WORK_DIR]     (as root; needs debootstrap and the Debian mirror)
#
# WORK_DIR (default: a new folder under /tmp) holds the root and the timestamped log; it is left
# in place for a look afterwards, with its mounts undone. The root shares this machine's kernel
# and cores: run it on a quiet machine, since other work slows the build.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d /tmp/bare.XXXX)}
root=$work/root
log=$work/run.log
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

if [[ $(id -u) -ne 0 ]]; then echo "bare_first_verdict: run it as root (chroot, mount)" >&2; exit 2; fi
command -v debootstrap >/dev/null || { echo "bare_first_verdict: needs debootstrap (apt-get install debootstrap)" >&2; exit 2; }
[[ -e $root ]] && { echo "bare_first_verdict: $root exists; give an empty WORK_DIR" >&2; exit 2; }
mkdir -p "$work"

echo "bare_first_verdict: debootstrap minbase bookworm into $root (not timed)" >&2
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
  { echo "bare_first_verdict: debootstrap failed, see $work/debootstrap.log" >&2; exit 1; }
cp /etc/resolv.conf "$root/etc/resolv.conf"
cat >"$root/etc/apt/sources.list" <<LIST
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
LIST
# On any exit: end what still runs inside the root (an interrupted build), then undo the mounts
# (lazily if busy), so that removing WORK_DIR afterwards can never reach this machine's /dev.
undo() {
  for proc in /proc/[0-9]*; do
    [[ $(readlink "$proc/root" 2>/dev/null) == "$root" ]] && kill -9 "${proc#/proc/}" 2>/dev/null
  done
  for mount in "$root/dev/pts" "$root/dev" "$root/proc"; do
    mountpoint -q "$mount" && { umount "$mount" 2>/dev/null || umount -l "$mount"; }
  done
  return 0
}
trap undo EXIT
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
git clone -q "$repo" "$root/root/faultline"

echo "bare_first_verdict: tools/run.sh in the bare root, log in $log" >&2
status=0
# date +%s.%N before each line: the minbase root has no awk-free clock but date.
chroot "$root" bash -c 'cd /root/faultline && date +%s.%N >/root/start &&
  tools/run.sh 2>&1 | while IFS= read -r line; do printf "%s %s\n" "$(date +%s.%N)" "$line"; done
  exit "${PIPESTATUS[0]}"' >"$log" 2>&1 || status=$?
end=$(date +%s.%N)
start=$(cat "$root/root/start")

since() { awk -v s="$start" -v pat="$1" 'index($0, pat) { printf "%.0f", $1 - s; exit }' "$log"; }
packages=$(since "[1/")
linked=$(since "Linking CXX executable harness/faultline")
# The first progress line after the link: by then the virtual runs (which start first) are done.
verdicts=$(awk -v s="$start" '/Linking CXX executable harness\/faultline/ { l = 1; next }
  l && /\[[0-9]+\/[0-9]+\]/ { printf "%.0fs, runs done %s", $1 - s, $2; exit }' "$log")
printf 'packages in, build started: %ss\nbinary linked:              %ss\nfirst progress after link:  %s\nrun ended:                  %.0fs, exit %s\n' \
  "${packages:-?}" "${linked:-?}" "${verdicts:-?}" "$(echo "$end - $start" | awk '{print $1 - $3}')" "$status"
grep -a "fingerprint" "$log" | head -1 | cut -d' ' -f2- || true
exit "$status"
