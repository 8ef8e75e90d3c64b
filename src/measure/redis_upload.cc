#include "measure/redis_upload.h"

#include <sys/stat.h>

#include "core/file_io.h"
#include "core/sha256.h"
#include "measure/model_blobs.h"
#include "measure/planned_model.h"

namespace qtune::measure {
namespace {

constexpr int kTtlS = 86400;
constexpr auto kRefreshEvery = std::chrono::seconds(60);

}  // namespace

std::optional<RedisUploader::FileIdentity> RedisUploader::IdentityOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileIdentity{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
                      static_cast<int64_t>(st.st_size),
                      static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

void RedisUploader::CheckConnection() {
  if (connect_ == client_.connects()) return;
  files_.clear();  // a new connection: the server may have restarted without the data
  blobs_.clear();
  plan_docs_.clear();
  connect_ = client_.connects();
}

StatusOr<std::string> RedisUploader::Model(const std::string& path) {
  CheckConnection();
  const std::optional<FileIdentity> identity = IdentityOf(path);
  auto it = files_.find(path);
  if (it != files_.end() && identity.has_value() && it->second.identity == *identity) {
    Uploaded& u = it->second;
    const auto now = std::chrono::steady_clock::now();
    if (now - u.refreshed < kRefreshEvery) return u.sha;
    bool all_there = true;
    for (const std::string& blob : u.blobs) {
      ASSIGN_OR_RETURN(RedisReply r,
                       client_.Command({"EXPIRE", keys_.blob(blob), std::to_string(kTtlS)}));
      all_there = all_there && r.integer == 1;
    }
    ASSIGN_OR_RETURN(RedisReply r,
                     client_.Command({"EXPIRE", keys_.model(u.sha), std::to_string(kTtlS)}));
    if (all_there && r.integer == 1) {
      u.refreshed = now;
      return u.sha;
    }
  }
  ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  // Big tensors become blobs named by their SHA-256; each is uploaded once (model_blobs.h).
  SplitModel split = SplitModelBytes(std::move(bytes));
  RETURN_IF_ERROR(Blobs(split.blobs));  // before the skeleton that names them
  ASSIGN_OR_RETURN(RedisReply r, client_.Command({"SET", keys_.model(split.sha256), split.bytes,
                                                  "EX", std::to_string(kTtlS)}));
  bytes_ += static_cast<int64_t>(split.bytes.size());
  ++models_;
  // Read after the bytes: a file replaced meanwhile gets a new identity, never the old sha.
  if (identity.has_value() && IdentityOf(path) == identity) {
    Uploaded& u = files_[path];
    u = Uploaded{*identity, split.sha256, {}, std::chrono::steady_clock::now()};
    for (const auto& [sha, blob] : split.blobs) u.blobs.push_back(sha);
  } else {
    files_.erase(path);
  }
  return split.sha256;
}

Status RedisUploader::Blobs(const std::vector<std::pair<std::string, std::string>>& blobs) {
  for (const auto& [sha, bytes] : blobs) {
    if (blobs_.count(sha)) {
      ASSIGN_OR_RETURN(RedisReply r,
                       client_.Command({"EXPIRE", keys_.blob(sha), std::to_string(kTtlS)}));
      if (r.integer == 1) continue;  // still there
    }
    ASSIGN_OR_RETURN(RedisReply r,
                     client_.Command({"SET", keys_.blob(sha), bytes, "EX", std::to_string(kTtlS)}));
    blobs_.insert(sha);
    bytes_ += static_cast<int64_t>(bytes.size());
  }
  return Status::Ok();
}

StatusOr<std::string> RedisUploader::Plan(const PlannedModel& planned) {
  ASSIGN_OR_RETURN(std::string base, Model(planned.base_path));  // checks the connection
  const std::string doc = EncodePlannedModel(base, planned.plan_json);
  const std::string sha = Sha256Hex(doc);
  if (plan_docs_.count(sha)) {
    ASSIGN_OR_RETURN(RedisReply r,
                     client_.Command({"EXPIRE", keys_.plan(sha), std::to_string(kTtlS)}));
    if (r.integer == 1) return sha;  // still there
  }
  ASSIGN_OR_RETURN(RedisReply r,
                   client_.Command({"SET", keys_.plan(sha), doc, "EX", std::to_string(kTtlS)}));
  plan_docs_.insert(sha);
  bytes_ += static_cast<int64_t>(doc.size());
  ++plans_;
  return sha;
}

}  // namespace qtune::measure
