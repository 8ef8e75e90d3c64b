// Parsing the tensor-related command-line arguments shared by run, bench and quantize:
//   --input NAME=FILE.npy   (repeatable)  or  --input FILE.npz  (every array by name)
//   --input FILE.npy        (a model with one input)
//   --shape NAME=1x3x224x224               (sizes for symbolic dims; bench)
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ir/graph.h"
#include "runtime/session.h"

namespace qtune::cli {

// One --input argument resolved against the model: a named .npy file, or (empty name) a
// .npz file holding inputs by name.
struct InputArg {
  std::string name;
  std::string path;
};

// Resolves the --input arguments: NAME=FILE.npy, FILE.npz, or a bare FILE.npy when the model
// has exactly one input (it names that input). Reads no file. Errors (InvalidArgument) are
// usage errors naming the argument and the model's inputs.
StatusOr<std::vector<InputArg>> ParseInputArgs(const std::vector<std::string>& args,
                                               const ir::Graph& graph);

// Reads the files. Errors (a missing or malformed file) name the argument and the file.
StatusOr<runtime::NamedTensors> LoadInputs(const std::vector<InputArg>& args);

// Parses "NAME=1x3x224x224" arguments.
StatusOr<std::map<std::string, std::vector<int64_t>>> ParseShapes(
    const std::vector<std::string>& args);

// Sizes for every graph input: from `shapes` when given, else the model's static sizes;
// symbolic dimensions without a --shape are an error that names them.
StatusOr<std::map<std::string, std::vector<int64_t>>> ResolveInputSizes(
    const ir::Graph& graph, const std::map<std::string, std::vector<int64_t>>& shapes);

// Seeded random inputs of the given sizes (floats uniform in [-1, 1], integers in [0, 10)).
StatusOr<runtime::NamedTensors> RandomInputs(
    const ir::Graph& graph, const std::map<std::string, std::vector<int64_t>>& sizes,
    uint64_t seed);

}  // namespace qtune::cli
