#include "fake_provider/plan/plan.h"

#include <algorithm>

namespace faultline::provider {

Duration PlanEnd(const ResponsePlan& plan) {
  Duration end{0};
  for (const PlanStep& step : plan.steps) end = std::max(end, step.at);
  return end;
}

}  // namespace faultline::provider
