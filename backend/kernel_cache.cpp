#include "backend/kernel_cache.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <vector>

#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

#include <fmt/format.h>

#include "backend/compile_queue.h"
#include "runtime/error.h"

extern char** environ;

namespace thn {

namespace fs = std::filesystem;

HostModule::~HostModule() { dlclose(handle_); }

void* HostModule::symbol(const std::string& name) const {
  void* s = dlsym(handle_, name.c_str());
  if (!s) fail(ErrorKind::RuntimeError, "the compiled kernels lack the function {} (the kernel compiler built another "
               "program?)", name);
  return s;
}

std::string hash_hex(std::string_view s) {
  // Two 64-bit FNV-1a variants with different offsets, mixed at the end.
  uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
  for (unsigned char c : s) {
    a = (a ^ c) * 0x100000001b3ull;
    b = (b ^ c) * 0x100000001b3ull;
    b ^= b >> 29;
  }
  auto mix = [](uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
  };
  char out[33];
  std::snprintf(out, sizeof out, "%016llx%016llx", (unsigned long long)mix(a), (unsigned long long)mix(b ^ a));
  return out;
}

namespace {

// Why a cache directory may hold another user's files ("" when it may not):
// it is not a directory owned by this user, or others may write into it.
// (THN_TEST_CACHE_FOREIGN=1 makes it foreign, for the tests: one cannot
// make a directory another user owns.)
std::string foreign_directory(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return "cannot stat it";
  if (!S_ISDIR(st.st_mode)) return "not a directory";
  const char* test = std::getenv("THN_TEST_CACHE_FOREIGN");
  const bool fake = test && std::string_view(test) == "1";
  if (fake) return "THN_TEST_CACHE_FOREIGN=1 takes it for another user's";
  if (st.st_uid != ::geteuid()) return fmt::format("it is owned by uid {}, not by this user (uid {})", st.st_uid, ::geteuid());
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return fmt::format("others may write into it (mode {:o})", st.st_mode & 07777);
  return "";
}

// A directory of this process's own, removed at exit.
std::string private_directory() {
  std::string t = (fs::temp_directory_path() / "thn-kernels-XXXXXX").string();
  if (!::mkdtemp(t.data())) fail(ErrorKind::RuntimeError, "cannot create a private kernel directory {}: {}", t, std::strerror(errno));
  static std::string made = t;
  std::atexit([] {
    std::error_code ec;
    fs::remove_all(made, ec);
  });
  return t;
}

}  // namespace

std::string kernel_cache_dir() {
  static const std::string dir = [] {
    // Only absolute paths count (the XDG rule; a relative one is ignored), so
    // no path from the environment can reach a command line as an option.
    auto absolute = [](const char* v) { return v && v[0] == '/'; };
    fs::path p;
    if (const char* x = std::getenv("XDG_CACHE_HOME"); absolute(x)) p = fs::path(x) / "thn" / "kernels";
    else if (const char* h = std::getenv("HOME"); absolute(h)) p = fs::path(h) / ".cache" / "thn" / "kernels";
    else p = fs::temp_directory_path() / ("thn-kernels-" + std::to_string(getuid()));
    std::error_code ec;
    fs::create_directories(p, ec);
    if (ec) fail(ErrorKind::RuntimeError, "cannot create the kernel cache directory {}: {}", p.string(), ec.message());
    // Kernels are loaded and run from here: a directory another user owns
    // or may write into (one made first in /tmp, say) could hold planted
    // ones. It is not used then (as OpenSSH and Python's bytecode cache
    // refuse such paths), nor is one this user cannot write into; kernels
    // compile into a private temporary one.
    std::string why = foreign_directory(p);
    if (why.empty() && ::access(p.c_str(), R_OK | W_OK | X_OK) != 0)
      why = fmt::format("this user cannot write into it ({})", std::strerror(errno));
    if (!why.empty()) {
      std::fprintf(stderr, "thn: not using the kernel cache directory %s: %s; compiling into a private temporary "
                   "directory\n", p.c_str(), why.c_str());
      return private_directory();
    }
    return p.string();
  }();
  return dir;
}

namespace {

// "; the file system of DIR is full" when it is (a failed write's likely
// cause), else "".
std::string disk_full(const fs::path& dir) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) == 0 && st.f_bavail == 0) return fmt::format("; the file system of {} is full", dir.string());
  return "";
}

