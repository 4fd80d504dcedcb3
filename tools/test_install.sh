#!/bin/sh
# Installs a build into a temporary prefix and runs the installed binary from another directory,
# as a user of `cmake --install` would: the catalogue (virtual time), a schema, the shipped
# Python adapter found beside the binary, and the docs in place. Used by ctest (install.catalogue).
#   tools/test_install.sh BUILD_DIR
set -eu
build=$1
prefix=$(mktemp -d /tmp/faultline-install.XXXXXX)
elsewhere=$(mktemp -d /tmp/faultline-elsewhere.XXXXXX)
trap 'rm -rf "$prefix" "$elsewhere"' EXIT
cmake --install "$build" --prefix "$prefix" > /dev/null
cd "$elsewhere"
unset FAULTLINE_ADAPTERS_DIR
"$prefix/bin/faultline" run --time virtual --out reports
test -s reports/result.json && test -s reports/junit.xml && test -s reports/summary.md
"$prefix/bin/faultline" schema scenario | grep -q '"\$schema"'
"$prefix/bin/faultline" schema protocol | grep -q '"urn:faultline:schema:adapter-protocol:1"'
for schema in scenario policy run-result adapter-protocol; do
  test -s "$prefix/share/faultline/schema/$schema.schema.json"
done
test -s "$prefix/share/doc/faultline/README.md"
test -s "$prefix/share/doc/faultline/docs/adapter-protocol.md"
# A shipped adapter is found beside the installed binary, not in the source tree: it runs, and
# once removed from the prefix it is reported missing there.
"$prefix/bin/faultline" run --adapter python-baseline --filter demo/hello-openai-chat \
  --no-reports --timeout 30 > adapter.out 2>&1 || { cat adapter.out; exit 1; }
rm "$prefix/share/faultline/adapters/python_baseline.py"
if "$prefix/bin/faultline" run --adapter python-baseline --filter demo/hello-openai-chat \
  --no-reports > missing.out 2>&1; then
  echo "the removed adapter still ran: not looked up beside the binary"; exit 1
fi
grep -q "$prefix/share/faultline/adapters/python_baseline.py not found" missing.out || {
  cat missing.out; exit 1; }
echo "install.catalogue: the installed faultline ran the catalogue from $elsewhere"
