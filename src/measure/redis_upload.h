// What a tuner puts in Redis for its jobs (redis_protocol.h): models by the SHA-256 of
// their bytes, split into a skeleton and blobs (model_blobs.h), and planned-model
// documents (planned_model.h). Everything is uploaded once per connection (a new
// connection may face a restarted server) and kept with a TTL of a day.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "measure/benchmark.h"
#include "measure/redis_client.h"
#include "measure/redis_protocol.h"

namespace qtune::measure {

class RedisUploader {
 public:
  // Borrows both; they must outlive this.
  RedisUploader(RedisClient& client, const RedisKeys& keys) : client_(client), keys_(keys) {}

  // Puts the model file under its SHA-256 and returns it: its skeleton as model:<sha>, and
  // each big tensor not uploaded on this connection yet as blob:<sha>. The same file as
  // last time (same inode, size and modification time: files are replaced by rename, never
  // rewritten in place) is not read again; its keys' TTLs are refreshed at most once a
  // minute. NotFound/Internal for an unreadable file, Unavailable for a lost connection.
  StatusOr<std::string> Model(const std::string& path);
  // Puts `planned`'s float model (Model()) and its planned-model document (plan:<sha>) and
  // returns the document's SHA-256.
  StatusOr<std::string> Plan(const PlannedModel& planned);

  int64_t bytes() const { return bytes_; }
  int64_t models() const { return models_; }
  int64_t plans() const { return plans_; }

 private:
  // Forgets what was uploaded when the client has reconnected since.
  void CheckConnection();
  // SET (or EXPIRE, when uploaded on this connection) blob:<sha> of each blob.
  Status Blobs(const std::vector<std::pair<std::string, std::string>>& blobs);

  struct FileIdentity {
    uint64_t device = 0, inode = 0;
    int64_t size = 0, mtime_ns = 0;
    bool operator==(const FileIdentity&) const = default;
  };
  static std::optional<FileIdentity> IdentityOf(const std::string& path);
  struct Uploaded {
    FileIdentity identity;
    std::string sha;
    std::vector<std::string> blobs;  // the SHA-256s its skeleton names
    std::chrono::steady_clock::time_point refreshed;
  };

  RedisClient& client_;
  const RedisKeys& keys_;
  std::map<std::string, Uploaded> files_;  // path -> what was uploaded this connection
  std::set<std::string> blobs_;            // blob SHA-256s uploaded this connection
  std::set<std::string> plan_docs_;        // plan SHA-256s uploaded this connection
  int connect_ = -1;                       // client_.connects() when these were filled
  int64_t bytes_ = 0, models_ = 0, plans_ = 0;
};

}  // namespace qtune::measure