// A cache file's bytes; empty for one that is not a regular file of at
// most kMaxCacheFile bytes (a symlink, a FIFO, a device, a directory: a
// miss, which the rebuild replaces), so no planted entry can hang thn or
// make it read without end.
constexpr off_t kMaxCacheFile = off_t(1) << 30;
// The bytes of the open file fd, when it is a regular file of at most
// kMaxCacheFile bytes (and, with `loadable`, one thn may load: owned by
// this user and writable by no one else); empty otherwise.
std::string read_fd(int fd, bool loadable = false) {
  std::string out;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || (loadable && (st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))))
    return out;
  if (S_ISREG(st.st_mode) && st.st_size <= kMaxCacheFile) {
    out.resize(size_t(st.st_size));
    size_t got = 0;
    while (got < out.size()) {
      const ssize_t n = ::read(fd, out.data() + got, out.size() - got);
      if (n <= 0) break;
      got += size_t(n);
    }
    out.resize(got);
  }
  return out;
}

std::string read_file(const fs::path& p) {
  const int fd = ::open(p.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "";
  std::string out = read_fd(fd);
  ::close(fd);
  return out;
}

// Whether p is a regular file (not following a symlink; never throws: a
// symlink loop or a directory where an entry should be is not one).
bool is_entry(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Puts `from` at `to`, replacing what is there: an entry, or whatever took
// its name (a directory, a symlink), which the cache owns.
void install(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  struct stat st {};  // (writable by this user alone, whatever the umask: a loadable entry must be)
  if (::lstat(from.c_str(), &st) == 0 && (st.st_mode & (S_IWGRP | S_IWOTH)))
    (void)::chmod(from.c_str(), st.st_mode & 07755);
  if (!is_entry(to) && fs::symlink_status(to, ec).type() != fs::file_type::not_found) fs::remove_all(to, ec);
  fs::rename(from, to, ec);
  if (ec) {
    fs::remove(from, ec);
    fail(ErrorKind::RuntimeError, "cannot write the kernel cache file {}: {}", to.string(), ec.message());
  }
}

void write_file(const fs::path& p, std::string_view data) {
  fs::path tmp = p;
  tmp += ".tmp" + std::to_string(getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(data.data(), std::streamsize(data.size()));
    f.flush();
    if (!f) {
      const int err = errno;
      std::error_code ec;
      fs::remove(tmp, ec);
      fail(ErrorKind::RuntimeError, "cannot write the kernel cache file {}: {}{}", tmp.string(),
           err ? std::strerror(err) : "write error", disk_full(p.parent_path()));
    }
  }
  install(tmp, p);
}

std::string compiler() {
  const char* c = std::getenv("THN_CXX");
  return c && *c ? c : "c++";
}

const std::vector<std::string>& compile_flags() {
  static const std::vector<std::string> flags{"-O3", "-march=native", "-fopenmp", "-shared", "-fPIC",
                                              "-std=c++17", "-ffp-contract=off", "-fno-math-errno", "-fwrapv", "-w"};
  return flags;
}

// What else a host kernel depends on: the C library (kernels call libmvec's
// vector functions where glibc has them) and the CPU `-march=native` sees
// (its model and feature flags), so that a cache shared between machines
// never hands one a kernel built for another.
std::string host_identity() {
  std::string id;
#ifdef __GLIBC__
  id += std::string("glibc ") + gnu_get_libc_version() + "\n";
#endif
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  bool model = false, flags = false;
  while ((!model || !flags) && std::getline(cpuinfo, line)) {
    bool is_model = line.starts_with("model name"), is_flags = line.starts_with("flags");
    if ((is_model && !model) || (is_flags && !flags)) id += line + "\n";
    model |= is_model;
    flags |= is_flags;
  }
  return id;
}

// The compiler's `--version` line: part of the key, so a new compiler rebuilds.
const std::string& compiler_identity() {
  static const std::string id = [] {
    fs::path log = fs::path(kernel_cache_dir()) / ("version." + std::to_string(getpid()) + ".log");
    int rc = spawn({compiler(), "--version"}, log, compile_timeout_s());
    std::string text = read_file(log);
    fs::remove(log);
    if (rc != 0)
      fail(ErrorKind::RuntimeError, "cannot run the kernel compiler '{}' (set THN_CXX to a C++ compiler)", compiler());
    return text.substr(0, text.find('\n')) + "\n" + host_identity();
  }();
  return id;
}

// An exclusive lock on a key's lock file (between processes: one compiles,
// the other then loads its entry); waits until it holds it, or until
// `cancel` is set (then RuntimeError: the job is not wanted any more).
struct Lock {
  int fd;
  Lock(const fs::path& p, const std::atomic<bool>* cancel = nullptr)
      : fd(open(p.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644)) {
    while (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR) break;  // (no locks on this file system: go on without)
      if (cancel && cancel->load()) {
        close(fd);
        fd = -1;
        fail(ErrorKind::RuntimeError, "the compile was cancelled");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~Lock() {
    if (fd >= 0) {
      flock(fd, LOCK_UN);
      close(fd);
    }
  }
};

std::shared_ptr<HostModule> open_module(const fs::path& so) {
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) fail(ErrorKind::RuntimeError, "cannot load the compiled kernels {}: {}", so.string(), dlerror());
  // The OpenMP runtime the module brought in stays loaded: kernels that ran
  // parallel loops leave its worker threads parked in it, and unloading it
  // under them with the last module crashes.
  for (const char* omp : {"libgomp.so.1", "libomp.so", "libomp.so.5"}) dlopen(omp, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
  return std::make_shared<HostModule>(h);
}

}  // namespace

namespace {

// The process groups of the compilers running now: thn killed by SIGTERM or
// SIGHUP (a `timeout`, a closed terminal) kills them first, or they would
// run on, orphaned, for as long as a large kernel takes.
std::atomic<pid_t> running_groups[16];

void kill_compilers_and_die(int sig) {
  for (auto& g : running_groups)
    if (pid_t p = g.load()) ::kill(-p, SIGKILL);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

struct RunningGroup {
  std::atomic<pid_t>* slot = nullptr;
  explicit RunningGroup(pid_t pgid) {
    static std::once_flag handlers;
    std::call_once(handlers, [] {
      for (int sig : {SIGTERM, SIGHUP})
        if (std::signal(sig, kill_compilers_and_die) == SIG_IGN) std::signal(sig, SIG_IGN);  // (kept ignored)
    });
    for (auto& g : running_groups) {
      pid_t none = 0;
      if (g.compare_exchange_strong(none, pgid)) {
        slot = &g;
        break;
      }
    }
  }
  ~RunningGroup() {
    if (slot) slot->store(0);
  }
};

}  // namespace

// Runs argv (no shell) with stdout and stderr into `log`; its exit status.
// It runs in a process group of its own: past `timeout_s` (0: none) the
// group (the compiler and what it started) is killed, and so it is when thn
// is terminated.
int spawn(const std::vector<std::string>& argv, const fs::path& log, double timeout_s, const std::atomic<bool>* cancel) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid;
  int rc = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return -1;
  RunningGroup running(pid);
  int status = 0;
  const auto start = std::chrono::steady_clock::now();
  auto nap = std::chrono::microseconds(500);  // (short first: most runs end quickly)
  for (;;) {
    const pid_t r = waitpid(pid, &status, timeout_s > 0 || cancel ? WNOHANG : 0);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return -1;
    if (r == 0) {
      const bool late =
          timeout_s > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > timeout_s;
      // (Ctrl-C reaches the terminal's group, not the compiler's)
      if (late || (cancel ? cancel->load() : interrupt_requested())) {
        ::kill(-pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        return late ? kSpawnTimedOut : kSpawnInterrupted;
      }
      std::this_thread::sleep_for(nap);
      nap = std::min(nap * 2, std::chrono::microseconds(50000));
    }
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

double compile_timeout_s() {
  const char* e = std::getenv("THN_COMPILE_TIMEOUT");
  char* end = nullptr;
  const double t = e && *e ? std::strtod(e, &end) : 0;
  return e && *e && end && *end == '\0' && t > 0 ? t : 600;
}

namespace {

// An entry's checksum covers its name (the key, which hashes the source and
// so the kernels' names and signatures) and its bytes: another key's entry
// copied over this one fails it and is rebuilt.
std::string entry_sum(const std::string& name, const std::string& bytes) { return hash_hex(name + "\n" + bytes); }

}  // namespace

std::string cache_load(const std::string& name) {
  fs::path dir = kernel_cache_dir();
  fs::path data = dir / name, sum = dir / (name + ".sum");
  if (!is_entry(data) || !is_entry(sum)) return "";
  std::string bytes = read_file(data);
  return read_file(sum) == entry_sum(name, bytes) ? bytes : "";
}

void cache_store(const std::string& name, const std::string& bytes) {
  fs::path dir = kernel_cache_dir();
  Lock lock(dir / (name + ".lock"));
  write_file(dir / (name + ".sum"), entry_sum(name, bytes));
  write_file(dir / name, bytes);
}

std::string keep_source(const std::string& name, const std::string& source) {
  fs::path p = fs::path(kernel_cache_dir()) / name;
  write_file(p, source);
  return p.string();
}

namespace {

// The cache's regular files (not following links: a link is counted as itself).
CacheSummary summarise(std::vector<fs::path>* files) {
  CacheSummary c;
  c.dir = kernel_cache_dir();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(c.dir, ec)) {
    std::error_code e2;
    if (e.is_directory(e2)) continue;
    ++c.files;
    if (e.is_regular_file(e2) && !e.is_symlink(e2)) c.bytes += e.file_size(e2);
    const fs::path& p = e.path();
    if (p.extension() == ".sum") {
      const std::string data = p.stem().extension().string();  // KEY.sum: KEY.so's; NAME.cubin.sum: NAME.cubin's
      if (data.empty()) ++c.host_modules;
      else if (data == ".cubin" || data == ".ptx") ++c.device_images;
    }
    if (files) files->push_back(p);
  }
  return c;
}

}  // namespace

CacheSummary cache_summary() { return summarise(nullptr); }

CacheSummary clear_cache() {
  std::vector<fs::path> files;
  CacheSummary c = summarise(&files);
  for (const fs::path& p : files) {
    std::error_code ec;
    fs::remove(p, ec);
    if (ec) fail(ErrorKind::OSError, "cannot remove {}: {}", p.string(), ec.message());
  }
  return c;
}

namespace {

// The module of entry `key` in dir, or null when it is no entry thn may
// load: a regular file owned by this user, writable by no one else, whose
// bytes (read from the one descriptor its checks were made on) match the
// .sum, so a torn write or planted bytes never reach dlopen. (dlopen then
// opens it by name: loading through /proc/self/fd/N would need names
// unique for the process's life, as glibc matches a loaded object by
// name first, and a reused N named an earlier module.)
std::shared_ptr<HostModule> verified_module(const fs::path& dir, const std::string& key) {
  const fs::path so = dir / (key + ".so"), sum = dir / (key + ".sum");
  const int fd = ::open(so.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct Closed {
    int fd;
    ~Closed() { ::close(fd); }
  } closed{fd};
  const std::string bytes = read_fd(fd, true);
  if (bytes.empty() || !is_entry(sum) || read_file(sum) != entry_sum(key + ".so", bytes)) return nullptr;
  return open_module(so);
}

}  // namespace

std::shared_ptr<HostModule> cached_module(const std::string& key) { return verified_module(kernel_cache_dir(), key); }

namespace {

// The host modules this process loaded, by key. (At namespace scope: made
// before, and so destroyed after, the compile queue whose workers use it.)
std::mutex loaded_mu;
std::unordered_map<std::string, std::weak_ptr<HostModule>> loaded;

// Runs the host compiler on `src` (its flags, then `extra`) into `out`;
// on failure removes `src`, `out` and the log and raises the compiler's
// message (KeyboardInterrupt when `cancel` stopped it).
void run_compiler(const fs::path& src, const fs::path& out, std::vector<std::string> extra, bool shared,
                  const std::atomic<bool>& cancel) {
  fs::path log = out;
  log += ".log";
  std::vector<std::string> argv{compiler()};
  for (const std::string& f : compile_flags())
    if (shared || f != "-shared") argv.push_back(f);
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.insert(argv.end(), {"-o", out.string(), src.string()});
  const double timeout = compile_timeout_s();
  int rc = spawn(argv, log, timeout, &cancel);
  std::error_code ec;
  if (rc != 0) {  // (nothing of a failed compile stays behind)
    std::string text = read_file(log);
    for (const fs::path& p : {src, log, out}) fs::remove(p, ec);
    if (rc == kSpawnInterrupted) fail(ErrorKind::KeyboardInterrupt, "");
    if (rc == kSpawnTimedOut)
      fail(ErrorKind::RuntimeError, "compiling kernels took more than {} s: {} was stopped (THN_COMPILE_TIMEOUT sets "
           "the limit, in seconds)", timeout, compiler());
    fail(ErrorKind::RuntimeError, "compiling kernels failed ({} {}){}:\n{}", compiler(),
         rc < 0 ? "could not be run or was killed" : fmt::format("exited with {}", rc), disk_full(out.parent_path()), text);
  }
  fs::remove(log, ec);
  fs::remove(src, ec);
  if (!is_entry(out))
    fail(ErrorKind::RuntimeError, "the kernel compiler {} exited with 0 but wrote no {}", compiler(), out.string());
}

// A file name of this process's worker thread for `key` (two processes'
// workers never share one).
std::string private_stem(const std::string& key) {
  return fmt::format("{}.{}.{}", key, getpid(), std::hash<std::thread::id>()(std::this_thread::get_id()) % 100000);
}

// The prelude every host kernel starts with, precompiled once (GCC's
// precompiled header: a kernel then compiles in about half the time):
// the header's path in the cache (its .gch beside it), or "" when it
// cannot be precompiled (kernels then include its text). Checked by its
// checksum once per process.
std::mutex header_mu;
std::unordered_map<std::string, std::string> headers;  // name -> path, or ""

std::string precompiled_header(const std::string& header, const std::string& name, const std::atomic<bool>& cancel) {
  std::lock_guard<std::mutex> guard(header_mu);  // (one worker makes it; the others wait for it)
  if (auto it = headers.find(name); it != headers.end()) return it->second;
  fs::path dir = kernel_cache_dir(), h = dir / (name + ".h"), gch = dir / (name + ".h.gch"), sum = dir / (name + ".h.gch.sum");
  Lock lock(dir / (name + ".lock"), &cancel);
  if (read_file(h) != header || !is_entry(gch) || read_file(sum) != entry_sum(name + ".h.gch", read_file(gch))) {
    try {
      write_file(h, header);
      fs::path src = dir / (private_stem(name) + ".h"), out = dir / (private_stem(name) + ".h.gch");
      write_file(src, header);
      run_compiler(src, out, {"-x", "c++-header"}, false, cancel);
      write_file(sum, entry_sum(name + ".h.gch", read_file(out)));
      install(out, gch);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::KeyboardInterrupt) throw;
      return headers[name] = "";
    }
  }
  return headers[name] = h.string();
}

// The host module of `header` + `source` under `key`, on a compile worker:
// already loaded by this process, else its disk cache entry, else
// compiled by the host compiler (stopped when `cancel` is set) and
// installed.
std::shared_ptr<HostModule> build_host_module(const std::string& key, const std::string& header, const std::string& source,
                                              const std::atomic<bool>& cancel, CompileInfo& info) {
  auto start = std::chrono::steady_clock::now();
  fs::path dir = kernel_cache_dir();
  fs::path so = dir / (key + ".so"), sum = dir / (key + ".sum");
  info.path = so.string();
  auto done = [&](std::shared_ptr<HostModule> m, bool disk, bool memory) {
    info.from_disk = disk;
    info.from_memory = memory;
    info.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!memory) {
      std::lock_guard<std::mutex> guard(loaded_mu);
      loaded[key] = m;
    }
    return m;
  };
  {
    std::lock_guard<std::mutex> guard(loaded_mu);
    if (auto m = loaded[key].lock()) return done(m, false, true);
  }
  Lock lock(dir / (key + ".lock"), &cancel);
  if (auto m = cached_module(key)) return done(m, true, false);
  std::vector<std::string> extra;
  std::string text = source;
  // (GCC's precompiled headers only: GCC ignores one it cannot use, where
  // Clang's -include of a stale one is an error)
  static const bool gcc = compiler_identity().find("clang") == std::string::npos;
  if (!header.empty() && !gcc) text = header + source;
  if (!header.empty() && gcc) {
    const std::string h = precompiled_header(header, "prelude-" + hash_hex(header + "\n" + compiler_identity()), cancel);
    if (h.empty()) text = header + source;
    else extra = {"-include", h};
  }
  const std::string stem = private_stem(key);
  fs::path src = dir / (stem + ".cpp"), out = dir / (stem + ".so");
  write_file(src, text);
  run_compiler(src, out, extra, true, cancel);
  write_file(sum, entry_sum(key + ".so", read_file(out)));
  install(out, so);
  std::shared_ptr<HostModule> m = verified_module(dir, key);
  if (!m) fail(ErrorKind::RuntimeError, "the compiled kernels {} changed before they were loaded (another process writes the kernel cache)", so.string());
  return done(m, false, false);
}

}  // namespace

static std::string host_module_key(const std::string& source) {
  std::string options;
  for (const std::string& f : compile_flags()) options += f + " ";
  return hash_hex(source + "\n" + options + "\n" + compiler() + "\n" + compiler_identity());
}

std::shared_ptr<CompileJob> host_module_job(const std::string& source, bool* fresh, const std::string& header) {
  // (The key is made here, before the job: the cache directory and the
  // compiler's identity are known before the first worker needs them.)
  const std::string key = host_module_key(header + source);
  return start_compile(key, [key, header, source](const std::atomic<bool>& cancel, CompileInfo& info) {
    return std::static_pointer_cast<void>(build_host_module(key, header, source, cancel, info));
  }, fresh);
}

std::shared_ptr<HostModule> host_module(const std::string& source, CompileInfo* info) {
  bool fresh = false;
  std::shared_ptr<CompileJob> job = host_module_job(source, &fresh);
  job->wait();
  auto m = std::static_pointer_cast<HostModule>(job->result());
  if (info) {
    *info = job->info();
    if (!fresh) info->from_disk = false, info->from_memory = true;  // (another request's job)
  }
  return m;
}

}  // namespace thn
