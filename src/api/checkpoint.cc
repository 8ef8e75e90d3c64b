// qtune::LoadTuned and qtune::ReadCheckpoint (include/qtune/checkpoint.h) over the tune
// module's checkpoint layer.
#include "qtune/checkpoint.h"

#include "api/session_impl.h"
#include "core/json_limits.h"
#include "ir/onnx_io.h"
#include "tune/checkpoint.h"
#include "tune/tune.h"

namespace qtune {

StatusOr<std::unique_ptr<Session>> LoadTuned(const std::string& model_path,
                                             const std::string& checkpoint_path,
                                             const LoadTunedOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<ir::Graph> model, ir::LoadModel(model_path));
  tune::LoadTunedOptions load;
  load.verify = options.verify;
  load.allow_weight_mismatch = options.allow_weight_mismatch;
  load.cache_dir = options.cache_dir;
  ASSIGN_OR_RETURN(tune::TunedSession tuned, tune::LoadTunedSession(*model, checkpoint_path, load));
  SessionOptions described;
  described.threads = tuned.threads;
  return api_internal::WrapSession(std::move(tuned.session), *model, described);
}

StatusOr<CheckpointInfo> ReadCheckpoint(const std::string& checkpoint_path,
                                        const ReadCheckpointOptions& options) {
  tune::LoadCheckpointOptions load;
  load.verify = options.verify;
  ASSIGN_OR_RETURN(tune::CheckpointManifest manifest,
                   tune::ReadManifestOnly(checkpoint_path, load));
  CheckpointInfo info;
  info.format_version = manifest.format_version;
  info.qtune_version = manifest.qtune_version;
  info.created_utc = manifest.created_utc;
  info.weights_fingerprinted = static_cast<int64_t>(manifest.weights.initializers.size());
  info.weights_sha256 = manifest.weights.whole;
  const nlohmann::json& tuning = manifest.tuning;
  if (tuning.is_object()) {
    // Read tolerantly: ReadManifestOnly checked the manifest's own fields, and the tuning
    // block is the tuner's (LoadTuned checks it fully).
    auto candidate = tuning.find("candidate");
    if (candidate != tuning.end() && candidate->is_string()) info.candidate = *candidate;
    auto threads = tuning.find("threads");
    if (threads != tuning.end() && threads->is_number_integer()) info.threads = *threads;
    auto sizes = tuning.find("input_sizes");
    if (sizes != tuning.end() && sizes->is_object()) {
      for (const auto& [name, dims] : sizes->items()) {
        if (!dims.is_array()) continue;
        std::vector<int64_t>& out = info.input_sizes[name];
        for (const nlohmann::json& d : dims) {
          if (d.is_number_integer()) out.push_back(d.get<int64_t>());
        }
      }
    }
  }
  info.manifest_json = DumpJson(tune::ManifestToJson(manifest), 2);
  return info;
}

}  // namespace qtune
