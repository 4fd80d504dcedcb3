// The cassette of one proxied exchange (`faultline proxy --record DIR`): what the upstream
// answered, with its timing, as scenarios/cassette/cassette.h writes it, so that the fake provider
// can play it back (a scenario entry `cassette: FILE`).
//
// It is built from the journal's record of the exchange (ExchangeRecord): the request as the
// client sent it (credentials redacted, as the journal has them; the body's secrets redacted
// too), and the upstream's bytes read again write by write with the reference client's HTTP
// parser, so each write keeps the body bytes that arrived in it and their time. The journal line
// keeps the same data for a person (both sides, whole bytes); the cassette is the replayable
// form of its upstream side. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <expected>
#include <string>

#include "proxy/proxy_core.h"
#include "scenarios/cassette/cassette.h"

namespace faultline::proxy {

// The cassette, or why there is none (the upstream was not called, or sent no whole head).
std::expected<scenario::Cassette, std::string> CassetteOf(const ExchangeRecord& record);

// The file name a recording gives exchange `index` (1-based) (scenarios/cassette/cassette.h).
using scenario::CassetteFileName;

}  // namespace faultline::proxy
