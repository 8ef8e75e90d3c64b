// Fuzz target for the checkpoint readers (docs/formats/checkpoint.md): the bytes are parsed
// as a manifest.json (ParseUntrustedJson, then tune::ManifestFromJson) and as a plan.json
// (quant::ParsePlanJson). What parses must write and parse back. A quarter of the inputs
// (picked from the input's bytes) also go through LoadCheckpoint whole: packed as the
// manifest.json and plan.json of a .qtc with a matching .sha256 and loaded into a scratch
// cache; a failed load must leave no temporary folder in the cache.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include "core/json_limits.h"
#include "core/sha256.h"
#include "fuzz/fuzz_target.h"
#include "fuzz/json_fuzz_util.h"
#include "quant/plan_json.h"
#include "tune/checkpoint.h"
#include "tune/checkpoint_archive.h"

namespace qtune::fuzz {

const char* const kTargetName = "checkpoint";

namespace {

namespace fs = std::filesystem;

// The first inputs (the corpus replay) are all loaded as archives.
constexpr int64_t g_corpus_loads = 16;
int64_t g_inputs = 0, g_json = 0, g_manifests = 0, g_plans = 0, g_loads = 0, g_loaded = 0;

void CheckManifestRoundTrip(const tune::CheckpointManifest& manifest) {
  auto again = ParseUntrustedJson(DumpJson(tune::ManifestToJson(manifest), 2), "again");
  if (!again.ok())
    FailTarget(kTargetName, "a written manifest does not parse: " + again.status().ToString());
  auto back = tune::ManifestFromJson(*again, "again");
  if (!back.ok())
    FailTarget(kTargetName, "a written manifest is refused: " + back.status().ToString());
}

void CheckPlanRoundTrip(const quant::QuantPlan& plan) {
  auto back = quant::ParsePlanJson(quant::PlanToJsonText(plan), "again");
  if (!back.ok()) FailTarget(kTargetName, "a written plan is refused: " + back.status().ToString());
}

void LoadAsArchive(std::string_view text) {
  ++g_loads;
  const std::string qtc = ScratchPath("checkpoint") + ".qtc";
  const std::string cache = ScratchPath("checkpoint") + ".cache";
  auto archive =
      tune::internal::WriteTarGz({{tune::kManifestEntryName, text}, {"plan.json", text}});
  if (!archive.ok()) FailTarget(kTargetName, "WriteTarGz: " + archive.status().ToString());
  WriteScratchFile(kTargetName, qtc, *archive);
  WriteScratchFile(kTargetName, qtc + ".sha256", Sha256Hex(*archive) + "  x.qtc\n");
  tune::LoadCheckpointOptions options;
  options.cache_dir = cache;
  auto loaded = tune::LoadCheckpoint(qtc, options);
  if (loaded.ok()) ++g_loaded;
  if (!loaded.ok() && std::getenv("QTUNE_FUZZ_DEBUG") != nullptr) {
    std::fprintf(stderr, "checkpoint target: load: %s\n", loaded.status().ToString().c_str());
  }
  std::error_code ec;
  for (fs::directory_iterator it(cache, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind('.', 0) == 0) FailTarget(kTargetName, "left in the cache: " + name);
  }
  fs::remove_all(cache, ec);
}

}  // namespace

int FuzzOne(const uint8_t* data, size_t size) {
  ++g_inputs;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto json = ParseUntrustedJson(text, "fuzz manifest.json");
  if (json.ok()) {
    ++g_json;
    auto manifest = tune::ManifestFromJson(*json, "fuzz manifest.json");
    if (manifest.ok()) {
      ++g_manifests;
      CheckManifestRoundTrip(*manifest);
    }
  }
  auto plan = quant::ParsePlanJson(std::string(text), "fuzz plan.json");
  if (plan.ok()) {
    ++g_plans;
    CheckPlanRoundTrip(*plan);
  }
  uint32_t pick = 0;
  for (size_t i = 0; i < size; i += 37) pick = pick * 31 + data[i];
  if (pick % 4 == 0 || g_inputs <= g_corpus_loads) LoadAsArchive(text);
  return 0;
}

void PrintTargetStats() {
  std::error_code ec;
  fs::remove(ScratchPath("checkpoint") + ".qtc", ec);
  fs::remove(ScratchPath("checkpoint") + ".qtc.sha256", ec);
  std::fprintf(stderr,
               "checkpoint target: %lld inputs, %lld JSON, %lld manifests, %lld plans; %lld "
               "loaded as archives, %lld loads succeeded\n",
               static_cast<long long>(g_inputs), static_cast<long long>(g_json),
               static_cast<long long>(g_manifests), static_cast<long long>(g_plans),
               static_cast<long long>(g_loads), static_cast<long long>(g_loaded));
}

}  // namespace qtune::fuzz
