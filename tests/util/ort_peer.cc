#include "util/ort_peer.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>

#include "core/npy.h"

namespace qtune::testing {
namespace {

namespace fs = std::filesystem;

std::string OrtDir() { return std::string(QTUNE_SOURCE_DIR) + "/tools/ort"; }

std::string SafeName(const std::string& name) {
  std::string out = name;  // as tools/ort/ort_run.js names its files
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') c = '_';
  }
  return out;
}

}  // namespace

bool OrtAvailable() {
  return std::system("command -v node > /dev/null 2>&1") == 0 &&
         fs::exists(OrtDir() + "/node_modules/onnxruntime-node/package.json");
}

StatusOr<NamedTensors> RunOrt(const std::string& model_path, const NamedTensors& inputs,
                              const std::vector<std::string>& output_names, int threads) {
  fs::path dir = fs::temp_directory_path() /
                 ("qtune_ort_" + std::to_string(::getpid()) + "_" + std::to_string(std::rand()));
  fs::create_directories(dir / "out");
  std::string command = "node " + OrtDir() + "/ort_run.js '" + model_path + "' '" +
                        (dir / "out").string() + "' --threads " + std::to_string(threads);
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string file = (dir / ("in" + std::to_string(i) + ".npy")).string();
    RETURN_IF_ERROR(WriteNpy(file, inputs[i].second));
    command += " '" + inputs[i].first + "=" + file + "'";
  }
  command += " 2> " + (dir / "stderr.txt").string();
  int rc = std::system(command.c_str());
  if (rc != 0) {
    std::ifstream err(dir / "stderr.txt");
    std::string message((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
    fs::remove_all(dir);
    return InternalError("ONNX Runtime failed on " + model_path + ": " + message);
  }
  NamedTensors outputs;
  for (const std::string& name : output_names) {
    auto t = ReadNpy((dir / "out" / (SafeName(name) + ".npy")).string());
    if (!t.ok()) {
      fs::remove_all(dir);
      return t.status();
    }
    outputs.emplace_back(name, std::move(t).value());
  }
  fs::remove_all(dir);
  return outputs;
}

double RelativeL2(const Tensor& a, const Tensor& b) {
  if (a.num_elements() != b.num_elements() || a.dtype() != DataType::kFloat32 ||
      b.dtype() != DataType::kFloat32) {
    return std::numeric_limits<double>::infinity();
  }
  double diff = 0, norm = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    double d = static_cast<double>(a.data<float>()[i]) - b.data<float>()[i];
    diff += d * d;
    norm += static_cast<double>(b.data<float>()[i]) * b.data<float>()[i];
  }
  return std::sqrt(diff) / std::max(std::sqrt(norm), 1e-30);
}

double MaxAbsDiff(const Tensor& a, const Tensor& b) {
  if (a.num_elements() != b.num_elements() || a.dtype() != DataType::kFloat32 ||
      b.dtype() != DataType::kFloat32) {
    return std::numeric_limits<double>::infinity();
  }
  double worst = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    worst =
        std::max(worst, std::fabs(static_cast<double>(a.data<float>()[i]) - b.data<float>()[i]));
  }
  return worst;
}

}  // namespace qtune::testing
