#include "cli/repl.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "cli/run.h"
#include "interp/interpreter.h"
#include "jit/jit.h"

namespace thn {

namespace {

const char* kHelp = R"(Type thn statements; an expression's value is echoed. A line ending in ':'
starts a block, which ends at a blank line. Commands:
  :help          this text
  :load FILE     run FILE here (its names stay)
  :reset         forget every name
  :quit          leave (or Ctrl-D)
)";

// Whether `text` still needs lines: an open bracket or string, a trailing
// backslash, or a block (a first line ending in ':', or a decorator) not yet
// closed by a blank line.
bool incomplete(const std::string& text, bool last_line_blank) {
  int depth = 0;
  char quote = 0;
  bool triple = false, escaped = false, comment = false, first_line = true, block = false;
  char last = 0;  // the last character outside comments and blanks
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n' && first_line && depth == 0 && !(quote && triple)) {
      // The first logical line opens a block when it ends in ':'.
      first_line = false;
      block = last == ':';
    }
    if (comment) {
      comment = c != '\n';
      continue;
    }
    if (quote) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == quote && (!triple || text.compare(i, 3, std::string(3, quote)) == 0)) {
        if (triple) i += 2;
        quote = 0;
      } else if (c == '\n' && !triple) {
        quote = 0;  // an unterminated string: let the parser say so
      }
      last = c;
      continue;
    }
    if (c == '#') comment = true;
    else if (c == '\'' || c == '"') {
      triple = text.compare(i, 3, std::string(3, c)) == 0;
      if (triple) i += 2;
      quote = c;
    } else if (c == '(' || c == '[' || c == '{') depth++;
    else if (c == ')' || c == ']' || c == '}') depth--;
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && !comment) last = c;
  }
  if ((quote && triple) || depth > 0 || last == '\\') return true;
  const size_t start = text.find_first_not_of(" \t");
  block |= start != std::string::npos && text[start] == '@';  // a decorator continues to its def
  return block && !last_line_blank;
}

struct Session {
  bool interpret = false;
  std::shared_ptr<JitRegistry> jits;
  std::unique_ptr<Interpreter> interp;
  int inputs = 0;

  void reset() {
    InterpOptions opts;
    opts.module_path = {".", stdlib_dir()};
    jits = interpret ? nullptr : install_jit(opts, JitOptions{});
    interp = std::make_unique<Interpreter>(opts);
    if (!interpret) install_jit_builtins(*interp);
  }

  // Runs one complete input; errors are reported and the session goes on.
  void run(const std::string& text) {
    auto src = std::make_shared<const Source>("<stdin>", text);
    try {
      Value v = interp->run_interactive(src);
      if (!v.is_none()) std::printf("%s\n", to_repr(v).c_str());
      std::fflush(stdout);
    } catch (...) {
      report_error();
    }
  }

  void load(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      std::fprintf(stderr, "thn: can't open file '%s': No such file or directory\n", path.c_str());
      return;
    }
    auto file = Source::load(path);
    run(file->text);
  }

  // A `:command` line; false to leave.
  bool command(const std::string& line) {
    std::string cmd = line.substr(0, line.find(' '));
    std::string arg = line.size() > cmd.size() ? line.substr(cmd.size() + 1) : "";
    arg.erase(0, arg.find_first_not_of(" \t"));
    arg.erase(arg.find_last_not_of(" \t\r") + 1);
    if (cmd == ":help") std::fputs(kHelp, stdout);
    else if (cmd == ":quit" || cmd == ":q") return false;
    else if (cmd == ":reset") reset();
    else if (cmd == ":load" && !arg.empty()) load(arg);
    else std::fprintf(stderr, "unknown command '%s' (:help lists them)\n", line.c_str());
    std::fflush(stdout);
    return true;
  }
};

int repl_loop(bool interpret) {
  const bool tty = isatty(0) && isatty(1);
  Session s;
  s.interpret = interpret;
  s.reset();
  if (tty) std::printf("thn REPL: %s mode; :help for commands, Ctrl-D to leave.\n", interpret ? "interpret" : "jit");
  std::string buffer, line;
  bool blank = false;
  while (true) {
    if (tty) {
      std::fputs(buffer.empty() ? ">>> " : "... ", stdout);
      std::fflush(stdout);
    }
    if (!std::getline(std::cin, line)) {
      if (!buffer.empty()) s.run(buffer);
      if (tty) std::printf("\n");
      return 0;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    blank = line.find_first_not_of(" \t") == std::string::npos;
    if (buffer.empty()) {
      if (blank) continue;
      if (line[0] == ':') {
        if (!s.command(line)) return 0;
        continue;
      }
    }
    buffer += line + "\n";
    if (incomplete(buffer, blank)) continue;
    s.run(buffer);
    buffer.clear();
  }
}

}  // namespace

const char* kReplUsage = "usage: thn repl [--interpret]\n";

int repl_command(int argc, char** argv) {
  bool interpret = false;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--interpret") {
      interpret = true;
    } else {
      std::fprintf(stderr, "thn repl: unknown option: %s\n%s", arg.c_str(), kReplUsage);
      return 2;
    }
  }
  return on_big_stack([&] { return repl_loop(interpret); });
}

}  // namespace thn
