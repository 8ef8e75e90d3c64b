// WeightFingerprint: SHA-256 digests of a model's weights, stored in a checkpoint instead
// of the weights themselves. Loading a checkpoint with a model compares the model's
// fingerprint against the stored one, so a checkpoint tuned on one set of weights never
// runs silently on another (docs/formats/checkpoint.md, "weights").
//
// What counts as a weight, for a graph as loaded (before any pass):
//   - every initializer, under its value name;
//   - every Constant node, under its output's value name (models such as ppocrv4_det keep
//     their weights in Constant nodes);
//   - every subgraph attribute (If/Loop/Scan body, which may hold its own initializers),
//     under "<node>/<attribute>" or "<node>/<attribute>[i]", hashing the serialized body.
// Value names are unique in a graph, so the names never collide.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"

namespace qtune::tune {

struct WeightFingerprint {
  // name -> SHA-256 hex of the weight's dtype, sizes and bytes; sorted by name, names
  // unique.
  std::vector<std::pair<std::string, std::string>> initializers;
  // SHA-256 hex over the list above ("<name>\0<hex>\n" per entry, in order). Empty only
  // in a default-constructed fingerprint ("none recorded").
  std::string whole;

  bool empty() const { return whole.empty(); }
  bool operator==(const WeightFingerprint&) const = default;
};

// Fingerprints `graph` (see the list above). Deterministic: the same weights give the same
// fingerprint however the model was loaded or built, whatever the node order. A Constant
// node whose value ir::ConstantValue cannot read (value_string(s)) is hashed through its
// attribute instead, so this never fails.
WeightFingerprint FingerprintWeights(const ir::Graph& graph);

// The `whole` digest of a sorted list of entries.
std::string WholeDigest(const std::vector<std::pair<std::string, std::string>>& entries);

// JSON form: {"algorithm": "sha256", "whole": HEX, "tensors": [{"name", "sha256"}, ...]}.
nlohmann::json WeightFingerprintToJson(const WeightFingerprint& fingerprint);
// Inverse of WeightFingerprintToJson. DataLoss naming the field on a missing or mistyped
// field, a malformed digest, unsorted or repeated names, or a `whole` that does not match
// the list. `where` prefixes the messages (e.g. "'model.qtc' manifest.json: weights").
StatusOr<WeightFingerprint> WeightFingerprintFromJson(const nlohmann::json& json,
                                                      const std::string& where);

// OK when `model`'s weights are exactly those fingerprinted in `stored`. Otherwise
// FailedPrecondition naming the first differing weight in name order (changed bytes,
// missing from the model, or extra in the model), how many differ in all, and the way out
// (--allow-weight-mismatch). Also FailedPrecondition when `stored` is empty.
Status CheckWeights(const WeightFingerprint& stored, const ir::Graph& model);

}  // namespace qtune::tune
