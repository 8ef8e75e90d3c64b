// A graph run twice on the same inputs: by the reference executor (no fusion) and by a
// Session (passes, fusions, fast kernels), with the op types of the Session's plan, for
// tests that check a fusion happened and kept the results.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "runtime/reference/reference_executor.h"
#include "runtime/session.h"

namespace qtune::runtime {

struct FusedRun {
  NamedTensors want;               // reference outputs
  NamedTensors got;                // the Session's outputs
  std::map<std::string, int> ops;  // plan steps per op type
  std::string plan;                // Plan::ToString(), for failure messages
};

inline StatusOr<FusedRun> RunFusedAndReference(const ir::Graph& graph, const NamedTensors& inputs) {
  FusedRun run;
  ASSIGN_OR_RETURN(run.want, RunReference(graph, inputs));
  ASSIGN_OR_RETURN(auto session, Session::Create(graph, SessionOptions{}));
  ASSIGN_OR_RETURN(run.got, session->Run(inputs));
  std::map<std::string, std::vector<int64_t>> sizes;
  for (const auto& [name, tensor] : inputs) sizes[name] = tensor.sizes();
  ASSIGN_OR_RETURN(const Plan* plan, session->Prepare(sizes));
  for (const PlanStep& step : plan->steps) ++run.ops[step.op_type];
  run.plan = plan->ToString();
  return run;
}

}  // namespace qtune::runtime
