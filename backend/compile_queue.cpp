#include "backend/compile_queue.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "runtime/progress.h"

namespace thn {

CompileMode default_compile_mode() {
  static const CompileMode mode = [] {
    const char* e = std::getenv("THN_COMPILE");
    const std::string_view v = e ? e : "";
    if (v.empty() || v == "background") return CompileMode::Background;
    if (v == "sync") return CompileMode::Sync;
    fail(ErrorKind::ValueError, "THN_COMPILE must be 'sync' or 'background', not '{}'", v);
  }();
  return mode;
}

// The workers and their queue: one process-wide instance, stopped at exit.
class CompileQueue {
 public:
  static CompileQueue& get() {
    static CompileQueue q;
    return q;
  }

  std::shared_ptr<CompileJob> start(const std::string& key, CompileJob::Work work, bool* fresh) {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto j = jobs_[key].lock(); j && !j->failed()) {
      if (fresh) *fresh = false;
      return j;
    }
    auto job = std::make_shared<CompileJob>(key, std::move(work));
    if (fresh) *fresh = true;
    jobs_[key] = job;
    if (stopping_) {
      job->cancel_ = true;
      job->finish(nullptr, ErrorKind::RuntimeError, "thn is exiting");
      return job;
    }
    if (pending_ == 0) {
      batch_total_ = batch_done_ = 0;
      batch_start_ = std::chrono::steady_clock::now();
    }
    ++pending_;
    ++batch_total_;
    queued_.push_back(job);
    if (workers_.size() < worker_count() && workers_.size() < pending_) workers_.emplace_back([this] { serve(); });
    if (!watcher_.joinable()) watcher_ = std::thread([this] { watch(); });
    cv_.notify_all();
    return job;
  }

  // A job no one waits for any more: dropped when queued, told to stop when running.
  void cancel(const std::shared_ptr<CompileJob>& job) {
    std::unique_lock<std::mutex> lock(mu_);
    for (auto it = queued_.begin(); it != queued_.end(); ++it)
      if (*it == job) {
        queued_.erase(it);
        job->cancel_ = true;
        retire(*job, lock, [&] { job->finish(nullptr, ErrorKind::KeyboardInterrupt, "cancelled"); });
        return;
      }
    job->cancel_ = true;
  }

  size_t pending() {
    std::lock_guard<std::mutex> lock(mu_);
    return pending_;
  }

  std::atomic<int> sync_waiters{0};

  ~CompileQueue() {
    {
      std::unique_lock<std::mutex> lock(mu_);
      stopping_ = true;
      while (!queued_.empty()) {
        auto job = queued_.front();
        queued_.pop_front();
        job->cancel_ = true;
        retire(*job, lock, [&] { job->finish(nullptr, ErrorKind::RuntimeError, "thn is exiting"); });
      }
      for (CompileJob* j : running_) j->cancel_ = true;
      cv_.notify_all();
    }
    for (std::thread& w : workers_) w.join();
    if (watcher_.joinable()) watcher_.join();
    clear_status();
  }

 private:
  CompileQueue() = default;

  static size_t worker_count() {
    static const size_t n = [] {
      const char* e = std::getenv("THN_COMPILE_JOBS");
      char* end = nullptr;
      const long v = e && *e ? std::strtol(e, &end, 10) : 0;
      if (e && *e && end && *end == '\0' && v > 0) return size_t(v);
      return size_t(std::max(1u, std::thread::hardware_concurrency()));
    }();
    return n;
  }

  // Ends a job's accounting (under the lock; `finish` runs with it released):
  // a failed job leaves the table, so that asking again tries again.
  template <class F>
  void retire(CompileJob& job, std::unique_lock<std::mutex>& lock, F finish) {
    lock.unlock();
    finish();
    lock.lock();
    if (job.failed())
      if (auto it = jobs_.find(job.key()); it != jobs_.end() && it->second.lock().get() == &job) jobs_.erase(it);
    --pending_;
    ++batch_done_;
    cv_.notify_all();
  }

