#include "quant/recipe_yaml.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "core/file_io.h"
#include "quant/recipe.h"

namespace qtune::quant::recipe_yaml {

struct SourceFile {
  std::string name;      // as shown in messages: the path, or "<preset int8>"
  std::string identity;  // canonical path or "preset:int8" (cycle detection)
  std::string dir;       // base of relative imports
  bool is_preset = false;
  std::map<std::string, std::pair<std::string, YAML::Mark>> imports;  // alias -> spec
};

namespace {

constexpr int64_t kMaxRecipeBytes = 1 << 20;

std::string Where(const SourceFile* file, const YAML::Mark& mark) {
  std::string where = file ? file->name : "<recipe>";
  if (!mark.is_null()) {
    where += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  }
  return where;
}

// Const lookup: a non-const operator[] may add the key to the node.
YAML::Node Get(const YAML::Node& node, const std::string& key) {
  return node.IsMap() ? node[key] : YAML::Node(YAML::NodeType::Undefined);
}

bool IsLoneImport(const YAML::Node& node) {
  return node.IsMap() && node.size() == 1 && Get(node, "$import").IsDefined();
}

}  // namespace

Status ErrorAt(const Located& at, const std::string& message, StatusCode code) {
  std::string text = Where(at.file.get(), at.mark) + ": ";
  if (!at.path.empty()) text += "key '" + at.path + "': ";
  return Status(code, text + message);
}

std::string OriginOf(const Located& at) {
  std::string origin = at.file ? at.file->name : "<recipe>";
  if (!at.mark.is_null()) origin += ":" + std::to_string(at.mark.line + 1);
  return origin;
}

StatusOr<Located> Loader::ParseText(const std::string& text, const std::string& name,
                                    const std::string& identity, const std::string& dir,
                                    bool is_preset) {
  auto file = std::make_shared<SourceFile>();
  file->name = name;
  file->identity = identity;
  file->dir = dir;
  file->is_preset = is_preset;
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    return DataLossError(Where(file.get(), e.mark) + ": YAML syntax error: " + e.msg +
                         "; fix the YAML syntax");
  }
  Located content{YAML::Node(), file, YAML::Mark::null_mark(), ""};
  YAML::Node header;
  if (docs.empty() || (docs.size() == 1 && docs[0].IsNull())) {
    return DataLossError(name +
                         ": the recipe is empty; a recipe is a YAML mapping (see "
                         "docs/formats/recipe.md)");
  } else if (docs.size() == 1) {
    content.node = docs[0];
    if (docs[0].IsMap()) header = docs[0];
  } else if (docs.size() == 2) {
    // A list snippet: a header document with only `imports`, then the list.
    header = docs[0];
    content.node = docs[1];
    Located at{header, file, header.Mark(), ""};
    if (!header.IsMap()) {
      return ErrorAt(at, "the first of two documents must be a mapping", StatusCode::kDataLoss);
    }
    for (const auto& kv : header) {
      if (kv.first.Scalar() != "imports") {
        return ErrorAt(Located{kv.second, file, kv.first.Mark(), kv.first.Scalar()},
                       "unknown key in a snippet header; only 'imports' is allowed here");
      }
    }
  } else {
    return DataLossError(name + ": has " + std::to_string(docs.size()) +
                         " YAML documents; a recipe has one (or a header with "
                         "'imports' and a list)");
  }
  content.mark = content.node.Mark();
  if (header.IsDefined() && Get(header, "imports").IsDefined()) {
    YAML::Node imports = Get(header, "imports");
    Located at{imports, file, imports.Mark(), "imports"};
    if (!imports.IsMap()) {
      return ErrorAt(at, "must be a mapping {alias: preset-or-file}");
    }
    for (const auto& kv : imports) {
      Located item{kv.second, file, kv.first.Mark(), "imports." + kv.first.Scalar()};
      if (!kv.second.IsScalar() || kv.second.Scalar().empty()) {
        return ErrorAt(item, "must be a preset name or a file path");
      }
      file->imports[kv.first.Scalar()] = {kv.second.Scalar(), kv.first.Mark()};
    }
  }
  return content;
}

