#include "pass_test_util.h"

namespace qtune::passes::testing {

PassOptions TestOptions() {
  PassOptions options;
  options.verify_after_each_pass = true;
  return options;
}

StatusOr<std::vector<Tensor>> ToyEvaluator::operator()(const ir::Node& node,
                                                       std::span<const Tensor> inputs,
                                                       int64_t opset) const {
  if (calls != nullptr) ++*calls;
  if (node.op_type() == "Fail") return InvalidArgumentError(node.DebugName() + ": bad input");
  if (node.op_type() != "Add" && node.op_type() != "Mul") {
    return UnimplementedError("toy evaluator has no " + node.op_type());
  }
  const Tensor& a = inputs[0];
  const Tensor& b = inputs[1];
  if (b.num_elements() != 1 && b.sizes() != a.sizes()) {
    return UnimplementedError("toy evaluator does not broadcast");
  }
  Tensor out = a.Clone();
  float* data = out.data<float>();
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    float rhs = b.data<float>()[b.num_elements() == 1 ? 0 : i];
    data[i] = node.op_type() == "Add" ? data[i] + rhs : data[i] * rhs;
  }
  return std::vector<Tensor>{out};
}

}  // namespace qtune::passes::testing
