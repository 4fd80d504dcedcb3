// The scenario files of scenarios/catalog/, embedded in the binary at build time by
// cmake/embed_files.cmake, so the catalogue works from any directory and after install.
#pragma once

#include <span>
#include <string_view>

namespace faultline::scenario {

struct EmbeddedFile {
  std::string_view path;  // relative to scenarios/catalog/, e.g. "demo/hello.yaml"
  std::string_view content;
};

std::span<const EmbeddedFile> EmbeddedCatalogFiles();

}  // namespace faultline::scenario
