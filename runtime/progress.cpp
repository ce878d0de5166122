#include "runtime/progress.h"

#include <atomic>
#include <mutex>

namespace thn {

namespace {

std::mutex status_mu;
std::atomic<bool> status_shown{false}, status_paused{false};

bool stderr_is_terminal() {
  static const bool tty = isatty(STDERR_FILENO) != 0;
  return tty;
}

}  // namespace

void show_status(const std::string& text) {
  if (!stderr_is_terminal() || status_paused) return;
  std::lock_guard<std::mutex> lock(status_mu);
  std::fprintf(stderr, "\r\033[K%s", text.c_str());
  std::fflush(stderr);
  status_shown = true;
}

void clear_status() {
  if (!status_shown.load(std::memory_order_relaxed)) return;  // (print's path: one load)
  std::lock_guard<std::mutex> lock(status_mu);
  if (!status_shown) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  status_shown = false;
}

void pause_status(bool paused) { status_paused = paused; }

}  // namespace thn
