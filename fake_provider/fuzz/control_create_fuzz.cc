// The control API's session creation on any body: POST /_faultline/sessions answers one of its
// documented statuses with a JSON body, never throws, and a session it creates works: it can be
// read, answers its first request with a plan (the scenario compiles), resets and goes away.
// The scenario limits are drawn from the input, so their edges are explored too.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "fake_provider/fuzz/fuzz_host.h"
#include "fake_provider/server/control_api.h"
#include "fake_provider/wire/dialect.h"
#include "fuzz/fuzz_support.h"

namespace faultline::provider::fuzz {
namespace {

using namespace faultline::provider::internal;
using ref::fuzz::Fail;

void ExpectStatus(const internal::HttpReply& reply, std::initializer_list<int> allowed,
                  const char* what) {
  for (const int status : allowed) {
    if (reply.status == status) {
      if (nlohmann::json::parse(reply.body, nullptr, false).is_discarded()) {
        Fail("control replies are JSON", what, reply.body);
      }
      return;
    }
  }
  Fail(what, std::to_string(reply.status), reply.body);
}

void Exercise(FuzzHost& host, const std::string& id) {
  const std::string base = "/_faultline/sessions/" + id;
  ExpectStatus(HandleControlRequest(host, "GET", base, ""), {200}, "a created session is found");
  // A scenario with routes is served by its routes (the session itself answers none): the first.
  auto session = host.FindSession(id);
  if (!session->scenario().routes.empty()) {
    session = host.FindSession(scenario::RouteSessionId(id, session->scenario().routes[0].id));
    if (!session) Fail("a created session's routes exist", id, "");
  }
  HttpRequest request;
  request.method = "POST";
  request.target = std::string(WriterFor(session->scenario().dialect).endpoint_path());
  request.body = R"({"stream":true})";
  const internal::Admission admission =
      session->Admit(request, request.target, /*connection=*/1, false, host.Now());
  if (admission.plan.attempt != 1)
    Fail("first attempt", "1", std::to_string(admission.plan.attempt));
  ExpectStatus(HandleControlRequest(host, "GET", base + "/journal", ""), {200}, "journal");
  ExpectStatus(HandleControlRequest(host, "POST", base + "/reset", ""), {200}, "reset");
  ExpectStatus(HandleControlRequest(host, "DELETE", base, ""), {200}, "delete");
}

}  // namespace
}  // namespace faultline::provider::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace faultline::provider::fuzz;
  namespace rf = faultline::ref::fuzz;
  const std::string_view body = rf::AsText(data, size);
  const std::uint64_t hash = rf::Hash(body);
  FuzzHost host(faultline::scenario::ParseLimits{.max_depth = 8 + static_cast<int>(hash % 57),
                                                 .max_keys = 16 + (hash >> 8) % 4000});
  const auto reply = HandleControlRequest(host, "POST", "/_faultline/sessions", body);
  ExpectStatus(reply, {201, 400, 409, 413, 429}, "creation answers a documented status");
  if (reply.status != 201) return 0;
  const auto created = nlohmann::json::parse(reply.body);
  Exercise(host, created.at("id").get<std::string>());
  return 0;
}
