// ProgressBar: progress of a long loop (calibration batches, autotune measurements),
// drawn on stderr.
//
// On a terminal it redraws one line in place ("\r"): label, bar, percent, count, elapsed
// time and ETA, at most once per percent. Otherwise (a log file, CI) it prints a start
// line, at most one line per 10% step and a final line (an unknown total: when the count
// doubles). SetProgressEnabled(false) (--quiet, --no-progress, QTUNE_NO_PROGRESS=1, --json)
// turns every bar in the process off.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

namespace qtune {

// Process-wide switch, read when a ProgressBar is constructed. Default: enabled.
void SetProgressEnabled(bool enabled);
bool IsProgressEnabled();

enum class ProgressStyle {
  kAuto,  // kTerminal if the stream is a TTY, else kLines
  kTerminal,
  kLines,
};

struct ProgressOptions {
  std::FILE* stream = nullptr;  // nullptr: stderr. Borrowed; must outlive the bar.
  ProgressStyle style = ProgressStyle::kAuto;
};

class ProgressBar {
 public:
  // `total` is the number of steps expected; 0 (or negative) means unknown, in which case
  // only the count and the elapsed time are shown.
  ProgressBar(std::string label, int64_t total, ProgressOptions options = {});
  // Finishes the bar if Finish() was not called.
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Records `n` more steps done. Thread-safe; cheap when nothing needs drawing.
  void Advance(int64_t n = 1);
  // Draws the final state and ends the line. Idempotent; later Advance() calls only count.
  void Finish();
  // A short status shown after the count ("workers 2, in flight 2"; "" for none).
  // Thread-safe. On a terminal the line is redrawn at once (at most 4 times a second);
  // in line mode the note goes with the next line printed.
  void SetNote(std::string note);

  int64_t done() const { return done_.load(std::memory_order_relaxed); }
  int64_t total() const { return total_; }

 private:
  // Returns the count at which the next draw is due after drawing at `done`.
  int64_t NextDrawAt(int64_t done) const;
  // REQUIRES: mutex_ held.
  void Draw(int64_t done, bool final_line);

  const std::string label_;
  const int64_t total_;
  std::FILE* stream_;
  bool enabled_;
  bool terminal_;
  const std::chrono::steady_clock::time_point start_;

  std::atomic<int64_t> done_{0};
  std::atomic<int64_t> next_draw_at_{0};
  std::mutex mutex_;  // serializes drawing and guards finished_, note_, note_drawn_at_
  bool finished_ = false;
  std::string note_;
  std::chrono::steady_clock::time_point note_drawn_at_{};
};

}  // namespace qtune
