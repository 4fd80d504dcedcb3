#!/usr/bin/env bash
# Installs the Debian 12 packages faultline's build needs, skipping those already present.
# Safe to run again; needs root (or sudo) only when something is missing.
#
#   tools/setup.sh          the build, test and benchmark dependencies
#   tools/setup.sh --main   only what configuring and building the `faultline` binary needs (the
#                           README's main command, tools/run.sh): no Node.js, gateways or test
#                           tools, which on a bare machine are most of the download
#   tools/setup.sh --fuzz   also clang-19 and its compiler-rt (libFuzzer, ASan, UBSan) for the
#                           `fuzz` preset and tools/fuzz.sh; FAULTLINE_FUZZ=1 does the same
set -euo pipefail

fuzz=${FAULTLINE_FUZZ:-0}
main_only=0
for arg in "$@"; do
  case "$arg" in
    --fuzz) fuzz=1 ;;
    --main) main_only=1 ;;
    *) echo "usage: tools/setup.sh [--main] [--fuzz]" >&2; exit 2 ;;
  esac
done

# The configure step finds GoogleTest and Google Benchmark even when only the binary is built.
build_packages=(
  build-essential cmake ninja-build ccache pkg-config
  libboost1.81-dev libboost-url1.81-dev
  nlohmann-json3-dev libfmt-dev libyaml-cpp-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libjemalloc-dev  # the release preset's malloc (cmake/allocator.cmake)
)
packages=(
  "${build_packages[@]}"
  curl
  python3-simpy3  # fleet/bench/compare_simpy.sh: the SimPy model the simulator is measured against
  libxml2-utils  # xmllint: the JUnit XSD test (reports/tests/junit_xsd_test.cc)
  python3-yaml  # the CI examples' test parses docs/ci/*.yml (tools/test_ci_examples.sh)
  python3-jsonschema  # the adapter kits' tests check their lines against the protocol's schema
  nginx-light haproxy caddy  # the shipped gateways (faultline run --gateway; ctest gateways.findings)
)
# Debian 12 ships clang 19 in bookworm itself; libclang-rt-19-dev holds libFuzzer and the
# sanitizer runtimes that -fsanitize=fuzzer,address,undefined links.
fuzz_packages=()
if [[ "$fuzz" == 1 ]]; then fuzz_packages=(clang-19 libclang-rt-19-dev); fi

missing=()
if [[ "$main_only" == 1 ]]; then
  packages=("${build_packages[@]}" "${fuzz_packages[@]}")
else
  packages+=("${fuzz_packages[@]}")
  # Node.js runs the SDK adapters and smoke test, Python 3 the test adapters; keep whatever the
  # machine has, else take Debian's.
  command -v node >/dev/null || missing+=(nodejs)
  command -v python3 >/dev/null || missing+=(python3)
  command -v npm >/dev/null || missing+=(npm)
fi
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "setup: all $([[ "$main_only" == 1 ]] && echo "build" || echo "build and test") dependencies present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
# The gateways (nginx-light, haproxy, caddy) are programs faultline starts itself, per run: their
# packages must not start them as services, where two would fight over port 80 and a failed start
# fails the install. A policy-rc.d that denies every start (as container images ship) is put in
# place for the install when the machine has none, and removed after.
policy=/usr/sbin/policy-rc.d
if [[ ! -e "$policy" ]]; then
  printf '#!/bin/sh\nexit 101\n' | "${sudo_cmd[@]}" tee "$policy" >/dev/null
  "${sudo_cmd[@]}" chmod 755 "$policy"
  trap '"${sudo_cmd[@]}" rm -f "$policy"' EXIT
fi
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
