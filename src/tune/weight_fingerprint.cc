#include "tune/weight_fingerprint.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/sha256.h"
#include "ir/constant.h"

namespace qtune::tune {
namespace {

using Entries = std::vector<std::pair<std::string, std::string>>;

// Feeds typed fields to a Sha256 unambiguously: every variable-length field is preceded by
// its length, so no two different field sequences hash the same byte stream.
class FieldHasher {
 public:
  void Bytes(std::string_view bytes) {
    Int(static_cast<int64_t>(bytes.size()));
    sha_.Update(bytes);
  }
  void Int(int64_t v) {  // 8 bytes, little-endian, whatever the host
    char buf[8];
    uint64_t u = static_cast<uint64_t>(v);
    for (char& b : buf) {
      b = static_cast<char>(u & 0xff);
      u >>= 8;
    }
    sha_.Update(std::string_view(buf, sizeof(buf)));
  }
  void Float(float v) {
    uint32_t bits = 0;
    std::memcpy(&bits, &v, sizeof(bits));
    Int(bits);
  }
  void TensorValue(const Tensor& t) {
    Bytes(DataTypeName(t.dtype()));
    Int(static_cast<int64_t>(t.rank()));
    for (int64_t d : t.sizes()) Int(d);
    auto bytes = t.bytes();
    Bytes(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }
  std::string HexDigest() { return sha_.HexDigest(); }

 private:
  Sha256 sha_;
};

std::string TensorDigest(const Tensor& t) {
  FieldHasher h;
  h.Bytes("tensor");
  h.TensorValue(t);
  return h.HexDigest();
}

// Every field of every attribute: the fallback for Constant nodes ConstantValue cannot read.
std::string AttributesDigest(const ir::Node& node) {
  FieldHasher h;
  h.Bytes("attributes");
  h.Int(static_cast<int64_t>(node.attributes().size()));
  for (const ir::Attribute& a : node.attributes()) {
    h.Bytes(a.name);
    h.Int(static_cast<int64_t>(a.type));
    h.Float(a.f);
    h.Int(a.i);
    h.Bytes(a.s);
    h.Int(a.t.is_valid() ? 1 : 0);
    if (a.t.is_valid()) h.TensorValue(a.t);
    h.Int(static_cast<int64_t>(a.floats.size()));
    for (float f : a.floats) h.Float(f);
    h.Int(static_cast<int64_t>(a.ints.size()));
    for (int64_t i : a.ints) h.Int(i);
    h.Int(static_cast<int64_t>(a.strings.size()));
    for (const std::string& s : a.strings) h.Bytes(s);
    h.Int(static_cast<int64_t>(a.tensors.size()));
    for (const Tensor& t : a.tensors) h.TensorValue(t);
    h.Int(static_cast<int64_t>(a.graphs.size()));
    for (const std::string& g : a.graphs) h.Bytes(g);
  }
  return h.HexDigest();
}

// A node's name for subgraph entries: its name, else its first output's name.
std::string NodeLabel(const ir::Node& node) {
  if (!node.name().empty()) return node.name();
  for (const ir::Value* out : node.outputs()) {
    if (out != nullptr) return out->name();
  }
  return node.op_type();
}

}  // namespace

std::string WholeDigest(const Entries& entries) {
  Sha256 sha;
  for (const auto& [name, hex] : entries) {
    sha.Update(name);
    sha.Update(std::string_view("\0", 1));
    sha.Update(hex);
    sha.Update("\n");
  }
  return sha.HexDigest();
}

WeightFingerprint FingerprintWeights(const ir::Graph& graph) {
  Entries entries;
  for (const ir::Value* v : graph.initializers()) {
    entries.emplace_back(v->name(), TensorDigest(v->initializer()));
  }
  for (const ir::Node* node : graph.nodes()) {
    if (ir::IsConstantNode(*node) && node->output(0) != nullptr) {
      StatusOr<Tensor> value = ir::ConstantValue(*node);
      entries.emplace_back(node->output(0)->name(),
                           value.ok() ? TensorDigest(*value) : AttributesDigest(*node));
      continue;
    }
    for (const ir::Attribute& a : node->attributes()) {
      for (size_t i = 0; i < a.graphs.size(); ++i) {
        std::string name = NodeLabel(*node) + "/" + a.name;
        if (a.type == ir::AttributeType::kGraphs) name += fmt::format("[{}]", i);
        FieldHasher h;
        h.Bytes("subgraph");
        h.Bytes(a.graphs[i]);
        entries.emplace_back(std::move(name), h.HexDigest());
      }
    }
  }
  std::sort(entries.begin(), entries.end());
  // Value names are unique; two nameless nodes' subgraphs could still share a label.
  for (size_t i = 1; i < entries.size(); ++i) {
    if (entries[i].first == entries[i - 1].first) entries[i].first += fmt::format("#{}", i);
  }
  std::sort(entries.begin(), entries.end());
  WeightFingerprint fp;
  fp.whole = WholeDigest(entries);
  fp.initializers = std::move(entries);
  return fp;
}

nlohmann::json WeightFingerprintToJson(const WeightFingerprint& fingerprint) {
  nlohmann::json tensors = nlohmann::json::array();
  for (const auto& [name, hex] : fingerprint.initializers) {
    tensors.push_back({{"name", name}, {"sha256", hex}});
  }
  return {{"algorithm", "sha256"}, {"whole", fingerprint.whole}, {"tensors", std::move(tensors)}};
}

StatusOr<WeightFingerprint> WeightFingerprintFromJson(const nlohmann::json& json,
                                                      const std::string& where) {
  auto bad = [&](const std::string& what) { return DataLossError(where + ": " + what); };
  if (!json.is_object()) return bad("not a JSON object");
  auto algorithm = json.find("algorithm");
  if (algorithm == json.end()) return bad("missing field 'algorithm'");
  if (*algorithm != "sha256") {
    return bad("field 'algorithm' is " + algorithm->dump() + "; only \"sha256\" is known");
  }
  auto whole = json.find("whole");
  if (whole == json.end()) return bad("missing field 'whole'");
  if (!whole->is_string()) return bad("field 'whole' is not a string");
  auto tensors = json.find("tensors");
  if (tensors == json.end()) return bad("missing field 'tensors'");
  if (!tensors->is_array()) return bad("field 'tensors' is not an array");

  WeightFingerprint fp;
  fp.whole = whole->get<std::string>();
  for (size_t i = 0; i < tensors->size(); ++i) {
    const nlohmann::json& t = (*tensors)[i];
    std::string at = fmt::format("tensors[{}]", i);
    if (!t.is_object()) return bad(at + " is not an object");
    auto name = t.find("name");
    auto sha = t.find("sha256");
    if (name == t.end() || !name->is_string()) return bad(at + ": missing string field 'name'");
    if (sha == t.end() || !sha->is_string()) return bad(at + ": missing string field 'sha256'");
    std::string hex = sha->get<std::string>();
    if (!IsSha256Hex(hex)) return bad(at + ".sha256 is not 64 lowercase hex digits");
    std::string n = name->get<std::string>();
    if (!fp.initializers.empty() && !(fp.initializers.back().first < n)) {
      return bad(at + " ('" + n + "') is out of order or repeated; names must be sorted");
    }
    fp.initializers.emplace_back(std::move(n), std::move(hex));
  }
  if (fp.whole.empty()) {
    if (!fp.initializers.empty()) return bad("field 'whole' is empty but 'tensors' is not");
    return fp;  // "no fingerprint recorded"
  }
  if (!IsSha256Hex(fp.whole)) return bad("field 'whole' is not 64 lowercase hex digits");
  if (WholeDigest(fp.initializers) != fp.whole) {
    return bad("field 'whole' does not match the digest of 'tensors'; the manifest is damaged");
  }
  return fp;
}

Status CheckWeights(const WeightFingerprint& stored, const ir::Graph& model) {
  constexpr const char* kAdvice =
      " Supply the model the checkpoint was tuned with, tune again for these weights, or pass "
      "--allow-weight-mismatch (rebuilds from the supplied weights with the stored decisions; "
      "accuracy is then not what was measured at tuning).";
  if (stored.empty()) {
    return FailedPreconditionError(
        std::string("the checkpoint records no weight fingerprint, so the supplied model's "
                    "weights cannot be checked.") +
        kAdvice);
  }
  WeightFingerprint actual = FingerprintWeights(model);
  if (actual.whole == stored.whole) return Status::Ok();

  const Entries& want = stored.initializers;
  const Entries& got = actual.initializers;
  std::string first;
  int64_t differing = 0;
  size_t i = 0, j = 0;
  while (i < want.size() || j < got.size()) {
    std::string problem;
    if (j == got.size() || (i < want.size() && want[i].first < got[j].first)) {
      problem = "weight '" + want[i].first +
                "' is in the checkpoint's fingerprint but missing from the supplied model";
      ++i;
    } else if (i == want.size() || got[j].first < want[i].first) {
      problem = "the supplied model has weight '" + got[j].first +
                "' that the checkpoint was not tuned with";
      ++j;
    } else {
      if (want[i].second != got[j].second) {
        problem = "weight '" + want[i].first + "' differs from the one the checkpoint was tuned " +
                  "with (sha256 " + got[j].second.substr(0, 16) + "..., expected " +
                  want[i].second.substr(0, 16) + "...)";
      }
      ++i;
      ++j;
    }
    if (problem.empty()) continue;
    if (differing++ == 0) first = std::move(problem);
  }
  if (differing == 0) {
    // Same entries but a different whole: the stored list and digest disagree.
    return FailedPreconditionError(
        "the checkpoint's weight fingerprint is inconsistent (its 'whole' digest does not "
        "match its list)." +
        std::string(kAdvice));
  }
  std::string more = differing > 1 ? fmt::format(" ({} weights differ in all)", differing) : "";
  return FailedPreconditionError(
      "the supplied model's weights are not the ones the checkpoint "
      "was tuned with: " +
      first + more + "." + kAdvice);
}

}  // namespace qtune::tune
