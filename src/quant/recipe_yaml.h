// Internal to recipe loading: YAML files with `imports:`/`$import` resolved into merged
// mappings and spliced lists whose every value still knows the file and line it came from.
#pragma once

#include <yaml-cpp/yaml.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace qtune::quant::recipe_yaml {

struct SourceFile;

// One YAML node plus where it came from.
struct Located {
  YAML::Node node;
  std::shared_ptr<const SourceFile> file;
  YAML::Mark mark;   // the key's mark for mapping values, the node's own otherwise
  std::string path;  // key path for messages: "quantizers[2].format"
};

// A mapping after dict merges: keys in first-seen order, later values replacing earlier.
using MergedMap = std::vector<std::pair<std::string, Located>>;

// "FILE:LINE:COL: key 'PATH': message" as InvalidArgument: the YAML asks for something
// invalid (recipe.h: the error kinds). `code` kDataLoss: the file is not a YAML recipe;
// kNotFound: an imported file cannot be read.
Status ErrorAt(const Located& at, const std::string& message,
               StatusCode code = StatusCode::kInvalidArgument);

// "FILE:LINE" of `at` (for QuantizerRule::origin).
std::string OriginOf(const Located& at);

// Loads and resolves YAML documents. Holds the import stack for cycle detection.
class Loader {
 public:
  // A preset name or file path (relative paths against the current directory).
  StatusOr<Located> LoadRoot(const std::string& preset_or_path);
  StatusOr<Located> ParseRoot(const std::string& text, const std::string& source_name);

  // The mapping at `at` with every `$import` merged in (inline keys override). Keys in
  // `skip` (e.g. "imports") are left out. Errors if `at` is not a mapping.
  StatusOr<MergedMap> MergeMap(const Located& at, const std::vector<std::string>& skip);
  // The sequence at `at` with every lone `{$import: alias}` item replaced by the items of
  // the alias (a list document, or a recipe's `quantizers:` list).
  StatusOr<std::vector<Located>> SpliceList(const Located& at);

 private:
  StatusOr<Located> ParseText(const std::string& text, const std::string& name,
                              const std::string& identity, const std::string& dir, bool is_preset);
  StatusOr<Located> LoadRootFile(const std::string& preset_or_path);
  StatusOr<Located> Import(const Located& at, const std::string& alias);

  std::vector<std::string> stack_;  // identities of the files being resolved
};

}  // namespace qtune::quant::recipe_yaml
