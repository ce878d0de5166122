// `thn bench [FILE] [--device cpu|cuda]`: runs a benchmark file (the
// suite, bench/suite/suite.thn, by default) in this process and prints its
// workloads as a labelled table. A benchmark file prints one line per
// workload, `bench NAME interp MS jit MS first MS` (medians of its calls,
// eager and as a cached jit call, and the first jit call), from a jit
// function named NAME, whose --stats line gives the kernels and bytes; a
// workload's title is the string after its name in a `("NAME", "TITLE"`
// pair in the file. Other output passes through.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "build_config.h"
#include "cli/bench.h"
#include "runtime/progress.h"
#include "cli/run.h"

namespace thn {

namespace {

const char* kBenchUsage =
    "usage: thn bench [FILE] [--device cpu|cuda]\n"
    "  runs the benchmark suite (bench/suite/suite.thn, or FILE) with the interpreter and with jit;\n"
    "  prints per workload the median ms of each, the jit speedup, the first jit call (trace, passes,\n"
    "  compile or kernel cache load), kernels launched and bytes moved vs min_bytes\n";

struct Row {
  std::string name, title;
  double interp = -1, jit = -1, first = -1;
  std::map<std::string, long long> stats;  // kernels, bytes, min_bytes, compiled, loaded
};

// The script's output, a line at a time: `bench` lines fill rows (and move
// the progress line on); others pass through to stdout.
struct Capture {
  std::vector<Row>* rows = nullptr;
  Progress progress{stderr};
  size_t done = 0;
  std::string partial;

  void show() {
    if (done >= rows->size()) return progress.clear();
    const Row& r = (*rows)[done];
    progress.show(done, rows->size(), "workloads done", "running " + (r.title.empty() ? r.name : r.title));
  }

  void line(const std::string& text) {
    static const std::regex bench(R"(^bench (\w+) interp (\S+) jit (\S+) first (\S+)$)");
    std::smatch m;
    double ms[3];
    auto number = [](const std::string& s, double& out) {
      char* end = nullptr;
      out = std::strtod(s.c_str(), &end);
      return end && *end == '\0' && std::isfinite(out) && out >= 0;
    };
    // (A line that is not one, numbers and all, is the script's own output.)
    if (!std::regex_match(text, m, bench) || !number(m[2], ms[0]) || !number(m[3], ms[1]) || !number(m[4], ms[2])) {
      progress.clear();
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fputc('\n', stdout);
      show();
      return;
    }
    Row* row = nullptr;
    for (Row& r : *rows)
      if (r.name == m[1]) row = &r;
    if (!row) row = &rows->emplace_back(Row{m[1], "", -1, -1, -1, {}});
    row->interp = ms[0], row->jit = ms[1], row->first = ms[2];
    done = size_t(row - rows->data()) + 1;
    show();
  }

  static ssize_t write(void* cookie, const char* data, size_t n) {
    auto* c = static_cast<Capture*>(cookie);
    for (size_t i = 0; i < n; ++i) {
      if (data[i] != '\n') {
        c->partial += data[i];
        continue;
      }
      c->line(c->partial);
      c->partial.clear();
    }
    return ssize_t(n);
  }
};

std::string human_bytes(long long b) {
  if (b >= 1 << 30) return fmt::format("{:.2f} GB", double(b) / 1e9);
  if (b >= 1 << 20) return fmt::format("{:.1f} MB", double(b) / 1e6);
  if (b >= 1 << 10) return fmt::format("{:.1f} kB", double(b) / 1e3);
  return fmt::format("{} B", b);
}

void print_table(const std::vector<Row>& rows) {
  size_t w = std::strlen("workload");
  for (const Row& r : rows) w = std::max(w, (r.title.empty() ? r.name : r.title).size());
  std::printf("%-*s  %11s  %9s  %7s  %10s  %7s  %9s  %9s\n", int(w), "workload", "interpreter", "jit", "speedup",
              "first call", "kernels", "bytes", "min_bytes");
  for (const Row& r : rows) {
    if (r.jit < 0) continue;  // (the script stopped before it)
    // (No stats line: the file's NAME is no jit function's name.)
    auto stat = [&](const char* k) { return r.stats.count(k) ? std::to_string(r.stats.at(k)) : std::string("-"); };
    auto bytes = [&](const char* k) { return r.stats.count(k) ? human_bytes(r.stats.at(k)) : std::string("-"); };
    std::printf("%-*s  %8.3f ms  %6.3f ms  %6.1fx  %7.1f ms  %7s  %9s  %9s\n", int(w),
                (r.title.empty() ? r.name : r.title).c_str(), r.interp, r.jit, r.jit > 0 ? r.interp / r.jit : 0.0,
                r.first, stat("kernels").c_str(), bytes("bytes").c_str(), bytes("min_bytes").c_str());
  }
}

}  // namespace

int bench_command(int argc, char** argv) {
  RunOptions run;
  std::string device = "cpu";
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kBenchUsage, stdout);
      return 0;
    } else if (arg == "--device") {
      device = i + 1 < argc ? argv[++i] : "";
      if (!use_device(device, "thn bench", kBenchUsage)) return 2;
    } else if (arg.starts_with("-") || !run.file.empty()) {
      unknown_argument("thn bench", arg, {"--device", "--help"}, kBenchUsage);
      return 2;
    } else {
      run.file = arg;
    }
  }
  if (run.file.empty()) run.file = std::string(THN_SOURCE_DIR) + "/bench/suite/suite.thn";
  if (!script_exists(run.file)) return 2;

  std::vector<Row> rows;  // in the file's order, from its ("NAME", "TITLE" pairs
  {
    std::ifstream in(run.file);
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    static const std::regex pair(R"re(\("(\w+)", "([^"]+)")re");
    for (auto it = std::sregex_iterator(s.begin(), s.end(), pair); it != std::sregex_iterator(); ++it)
      rows.push_back(Row{(*it)[1], (*it)[2], -1, -1, -1, {}});
  }
  Capture capture;
  capture.rows = &rows;
  cookie_io_functions_t io{nullptr, Capture::write, nullptr, nullptr};
  std::FILE* out = fopencookie(&capture, "w", io);
  if (!out) {
    std::fprintf(stderr, "thn bench: cannot capture the script's output\n");
    return 1;
  }
  setvbuf(out, nullptr, _IOLBF, 0);
  std::string stats;
  run.out = out;
  run.stats_into = &stats;
  run.jit.stats = true;
  run.jit.compile = CompileMode::Sync;  // (the compiled kernels are what is timed; "first" includes their compile)
  std::printf("thn bench: %s on %s; medians in ms, the interpreter and cached jit calls; first: the first jit call\n",
              run.file.c_str(), device.c_str());
  std::fflush(stdout);
  capture.show();
  catch_interrupts();
  const int rc = on_big_stack([&] { return run_script(run); });
  std::fclose(out);
  if (!capture.partial.empty()) capture.line(capture.partial);
  capture.progress.clear();
  static const std::regex stat(R"(^stats: (\w+) (.*)$)");
  std::istringstream lines(stats);
  for (std::string l; std::getline(lines, l);) {
    std::smatch m;
    if (!std::regex_match(l, m, stat)) continue;
    for (Row& r : rows) {
      if (r.name != m[1]) continue;
      std::istringstream kv(m[2]);
      for (std::string f; kv >> f;)
        if (size_t eq = f.find('='); eq != std::string::npos) r.stats[f.substr(0, eq)] = std::strtoll(f.c_str() + eq + 1, nullptr, 10);
    }
  }
  print_table(rows);
  return rc;
}

}  // namespace thn