  void serve() {
    // Compilers run at a lower priority (their nice value is this thread's):
    // the program, running its fusions op by op meanwhile, comes first.
    setpriority(PRIO_PROCESS, pid_t(syscall(SYS_gettid)), 10);
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return stopping_ || !queued_.empty(); });
      if (queued_.empty()) return;  // (stopping)
      std::shared_ptr<CompileJob> job = queued_.front();
      queued_.pop_front();
      running_.push_back(job.get());
      retire(*job, lock, [&] { job->run(); });
      running_.erase(std::find(running_.begin(), running_.end(), job.get()));
    }
  }

  // The progress line: while jobs are pending for more than a second.
  void watch() {
    std::unique_lock<std::mutex> lock(mu_);
    bool shown = false;
    while (!stopping_) {
      if (pending_ == 0 && !shown) cv_.wait(lock, [&] { return stopping_ || pending_ > 0; });
      else cv_.wait_for(lock, std::chrono::milliseconds(250));
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - batch_start_).count();
      if (pending_ > 0 && s > 1.0 && !stopping_) {
        const size_t pct = batch_total_ ? 100 * batch_done_ / batch_total_ : 0;
        show_status(fmt::format("compiling {} kernel{}: {}% ({})", batch_total_, batch_total_ == 1 ? "" : "s", pct,
                                sync_waiters > 0 ? "waiting for them: compile=sync" : "eager meanwhile"));
        shown = true;
      } else if (shown && pending_ == 0) {
        clear_status();
        shown = false;
      }
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<std::string, std::weak_ptr<CompileJob>> jobs_;
  std::deque<std::shared_ptr<CompileJob>> queued_;
  std::vector<CompileJob*> running_;
  std::vector<std::thread> workers_;
  std::thread watcher_;
  size_t pending_ = 0, batch_total_ = 0, batch_done_ = 0;
  std::chrono::steady_clock::time_point batch_start_;
  bool stopping_ = false;
};

void CompileJob::run() {
  if (cancel_) {
    finish(nullptr, ErrorKind::RuntimeError, "cancelled");
    return;
  }
  try {
    std::shared_ptr<void> r = work_(cancel_, info_);
    finish(r, ErrorKind::RuntimeError, r ? "" : "the compile produced nothing");
  } catch (const Error& e) {
    finish(nullptr, e.kind(), e.what());
  } catch (const std::exception& e) {
    finish(nullptr, ErrorKind::RuntimeError, e.what());
  }
  work_ = nullptr;  // (what it captured: the source)
}

void CompileJob::finish(std::shared_ptr<void> r, ErrorKind kind, std::string error) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    result_ = std::move(r);
    kind_ = kind;
    error_ = std::move(error);
    done_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
}

void CompileJob::wait() {
  if (done()) return;
  CompileQueue& q = CompileQueue::get();
  ++q.sync_waiters;
  struct Leave {
    CompileQueue& q;
    ~Leave() { --q.sync_waiters; }
  } leave{q};
  bool cancelled = false;
  std::unique_lock<std::mutex> lock(mu_);
  while (!done()) {
    cv_.wait_for(lock, std::chrono::milliseconds(50));
    if (!done() && !cancelled && interrupt_requested()) {
      cancelled = true;
      lock.unlock();
      q.cancel(shared_from_this());
      lock.lock();
    }
  }
  lock.unlock();
  if (cancelled && take_interrupt()) fail(ErrorKind::KeyboardInterrupt, "");
}

std::shared_ptr<void> CompileJob::result() const {
  if (!result_) throw Error(kind_, error_);
  return result_;
}

std::shared_ptr<CompileJob> start_compile(const std::string& key, CompileJob::Work work, bool* fresh) {
  return CompileQueue::get().start(key, std::move(work), fresh);
}

size_t pending_compiles() { return CompileQueue::get().pending(); }

}  // namespace thn
