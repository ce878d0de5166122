#include "cli/fuzz.h"

#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cli/difftest.h"
#include "cli/fuzz_gen.h"
#include "runtime/progress.h"
#include "cli/run.h"
#include "runtime/cuda.h"

namespace fs = std::filesystem;

namespace thn {

namespace {

// Numbers may differ this much (absolute and relative) between the paths:
// fused kernels sum in another order and keep values in registers. A wrong
// value, a missing write or a stale cache entry is off by far more.
constexpr double kFuzzTolerance = 1e-3;
constexpr double kRunTimeout = 120;  // seconds per run of one program on one path

struct Options {
  uint64_t seed = 1, start = 0, count = 100;
  unsigned jobs = 0;
  std::string out = "fuzz-failures";
  bool emit = false;
  bool cuda = false;  // --device cuda
};

// What one program did on the two paths.
struct Outcome {
  std::string kind;    // "" when they agree; else output, status, error, crash, hang, cache
  std::string report;  // how they differ
  bool both_failed = false;
  int calls = 0, hits = 0;
};

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << text;
  if (!f) throw std::runtime_error("cannot write " + p.string());
}

// `stats: NAME calls=C hits=H misses=M ...` of the jit run's stderr.
std::optional<std::array<int, 3>> jit_stats_line(const std::string& err) {
  size_t at = err.find("stats: ");
  if (at == std::string::npos) return std::nullopt;
  std::array<int, 3> v{};
  const char* keys[] = {" calls=", " hits=", " misses="};
  for (int i = 0; i < 3; ++i) {
    size_t k = err.find(keys[i], at);
    if (k == std::string::npos) return std::nullopt;
    v[size_t(i)] = std::atoi(err.c_str() + k + std::strlen(keys[i]));
  }
  return v;
}

// The cache check: misses lie between the distinct MUST keys and the
// distinct FULL keys of the program's call lines (see cli/fuzz_gen.h).
std::string cache_problem(const std::string& program, const std::array<int, 3>& stats) {
  std::set<std::string> must, full;
  int calls = 0;
  std::istringstream in(program);
  for (std::string line; std::getline(in, line);) {
    size_t k = line.find("# fuzz-key: ");
    if (k == std::string::npos) continue;
    std::istringstream keys(line.substr(k + 12));
    std::string m, f;
    keys >> m >> f;
    must.insert(m);
    full.insert(f);
    ++calls;
  }
  auto [c, hits, misses] = stats;
  if (c != calls) return fmt::format("{} calls made, jit counted {}", calls, c);
  if (misses < int(must.size()) || misses > int(full.size()))
    return fmt::format("cache: {} misses and {} hits in {} calls; expected between {} and {} misses", misses, hits, c,
                       must.size(), full.size());
  return "";
}

Outcome run_program(const std::string& program, const fs::path& file) {
  write_file(file, program);
  Outcome o;
  auto interpreted = run_self(file, true, {}, kRunTimeout);
  auto jitted = interpreted ? run_self(file, false, {"--stats"}, kRunTimeout) : std::nullopt;
  if (!interpreted || !jitted) throw std::runtime_error(std::string("can't run thn: ") + std::strerror(errno));
  if (interpreted->timed_out || jitted->timed_out) {
    o.kind = "hang";
    o.report = fmt::format("{}: {} ran past {} s\n", file.string(), interpreted->timed_out ? "--interpret" : "jit", kRunTimeout);
    return o;
  }
  if (interpreted->status >= 128 || jitted->status >= 128) {
    o.kind = "crash";
    o.report = fmt::format("{}: {} killed by signal {}\n{}", file.string(), jitted->status >= 128 ? "jit" : "--interpret",
                           std::max(interpreted->status, jitted->status) - 128,
                           jitted->status >= 128 ? jitted->err : interpreted->err);
    return o;
  }
  // --stats' line comes last on stderr; the error message is the line before.
  auto stats = jit_stats_line(jitted->err);
  if (size_t at = jitted->err.find("stats: "); at != std::string::npos) jitted->err.erase(at);
  o.report = differences(file, *interpreted, *jitted, kFuzzTolerance);
  if (!o.report.empty()) {
    o.kind = interpreted->status != jitted->status ? "status" : interpreted->status != 0 ? "error" : "output";
    return o;
  }
  if (interpreted->status != 0) {
    o.both_failed = true;
    return o;
  }
  if (!stats) {
    o.kind = "cache";
    o.report = file.string() + ": no stats line from the jit run\n";
    return o;
  }
  o.calls = (*stats)[0];
  o.hits = (*stats)[1];
  if (std::string p = cache_problem(program, *stats); !p.empty()) {
    o.kind = "cache";
    o.report = file.string() + ": " + p + "\n";
  }
  return o;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// Delta debugging (ddmin over lines): drops chunks of lines, then single
// lines, while the program still fails the same way. Bounded by 300 runs and
// five minutes (a hang costs a whole timeout per run).
std::string reduce(const std::string& program, const std::string& kind, const fs::path& scratch) {
  std::vector<std::string> lines = split_lines(program);
  int budget = 300;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  auto fails = [&](const std::vector<std::string>& candidate) {
    if (budget-- <= 0 || std::chrono::steady_clock::now() > deadline) return false;
    return run_program(join_lines(candidate), scratch).kind == kind;
  };
  size_t n = 2;
  while (lines.size() >= 2 && budget > 0) {
    size_t chunk = (lines.size() + n - 1) / n;
    bool shrunk = false;
    for (size_t start = 0; start < lines.size(); start += chunk) {
      std::vector<std::string> rest(lines.begin(), lines.begin() + long(start));
      rest.insert(rest.end(), lines.begin() + long(std::min(lines.size(), start + chunk)), lines.end());
      if (fails(rest)) {
        lines = std::move(rest);
        n = std::max<size_t>(n - 1, 2);
        shrunk = true;
        break;
      }
    }
    if (!shrunk) {
      if (n >= lines.size()) break;
      n = std::min(n * 2, lines.size());
    }
  }
  return join_lines(lines);
}

const char* kUsage =
    "usage: thn fuzz [--seed S] [--count N] [--start K] [--device cpu|cuda] [--out DIR] [-j JOBS] [--emit]\n"
    "  runs N random programs (K, K+1, ... of seed S) with --interpret and with jit; a mismatch, a crash,\n"
    "  an error only one path raises or a wrong cache hit/miss count is reduced and written to DIR\n"
    "  (default fuzz-failures). --device cuda makes the inputs CUDA tensors (--interpret then computes on\n"
    "  host copies, jit runs its kernels on the GPU). --emit prints the programs instead of running them.\n";

bool parse_number(const char* text, uint64_t& out) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (errno || !end || *end || text[0] == '-' || !*text) return false;
  out = v;
  return true;
}

}  // namespace

