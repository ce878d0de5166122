#include "runtime/threads.h"

#include <dirent.h>
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace thn {

namespace {

// The cores this process may run on.
int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1, omp_get_num_procs());
}

// The first integer after `key` in a small /proc file, or -1.
long read_field(const char* path, const char* key) {
  std::FILE* f = std::fopen(path, "re");
  if (!f) return -1;
  char buf[8192];
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* at = std::strstr(buf, key);
  return at ? std::strtol(at + std::strlen(key), nullptr, 10) : -1;
}

// This process's threads that are running now (state R in /proc/self/task/*/stat).
int own_running() {
  DIR* d = opendir("/proc/self/task");
  if (!d) return 1;
  int running = 0;
  while (const dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    char path[300];
    std::snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
    std::FILE* f = std::fopen(path, "re");
    if (!f) continue;
    char buf[512];
    const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    const char* close = std::strrchr(buf, ')');  // (the name may hold spaces)
    running += close && close[1] == ' ' && close[2] == 'R';
  }
  closedir(d);
  return std::max(running, 1);
}

std::atomic<int> chosen{0};

}  // namespace

void adapt_threads() {
  static const bool fixed = [] {
    const char* e = std::getenv("OMP_NUM_THREADS");
    return e && *e;
  }();
  if (fixed) return;
  using clock = std::chrono::steady_clock;
  static std::atomic<clock::rep> next{0};
  const clock::rep now = clock::now().time_since_epoch().count();
  if (now < next.load(std::memory_order_relaxed)) return;
  next.store(now + std::chrono::duration_cast<clock::duration>(std::chrono::milliseconds(50)).count(),
             std::memory_order_relaxed);
  static const int cores = usable_cores();
  const long running = read_field("/proc/stat", "procs_running");
  if (running < 0) return;
  // Other processes running now; the fewest of the last four samples
  // (200 ms), so that a blip (a kernel thread, a shell) does not halve a
  // step while a neighbour that keeps running is seen within 200 ms.
  static int recent[4] = {0, 0, 0, 0};
  static unsigned k = 0;
  recent[k++ % 4] = std::max(0, int(running) - own_running());
  const int others = *std::min_element(recent, recent + 4);
  const int threads = std::clamp(cores - others, 1, cores);
  if (threads != chosen.load(std::memory_order_relaxed)) {
    chosen = threads;
    omp_set_num_threads(threads);
  }
}

int kernel_threads() {
  const int c = chosen.load();
  return c > 0 ? c : omp_get_max_threads();
}

}  // namespace thn
