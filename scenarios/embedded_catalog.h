// The scenario files of scenarios/catalog/ and the fleet experiments of scenarios/fleet/, embedded
// in the binary at build time by cmake/embed_files.cmake, so the catalogue and the README's
// `faultline simulate` examples work from any directory and after install.
#pragma once

#include <span>
#include <string_view>

namespace faultline::scenario {

struct EmbeddedFile {
  std::string_view
      path;  // relative to its folder, e.g. "demo/hello.yaml" or "rate-limit-storm.yaml"
  std::string_view content;
};

std::span<const EmbeddedFile> EmbeddedCatalogFiles();         // scenarios/catalog/
std::span<const EmbeddedFile> EmbeddedFleetFiles();           // scenarios/fleet/
std::span<const EmbeddedFile> EmbeddedGatewayCatalogFiles();  // scenarios/gateways/

}  // namespace faultline::scenario
