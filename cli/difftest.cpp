#include "cli/difftest.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "cli/output_compare.h"
#include "runtime/progress.h"
#include "cli/run.h"

extern char** environ;

namespace thn {

namespace {

// Reads both pipes until both close; reading one to the end first could
// deadlock on a child that fills the other. Past the deadline (if any) the
// child is killed, which closes them.
void drain(int out_fd, int err_fd, RunResult& result, pid_t pid, double timeout_s) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open = 2;
  char buf[65536];
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (open > 0) {
    int wait_ms = -1;
    if (timeout_s > 0 && !result.timed_out) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        kill(pid, SIGKILL);
        result.timed_out = true;
      } else {
        wait_ms = int(std::min<int64_t>(left.count() + 1, 1000));
      }
    }
    if (poll(fds, 2, wait_ms) <= 0) continue;  // EINTR, or time to look at the deadline
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, size_t(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
}

}  // namespace

std::optional<RunResult> run_self(const std::string& file, bool interpret, const std::vector<std::string>& extra,
                                  double timeout_s) {
  std::vector<std::string> args = {"thn", "run", file, interpret ? "--interpret" : "--verify-each"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return std::nullopt;
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return std::nullopt;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  pid_t pid = 0;
  int spawn_error = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  close(err[1]);
  if (spawn_error != 0) {
    close(out[0]);
    close(err[0]);
    errno = spawn_error;
    return std::nullopt;
  }
  RunResult result;
  drain(out[0], err[0], result, pid, timeout_s);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {}
  result.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  return result;
}

// The `FILE:LINE:COL: Kind: message` line of an error: the last line of
// stderr that is not indented (the source line and caret under it are).
std::string error_message(std::string_view err) {
  std::string_view message;
  while (!err.empty()) {
    size_t nl = err.find('\n');
    std::string_view line = err.substr(0, nl);
    if (!line.empty() && line[0] != ' ' && line[0] != '\t') message = line;
    err = nl == std::string_view::npos ? std::string_view() : err.substr(nl + 1);
  }
  return std::string(message);
}

namespace {

std::string describe_status(const RunResult& r) {
  if (r.status == 0) return "exit 0";
  return "exit " + std::to_string(r.status) + ": " + error_message(r.err);
}

std::string report(const std::string& header, const std::string& interpreted, const std::string& jitted) {
  return header + "\n  --interpret: " + interpreted + "\n  jit:         " + jitted + "\n";
}

}  // namespace

std::string differences(const std::string& file, const RunResult& interpreted, const RunResult& jitted, double tolerance) {
  std::string found;
  if (auto d = first_difference(interpreted.out, jitted.out, tolerance))
    found += report(file + ":" + std::to_string(d->line) + ": first difference", d->reference, d->actual);
  if (interpreted.status != jitted.status)
    found += report(file + ": exit status differs", describe_status(interpreted), describe_status(jitted));
  else if (interpreted.status != 0 && error_message(interpreted.err) != error_message(jitted.err))
    found += report(file + ": error differs", error_message(interpreted.err), error_message(jitted.err));
  return found;
}

namespace {

// The first line of a readable regular file, or nullopt.
std::optional<std::string> first_line(const std::string& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return std::nullopt;
  std::ifstream in(file);
  if (!in) return std::nullopt;
  std::string line;
  std::getline(in, line);
  return line;
}

const char* kUsage = "usage: thn difftest FILE...\n";

}  // namespace

int difftest_command(int argc, char** argv) {
  std::vector<std::string> files;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (argv[i][0] == '-') {
      unknown_argument("thn difftest", argv[i], {"--help"}, kUsage);
      return 2;
    }
    files.push_back(argv[i]);
  }
  if (files.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  std::vector<std::string> tests;
  for (const auto& file : files) {
    auto line = first_line(file);
    if (!line) {
      std::fprintf(stderr, "thn: can't open file '%s'\n", file.c_str());
      return 2;
    }
    // Modules the corpus imports, not scripts; a glob over tests/lang finds them too.
    if (line->starts_with("# helper:")) std::printf("skip %s (helper module)\n", file.c_str());
    else tests.push_back(file);
  }
  int differing = 0, failing = 0;
  Progress progress(stdout);
  for (size_t i = 0; i < tests.size(); ++i) {
    const std::string& file = tests[i];
    progress.show(i, tests.size(), fmt::format("files, {} differ", differing), file);
    std::fflush(stdout);
    auto interpreted = run_self(file, true);
    auto jitted = interpreted ? run_self(file, false) : std::nullopt;
    if (!interpreted || !jitted) {
      std::fprintf(stderr, "thn difftest: can't run thn: %s\n", std::strerror(errno));
      return 2;
    }
    std::string found = differences(file, *interpreted, *jitted);
    if (!found.empty()) progress.clear();
    std::fputs(found.c_str(), stdout);
    differing += found.empty() ? 0 : 1;
    // (a file ending in the same error both ways agrees, as an expected
    // error should; the summary counts them, so that a broken file shows)
    failing += found.empty() && interpreted->status != 0 ? 1 : 0;
  }
  progress.clear();
  std::printf("difftest: %zu files, %d differ", tests.size(), differing);
  if (failing) std::printf(" (%d end in the same error both ways)", failing);
  std::printf("\n");
  return differing > 0 ? 1 : 0;
}

}  // namespace thn
