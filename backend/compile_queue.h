#pragma once
// Kernel compiles on background workers (the execution tiers of the
// design): a compile is a job keyed by what it builds (a hash of its
// source, options and compiler). Asking for a key that is queued, running
// or built gives the same job, so identical kernels (twelve blocks of a
// model, a retrace) compile once. Workers: one per core (THN_COMPILE_JOBS
// sets the count). While jobs are pending for more than a second, a
// progress line on stderr when it is a terminal. At exit the running
// compilers are killed and queued jobs dropped; a job writes a cache entry
// only by renaming a whole file into place, so none is left partial.
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "backend/kernel_cache.h"
#include "runtime/error.h"

namespace thn {

// How jit waits for a trace's kernels. Background: the trace runs at once,
// each fusion op by op until its kernel is ready; Sync: the first call
// waits for every kernel (for tests and benchmarks); Eager: fusions always
// run op by op, nothing is compiled (`thn kernels`, which compiles for its
// own target).
enum class CompileMode : uint8_t { Background, Sync, Eager };
// THN_COMPILE=sync or =background; unset (or empty): background. Another
// value is an error naming the two.
CompileMode default_compile_mode();

class CompileJob : public std::enable_shared_from_this<CompileJob> {
 public:
  // Runs on a worker: builds the result (filling `info`), or throws an
  // Error. `cancel` is set when the job is no longer wanted (thn exits, a
  // Ctrl-C while a synchronous call waits): a compiler it runs is stopped.
  using Work = std::function<std::shared_ptr<void>(const std::atomic<bool>& cancel, CompileInfo& info)>;

  CompileJob(std::string key, Work work) : key_(std::move(key)), work_(std::move(work)) {}
  const std::string& key() const { return key_; }
  bool done() const { return done_.load(std::memory_order_acquire); }
  bool failed() const { return done() && !result_; }
  // Whether it ended because it was cancelled (not wanted any more).
  bool cancelled() const { return failed() && cancel_.load(); }
  // Waits until done; a Ctrl-C meanwhile cancels the job and raises KeyboardInterrupt.
  void wait();
  // Once done: the result, else the job's error raised again.
  std::shared_ptr<void> result() const;
  // Once done: the error's message ("" when it built).
  const std::string& error() const { return error_; }
  // Once done: how it was built (compiled here or loaded from the disk cache).
  const CompileInfo& info() const { return info_; }
  // Whether a background failure was reported yet (reported once).
  std::atomic<bool> reported{false};

 private:
  friend class CompileQueue;
  void run();                        // on a worker
  void finish(std::shared_ptr<void> r, ErrorKind kind, std::string error);
  std::string key_;
  Work work_;
  std::atomic<bool> cancel_{false}, done_{false};
  std::shared_ptr<void> result_;
  ErrorKind kind_ = ErrorKind::RuntimeError;
  std::string error_;
  CompileInfo info_;
  std::mutex mu_;
  std::condition_variable cv_;
};

// The job building `key`: the one already asked for (queued, running or
// built, not failed), or a new one queued with `work`. `fresh` (when given)
// says whether it is new.
std::shared_ptr<CompileJob> start_compile(const std::string& key, CompileJob::Work work, bool* fresh = nullptr);

// Jobs queued or running now (for `--stats` and the tests).
size_t pending_compiles();

}  // namespace thn
