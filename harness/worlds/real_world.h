// The real world: the fake provider serving over loopback sockets, and a subject calling it for
// real — the in-process reference client (on its own io_context) or any adapter process.
//
// One RealWorld hosts one provider Server for a whole run; each scenario run gets its own
// session (own base URL, attempt counter, journal), so runs can proceed concurrently from
// several threads. After the subject finishes, the world waits (bounded) for the provider to see
// every connection end, then snapshots the session's journal into the trace, with how late the
// machine ran things meanwhile (Trace::scheduling_lateness).
//
// Thread-safety: RunReference, RunAdapterSubject, RunAppSubject and RunGatewaySubject may be
// called concurrently.
#pragma once

#include <atomic>
#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>

#include "fake_provider/server/server.h"
#include "harness/trace/trace.h"
#include "harness/worlds/real_run.h"
#include "harness/worlds/scheduling_probe.h"
#include "reference_impl/policy.h"
#include "scenarios/scenario.h"

namespace faultline::harness {

struct AdapterLaunch;
struct AdapterRun;
class AdapterProcess;
struct GatewayDefinition;

class RealWorld {
 public:
  // Starts the provider on 127.0.0.1 (an ephemeral port) with its own thread.
  static std::expected<std::unique_ptr<RealWorld>, std::string> Start();
  ~RealWorld();
  RealWorld(const RealWorld&) = delete;
  RealWorld& operator=(const RealWorld&) = delete;

  // The scenario against the in-process reference client with `policy`.
  std::expected<Trace, std::string> RunReference(const scenario::Scenario& scenario,
                                                 const ref::RetryPolicy& policy,
                                                 const RealRunOptions& options);

  // The scenario against `command`: one process per call, or, when call 0's hello declares
  // session mode, that process serves every call; one that also declares `reset` is kept for the
  // command's next run (ServeFirstCall).
  std::expected<Trace, std::string> RunAdapterSubject(const scenario::Scenario& scenario,
                                                      const std::string& command,
                                                      const RealRunOptions& options);

  // The scenario against an unmodified app, one process per call, each told its call's
  // endpoints in its environment (subjects/app_subject.h).
  std::expected<Trace, std::string> RunAppSubject(const scenario::Scenario& scenario,
                                                  const AppSubject& app,
                                                  const RealRunOptions& options);

  // The scenario's routes behind a gateway program (harness/gateways/gateway.h), each on a port
  // of its own, called by the in-process reference client with `policy` as its one endpoint.
  // The journal holds what the gateway sent upstream (Trace::gateway).
  std::expected<Trace, std::string> RunGatewaySubject(const scenario::Scenario& scenario,
                                                      const GatewayDefinition& gateway,
                                                      const ref::RetryPolicy& policy,
                                                      const RealRunOptions& options);

 private:
  explicit RealWorld(std::unique_ptr<provider::Server> server);
  struct Session;
  std::expected<Session, std::string> Open(const scenario::Scenario& scenario, std::uint64_t seed);
  void Close(Session& session, Trace& trace);
  std::optional<Duration> FirstArrival(const std::string& session_id) const;
  AdapterLaunch AdapterLaunchOf(const Session& session, const scenario::Scenario& scenario,
                                const std::string& command, const RealRunOptions& options) const;

  // Call 0 of an adapter subject's run: on a process of its command that answered a reset in an
  // earlier run (session mode, docs/adapter-protocol.md), else on a new one; a process that
  // answers this run's reset is kept for the next.
  std::expected<AdapterRun, std::string> ServeFirstCall(const AdapterLaunch& launch);

  // Whether `command`'s hello declared session mode in an earlier run (nullopt: not known yet),
  // so that later runs need not wait for call 0's hello before starting the other calls.
  std::optional<bool> KnownMode(const std::string& command) const;
  void RememberMode(const std::string& command, bool session);

  std::unique_ptr<provider::Server> server_;
  std::thread thread_;
  SchedulingProbe probe_;  // how late the machine runs things, run by run
  std::atomic<std::uint64_t> next_session_{1};
  mutable std::mutex modes_mutex_;
  std::map<std::string, bool> modes_;  // command -> session mode, as its hello declared it
  std::mutex idle_mutex_;
  // Processes that answered a reset and wait for a run, by command; one per run that ended at
  // once, so never more than the runs in flight (--jobs).
  std::multimap<std::string, std::unique_ptr<AdapterProcess>> idle_;
};

}  // namespace faultline::harness
