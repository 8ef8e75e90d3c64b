// The process-wide log and progress sinks (core/log_sink.h, core/progress_sink.h) that the
// Python module installs: what a sink receives, and that clearing it restores stderr.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/log_sink.h"
#include "core/logging.h"
#include "core/progress.h"
#include "core/progress_sink.h"

namespace qtune {
namespace {

struct Seen {
  int64_t done;
  int64_t total;
  bool final;
  std::string line;
};

class SinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SetProgressSink([this](const ProgressUpdate& u) {
      std::lock_guard<std::mutex> lock(mutex_);
      seen_.push_back({u.done, u.total, u.final, std::string(u.line)});
      EXPECT_EQ(u.label, "work");
    });
  }
  void TearDown() override {
    SetProgressSink(nullptr);
    SetLogSink(nullptr);
    SetProgressEnabled(true);
  }
  std::mutex mutex_;
  std::vector<Seen> seen_;
};

TEST_F(SinkTest, BarSendsZeroThenNonDecreasingCountsThenOneFinalAtTheTotal) {
  {
    ProgressBar bar("work", 1000);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&bar] {
        for (int i = 0; i < 250; ++i) bar.Advance();
      });
    }
    for (auto& thread : threads) thread.join();
  }  // the destructor finishes
  ASSERT_GE(seen_.size(), 3u);
  EXPECT_EQ(seen_.front().done, 0);
  EXPECT_LE(seen_.size(), 102u);  // 0, at most one per percent below 100, the final
  for (size_t i = 0; i + 1 < seen_.size(); ++i) {
    EXPECT_FALSE(seen_[i].final) << i;
    EXPECT_LT(seen_[i].done, 1000) << i;
    EXPECT_LE(seen_[i].done, seen_[i + 1].done) << i;
  }
  EXPECT_TRUE(seen_.back().final);
  EXPECT_EQ(seen_.back().done, 1000);
  EXPECT_EQ(seen_.back().total, 1000);
  EXPECT_EQ(seen_.back().line.rfind("work: 100% (1000/1000)", 0), 0u) << seen_.back().line;
}

TEST_F(SinkTest, NoteRidesOnTheNextUpdateAndAnEarlyStopIsSaid) {
  {
    ProgressBar bar("work", 10);
    bar.SetNote("workers 2");
    EXPECT_EQ(seen_.size(), 1u);  // the note alone sends nothing
    bar.Advance(3);
    bar.Finish();
    bar.Finish();
  }
  ASSERT_EQ(seen_.size(), 3u);
  EXPECT_NE(seen_[1].line.find("(3/10)"), std::string::npos) << seen_[1].line;
  EXPECT_NE(seen_[1].line.find(" | workers 2"), std::string::npos) << seen_[1].line;
  EXPECT_TRUE(seen_[2].final);
  EXPECT_NE(seen_[2].line.find("(stopped early)"), std::string::npos) << seen_[2].line;
}

TEST_F(SinkTest, DisabledProgressSendsNothing) {
  SetProgressEnabled(false);
  {
    ProgressBar bar("work", 10);
    bar.Advance(10);
  }
  EXPECT_TRUE(seen_.empty());
}

TEST_F(SinkTest, BarWithItsOwnStreamIgnoresTheSinkAndClearedSinkDropsUpdates) {
  std::FILE* file = std::tmpfile();
  {
    ProgressBar bar("work", 10, {.stream = file, .style = ProgressStyle::kLines});
    bar.Advance(10);
  }
  EXPECT_TRUE(seen_.empty());
  EXPECT_GT(std::ftell(file), 0);
  std::fclose(file);

  ProgressBar bar("work", 10);  // under the sink
  SetProgressSink(nullptr);
  bar.Advance(10);
  bar.Finish();
  EXPECT_EQ(seen_.size(), 1u);  // only the first update, sent before the sink went
}

TEST_F(SinkTest, LogSinkGetsFilteredMessagesWithTheirLevel) {
  std::vector<std::pair<LogLevel, std::string>> messages;
  SetLogSink([&](LogLevel level, std::string_view message) {
    messages.emplace_back(level, std::string(message));
    if (messages.size() == 1) QTUNE_LOG_ERROR("logged from the sink");  // no deadlock
  });
  const LogLevel before = GetLogLevel();
  SetLogLevel(LogLevel::kInfo);
  QTUNE_LOG_DEBUG("dropped {}", 1);
  QTUNE_LOG_INFO("kept {}", 2);
  QTUNE_LOG_WARNING("warned");
  SetLogLevel(before);
  SetLogSink(nullptr);
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[0], std::make_pair(LogLevel::kInfo, std::string("kept 2")));
  EXPECT_EQ(messages[1], std::make_pair(LogLevel::kError, std::string("logged from the sink")));
  EXPECT_EQ(messages[2], std::make_pair(LogLevel::kWarning, std::string("warned")));

  testing::internal::CaptureStderr();
  QTUNE_LOG_WARNING("back on stderr");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "qtune warning: back on stderr\n");
}

}  // namespace
}  // namespace qtune
