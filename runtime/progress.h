#pragma once
// The progress line of the long-running commands (fuzz, difftest, kernels,
// bench): redrawn in place on a terminal, nothing when the stream is not
// one; cleared before other output goes to the same stream. And the one
// status line of background work (kernels compiling while a program runs).
#include <unistd.h>

#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace thn {

class Progress {
 public:
  explicit Progress(std::FILE* out) : out_(out), tty_(isatty(fileno(out)) != 0) {}
  ~Progress() { clear(); }
  bool on() const { return tty_; }
  // `[####......] DONE/TOTAL WHAT` (a bar when total > 0), then `detail`.
  void show(uint64_t done, uint64_t total, const std::string& what, const std::string& detail = "") {
    if (!tty_) return;
    std::string bar;
    if (total > 0) {
      const int width = 30, filled = int(double(width) * double(done) / double(total));
      bar.append("[").append(size_t(filled), '#').append(size_t(width - filled), '.');
      bar += fmt::format("] {}/{} ", done, total);
    }
    std::fprintf(out_, "\r\033[K%s%s%s%s", bar.c_str(), what.c_str(), detail.empty() ? "" : "  ", detail.c_str());
    std::fflush(out_);
    shown_ = true;
  }
  void clear() {
    if (!tty_ || !shown_) return;
    std::fputs("\r\033[K", out_);
    std::fflush(out_);
    shown_ = false;
  }

 private:
  std::FILE* out_;
  bool tty_;
  bool shown_ = false;
};

// The status line of background work on stderr, when stderr is a
// terminal: drawn by the thread doing the work, cleared by it when done
// and by print() before a program's output reaches the terminal (the work
// redraws it later). Thread-safe; nothing at all when stderr is not a
// terminal.
void show_status(const std::string& text);
void clear_status();
// While paused (the REPL reading a line), show_status draws nothing.
void pause_status(bool paused);

}  // namespace thn
