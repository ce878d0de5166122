// libFuzzer target over the front end and the interpreter: any bytes are
// parsed, resolved and (when they parse) run as a script. A thn error is the
// right answer to bad input; a crash, a sanitizer report, an escaping C++
// exception, a hang or a leak is a bug. Run by scripts/fuzz-frontend.
//
// Each input runs at most ~200 ms (a watchdog raises KeyboardInterrupt at
// the next statement) and may allocate at most 64 MiB per tensor.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

#include "frontend/parser.h"
#include "frontend/resolve.h"
#include "interp/interpreter.h"
#include "runtime/tensor.h"

namespace {

// Interrupts the running input when its time is up.
class Watchdog {
 public:
  Watchdog() : thread_([this] { loop(); }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void arm() {
    std::lock_guard lock(mu_);
    deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    armed_ = true;
    cv_.notify_all();
  }
  void disarm() {
    std::lock_guard lock(mu_);
    armed_ = false;
    thn::take_interrupt();
  }

 private:
  void loop() {
    std::unique_lock lock(mu_);
    while (!stop_) {
      if (!armed_) {
        cv_.wait(lock);
      } else if (cv_.wait_until(lock, deadline_) == std::cv_status::timeout && armed_) {
        thn::request_interrupt();
        armed_ = false;
      }
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false, armed_ = false;
  std::chrono::steady_clock::time_point deadline_;
  std::thread thread_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Watchdog watchdog;
  static std::FILE* sink = std::fopen("/dev/null", "w");
  thn::Storage::set_limit(int64_t(64) << 20);
  auto src = std::make_shared<const thn::Source>("<fuzz>", std::string(reinterpret_cast<const char*>(data), size));
  thn::InterpOptions opts;
  opts.module_path = {THN_STDLIB_DIR};
  opts.out = sink;
  thn::Interpreter interp(opts);
  watchdog.arm();
  try {
    interp.run_interactive(src);  // parses, resolves and runs
  } catch (const thn::Error&) {
    // A located thn error: the expected answer to most inputs.
  }
  watchdog.disarm();
  return 0;
}
