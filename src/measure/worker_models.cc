#include "measure/worker_models.h"

#include <fmt/format.h>

#include <optional>
#include <vector>

#include "core/file_io.h"
#include "core/sha256.h"
#include "ir/onnx_io.h"
#include "measure/model_blobs.h"
#include "measure/planned_model.h"

namespace qtune::measure {

StatusOr<std::string> WorkerModels::FetchVerified(const std::string& key, const std::string& sha256,
                                                  const std::string& what) {
  ASSIGN_OR_RETURN(RedisReply r, client_.Command({"GET", key}));
  if (!r.is_string()) {
    return NotFoundError(fmt::format("{} is not in Redis (expired, or never uploaded)", what));
  }
  if (Sha256Hex(r.str) != sha256) {
    return DataLossError(fmt::format(
        "the {} bytes stored for {} do not have that SHA-256 (truncated or overwritten)",
        r.str.size(), what));
  }
  return std::move(r.str);
}

StatusOr<std::string> WorkerModels::Model(const std::string& sha256, std::set<std::string>& blobs) {
  std::optional<std::string> path = cache_.Lookup(sha256);
  std::string bytes;
  if (path.has_value()) {
    ASSIGN_OR_RETURN(bytes, ReadFile(*path));
  } else {
    ASSIGN_OR_RETURN(bytes, FetchVerified(keys_.model(sha256), sha256, "model " + sha256));
  }
  // A skeleton names its big tensors by SHA-256 (model_blobs.h): each must be a verified
  // <sha>.bin next to it, and nothing else may be named. Checked on every use.
  ASSIGN_OR_RETURN(std::vector<BlobRef> refs, SkeletonBlobs(bytes, sha256));
  for (const BlobRef& ref : refs) {
    std::optional<std::string> blob = cache_.LookupBlob(ref.sha256);
    if (!blob.has_value()) {
      ASSIGN_OR_RETURN(std::string data, FetchVerified(keys_.blob(ref.sha256), ref.sha256,
                                                       fmt::format("tensor blob {} of model {}",
                                                                   ref.sha256, sha256)));
      ASSIGN_OR_RETURN(blob, cache_.StoreBlob(ref.sha256, data));
    }
    blobs.insert(*blob);
  }
  if (path.has_value()) return *path;
  return cache_.Store(sha256, bytes);
}

StatusOr<const ir::Graph*> WorkerModels::Base(const std::string& sha256,
                                              std::set<std::string>& blobs) {
  ASSIGN_OR_RETURN(std::string path, Model(sha256, blobs));
  if (base_ == nullptr || base_sha256_ != sha256) {
    base_.reset();
    StatusOr<std::unique_ptr<ir::Graph>> loaded = ir::LoadModel(path);
    if (!loaded.ok()) {
      return InvalidArgumentError(
          fmt::format("float model {}: {}", sha256, loaded.status().message()));
    }
    base_ = std::move(*loaded);
    base_sha256_ = sha256;
  }
  return base_.get();
}

StatusOr<std::string> WorkerModels::Planned(const std::string& sha256,
                                            std::set<std::string>& blobs) {
  if (auto it = built_.find(sha256); it != built_.end()) {
    StatusOr<std::string> path = Model(it->second, blobs);  // never in Redis: the cache's
    if (path.ok() || path.status().code() == StatusCode::kUnavailable) return path;
    built_.erase(it);  // pruned or damaged: built again
  }
  const std::string what = "planned model " + sha256;
  ASSIGN_OR_RETURN(std::string text, FetchVerified(keys_.plan(sha256), sha256, what));
  ASSIGN_OR_RETURN(PlannedModelDoc doc, ParsePlannedModel(text, what));
  ASSIGN_OR_RETURN(const ir::Graph* base, Base(doc.base_sha256, blobs));
  StatusOr<std::unique_ptr<ir::Graph>> built = ExportPlannedModel(*base, doc.plan);
  if (!built.ok()) {
    return InvalidArgumentError(fmt::format("{}: {}", what, built.status().message()));
  }
  ASSIGN_OR_RETURN(std::string bytes, ir::SerializeModel(**built));
  // Stored as a tuner's upload is: the big tensors as blobs, shared by the candidates.
  SplitModel split = SplitModelBytes(std::move(bytes));
  for (const auto& [blob_sha, data] : split.blobs) {
    std::optional<std::string> blob = cache_.LookupBlob(blob_sha);
    if (!blob.has_value()) {
      ASSIGN_OR_RETURN(blob, cache_.StoreBlob(blob_sha, data));
    }
    blobs.insert(*blob);
  }
  ASSIGN_OR_RETURN(std::string path, cache_.Store(split.sha256, split.bytes));
  built_[sha256] = split.sha256;
  return path;
}

}  // namespace qtune::measure
