#include "core/progress.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace qtune {
namespace {

// Captures what a ProgressBar writes, through a real FILE*.
class Capture {
 public:
  Capture() : file_(std::tmpfile()) {}
  ~Capture() { std::fclose(file_); }
  std::FILE* file() { return file_; }
  std::string Text() {
    std::fflush(file_);
    std::rewind(file_);
    std::string text;
    char buffer[4096];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof(buffer), file_)) > 0) text.append(buffer, n);
    return text;
  }

 private:
  std::FILE* file_;
};

size_t Count(const std::string& text, char c) { return std::count(text.begin(), text.end(), c); }

class ProgressTest : public ::testing::Test {
 protected:
  void TearDown() override { SetProgressEnabled(true); }
};

TEST_F(ProgressTest, LineModePrintsAtMostOneLinePerTenPercent) {
  Capture capture;
  {
    ProgressBar bar("calibrate", 1000, {capture.file(), ProgressStyle::kLines});
    for (int i = 0; i < 1000; ++i) bar.Advance();
  }
  std::string text = capture.Text();
  EXPECT_EQ(Count(text, '\r'), 0u);
  EXPECT_LE(Count(text, '\n'), 11u);  // the start line, 10%..90% and the final line
  EXPECT_GE(Count(text, '\n'), 3u);
  EXPECT_EQ(text.rfind("calibrate: started, 1000 steps\n", 0), 0u) << text;
  EXPECT_NE(text.find("calibrate: 10% (100/1000)"), std::string::npos) << text;
  EXPECT_NE(text.find("calibrate: 100% (1000/1000)"), std::string::npos) << text;
}

TEST_F(ProgressTest, TerminalModeRedrawsInPlaceWithPercentCountElapsedAndEta) {
  Capture capture;
  {
    ProgressBar bar("autotune", 40, {capture.file(), ProgressStyle::kTerminal});
    for (int i = 0; i < 10; ++i) bar.Advance();
    std::string mid = capture.Text();
    EXPECT_NE(mid.find("\rautotune ["), std::string::npos) << mid;
    EXPECT_NE(mid.find(" 25% 10/40 elapsed 0:00 eta "), std::string::npos) << mid;
    EXPECT_EQ(Count(mid, '\n'), 0u);
    for (int i = 0; i < 30; ++i) bar.Advance();
  }
  std::string text = capture.Text();
  EXPECT_NE(text.find("100% 40/40"), std::string::npos) << text;
  EXPECT_EQ(text.back(), '\n');  // the destructor finished the line
  EXPECT_EQ(Count(text, '\n'), 1u);
  EXPECT_LE(Count(text, '\r'), 101u);
}

TEST_F(ProgressTest, DisabledProgressWritesNothing) {
  SetProgressEnabled(false);
  Capture capture;
  {
    ProgressBar bar("quiet", 10, {capture.file(), ProgressStyle::kTerminal});
    for (int i = 0; i < 10; ++i) bar.Advance();
    bar.Finish();
    EXPECT_EQ(bar.done(), 10);
  }
  EXPECT_EQ(capture.Text(), "");
}

TEST_F(ProgressTest, FinishIsIdempotentAndLaterAdvancesOnlyCount) {
  Capture capture;
  ProgressBar bar("x", 4, {capture.file(), ProgressStyle::kLines});
  bar.Advance(4);
  bar.Finish();
  std::string once = capture.Text();
  bar.Finish();
  bar.Advance(3);
  EXPECT_EQ(capture.Text(), once);
  EXPECT_EQ(bar.done(), 7);
}

TEST_F(ProgressTest, EarlyFinishSaysItStoppedEarly) {
  Capture capture;
  {
    ProgressBar bar("measure", 10, {capture.file(), ProgressStyle::kLines});
    bar.Advance(3);
  }
  EXPECT_NE(capture.Text().find("30% (3/10)"), std::string::npos);
  EXPECT_NE(capture.Text().find("stopped early"), std::string::npos);
}

TEST_F(ProgressTest, UnknownTotalShowsCountOnly) {
  Capture capture;
  {
    ProgressBar bar("scan", 0, {capture.file(), ProgressStyle::kLines});
    for (int i = 0; i < 100; ++i) bar.Advance();
  }
  std::string text = capture.Text();
  EXPECT_EQ(text.find('%'), std::string::npos) << text;
  EXPECT_NE(text.find("scan: 100 elapsed"), std::string::npos) << text;
  EXPECT_LE(Count(text, '\n'), 10u);  // the start line, 1, 2, 4, ..., 64 and the final line
}

TEST_F(ProgressTest, ConcurrentAdvanceCountsEveryStep) {
  Capture capture;
  constexpr int kThreads = 8, kSteps = 20000;
  {
    ProgressBar bar("parallel", int64_t{kThreads} * kSteps,
                    {capture.file(), ProgressStyle::kLines});
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&bar] {
        for (int i = 0; i < kSteps; ++i) bar.Advance();
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(bar.done(), int64_t{kThreads} * kSteps);
  }
  std::string text = capture.Text();
  EXPECT_LE(Count(text, '\n'), 11u);
  EXPECT_NE(text.find("100% (160000/160000)"), std::string::npos) << text;
}

}  // namespace
}  // namespace qtune
