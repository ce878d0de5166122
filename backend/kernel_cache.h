#pragma once
// The kernel cache: compiled kernels in memory and on disk
// ($XDG_CACHE_HOME/thn/kernels, else ~/.cache/thn/kernels), keyed by a hash
// of the source, the options and the compiler's identity. Entries are
// written to a temporary file and renamed, under a lock per key, with a
// checksum beside them: an entry whose checksum fails is rebuilt, never
// loaded. Compile failures report the compiler's log and the path of the
// generated source.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace thn {

// A loaded host module (a shared object); closed when the last user drops it.
class HostModule {
 public:
  explicit HostModule(void* handle) : handle_(handle) {}
  ~HostModule();
  HostModule(const HostModule&) = delete;
  HostModule& operator=(const HostModule&) = delete;
  void* symbol(const std::string& name) const;  // logic_error when missing

 private:
  void* handle_;
};

struct CompileInfo {
  bool from_disk = false;    // loaded from the disk cache
  bool from_memory = false;  // already loaded in this process
  double ms = 0;             // time to compile or load
  std::string path;          // the shared object on disk
};

// Runs argv (no shell; argv[0] found on PATH) with stdout and stderr into
// `log`; its exit status, -1 when it could not be started or was killed,
// kSpawnTimedOut when it ran past `timeout_s` (0: no limit) and was killed,
// kSpawnInterrupted when an interrupt was requested while it ran (waits
// with a limit poll for one), or, given `cancel`, when that was set (then
// interrupts are not its to see: a compile worker's).
constexpr int kSpawnTimedOut = -2, kSpawnInterrupted = -3;  // (a Ctrl-C, request_interrupt)
int spawn(const std::vector<std::string>& argv, const std::filesystem::path& log, double timeout_s = 0,
          const std::atomic<bool>* cancel = nullptr);
// THN_COMPILE_TIMEOUT (seconds), else 600: how long a kernel compile may run.
double compile_timeout_s();

// The module the disk cache holds under `key` (a hash of its source and
// compiler), when its entry is whole (its checksum holds); else null.
std::shared_ptr<HostModule> cached_module(const std::string& key);

// The host module built from `source` by $THN_CXX (else c++) with
// -O3 -march=native -fopenmp -shared -fPIC, spawned without a shell, on a
// compile worker (backend/compile_queue.h): the job building it (its
// result a HostModule; `fresh` as start_compile's), or the module, waiting
// for it (a Ctrl-C stops the compiler and raises KeyboardInterrupt).
// `header`: text the source starts with, shared by many sources (the
// kernels' prelude), compiled once as a precompiled header.
class CompileJob;
std::shared_ptr<CompileJob> host_module_job(const std::string& source, bool* fresh = nullptr,
                                            const std::string& header = "");
std::shared_ptr<HostModule> host_module(const std::string& source, CompileInfo* info = nullptr);

// Raw entries of the disk cache (device images): the bytes stored under
// `name` when present and their checksum holds, else empty.
std::string cache_load(const std::string& name);
void cache_store(const std::string& name, const std::string& bytes);
// Writes `source` next to the cache entries (for a failed compile's message); its path.
std::string keep_source(const std::string& name, const std::string& source);

// The directory of the disk cache (created on first use).
std::string kernel_cache_dir();

// What the disk cache holds (`thn cache`): its entries (host modules and
// device images, each with its checksum) and the bytes of all its files.
struct CacheSummary {
  std::string dir;
  size_t host_modules = 0, device_images = 0, files = 0;
  uintmax_t bytes = 0;
};
CacheSummary cache_summary();
// Removes every file of the cache (its entries, their locks and any kept
// sources); what it held before.
CacheSummary clear_cache();

// A 128-bit hash of s as 32 hex digits (the cache key and checksum).
std::string hash_hex(std::string_view s);

}  // namespace thn