StatusOr<Located> Loader::LoadRoot(const std::string& preset_or_path) {
  ASSIGN_OR_RETURN(Located root, LoadRootFile(preset_or_path));
  stack_.push_back(root.file->identity);  // the root is part of every import chain
  return root;
}

StatusOr<Located> Loader::LoadRootFile(const std::string& preset_or_path) {
  if (std::optional<std::string> text = PresetText(preset_or_path)) {
    return ParseText(*text, "<preset " + preset_or_path + ">", "preset:" + preset_or_path, "",
                     true);
  }
  auto bytes = ReadFile(preset_or_path, kMaxRecipeBytes);
  if (!bytes.ok()) {
    std::string presets;
    for (const std::string& p : PresetNames()) presets += (presets.empty() ? "" : ", ") + p;
    return NotFoundError("recipe '" + preset_or_path + "' is neither a preset (" + presets +
                         ") nor a readable file: " + bytes.status().message());
  }
  std::error_code ec;
  std::filesystem::path canonical = std::filesystem::weakly_canonical(preset_or_path, ec);
  std::string identity = ec ? preset_or_path : canonical.string();
  return ParseText(*bytes, preset_or_path, identity,
                   std::filesystem::path(preset_or_path).parent_path().string(), false);
}

StatusOr<Located> Loader::ParseRoot(const std::string& text, const std::string& source_name) {
  stack_.push_back("text:" + source_name);
  return ParseText(text, source_name, "text:" + source_name,
                   std::filesystem::path(source_name).parent_path().string(), false);
}

StatusOr<Located> Loader::Import(const Located& at, const std::string& alias) {
  auto it = at.file->imports.find(alias);
  if (it == at.file->imports.end()) {
    std::string known;
    for (const auto& [name, spec] : at.file->imports) known += (known.empty() ? "" : ", ") + name;
    return ErrorAt(at, "$import of unknown alias '" + alias + "'; declare it under 'imports:'" +
                           (known.empty() ? std::string() : " (declared: " + known + ")"));
  }
  const std::string& spec = it->second.first;
  Located spec_at{YAML::Node(), at.file, it->second.second, "imports." + alias};
  if (std::optional<std::string> text = PresetText(spec)) {
    return ParseText(*text, "<preset " + spec + ">", "preset:" + spec, "", true);
  }
  if (at.file->is_preset) {
    return ErrorAt(spec_at, "built-in presets import only presets; '" + spec + "' is not one");
  }
  std::filesystem::path path(spec);
  if (path.is_relative() && !at.file->dir.empty())
    path = std::filesystem::path(at.file->dir) / path;
  auto bytes = ReadFile(path.string(), kMaxRecipeBytes);
  if (!bytes.ok()) {
    return ErrorAt(spec_at,
                   "cannot read imported file '" + path.string() +
                       "' (paths are relative to the importing file): " + bytes.status().message(),
                   StatusCode::kNotFound);
  }
  std::error_code ec;
  std::filesystem::path canonical = std::filesystem::weakly_canonical(path, ec);
  return ParseText(*bytes, path.string(), ec ? path.string() : canonical.string(),
                   path.parent_path().string(), false);
}

namespace {

// Pushes a file identity for the duration of a recursive resolution.
class StackEntry {
 public:
  StackEntry(std::vector<std::string>& stack, std::string identity) : stack_(stack) {
    stack_.push_back(std::move(identity));
  }
  ~StackEntry() { stack_.pop_back(); }
  StackEntry(const StackEntry&) = delete;
  StackEntry& operator=(const StackEntry&) = delete;

 private:
  std::vector<std::string>& stack_;
};

Status CheckCycle(const std::vector<std::string>& stack, const Located& at,
                  const Located& imported) {
  const std::string& id = imported.file->identity;
  if (std::find(stack.begin(), stack.end(), id) == stack.end()) return Status::Ok();
  std::string chain;
  for (const std::string& s : stack) chain += s + " -> ";
  return ErrorAt(at, "import cycle: " + chain + id + "; remove one of these imports");
}

}  // namespace

