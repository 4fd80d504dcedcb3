// Every response a scenario scripts, for tools that visit them all (the segmentation property
// test, the fuzz corpus writer): its `responses:` entries in order, then, with chaos, each fault
// choice and the `otherwise` entry. Pointers into the scenario, valid while it lives.
//
// Header-only; pure. Thread-safety: reentrant.
#pragma once

#include <vector>

#include "scenarios/scenario.h"

namespace faultline::scenario {

inline std::vector<const ResponseSpec*> ScriptedResponses(const Scenario& scenario) {
  std::vector<const ResponseSpec*> out;
  for (const ResponseSpec& response : scenario.responses) out.push_back(&response);
  if (scenario.chaos) {
    for (const Chaos::Choice& choice : scenario.chaos->faults) out.push_back(&choice.response);
    out.push_back(&scenario.chaos->otherwise);
  }
  return out;
}

}  // namespace faultline::scenario
