#include "runtime/plan/plan.h"

#include <fmt/format.h>

#include "core/shape.h"

namespace qtune::runtime {

int64_t PlanValue::byte_size() const {
  return NumElements(sizes) * static_cast<int64_t>(DataTypeSize(dtype));
}

std::string Plan::ToString() const {
  auto describe = [&](int id) {
    if (id < 0) return std::string("-");
    const PlanValue& v = values[id];
    std::string layout = v.layout == Layout::kNhwc ? ":nhwc" : "";
    return fmt::format("{}[{}]{}", v.name, SizesToString(v.sizes), layout);
  };
  std::string out;
  for (size_t i = 0; i < steps.size(); ++i) {
    const PlanStep& s = steps[i];
    std::vector<std::string> ins, outs;
    for (int id : s.inputs) {
      if (id >= 0 && values[id].kind == PlanValue::Kind::kConstant) continue;
      ins.push_back(describe(id));
    }
    for (int id : s.outputs) outs.push_back(describe(id));
    out += fmt::format("{:>4} {:<18} {:<28} {:<34} {} -> {}\n", i, s.op_type, s.node_name,
                       s.kernel->Describe(), fmt::join(ins, ", "), fmt::join(outs, ", "));
  }
  out += fmt::format("arena {} bytes, {} steps, {} threads\n", arena_bytes, steps.size(), threads);
  return out;
}

}  // namespace qtune::runtime
