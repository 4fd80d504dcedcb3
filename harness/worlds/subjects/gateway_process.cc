#include "harness/worlds/subjects/gateway_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace faultline::harness {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kStopGrace = std::chrono::seconds(3);
constexpr auto kPoll = std::chrono::milliseconds(20);
constexpr int kPortTries = 3;  // a port picked free may be taken before the gateway binds it

sockaddr_in Loopback(std::uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

// The kernel's ephemeral ports (ip_local_port_range): where the fake provider's own listeners,
// bound to port 0, come from.
std::pair<int, int> EphemeralRange() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 32768, high = 60999;
  in >> low >> high;
  return {low, high};
}

bool Bindable(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in address = Loopback(port);
  const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return bound;
}

// A loopback port for a gateway to listen on (0: none found). Not an ephemeral one: between the
// pick and the gateway's bind, the provider could take that port for a route of another run, and
// the readiness probe would find that route listening instead of the gateway. Each pick of this
// process is a new port (runs go side by side), starting at a place of its own (another faultline
// process may pick too).
std::uint16_t FreePort() {
  static std::atomic<std::uint32_t> next{static_cast<std::uint32_t>(::getpid()) * 7919u};
  const auto [ephemeral_low, ephemeral_high] = EphemeralRange();
  // The range below the ephemeral one, else the one above it, past the privileged ports.
  int low = 10000, high = ephemeral_low - 1;
  if (high - low < 1000) {
    low = ephemeral_high + 1;
    high = 65535;
  }
  if (high - low < 100) return 0;
  const auto span = static_cast<std::uint32_t>(high - low + 1);
  for (int tries = 0; tries < 200; ++tries) {
    const auto port = static_cast<std::uint16_t>(low + next.fetch_add(1) % span);
    if (Bindable(port)) return port;
  }
  return 0;
}

bool Accepts(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in address = Loopback(port);
  const bool connected = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return connected;
}

std::string Tail(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  std::string all = text.str();
  constexpr std::size_t kKeep = 2000;
  return all.size() > kKeep ? "..." + all.substr(all.size() - kKeep) : all;
}

void Stop(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, WNOHANG) != 0) return;
  ::kill(-pid, SIGTERM);
  const auto give_up = Clock::now() + kStopGrace;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() >= give_up) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(kPoll);
  }
  ::kill(-pid, SIGKILL);  // whatever it left behind in its group
}

// Renders the definition's files and command for `place`.
std::expected<std::string, std::string> Prepare(const GatewayDefinition& definition,
                                                const GatewayPlace& place) {
  for (const GatewayDefinition::File& file : definition.files) {
    auto text = RenderTemplate(file.text, place);
    if (!text) return std::unexpected(fmt::format("{}: {}", file.name, text.error()));
    std::ofstream out(std::filesystem::path(place.dir) / file.name, std::ios::binary);
    out << *text;
    if (!out.flush()) return std::unexpected(fmt::format("cannot write {}", file.name));
  }
  return RenderTemplate(definition.command, place);
}

pid_t Spawn(const std::string& command, const std::string& dir) {
  const std::string log = dir + "/gateway.log";
  const pid_t pid = ::fork();
  if (pid != 0) {
    if (pid > 0) ::setpgid(pid, pid);
    return pid;
  }
  ::setpgid(0, 0);
  const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (out >= 0) {
    ::dup2(out, STDOUT_FILENO);
    ::dup2(out, STDERR_FILENO);
  }
  if (in >= 0) ::dup2(in, STDIN_FILENO);
  if (::chdir(dir.c_str()) != 0) ::_exit(126);
  ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
  ::_exit(127);
}

}  // namespace

std::expected<std::unique_ptr<GatewayProcess>, std::string> GatewayProcess::Start(
    const GatewayDefinition& definition, std::vector<Upstream> upstreams,
    std::chrono::milliseconds ready_within) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "faultline-gateway-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    return std::unexpected(
        fmt::format("cannot make a folder for the gateway: {}", std::strerror(errno)));
  }
  // The program may drop privileges (nginx's workers): its folder must stay usable to it.
  std::filesystem::permissions(pattern, std::filesystem::perms::all);
  std::string failure;
  for (int tries = 0; tries < kPortTries; ++tries) {
    GatewayPlace place{pattern, GatewayPackagesDir(), FreePort(), upstreams};
    if (place.listen_port == 0) {
      failure = "no free loopback port";
      continue;
    }
    auto command = Prepare(definition, place);
    std::vector<std::pair<std::string, std::string>> headers;
    for (const auto& [name, value] : definition.client_headers) {
      auto rendered = RenderTemplate(value, place);
      if (!rendered)
        command = std::unexpected(fmt::format("client_headers.{}: {}", name, rendered.error()));
      else
        headers.emplace_back(name, std::move(*rendered));
    }
    if (!command) {
      failure = command.error();
      break;
    }
    const pid_t pid = Spawn(*command, pattern);
    if (pid < 0) return std::unexpected(fmt::format("fork: {}", std::strerror(errno)));
    std::unique_ptr<GatewayProcess> process(new GatewayProcess(pattern, place.listen_port, pid));
    process->client_headers_ = std::move(headers);
    const auto give_up = Clock::now() + ready_within;
    int status = 0;
    bool exited = false;
    while (Clock::now() < give_up) {
      // Alive after its port accepts: the listener is the gateway's, not a bind that failed.
      if (Accepts(place.listen_port) && ::waitpid(pid, &status, WNOHANG) == 0) return process;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        exited = true;
        break;
      }
      std::this_thread::sleep_for(kPoll);
    }
    failure = exited ? fmt::format("{} exited (status {}) before listening: {}", definition.name,
                                   WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
                                   process->OutputTail())
                     : fmt::format("{} did not listen on port {} within {} ms: {}", definition.name,
                                   place.listen_port, ready_within.count(), process->OutputTail());
    process->pid_ = exited ? -1 : pid;
    if (!exited) return std::unexpected(failure);                // the destructor stops it
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) break;  // not installed: no retry
    process->dir_.clear();                                       // keep the folder for the next try
  }
  std::filesystem::remove_all(pattern);
  return std::unexpected(
      fmt::format("cannot start gateway {} ({}): {}", definition.name,
                  definition.needs.empty() ? "see its gateway.json" : definition.needs, failure));
}

GatewayProcess::~GatewayProcess() {
  if (pid_ > 0) Stop(pid_);
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

std::string GatewayProcess::base_url() const { return fmt::format("http://127.0.0.1:{}", port_); }

std::string GatewayProcess::OutputTail() const { return Tail(dir_ + "/gateway.log"); }

}  // namespace faultline::harness
