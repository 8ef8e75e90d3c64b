#include "runtime/reference/value_kernels.h"

#include <algorithm>

#include "core/check.h"
#include "runtime/reference/tensor_util.h"
#include "runtime/reference/value_util.h"

namespace qtune::runtime {

const ValueKernelRegistry& ValueKernelRegistry::Get() {
  static const ValueKernelRegistry* const registry = [] {
    auto* r = new ValueKernelRegistry();
    RegisterSequenceKernels(*r);
    RegisterOptionalKernels(*r);
    return r;
  }();
  return *registry;
}

void ValueKernelRegistry::Register(std::string op_type, ValueKernel kernel) {
  QTUNE_CHECK(kernel != nullptr);
  const bool inserted = kernels_.emplace(std::move(op_type), kernel).second;
  QTUNE_CHECK(inserted);
}

ValueKernel ValueKernelRegistry::FindFor(const ir::Node& node) const {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return nullptr;
  auto it = kernels_.find(node.op_type());
  return it == kernels_.end() ? nullptr : it->second;
}

std::vector<std::string> ValueKernelRegistry::OpTypes() const {
  std::vector<std::string> out;
  out.reserve(kernels_.size());
  for (const auto& [name, kernel] : kernels_) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

StatusOr<std::vector<RunValue>> ValueIdentity(const ValueKernelArgs& args) {
  if (args.inputs.size() != 1) {
    return reference::NodeError(args.node,
                                "expects 1 input but has " + std::to_string(args.inputs.size()));
  }
  const RunValue& in = args.inputs[0];
  if (in.is_tensor()) {
    if (!in.tensor().is_valid()) {
      return reference::NodeError(args.node, "input 0 is required but is omitted");
    }
    return std::vector<RunValue>{RunValue::Of(in.tensor().Clone())};
  }
  if (in.is_none()) return std::vector<RunValue>{RunValue::None()};
  std::vector<Tensor> elements;
  elements.reserve(in.sequence().size());
  for (const Tensor& t : in.sequence()) elements.push_back(reference::Keepable(t));
  return std::vector<RunValue>{RunValue::Sequence(in.elem_dtype(), std::move(elements))};
}

StatusOr<std::vector<RunValue>> RunSequenceMap(const ValueKernelArgs& args,
                                               const SequenceMapBody& run_body) {
  const ir::Node& node = args.node;
  ASSIGN_OR_RETURN(const RunValue* first, reference::SequenceInput(args, 0, "input_sequence"));
  const size_t length = first->sequence().size();
  for (size_t i = 1; i < args.inputs.size(); ++i) {
    const RunValue& in = args.inputs[i];
    if (in.is_sequence() && in.sequence().size() != length) {
      return reference::NodeError(node, "input " + std::to_string(i) + " is a sequence of " +
                                            std::to_string(in.sequence().size()) +
                                            " tensors but input 0 has " + std::to_string(length) +
                                            "; SequenceMap's sequences must have one length");
    }
    if (!in.is_sequence() && !(in.is_tensor() && in.tensor().is_valid())) {
      return reference::NodeError(node, "input " + std::to_string(i) +
                                            " must be a tensor or a "
                                            "sequence but is " +
                                            std::string(reference::ValueKindName(in)));
    }
  }
  const size_t num_outputs = node.num_outputs();
  std::vector<std::vector<Tensor>> gathered(num_outputs);
  std::vector<Tensor> body_inputs(args.inputs.size());
  for (size_t iteration = 0; iteration < length; ++iteration) {
    for (size_t i = 0; i < args.inputs.size(); ++i) {
      const RunValue& in = args.inputs[i];
      body_inputs[i] = in.is_sequence() ? in.sequence()[iteration] : in.tensor();
    }
    StatusOr<std::vector<Tensor>> outputs = run_body(body_inputs);
    if (!outputs.ok()) {
      return outputs.status().WithContext(node.DebugName() + ", iteration " +
                                          std::to_string(iteration));
    }
    if (outputs->size() != num_outputs) {
      return reference::NodeError(node, "the body returned " + std::to_string(outputs->size()) +
                                            " outputs but the node has " +
                                            std::to_string(num_outputs));
    }
    for (size_t j = 0; j < num_outputs; ++j) {
      const Tensor& t = (*outputs)[j];
      if (!gathered[j].empty() && t.dtype() != gathered[j].front().dtype()) {
        return reference::NodeError(
            node, "body output " + std::to_string(j) + " changed type from " +
                      std::string(DataTypeName(gathered[j].front().dtype())) + " to " +
                      std::string(DataTypeName(t.dtype())) + " at iteration " +
                      std::to_string(iteration));
      }
      gathered[j].push_back(t.Clone());
    }
  }
  std::vector<RunValue> result;
  result.reserve(num_outputs);
  for (size_t j = 0; j < num_outputs; ++j) {
    DataType elem_dtype = gathered[j].empty() ? DataType::kUndefined : gathered[j][0].dtype();
    if (elem_dtype == DataType::kUndefined && node.output(j) != nullptr) {
      elem_dtype = node.output(j)->dtype();
    }
    result.push_back(RunValue::Sequence(elem_dtype, std::move(gathered[j])));
  }
  return result;
}

}  // namespace qtune::runtime
