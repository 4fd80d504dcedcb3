// The in-process reference client's lifecycle events as a trace holds them: the ClientEvent its
// adapter-protocol line would give (EventFromJson(event.ToJson())), made without the line, since
// a virtual run records a few dozen events and nothing reads the line.
//
// Thread-safety: a pure function.
#pragma once

#include "harness/trace/event.h"
#include "reference_impl/call_event.h"

namespace faultline::harness {

// Equal to EventFromJson(event.ToJson()), free text redacted as there (scenarios/redact.h).
ClientEvent EventFromReference(ref::LifecycleEvent event);

}  // namespace faultline::harness