StatusOr<MergedMap> Loader::MergeMap(const Located& at, const std::vector<std::string>& skip) {
  if (!at.node.IsMap()) return ErrorAt(at, "must be a mapping");
  MergedMap merged;
  auto put = [&merged](const std::string& key, Located value) {
    for (auto& [k, v] : merged) {
      if (k == key) {
        v = std::move(value);
        return;
      }
    }
    merged.emplace_back(key, std::move(value));
  };
  if (YAML::Node import = Get(at.node, "$import"); import.IsDefined()) {
    Located import_at{import, at.file, import.Mark(),
                      at.path.empty() ? "$import" : at.path + ".$import"};
    std::vector<std::string> aliases;
    if (import.IsScalar()) {
      aliases.push_back(import.Scalar());
    } else if (import.IsSequence()) {
      for (const YAML::Node& a : import) {
        if (!a.IsScalar()) return ErrorAt(import_at, "must be an alias or a list of aliases");
        aliases.push_back(a.Scalar());
      }
    } else {
      return ErrorAt(import_at, "must be an alias or a list of aliases");
    }
    for (const std::string& alias : aliases) {
      ASSIGN_OR_RETURN(Located imported, Import(import_at, alias));
      RETURN_IF_ERROR(CheckCycle(stack_, import_at, imported));
      if (!imported.node.IsMap()) {
        return ErrorAt(import_at, "alias '" + alias + "' (" + imported.file->name +
                                      ") is not a mapping; a list snippet can only be "
                                      "spliced into a list with a lone $import item");
      }
      imported.path = at.path;
      StackEntry entry(stack_, imported.file->identity);
      ASSIGN_OR_RETURN(MergedMap base, MergeMap(imported, {"imports", "description"}));
      for (auto& [k, v] : base) put(k, std::move(v));
    }
  }
  for (const auto& kv : at.node) {
    if (!kv.first.IsScalar()) {
      return ErrorAt(Located{kv.first, at.file, kv.first.Mark(), at.path},
                     "keys must be plain strings");
    }
    const std::string& key = kv.first.Scalar();
    if (key == "$import" || std::find(skip.begin(), skip.end(), key) != skip.end()) continue;
    put(key,
        Located{kv.second, at.file, kv.first.Mark(), at.path.empty() ? key : at.path + "." + key});
  }
  return merged;
}

StatusOr<std::vector<Located>> Loader::SpliceList(const Located& at) {
  if (!at.node.IsSequence()) return ErrorAt(at, "must be a list");
  std::vector<Located> items;
  for (size_t i = 0; i < at.node.size(); ++i) {
    YAML::Node item = at.node[i];
    Located item_at{item, at.file, item.Mark(), at.path + "[" + std::to_string(i) + "]"};
    if (!IsLoneImport(item)) {
      items.push_back(std::move(item_at));
      continue;
    }
    YAML::Node alias = Get(item, "$import");
    Located import_at{alias, at.file, alias.Mark(), item_at.path + ".$import"};
    if (!alias.IsScalar()) return ErrorAt(import_at, "must be an alias");
    ASSIGN_OR_RETURN(Located imported, Import(import_at, alias.Scalar()));
    RETURN_IF_ERROR(CheckCycle(stack_, import_at, imported));
    StackEntry entry(stack_, imported.file->identity);
    imported.path = at.path;
    if (imported.node.IsMap()) {
      // A whole recipe: splice its (merged) quantizers list.
      ASSIGN_OR_RETURN(MergedMap recipe, MergeMap(imported, {"imports"}));
      auto it = std::find_if(recipe.begin(), recipe.end(),
                             [](const auto& kv) { return kv.first == "quantizers"; });
      if (it == recipe.end()) {
        return ErrorAt(import_at, "alias '" + alias.Scalar() + "' (" + imported.file->name +
                                      ") has no 'quantizers' list to splice");
      }
      it->second.path = at.path;
      ASSIGN_OR_RETURN(std::vector<Located> spliced, SpliceList(it->second));
      for (Located& l : spliced) items.push_back(std::move(l));
    } else if (imported.node.IsSequence()) {
      ASSIGN_OR_RETURN(std::vector<Located> spliced, SpliceList(imported));
      for (Located& l : spliced) items.push_back(std::move(l));
    } else {
      return ErrorAt(import_at, "alias '" + alias.Scalar() + "' is neither a list nor a recipe");
    }
  }
  return items;
}

}  // namespace qtune::quant::recipe_yaml
