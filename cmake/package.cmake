# The Debian package: `cpack -G DEB` in a build folder (after the build) makes
# faultline_<version>_amd64.deb from the install() rules: bin/faultline (the scenario catalogue,
# the presets and the schemas are embedded in it, so it runs from any directory), the shipped
# adapters and the schemas in share/faultline/, README.md and docs/ in share/doc/faultline/.
# tools/test_deb.sh builds it, unpacks it and runs the catalogue from elsewhere (ctest
# install.deb); docs/ci/github-actions-matrix.yml builds it once and installs it in every shard.
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "faultline")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")  # the one version home: project() above
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "chaos-testing of the recovery paths of LLM API clients")
set(CPACK_PACKAGE_CONTACT "faultline maintainers <faultline@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION "devel")
# faultline_<version>_<arch>.deb, Debian's own naming, instead of CPack's faultline-<v>-Linux.deb.
set(CPACK_DEBIAN_FILE_NAME "DEB-DEFAULT")
# Depends from the libraries the binary links (fmt, yaml-cpp, libstdc++; Boost.URL is linked
# statically), as dpkg-shlibdeps reads them from the binary: the package names and the least
# versions of the distribution it is built on, never a list kept by hand that drifts from the
# link line. dpkg-shlibdeps is in dpkg-dev, which build-essential (tools/setup.sh) brings.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The shipped adapters are scripts for these; the binary and the catalogue need neither.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3, nodejs")
set(CPACK_STRIP_FILES ON)  # the symbols are for debugging a build, not for the package
include(CPack)
