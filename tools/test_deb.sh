#!/bin/sh
# Builds the Debian package with CPack (cmake/package.cmake), checks its name, its declared
# dependencies and its contents, unpacks it without root (dpkg-deb -x) and runs the unpacked
# binary from another directory: the catalogue in virtual time, a schema, a shipped adapter
# found beside the binary. Used by ctest (install.deb, registered where dpkg-deb exists).
#   tools/test_deb.sh BUILD_DIR
set -eu
build=$(cd "$1" && pwd)
work=$(mktemp -d /tmp/faultline-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
cpack --config "$build/CPackConfig.cmake" -B "$work/out" > "$work/cpack.out" 2>&1 || {
  cat "$work/cpack.out"; echo "cpack failed"; exit 1; }
# The name Debian expects, with the version of the one version home (project() in
# CMakeLists.txt, as the build generated it into version.h).
version=$(sed -n 's/.*kVersion = "\(.*\)";/\1/p' "$build/generated/faultline/version.h")
deb="$work/out/faultline_${version}_$(dpkg --print-architecture).deb"
test -s "$deb" || { ls "$work/out"; echo "no $(basename "$deb")"; exit 1; }
test "$(dpkg-deb -f "$deb" Package)" = faultline
test "$(dpkg-deb -f "$deb" Version)" = "$version"
# Its runtime dependencies are declared: the package of every shared library the binary needs
# (readelf's NEEDED entries; libjemalloc2 with the release preset's allocator) is in Depends.
depends=$(dpkg-deb -f "$deb" Depends)
needed=$(readelf -d "$build/harness/faultline" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p')
test -n "$needed" || { echo "readelf found no shared library in $build/harness/faultline"; exit 1; }
for library in $needed; do
  # The runtime package of the library: dpkg -S lists every package with a path ending so.
  packages=$(dpkg -S "*/$library" 2>/dev/null | cut -d: -f1 | tr ',' ' ')
  test -n "$packages" || { echo "no installed package holds $library"; exit 1; }
  declared=0
  for package in $packages; do
    case " $(echo "$depends" | tr ',|' '  ') " in *" $package "*) declared=1 ;; esac
  done
  [ "$declared" = 1 ] || { echo "Depends lacks $library (package $packages): $depends"; exit 1; }
done
dpkg-deb -c "$deb" > "$work/contents"
for path in ./usr/bin/faultline ./usr/share/faultline/schema/scenario.schema.json \
  ./usr/share/faultline/adapters/python_baseline.py ./usr/share/doc/faultline/README.md \
  ./usr/share/doc/faultline/docs/ci/faultline-ci.sh; do
  grep -q " $path\$" "$work/contents" || { echo "the package lacks $path"; exit 1; }
done
dpkg-deb -x "$deb" "$work/root"
mkdir "$work/elsewhere"
cd "$work/elsewhere"
unset FAULTLINE_ADAPTERS_DIR
fl="$work/root/usr/bin/faultline"
"$fl" version | grep -q "faultline $version"
"$fl" run --time virtual --filter 'demo/*,rate-limit/*,stall/*' --out reports > run.out 2>&1 || {
  cat run.out; echo "the packaged binary did not pass the catalogue slice"; exit 1; }
test -s reports/result.json && test -s reports/report.html
"$fl" schema scenario | grep -q '"\$schema"'
if command -v python3 > /dev/null; then  # an adapter of the package, found beside its binary
  "$fl" run --adapter python-baseline --filter demo/hello-openai-chat --no-reports \
    --timeout 30 > adapter.out 2>&1 || { cat adapter.out; exit 1; }
fi
echo "install.deb: $(basename "$deb"), $(wc -c < "$deb") bytes, Depends: $depends"
echo "install.deb: from $work/elsewhere: $(grep passed run.out | tail -n 1)"
