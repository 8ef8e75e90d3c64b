#include "cli/tensor_args.h"

#include <random>

#include "core/npy.h"
#include "core/npz.h"
#include "core/tensor_limits.h"

namespace qtune::cli {

namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

StatusOr<std::vector<InputArg>> ParseInputArgs(const std::vector<std::string>& args,
                                               const ir::Graph& graph) {
  std::vector<InputArg> out;
  std::string names;
  for (const ir::Value* input : graph.inputs())
    names += (names.empty() ? "" : ", ") + input->name();
  for (const std::string& arg : args) {
    const size_t eq = arg.find('=');
    if (eq == 0) return InvalidArgumentError("--input '" + arg + "': the name before '=' is empty");
    if (eq != std::string::npos) {
      out.push_back({arg.substr(0, eq), arg.substr(eq + 1)});
      continue;
    }
    if (EndsWith(arg, ".npz")) {
      out.push_back({"", arg});
      continue;
    }
    if (graph.inputs().size() != 1) {
      return InvalidArgumentError("--input '" + arg + "': the model has " +
                                  std::to_string(graph.inputs().size()) + " inputs (" + names +
                                  "); name each one with NAME=FILE.npy, or pass a .npz file "
                                  "holding every input");
    }
    out.push_back({graph.inputs()[0]->name(), arg});
  }
  return out;
}

StatusOr<runtime::NamedTensors> LoadInputs(const std::vector<InputArg>& args) {
  runtime::NamedTensors inputs;
  for (const InputArg& arg : args) {
    if (arg.name.empty()) {
      ASSIGN_OR_RETURN(NpzEntries entries, ReadNpz(arg.path));
      for (auto& entry : entries) inputs.push_back(std::move(entry));
      continue;
    }
    ASSIGN_OR_RETURN(Tensor t, ReadNpy(arg.path));
    inputs.emplace_back(arg.name, std::move(t));
  }
  return inputs;
}

StatusOr<std::map<std::string, std::vector<int64_t>>> ParseShapes(
    const std::vector<std::string>& args) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const std::string& arg : args) {
    size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgumentError("--shape '" + arg + "': use NAME=1x3x224x224");
    }
    std::vector<int64_t> sizes;
    std::string rest = arg.substr(eq + 1);
    size_t pos = 0;
    while (pos <= rest.size()) {
      size_t x = rest.find('x', pos);
      std::string part = rest.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
      char* end = nullptr;
      long long v = std::strtoll(part.c_str(), &end, 10);
      if (part.empty() || *end != '\0' || v < 0) {
        return InvalidArgumentError("--shape '" + arg + "': '" + part + "' is not a size");
      }
      sizes.push_back(v);
      if (x == std::string::npos) break;
      pos = x + 1;
    }
    shapes[arg.substr(0, eq)] = sizes;
  }
  return shapes;
}

StatusOr<std::map<std::string, std::vector<int64_t>>> ResolveInputSizes(
    const ir::Graph& graph, const std::map<std::string, std::vector<int64_t>>& shapes) {
  std::map<std::string, std::vector<int64_t>> sizes;
  for (const auto& [name, s] : shapes) {
    const ir::Value* v = graph.FindValue(name);
    if (v == nullptr || !v->is_graph_input()) {
      return InvalidArgumentError("--shape names '" + name + "', which is not a model input");
    }
  }
  for (const ir::Value* input : graph.inputs()) {
    auto it = shapes.find(input->name());
    if (it != shapes.end()) {
      sizes[input->name()] = it->second;
      continue;
    }
    const auto& shape = input->type().shape;
    if (!shape || !shape->is_fully_known()) {
      return InvalidArgumentError("input '" + input->name() + "' has sizes " +
                                  (shape ? shape->ToString() : std::string("unknown")) +
                                  "; give them with --shape " + input->name() + "=...");
    }
    sizes[input->name()] = shape->sizes();
  }
  // Before anything is compiled for them: a plan for absurd sizes may fail worse than an
  // allocation (a dimension of 2^32 crashed with SIGFPE).
  for (const ir::Value* input : graph.inputs()) {
    if (Status s = CheckTensorSize(input->dtype(), sizes[input->name()]); !s.ok()) {
      return InvalidArgumentError("input '" + input->name() + "': " + s.message() +
                                  "; give smaller sizes with --shape " + input->name() + "=...");
    }
  }
  return sizes;
}

StatusOr<runtime::NamedTensors> RandomInputs(
    const ir::Graph& graph, const std::map<std::string, std::vector<int64_t>>& sizes,
    uint64_t seed) {
  std::mt19937_64 rng(seed);
  runtime::NamedTensors inputs;
  for (const ir::Value* input : graph.inputs()) {
    ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(input->dtype(), sizes.at(input->name())));
    if (input->dtype() == DataType::kFloat32) {
      std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
      for (float& v : t.span<float>()) v = dist(rng);
    } else if (input->dtype() == DataType::kInt64) {
      for (int64_t& v : t.span<int64_t>()) v = static_cast<int64_t>(rng() % 10);
    } else if (input->dtype() == DataType::kInt32) {
      for (int32_t& v : t.span<int32_t>()) v = static_cast<int32_t>(rng() % 10);
    } else {
      return UnimplementedError("random data for input '" + input->name() + "' of type " +
                                std::string(DataTypeName(input->dtype())) +
                                " is not supported; pass --input");
    }
    inputs.emplace_back(input->name(), std::move(t));
  }
  return inputs;
}

}  // namespace qtune::cli
