// A gateway as a subject (docs/gateways.md): a program between the client and the scenario's
// routes, which are its upstreams. A definition says how to start it and how to configure it: a
// folder with gateway.json (its command, its config files, what it declares of its own retries)
// and the config templates, filled from the scenario's routes at each run. The definitions
// shipped with faultline (definitions/) are embedded; `--gateway DIR` reads a user's own.
//
// This file is the core (parsing and rendering, no I/O but the reading of a definition folder);
// worlds/subjects/gateway_process.h starts and stops the program.
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace faultline::harness {

// What a gateway states of its own recovery, which the gateway checks hold it to.
struct GatewayDeclaration {
  // Upstream requests one client request may cause (its first try and its retries): the bound
  // on amplification (GW-001).
  int max_upstream_attempts = 1;
};

struct GatewayDefinition {
  std::string name;
  std::string description;
  std::string needs;  // what must be installed, as a person would install it
  // Run with /bin/sh -c from the run's folder; {{dir}} and {{listen_port}} are filled in.
  std::string command;
  struct File {
    std::string name;  // written into the run's folder under this name
    std::string text;  // a template (RenderTemplate)
  };
  std::vector<File> files;
  // Header fields the client sends the gateway on every request, values rendered as templates
  // (a gateway that routes by header: Portkey's x-portkey-config).
  std::vector<std::pair<std::string, std::string>> client_headers;
  // The dialects it can stand in front of (empty: any); other scenarios are left out of its run.
  std::vector<std::string> dialects;
  GatewayDeclaration declares;
};

// One upstream of a run: a route of the scenario on its own port.
struct Upstream {
  std::string id;
  std::string host;  // 127.0.0.1
  std::uint16_t port = 0;
  bool backup = false;  // a route of lower priority than the first (priority > the lowest)
};

// Where one run of a gateway stands.
struct GatewayPlace {
  std::string dir;       // a fresh folder of the run's own
  std::string packages;  // GatewayPackagesDir()
  std::uint16_t listen_port = 0;
  std::vector<Upstream> upstreams;  // in priority order
};

// Fills a template: {{dir}}, {{listen_port}}, {{packages}} (where harness/gateways/setup.sh
// installs the gateways that come as npm packages: FAULTLINE_GATEWAYS_DIR/packages);
// {{#upstreams}}...{{/upstreams}} once per upstream, in which {{id}}, {{host}}, {{port}} and
// {{index}} (0-based) name it and
// {{#backup}}...{{/backup}} / {{^backup}}...{{/backup}} keep their text only for a backup / a
// primary. Errors: an unknown name, an unclosed section.
std::expected<std::string, std::string> RenderTemplate(std::string_view text,
                                                       const GatewayPlace& place);

// Reads gateway.json (`json_text`, from `source`, for errors); `read_file` gives the text of a
// template named in it (nullopt: missing).
using TemplateReader = std::optional<std::string> (*)(std::string_view folder,
                                                      std::string_view name);
std::expected<GatewayDefinition, std::string> ParseGatewayDefinition(std::string_view json_text,
                                                                     std::string_view source,
                                                                     std::string_view folder,
                                                                     TemplateReader read_file);

// Where the gateways installed from npm live: $FAULTLINE_GATEWAYS_DIR/packages, else the source
// tree's harness/gateways/packages (harness/gateways/setup.sh installs them there).
std::string GatewayPackagesDir();

// A shipped gateway by name ("nginx"), else a folder holding gateway.json.
std::expected<GatewayDefinition, std::string> LoadGateway(std::string_view name_or_folder);
std::vector<std::string> BuiltinGatewayNames();

}  // namespace faultline::harness
