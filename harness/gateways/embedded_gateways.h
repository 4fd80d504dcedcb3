// The gateway definitions shipped in harness/gateways/definitions/ (one folder each: gateway.json
// and its config templates), embedded at build time by cmake/embed_files.cmake so that
// `--gateway nginx` works from any directory and after install.
#pragma once

#include <span>

#include "scenarios/embedded_catalog.h"

namespace faultline::harness {

using scenario::EmbeddedFile;
std::span<const EmbeddedFile> EmbeddedGatewayFiles();  // paths like "nginx/gateway.json"

}  // namespace faultline::harness