int fuzz_command(int argc, char** argv) {
  Options opt;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    uint64_t n = 0;
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--emit") {
      opt.emit = true;
    } else if (a == "--seed" || a == "--count" || a == "--start" || a.starts_with("-j")) {
      const char* v = a.size() > 2 && a[1] == 'j' ? argv[i] + 2 : value();  // -j N or -jN
      if (a.starts_with("-j")) a = "-j";
      if (!v || !parse_number(v, n)) {
        std::fprintf(stderr, "thn fuzz: %s needs a non-negative integer\n%s", a.c_str(), kUsage);
        return 2;
      }
      (a == "--seed" ? opt.seed : a == "--count" ? opt.count : a == "--start" ? opt.start : n) = n;
      if (a == "-j" && n > 256) {
        std::fprintf(stderr, "thn fuzz: -j takes at most 256 workers, not %llu\n%s", (unsigned long long)n, kUsage);
        return 2;
      }
      if (a == "-j") opt.jobs = unsigned(std::max<uint64_t>(n, 1));
    } else if (a == "--out") {
      const char* v = value();
      if (!v) {
        std::fprintf(stderr, "thn fuzz: --out needs a folder\n%s", kUsage);
        return 2;
      }
      opt.out = v;
    } else if (a == "--device") {
      const char* v = value();
      if (v && std::strcmp(v, "cpu") == 0) continue;
      if (v && std::strcmp(v, "cuda") == 0) {
        opt.cuda = true;
        continue;
      }
      std::fprintf(stderr, "thn fuzz: --device takes cpu or cuda\n%s", kUsage);
      return 2;
    } else {
      unknown_argument("thn fuzz", a, {"--help", "--emit", "--seed", "--count", "--start", "--out", "--device"}, kUsage);
      return 2;
    }
  }
  if (opt.count == 0) {
    std::fprintf(stderr, "thn fuzz: --count must be at least 1\n%s", kUsage);
    return 2;
  }
  if (opt.emit) {
    for (uint64_t i = opt.start; i < opt.start + opt.count; ++i)
      std::printf("%s\n", fuzz_program(opt.seed, i, opt.cuda).c_str());
    return 0;
  }
  if (std::string why; opt.cuda && !cuda::available(&why)) {
    std::fprintf(stderr, "thn fuzz: --device cuda: CUDA is not available: %s\n", why.c_str());
    return 2;
  }
  if (opt.jobs == 0) opt.jobs = std::max(1u, std::thread::hardware_concurrency());

  std::string tmpl = (fs::temp_directory_path() / "thn-fuzz-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) {
    std::fprintf(stderr, "thn fuzz: cannot make a scratch folder in %s: %s\n", fs::temp_directory_path().c_str(),
                 std::strerror(errno));
    return 2;
  }
  fs::path scratch = tmpl;

  std::atomic<uint64_t> next{0}, finished{0};
  std::atomic<bool> broken{false};
  std::mutex mu;  // guards the tallies and stdout below
  int failures = 0, both_failed = 0, calls = 0, hits = 0;
  std::map<std::string, int> by_kind;
  std::string fatal;
  Progress progress(stdout);
  auto clear_bar = [&] { progress.clear(); };

  auto worker = [&](unsigned w) {
    fs::path file = scratch / fmt::format("w{}.thn", w), min_file = scratch / fmt::format("w{}.min.thn", w);
    for (uint64_t k; !broken && (k = next++) < opt.count;) {
      uint64_t index = opt.start + k;
      std::string program = fuzz_program(opt.seed, index, opt.cuda);
      try {
        Outcome o = run_program(program, file);
        if (!o.kind.empty()) {
          std::string reduced = reduce(program, o.kind, min_file);
          fs::create_directories(opt.out);
          fs::path stem = fs::path(opt.out) / fmt::format("fuzz-{}-{}", opt.seed, index);
          write_file(stem.string() + ".thn", program);
          Outcome again = run_program(reduced, stem.string() + ".min.thn");  // the report names the kept file
          std::lock_guard lock(mu);
          ++failures;
          ++by_kind[o.kind];
          clear_bar();
          std::printf("program %llu: %s (reduced from %zu to %zu lines: %s.min.thn)\n%s", (unsigned long long)index,
                      o.kind.c_str(), split_lines(program).size(), split_lines(reduced).size(), stem.c_str(),
                      again.report.c_str());
          std::fflush(stdout);
        }
        std::lock_guard lock(mu);
        both_failed += o.both_failed;
        calls += o.calls;
        hits += o.hits;
      } catch (const std::exception& e) {
        std::lock_guard lock(mu);
        fatal = e.what();
        broken = true;
      }
      ++finished;
    }
  };
  std::vector<std::thread> threads;
  // (no more workers than programs)
  for (unsigned w = 0; w < opt.jobs && w < std::max<uint64_t>(opt.count, 1); ++w) threads.emplace_back(worker, w);
  auto started = std::chrono::steady_clock::now();
  while (finished < opt.count && !broken) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    if (!progress.on()) continue;
    std::lock_guard lock(mu);
    progress.show(finished, opt.count, fmt::format("programs, {} failed", failures));
  }
  for (auto& t : threads) t.join();
  clear_bar();
  std::error_code ec;
  fs::remove_all(scratch, ec);
  if (broken) {
    std::fprintf(stderr, "thn fuzz: %s\n", fatal.c_str());
    return 2;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::string kinds;
  for (const auto& [k, n] : by_kind) kinds += fmt::format("{}{} {}", kinds.empty() ? " (" : ", ", n, k);
  if (!kinds.empty()) kinds += ")";
  std::printf("fuzz: seed %llu, programs %llu..%llu: %d failed%s; %llu agreed (%d ending in the same error on both "
              "paths); %d jit calls, %d cache hits; %.1f s\n",
              (unsigned long long)opt.seed, (unsigned long long)opt.start,
              (unsigned long long)(opt.start + opt.count - 1), failures, kinds.c_str(),
              (unsigned long long)(opt.count - uint64_t(failures)), both_failed, calls, hits, seconds);
  return failures > 0 ? 1 : 0;
}

}  // namespace thn
