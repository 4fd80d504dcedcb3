// The server's request handling on bytes alone, no sockets: the request reader fed an input
// the way a connection feeds it (append what arrives, Put, drop what was consumed), whole, at
// cuts drawn from the input and byte by byte, must complete the same request (method, target,
// headers, trailers, body, bytes left over) or none, refuse only with 400, 413 or 431, and while
// it reads never make the caller hold more than the header limit. Every request that completes then
// goes where the server sends it: the control API (access checks, then the handler) or a session of
// the built-in catalogue (admission, plan, journal entry), over an in-memory host. The limits are
// drawn from the input too.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "fake_provider/fuzz/fuzz_host.h"
#include "fake_provider/http_request.h"
#include "fake_provider/server/control_api.h"
#include "fuzz/fuzz_support.h"

namespace faultline::provider::fuzz {
namespace {

using namespace faultline::provider::internal;
using ref::fuzz::Fail;
using State = RequestReader::State;

struct Outcome {
  State state = State::kReading;
  int status = 0;  // the rejection's
  HttpRequest request;
  std::size_t left = 0;  // bytes after the request, for the next one

  std::string Describe() const {
    std::string out = std::to_string(static_cast<int>(state)) + " " + std::to_string(status) + " " +
                      request.method + " " + request.target + " body " +
                      std::to_string(request.body.size()) + " left " + std::to_string(left);
    for (const auto& h : request.headers) out += " [" + h.name + ": " + h.value + "]";
    for (const auto& t : request.trailers) out += " {" + t.name + ": " + t.value + "}";
    return out;
  }
  // A request completes whatever the split, and the same; an incomplete one may be refused or
  // still waiting depending on the split (Beast checks the first bytes it is given at once, and
  // later ones only once the header block is whole), so only its completeness must agree.
  bool operator==(const Outcome& other) const {
    const bool complete = state == State::kComplete;
    if (complete != (other.state == State::kComplete)) return false;
    if (!complete) return true;
    return left == other.left && request.method == other.request.method &&
           request.target == other.request.target && request.headers == other.request.headers &&
           request.trailers == other.request.trailers && request.body == other.request.body &&
           request.keep_alive == other.request.keep_alive;
  }
};

Outcome Read(const std::vector<std::string_view>& pieces, const RequestLimits& limits) {
  RequestReader reader(limits);
  std::string pending;
  std::size_t total = 0, consumed = 0;
  for (std::string_view piece : pieces) total += piece.size();
  for (std::string_view piece : pieces) {
    pending.append(piece);
    const std::size_t used = reader.Put(pending);
    consumed += used;
    pending.erase(0, used);
    if (reader.state() != State::kReading) break;
    if (pending.size() >= limits.max_header_bytes) {
      Fail("the reader keeps less than the header limit unconsumed", std::to_string(pending.size()),
           std::to_string(limits.max_header_bytes));
    }
  }
  if (reader.state() == State::kReading) reader.PutEof();
  Outcome out;
  out.state = reader.state();
  if (reader.rejection()) out.status = reader.rejection()->status;
  if (out.status != 0 && out.status != 400 && out.status != 413 && out.status != 431) {
    Fail("refusals are 400, 413 or 431", "", std::to_string(out.status));
  }
  if (out.state == State::kComplete) out.left = total - consumed;
  out.request = reader.Release();
  return out;
}

// What the connection does with a complete request, minus the socket. Admission takes the
// request's headers and body into the journal, as the server's does.
void Handle(HttpRequest request) {
  FuzzHost host(scenario::ParseLimits{.max_depth = 32, .max_keys = 2000});
  const Destination destination = ResolveTarget(request.target);
  if (destination.kind == Destination::Kind::kControl) {
    const internal::ControlAccess access{"", "127.0.0.1", {"faultline.test"}};
    if (ControlAccessDenied(access, request, 8080)) return;
    const internal::HttpReply reply =
        HandleControlRequest(host, request.method, request.target, request.body);
    if (reply.status < 200 || reply.status > 599) {
      Fail("control replies carry an HTTP status", std::to_string(reply.status), reply.body);
    }
    return;
  }
  if (destination.kind != Destination::Kind::kSession) return;
  const auto session = host.FindSession(destination.session_id);
  if (!session) return;
  const internal::Admission admission =
      session->Admit(request, destination.path, /*connection=*/1, false, host.Now());
  // 1, or 0 for a path the dialect does not serve (answered 404, not counted).
  if (admission.plan.attempt != 1 && admission.plan.attempt != 0) {
    Fail("a fresh session's first request is attempt 1 (or 0)", "1",
         std::to_string(admission.plan.attempt));
  }
}

}  // namespace
}  // namespace faultline::provider::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace faultline::provider::fuzz;
  namespace rf = faultline::ref::fuzz;
  const std::string_view input = rf::AsText(data, size);
  const std::uint64_t hash = rf::Hash(input);
  const faultline::provider::RequestLimits limits{64 + hash % 4096, (hash >> 16) % 8192};
  const Outcome whole = Read({input}, limits);
  const Outcome split = Read(rf::SplitByInput(input), limits);
  if (!(split == whole)) Fail("request whole vs split", whole.Describe(), split.Describe());
  const Outcome bytes = Read(rf::Bytewise(input), limits);
  if (!(bytes == whole)) Fail("request whole vs byte by byte", whole.Describe(), bytes.Describe());
  if (whole.state == faultline::provider::RequestReader::State::kComplete) Handle(whole.request);
  return 0;
}
