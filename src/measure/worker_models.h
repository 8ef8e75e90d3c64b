// Where a `qtune worker` gets the models a job names (redis_protocol.h): from its cache,
// verified against their SHA-256 on every use (worker_model_cache.h), else from Redis,
// verified before they are stored; and planned models (planned_model.h), built by the
// worker from a float model it fetched that way and a plan of a few kilobytes.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>

#include "core/status.h"
#include "ir/graph.h"
#include "measure/redis_client.h"
#include "measure/redis_protocol.h"
#include "measure/worker_model_cache.h"

namespace qtune::measure {

class WorkerModels {
 public:
  // Borrows all three; they must outlive this.
  WorkerModels(RedisClient& client, const RedisKeys& keys, WorkerModelCache& cache)
      : client_(client), keys_(keys), cache_(cache) {}

  // The cached path of model `sha256` (fetched when missing); the blobs a skeleton names
  // (model_blobs.h) fetched and verified next to it, their paths added to `blobs`.
  // NotFound when Redis does not hold it, DataLoss for bytes without that SHA-256,
  // Unavailable for a lost connection.
  StatusOr<std::string> Model(const std::string& sha256, std::set<std::string>& blobs);

  // The cached path of the model that planned-model document `sha256` (<p>plan:<sha256>)
  // describes, built here on first use: the document fetched and verified, its float model
  // fetched with Model(), the plan exported onto a clone (ExportPlannedModel) and stored
  // as a skeleton and blobs, like a model a tuner uploads. Later uses take it from the
  // cache (verified). Errors as Model(), plus InvalidArgument for a bad document or a plan
  // that does not fit its float model.
  StatusOr<std::string> Planned(const std::string& sha256, std::set<std::string>& blobs);

 private:
  // GET `key`; its bytes when they hash to `sha256`. `what` names it in errors.
  StatusOr<std::string> FetchVerified(const std::string& key, const std::string& sha256,
                                      const std::string& what);
  // The float model `sha256`, parsed (the last one is kept: a run has one).
  StatusOr<const ir::Graph*> Base(const std::string& sha256, std::set<std::string>& blobs);

  RedisClient& client_;
  const RedisKeys& keys_;
  WorkerModelCache& cache_;
  std::string base_sha256_;
  std::unique_ptr<ir::Graph> base_;
  std::map<std::string, std::string> built_;  // document SHA-256 -> built model's SHA-256
};

}  // namespace qtune::measure
