// The qtune binary as a user runs it: output, --json, exit codes, error messages.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"
#include "core/npz.h"

namespace qtune {
namespace {

namespace fs = std::filesystem;

using testing::CliResult;
using testing::RunQtuneCli;

std::string Model(const std::string& relative) {
  return std::string(QTUNE_MODELS_DIR) + "/" + relative;
}

std::vector<std::string> AllModels() {
  std::vector<std::string> models = {Model("fmnist/fmnist_resnet.onnx"),
                                     Model("ppocr/ppocr_cls.onnx"),
                                     Model("ppocr/ppocrv4_det.onnx")};
  std::string shared = QTUNE_SHARED_MODELS_DIR;
  if (fs::exists(shared)) {
    for (const auto& entry : fs::recursive_directory_iterator(shared)) {
      if (entry.path().extension() == ".onnx") models.push_back(entry.path().string());
    }
  }
  return models;
}

TEST(CliTest, InspectPrintsEveryModelAndItsJsonParses) {
  for (const std::string& model : AllModels()) {
    CliResult text = RunQtuneCli("inspect " + model);
    EXPECT_EQ(text.exit_code, 0) << model << "\n" << text.out;
    EXPECT_NE(text.out.find("inputs"), std::string::npos) << model;
    CliResult json = RunQtuneCli("inspect --json " + model);
    ASSERT_EQ(json.exit_code, 0) << model << "\n" << json.out;
    nlohmann::json j = nlohmann::json::parse(json.out);
    EXPECT_FALSE(j["inputs"].empty()) << model;
    EXPECT_FALSE(j["outputs"].empty()) << model;
    EXPECT_GT(j["num_parameters"].get<int64_t>(), 0) << model;
    EXPECT_GT(j["op_histogram"].size(), 0u) << model;
  }
}

TEST(CliTest, InspectReportsFmnistFacts) {
  CliResult r = RunQtuneCli("inspect --json " + Model("fmnist/fmnist_resnet.onnx"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["opsets"]["ai.onnx"], 13);
  EXPECT_EQ(j["inputs"][0]["name"], "input");
  EXPECT_EQ(j["op_histogram"]["Add"], 3);
  EXPECT_EQ(j["op_histogram"]["Gemm"], 1);
}

TEST(CliTest, DetectorWeightsInConstantNodesAreCounted) {
  CliResult r = RunQtuneCli("inspect --json " + Model("ppocr/ppocrv4_det.onnx"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  nlohmann::json j = nlohmann::json::parse(r.out);
  // 4.7 MB of weights, all of them in Constant nodes.
  EXPECT_GT(j["parameter_bytes"].get<int64_t>(), 4'000'000);
  EXPECT_NE(j["inputs"][0]["shape"].get<std::string>().find("p2o.DynamicDimension"),
            std::string::npos);
}

TEST(CliTest, MissingModelExitsWithBadInputAndNamesTheFile) {
  CliResult r = RunQtuneCli("inspect /nonexistent/model.onnx");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("/nonexistent/model.onnx"), std::string::npos) << r.out;
}

TEST(CliTest, GarbageModelExitsWithBadInput) {
  fs::path path = fs::temp_directory_path() / "qtune_cli_garbage.onnx";
  std::ofstream(path) << "this is not a protobuf";
  CliResult r = RunQtuneCli("inspect " + path.string());
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("qtune: error:"), std::string::npos) << r.out;
  fs::remove(path);
}

TEST(CliTest, UnknownFlagIsAUsageError) {
  EXPECT_EQ(RunQtuneCli("inspect --no-such-flag x.onnx").exit_code, 2);
  EXPECT_EQ(RunQtuneCli("").exit_code, 2);
  EXPECT_EQ(RunQtuneCli("bench " + Model("fmnist/fmnist_resnet.onnx") + " --threads 0").exit_code,
            2);
}

TEST(CliTest, HelpListsEveryCommand) {
  CliResult r = RunQtuneCli("--help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* command : {"inspect", "run", "bench"}) {
    EXPECT_NE(r.out.find(command), std::string::npos) << command;
  }
}

TEST(CliTest, RunWritesOutputsThatMatchTheModelsShape) {
  fs::path out = fs::temp_directory_path() / "qtune_cli_run.npz";
  CliResult r = RunQtuneCli("run " + Model("fmnist/fmnist_resnet.onnx") +
                            " --input input=" + Model("fmnist/test_2000.npy") + " --output " +
                            out.string() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto entries = ReadNpz(out.string());
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].second.sizes(), (std::vector<int64_t>{2000, 10}));
  fs::remove(out);
}

TEST(CliTest, RunWithWrongInputNameSaysWhichInput) {
  CliResult r = RunQtuneCli("run " + Model("fmnist/fmnist_resnet.onnx") +
                            " --input wrong=" + Model("fmnist/test_2000.npy"));
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("no input named 'wrong'"), std::string::npos) << r.out;
}

TEST(CliTest, BenchNeedsSizesForSymbolicDimsAndReportsJson) {
  std::string model = Model("fmnist/fmnist_resnet.onnx");
  CliResult missing = RunQtuneCli("bench " + model + " --iters 2");
  EXPECT_EQ(missing.exit_code, 2) << missing.out;  // a flag is missing: a usage error
  EXPECT_NE(missing.out.find("--shape input="), std::string::npos) << missing.out;
  CliResult r =
      RunQtuneCli("bench " + model + " --shape input=1x1x28x28 --iters 3 --warmup 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["median_ms"].get<double>(), 0.0);
  EXPECT_LE(j["min_ms"].get<double>(), j["median_ms"].get<double>());
}

}  // namespace
}  // namespace qtune
