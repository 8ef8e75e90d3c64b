#include "runtime/kernels/kernel_registry.h"

#include <algorithm>

#include "core/check.h"
#include "runtime/kernels/onednn_context.h"

namespace qtune::runtime {
namespace {

std::string DtypeList(const std::vector<DataType>& dtypes) {
  std::string out;
  for (DataType t : dtypes) {
    if (!out.empty()) out += "/";
    out += std::string(DataTypeName(t));
  }
  return out;
}

std::string OpsetRange(const KernelRegistration& r) {
  return r.opset_until == kAnyOpset
             ? std::to_string(r.opset_since) + "+"
             : std::to_string(r.opset_since) + "-" + std::to_string(r.opset_until);
}

}  // namespace

const char* KernelTierName(KernelTier tier) {
  switch (tier) {
    case KernelTier::kOnednn:
      return "onednn";
    case KernelTier::kNative:
      return "native";
    case KernelTier::kReference:
      return "reference";
  }
  return "?";
}

const KernelRegistry& KernelRegistry::Builtin() {
  static const KernelRegistry* registry = [] {
    auto* r = new KernelRegistry();
    RegisterBuiltinKernels(*r);
    return r;
  }();
  return *registry;
}

std::string KernelRegistry::Key(const std::string& domain, const std::string& op_type) {
  return (domain == "ai.onnx" ? std::string() : domain) + "::" + op_type;
}

void KernelRegistry::Register(KernelRegistration registration) {
  QTUNE_CHECK(registration.factory != nullptr && !registration.ops.empty());
  registrations_.push_back(std::move(registration));
  const size_t index = registrations_.size() - 1;
  for (const KernelOp& op : registrations_[index].ops) {
    std::vector<size_t>& list = by_op_[Key(op.domain, op.op_type)];
    // Stable: after every registration of the same or higher priority.
    auto at = std::find_if(list.begin(), list.end(), [&](size_t i) {
      return registrations_[i].priority < registrations_[index].priority;
    });
    list.insert(at, index);
  }
}

void KernelRegistry::SetFallback(KernelRegistration registration) {
  QTUNE_CHECK(registration.factory != nullptr);
  fallback_ = std::move(registration);
}

std::vector<const KernelRegistration*> KernelRegistry::Candidates(
    const std::string& domain, const std::string& op_type) const {
  std::vector<const KernelRegistration*> out;
  auto it = by_op_.find(Key(domain, op_type));
  if (it == by_op_.end()) return out;
  for (size_t i : it->second) out.push_back(&registrations_[i]);
  return out;
}

std::string KernelRegistry::FilterReason(const KernelRegistration& registration,
                                         const KernelRequest& request) {
  if (request.opset < registration.opset_since || request.opset > registration.opset_until) {
    return "opset " + std::to_string(request.opset) + " outside its range " +
           OpsetRange(registration);
  }
  if (!registration.input_dtypes.empty() && !request.inputs.empty() &&
      request.inputs[0] != nullptr) {
    const DataType dtype = request.inputs[0]->dtype;
    if (std::find(registration.input_dtypes.begin(), registration.input_dtypes.end(), dtype) ==
        registration.input_dtypes.end()) {
      return "input 0 is " + std::string(DataTypeName(dtype)) + ", it takes " +
             DtypeList(registration.input_dtypes);
    }
  }
  return "";
}

StatusOr<KernelSelection> KernelRegistry::Choose(const KernelRequest& request,
                                                 const ChooseOptions& options) const {
  KernelSelection selection;
  const ir::Node& node = request.node;
  std::string why_not;
  KernelRequest asked = request;
  asked.why_not = &why_not;
  for (const KernelRegistration* candidate : Candidates(node.domain(), node.op_type())) {
    if (!options.fast_tiers) {
      selection.passed_over.push_back({candidate->name, options.fast_tiers_off_reason});
      continue;
    }
    if (std::string reason = FilterReason(*candidate, request); !reason.empty()) {
      selection.passed_over.push_back({candidate->name, std::move(reason)});
      continue;
    }
    why_not.clear();
    ASSIGN_OR_RETURN(std::optional<KernelChoice> choice, candidate->factory(asked));
    if (choice) {
      selection.choice = std::move(*choice);
      selection.kernel = candidate->name;
      selection.tier = candidate->tier;
      return selection;
    }
    selection.passed_over.push_back(
        {candidate->name, why_not.empty() ? "not applicable (no reason given)" : why_not});
  }
  QTUNE_CHECK(fallback_.factory != nullptr);
  why_not.clear();
  ASSIGN_OR_RETURN(std::optional<KernelChoice> choice, fallback_.factory(asked));
  if (!choice) {
    return UnimplementedError(node.DebugName() + ": no kernel for op " + node.op_type() +
                              (why_not.empty() ? "" : " (" + why_not + ")"));
  }
  selection.choice = std::move(*choice);
  selection.kernel = fallback_.name;
  selection.tier = fallback_.tier;
  return selection;
}

bool KernelRegistry::Int8DotProductSupported() { return onednn::HasInt8DotProduct(); }

}  // namespace qtune::runtime
