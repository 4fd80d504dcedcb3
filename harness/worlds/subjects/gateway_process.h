// One run of a gateway program (harness/gateways/gateway.h) as a subject's middle: its config
// rendered into a fresh folder, the program started there in its own process group with its
// output going to gateway.log, and ready once its port accepts connections. The destructor stops
// it (SIGTERM to the group, SIGKILL after a grace) and removes the folder.
//
// Thread-safety: one thread owns a GatewayProcess.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <expected>
#include <memory>
#include <string>
#include <vector>

#include "harness/gateways/gateway.h"

namespace faultline::harness {

class GatewayProcess {
 public:
  // Starts `definition` in front of `upstreams`; errors say why, with the end of its output.
  static std::expected<std::unique_ptr<GatewayProcess>, std::string> Start(
      const GatewayDefinition& definition, std::vector<Upstream> upstreams,
      std::chrono::milliseconds ready_within = std::chrono::seconds(15));
  ~GatewayProcess();
  GatewayProcess(const GatewayProcess&) = delete;
  GatewayProcess& operator=(const GatewayProcess&) = delete;

  std::string base_url() const;  // http://127.0.0.1:PORT, where the client calls
  // The last lines the program wrote (its log), for a report.
  std::string OutputTail() const;
  // GatewayDefinition::client_headers, rendered for this run.
  const std::vector<std::pair<std::string, std::string>>& client_headers() const {
    return client_headers_;
  }

 private:
  GatewayProcess(std::string dir, std::uint16_t port, pid_t pid)
      : dir_(std::move(dir)), port_(port), pid_(pid) {}
  std::string dir_;
  std::uint16_t port_;
  pid_t pid_;
  std::vector<std::pair<std::string, std::string>> client_headers_;
};

}  // namespace faultline::harness
