#include "core/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <utility>

#include "core/progress_sink.h"

namespace qtune {
namespace {

std::atomic<bool> g_progress_enabled{true};

constexpr int kBarWidth = 24;

// "0:07", "12:34", "1:02:03".
std::string FormatDuration(double seconds) {
  if (seconds < 0) seconds = 0;
  auto total = static_cast<int64_t>(seconds + 0.5);
  int64_t h = total / 3600, m = (total / 60) % 60, s = total % 60;
  if (h > 0) return fmt::format("{}:{:02}:{:02}", h, m, s);
  return fmt::format("{}:{:02}", m, s);
}

// The current sink; null means drawing on the bar's stream. Copied out under the mutex so
// that a sink outlives a concurrent SetProgressSink while it is being called.
std::mutex g_sink_mutex;
std::shared_ptr<const ProgressSink> g_sink;

std::shared_ptr<const ProgressSink> CurrentSink() {
  std::lock_guard<std::mutex> lock(g_sink_mutex);
  return g_sink;
}

}  // namespace

void SetProgressSink(ProgressSink sink) {
  auto next = sink ? std::make_shared<const ProgressSink>(std::move(sink)) : nullptr;
  std::lock_guard<std::mutex> lock(g_sink_mutex);
  g_sink = std::move(next);
}

void SetProgressEnabled(bool enabled) { g_progress_enabled.store(enabled); }
bool IsProgressEnabled() { return g_progress_enabled.load(); }

ProgressBar::ProgressBar(std::string label, int64_t total, ProgressOptions options)
    : label_(std::move(label)),
      total_(std::max<int64_t>(total, 0)),
      // A null stream_ means "to the sink" (core/progress_sink.h): a bar on the default
      // stream while a sink is set. Such a bar steps like a terminal one (per percent).
      stream_(options.stream != nullptr  ? options.stream
              : CurrentSink() != nullptr ? nullptr
                                         : stderr),
      enabled_(IsProgressEnabled()),
      terminal_(stream_ == nullptr || options.style == ProgressStyle::kTerminal ||
                (options.style == ProgressStyle::kAuto && ::isatty(::fileno(stream_)) == 1)),
      start_(std::chrono::steady_clock::now()) {
  next_draw_at_.store(enabled_ ? NextDrawAt(0) : INT64_MAX);
  if (enabled_ && terminal_) {
    std::lock_guard<std::mutex> lock(mutex_);
    Draw(0, /*final_line=*/false);
  } else if (enabled_) {
    // Line mode: one line saying the work began, so a log shows what a long silence is.
    std::string line = total_ > 0 ? fmt::format("{}: started, {} steps\n", label_, total_)
                                  : fmt::format("{}: started\n", label_);
    std::fputs(line.c_str(), stream_);
    std::fflush(stream_);
  }
}

ProgressBar::~ProgressBar() { Finish(); }

int64_t ProgressBar::NextDrawAt(int64_t done) const {
  if (total_ == 0) {
    // Unknown total: draw when the count doubles (1, 2, 4, 8, ...).
    return done <= 0 ? 1 : done * 2;
  }
  // Next whole step: 1% on a terminal, 10% in line mode.
  const int64_t steps = terminal_ ? 100 : 10;
  int64_t step = done * steps / total_ + 1;  // fits: done and total are counts
  if (step > steps) return INT64_MAX;
  // Smallest count c with c * steps / total >= step.
  const int64_t at = (step * total_ + steps - 1) / steps;
  // In line mode the 100% line is printed once, by Finish().
  return (at >= total_ && !terminal_) ? INT64_MAX : at;
}

void ProgressBar::Advance(int64_t n) {
  const int64_t done = done_.fetch_add(n, std::memory_order_relaxed) + n;
  if (done < next_draw_at_.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_ || done < next_draw_at_.load(std::memory_order_relaxed)) return;
  const int64_t now_done = done_.load(std::memory_order_relaxed);
  next_draw_at_.store(NextDrawAt(now_done), std::memory_order_relaxed);
  Draw(now_done, /*final_line=*/false);
}

void ProgressBar::Finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  finished_ = true;
  next_draw_at_.store(INT64_MAX, std::memory_order_relaxed);
  if (enabled_) Draw(done_.load(std::memory_order_relaxed), /*final_line=*/true);
}

void ProgressBar::SetNote(std::string note) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (note == note_) return;
  note_ = std::move(note);
  const auto now = std::chrono::steady_clock::now();
  // A sink gets the note with the next update.
  if (!enabled_ || !terminal_ || stream_ == nullptr || finished_ ||
      now - note_drawn_at_ < std::chrono::milliseconds(250))
    return;
  note_drawn_at_ = now;
  Draw(done_.load(std::memory_order_relaxed), /*final_line=*/false);
}

void ProgressBar::Draw(int64_t done, bool final_line) {
  // To a sink, the 100% update is the final one, sent once by Finish().
  if (stream_ == nullptr && !final_line && total_ > 0 && done >= total_) return;
  // A sink gets the line-mode text; only a real terminal gets the redrawn bar.
  const bool bar_line = terminal_ && stream_ != nullptr;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string count = total_ > 0 ? fmt::format("{}/{}", done, total_) : fmt::format("{}", done);
  std::string line;
  if (total_ > 0) {
    const double fraction = std::clamp(static_cast<double>(done) / total_, 0.0, 1.0);
    const int percent = static_cast<int>(fraction * 100);
    std::string eta = "--:--";
    if (done > 0 && done < total_) eta = FormatDuration(elapsed / fraction - elapsed);
    if (done >= total_) eta = FormatDuration(0);
    if (bar_line) {
      int filled = static_cast<int>(fraction * kBarWidth);
      std::string bar(filled, '#');
      bar.append(kBarWidth - filled, '.');
      line = fmt::format("{} [{}] {:3}% {} elapsed {} eta {}", label_, bar, percent, count,
                         FormatDuration(elapsed), eta);
    } else {
      line = fmt::format("{}: {}% ({}) elapsed {} eta {}", label_, percent, count,
                         FormatDuration(elapsed), eta);
    }
  } else {
    line = fmt::format("{}: {} elapsed {}", label_, count, FormatDuration(elapsed));
  }
  if (!note_.empty() && !final_line) line += " | " + note_;
  if (final_line && total_ > 0 && done < total_) line += " (stopped early)";
  if (stream_ == nullptr) {
    if (auto sink = CurrentSink(); sink != nullptr) {
      (*sink)(ProgressUpdate{
          .label = label_, .done = done, .total = total_, .final = final_line, .line = line});
    }
    return;
  }
  if (terminal_) {
    // "\x1b[K" clears what a longer previous line left behind.
    std::fputs(("\r" + line + "\x1b[K" + (final_line ? "\n" : "")).c_str(), stream_);
  } else {
    std::fputs((line + "\n").c_str(), stream_);
  }
  std::fflush(stream_);
}

}  // namespace qtune
