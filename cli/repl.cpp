#include "cli/repl.h"

#include <editline/readline.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "backend/cpu.h"
#include "build_config.h"
#include "cli/complete.h"
#include "cli/run.h"
#include "frontend/parser.h"
#include "frontend/resolve.h"
#include "interp/interpreter.h"
#include "jit/jit.h"
#include "runtime/progress.h"

namespace thn {

namespace {

const char* kHelp = R"(Type thn statements; an expression's value is echoed. A line ending in ':'
starts a block, which ends at a blank line. Tab completes names, attributes
(x.<Tab>), keyword arguments and modules; Ctrl-C cancels the input or a
running computation; Ctrl-D leaves. Commands:
  :help                  this text
  :trace NAME            the prologue and every pass's trace of jit function NAME's last call
  :emit ast STMT         the resolved AST of STMT (not run)
  :emit trace EXPR       run EXPR; print the execution trace of each jit call it made
  :emit kernels EXPR     run EXPR; print the host kernels of each jit call it made
  :time STMT             run STMT once and print its wall time
  :mode [interpret|jit]  jit functions run compiled (jit) or in the interpreter; names stay
  :load FILE             run FILE here (its names stay)
  :reset                 forget every name
  :quit                  leave
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
  std::optional<int> exit_code;  // set by exit(), quit() or a SystemExit: the REPL ends
  std::shared_ptr<JitRegistry> jits;
  std::unique_ptr<Interpreter> interp;

  void reset() {
    InterpOptions opts;
    opts.module_path = {".", stdlib_dir()};
    opts.library_dir = stdlib_dir();
    jits = install_jit(opts, JitOptions{});
    set_interpret(*jits, interpret);
    interp = std::make_unique<Interpreter>(opts);
    install_jit_builtins(*interp);
  }

  // Runs one complete input; errors are reported and the session goes on.
  // Returns whether it ran without an error.
  bool run(const std::string& text, const char* name = "<stdin>") {
    auto src = std::make_shared<const Source>(name, text);
    try {
      Value v = interp->run_interactive(src);
      if (!v.is_none()) {
        std::printf("%s\n", to_repr(v).c_str());
        interp->main_module().globals["_"] = v;  // the last value, as Python's `_`
      }
      std::fflush(stdout);
      // A Ctrl-C after the last statement ran: reported, not left for the next input.
      if (take_interrupt()) std::fputs("KeyboardInterrupt\n", stderr);
      return true;
    } catch (...) {
      take_interrupt();  // a Ctrl-C that arrived as the error was raised
      if ((exit_code = system_exit())) return true;
      report_error();
      return false;
    }
  }

  void load(const std::string& path) {
    if (!script_exists(path)) return;
    auto file = Source::load(path);
    run(file->text, path.c_str());
  }

  void trace(const std::string& name) {
    auto& globals = interp->main_module().globals;
    auto it = globals.find(name);
    std::optional<JitView> j = it == globals.end() ? std::nullopt : jit_view(it->second);
    if (!j) {
      std::vector<std::string> names;
      for (const auto& [n, v] : globals)
        if (jit_view(v)) names.push_back(n);
      std::sort(names.begin(), names.end());
      std::string have = names.empty() ? "there are none yet: g = jit(f) makes one"
                                       : fmt::format("jit functions: {}", fmt::join(names, ", "));
      std::fprintf(stderr, ":trace: '%s' is not a jit function (%s)\n", name.c_str(), have.c_str());
    } else if (!j->passes) {
      std::fprintf(stderr, ":trace: %s has not been called yet\n", name.c_str());
    } else {
      std::printf("# prologue\n%s\n", j->prologue.c_str());
      std::fputs(print_passes(*j->passes).c_str(), stdout);
    }
  }

  // :emit ast|trace|kernels CODE
  void emit(const std::string& what, const std::string& code) {
    if (what == "ast") {
      try {
        std::unique_ptr<ast::Module> m = parse(std::make_shared<const Source>("<stdin>", code + "\n"));
        resolve(*m);
        std::fputs(ast::print_ast(*m).c_str(), stdout);
      } catch (...) {
        report_error();
      }
      return;
    }
    if ((what != "trace" && what != "kernels") || code.empty()) {
      std::fprintf(stderr, "usage: :emit ast|trace|kernels CODE\n");
      return;
    }
    if (interpret) {
      std::fprintf(stderr, ":emit %s: jit functions are interpreted in this mode (:mode jit to compile them)\n",
                   what.c_str());
      return;
    }
    std::vector<JitView> before = jit_functions(*jits);
    if (!run(code)) return;
    int shown = 0;
    for (const JitView& j : jit_functions(*jits)) {
      int64_t calls = 0;
      for (const JitView& b : before)
        if (b.id == j.id) calls = b.calls;
      if (j.calls == calls || !j.computation) continue;
      ++shown;
      if (what == "trace") {
        std::printf("%s\n", print_trace(*j.computation).c_str());
      } else {
        std::string src = kernel_source(*j.computation, Target::Cpu, false);
        std::printf("# kernels of %s\n%s\n", j.name.c_str(), src.empty() ? "# (no fusion)" : src.c_str());
      }
    }
    if (!shown) std::fprintf(stderr, ":emit %s: no jit function ran in '%s'\n", what.c_str(), code.c_str());
    std::fflush(stdout);
  }

  void time(const std::string& code) {
    auto t0 = std::chrono::steady_clock::now();
    bool ok = run(code);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (ok) std::printf("time: %.3f ms\n", ms);
  }

  void mode(const std::string& arg) {
    if (arg == "interpret" || arg == "jit") {
      interpret = arg == "interpret";
      set_interpret(*jits, interpret);
    } else if (!arg.empty()) {
      std::fprintf(stderr, "usage: :mode [interpret|jit]\n");
      return;
    }
    std::printf("mode: %s\n", interpret ? "interpret" : "jit");
  }

  // A `:command` line; false to leave.
  bool command(const std::string& line) {
    std::string cmd = line.substr(0, line.find(' '));
    std::string arg = line.size() > cmd.size() ? line.substr(cmd.size() + 1) : "";
    arg.erase(0, arg.find_first_not_of(" \t"));
    arg.erase(arg.find_last_not_of(" \t\r") + 1);
    std::string first = arg.substr(0, arg.find(' '));
    std::string rest = arg.size() > first.size() ? arg.substr(first.size() + 1) : "";
    rest.erase(0, rest.find_first_not_of(" \t"));
    if (cmd == ":help") std::fputs(kHelp, stdout);
    else if (cmd == ":quit" || cmd == ":q") return false;
    else if (cmd == ":reset") reset();
    else if (cmd == ":load" && !arg.empty()) load(arg);
    else if (cmd == ":trace") trace(arg);
    else if (cmd == ":emit") emit(first, rest);
    else if (cmd == ":time" && !arg.empty()) time(arg);
    else if (cmd == ":mode") mode(arg);
    else std::fprintf(stderr, "unknown command '%s' (:help lists them)\n", line.c_str());
    std::fflush(stdout);
    return true;
  }
};

// ---- reading lines ----

enum class Read { Line, Eof, Interrupted };

volatile sig_atomic_t sigint_seen = 0;
pthread_t repl_thread;
int wake_pipe[2] = {-1, -1};  // the SIGINT handler's self-pipe: a Ctrl-C never waits for a key

void on_sigint(int) {
  // Any thread may take the signal (OpenBLAS's workers do not block it); the
  // REPL's own thread handles it, so the flag and the wake-up are its own.
  if (!pthread_equal(pthread_self(), repl_thread)) {
    pthread_kill(repl_thread, SIGINT);
    return;
  }
  const int saved_errno = errno;
  sigint_seen = 1;
  request_interrupt();  // a running computation stops at its next statement
  if (wake_pipe[1] >= 0) {
    ssize_t ignored = write(wake_pipe[1], "!", 1);  // wakes a read waiting in poll()
    (void)ignored;
  }
  errno = saved_errno;
}

// Reads through libedit on a terminal: line editing, history in
// ~/.thn_history, completion from the session; Ctrl-C ends the read as
// Interrupted (the handler wakes the read through a self-pipe, so a signal
// that lands between reads is not lost).
struct Terminal {
  Session* session = nullptr;
  std::string history;
  static inline Terminal* self = nullptr;
  static inline std::vector<std::string> matches;
  // Bracketed paste: the terminal wraps pasted text in ESC[200~ ... ESC[201~;
  // the text goes here whole (blank lines inside a function and all) and
  // the read ends. Bytes read past an ESC that began no paste wait in `held`.
  static inline std::string pasted, held;
  static inline std::string indent;  // typed for the user as the next line starts (auto-indent)

  explicit Terminal(Session& s) : session(&s) {
    self = this;
    if (const char* home = std::getenv("HOME"); home && *home) history = std::string(home) + "/.thn_history";
    if (pipe(wake_pipe) == 0) {
      fcntl(wake_pipe[0], F_SETFL, O_NONBLOCK);
      fcntl(wake_pipe[1], F_SETFL, O_NONBLOCK);
    }
    rl_readline_name = "thn";
    rl_catch_signals = 0;
    rl_getc_function = getc_interruptible;
    rl_attempted_completion_function = attempt;
    rl_completion_append_character = '\0';
    rl_initialize();
    std::fputs("\x1b[?2004h", stdout);  // bracketed paste on
    std::fflush(stdout);
    using_history();
    stifle_history(1000);
    if (!history.empty()) read_history(history.c_str());
  }

  ~Terminal() {
    std::fputs("\x1b[?2004l", stdout);  // bracketed paste off
    std::fflush(stdout);
  }

  // One byte from the terminal (or EOF on Ctrl-C, or with none in `ms`
  // milliseconds when ms >= 0).
  static int byte(int ms = -1) {
    while (true) {
      if (sigint_seen) return EOF;
      pollfd fds[2] = {{0, POLLIN, 0}, {wake_pipe[0], POLLIN, 0}};
      const int ready = poll(fds, 2, ms);
      if (ready < 0) {
        if (errno == EINTR) continue;
        return EOF;
      }
      if (ready == 0) return EOF;  // (ms passed)
      if (fds[1].revents & POLLIN) {  // the handler ran
        sigint_seen = 1;
        return EOF;
      }
      unsigned char c;
      ssize_t n = ::read(0, &c, 1);
      if (n == 1 && c != 3) return c;
      if (n == 1) {  // a ^C byte, where the terminal passes it on
        sigint_seen = 1;
        return EOF;
      }
      if (n < 0 && errno == EINTR) continue;
      return EOF;
    }
  }

  // libedit reads characters through this: a read interrupted by SIGINT
  // (or a ^C byte, when the terminal passes it on) ends the line; a paste
  // is taken whole and ends it too.
  static int getc_interruptible(FILE*) {
    if (!held.empty()) {
      const int c = static_cast<unsigned char>(held.front());
      held.erase(0, 1);
      return c;
    }
    const int c = byte();
    if (c != 0x1b) return c;
    const std::string start = "[200~", end = "\x1b[201~";
    while (held.size() < start.size()) {
      const int d = byte(20);
      if (d == EOF) break;
      held += char(d);
      if (start.compare(0, held.size(), held) != 0) return c;  // another escape sequence: libedit's
    }
    if (held != start) return c;
    held.clear();
    std::string text;
    while (!text.ends_with(end)) {
      const int d = byte();
      if (d == EOF) return EOF;
      text += char(d);
    }
    text.resize(text.size() - end.size());
    for (char& ch : text)
      if (ch == '\r') ch = '\n';
    while (text.ends_with("\n\n")) text.pop_back();
    const bool one_line = text.find('\n') == std::string::npos || text.find('\n') == text.size() - 1;
    // Pasted indentation replaces the auto-indent typed for the user.
    const bool indented = !text.empty() && (text[0] == ' ' || text[0] == '\t');
    if (!indent.empty() && indented) text.erase(0, std::min(text.find_first_not_of(" \t"), indent.size()));
    if (one_line && !text.ends_with("\n")) {
      // A fragment (`zeros(3)` after a typed `y = `): as if typed.
      held = text + held;
      return getc_interruptible(nullptr);
    }
    pasted = text;
    // Shown as typed: each line after the first behind a `... ` prompt.
    std::string shown;
    for (char ch : text) shown += ch == '\n' ? std::string("\n... ") : std::string(1, ch);
    std::fputs(shown.c_str(), stdout);
    std::fflush(stdout);
    return '\n';
  }

  static char* next_match(const char*, int state) {
    return size_t(state) < matches.size() ? strdup(matches[size_t(state)].c_str()) : nullptr;
  }

  // libedit hands over its word (line[start, end)); ours may begin elsewhere.
  static char** attempt(const char* text, int start, int end) {
    rl_attempted_completion_over = 1;  // never fall back to file names
    std::string line(rl_line_buffer, size_t(end));
    Completion c = complete(*self->session->interp, line);
    matches.clear();
    for (const std::string& m : c.candidates) {
      if (c.start <= size_t(start)) {
        if (m.size() >= size_t(start) - c.start) matches.push_back(m.substr(size_t(start) - c.start));
      } else {
        matches.push_back(line.substr(size_t(start), c.start - size_t(start)) + m);
      }
    }
    if (matches.empty()) return nullptr;
    return rl_completion_matches(text, next_match);
  }

  // A line, or (a paste, or a block recalled from the history) several.
  Read read(const char* prompt, std::string& line) {
    char drain[64];
    while (::read(wake_pipe[0], drain, sizeof drain) > 0) {
    }
    sigint_seen = 0;
    pasted.clear();
    held = indent;  // (libedit clears text inserted before it reads: the indentation comes as keys)
    // (no compile progress line over the line being typed)
    clear_status();
    pause_status(true);
    char* got = readline(prompt);
    pause_status(false);
    indent.clear();
    if (sigint_seen) {
      std::free(got);
      return Read::Interrupted;
    }
    if (!got) return Read::Eof;
    line = got + pasted;
    std::free(got);
    return Read::Line;
  }

  // One history entry per input: a whole block is recalled by one Up.
  void remember(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    if (text.find_first_not_of(" \t\n") == std::string::npos) return;
    add_history(text.c_str());
    if (!history.empty()) write_history(history.c_str());
  }
};

// The indentation the line after `line` starts with inside a block: one
// level more after a ':', one less after return/pass/break/continue/raise,
// else the same.
std::string next_indent(const std::string& line) {
  const size_t start = line.find_first_not_of(' ');
  if (start == std::string::npos) return "";
  std::string lead(start, ' ');
  std::string code = line.substr(start);
  if (size_t hash = code.find('#'); hash != std::string::npos) code.resize(hash);
  while (!code.empty() && (code.back() == ' ' || code.back() == '\t')) code.pop_back();
  if (code.ends_with(":")) return lead + "    ";
  for (const char* kw : {"return", "pass", "break", "continue", "raise"})
    if (code == kw || code.starts_with(std::string(kw) + " ")) return lead.substr(0, lead.size() >= 4 ? lead.size() - 4 : 0);
  return lead;
}

int repl_loop(bool interpret, bool tty) {
  Session s;
  s.interpret = interpret;
  s.reset();
  std::unique_ptr<Terminal> term;
  if (tty) {
    term = std::make_unique<Terminal>(s);
    std::printf("thn %s REPL (%s mode); :help for commands, Ctrl-D to leave.\n", THN_VERSION,
                interpret ? "interpret" : "jit");
  }
  std::string buffer, line;
  bool blank = false;
  while (true) {
    Read r;
    if (term) {
      r = term->read(buffer.empty() ? ">>> " : "... ", line);
    } else {
      r = std::getline(std::cin, line) ? Read::Line : Read::Eof;
    }
    if (r == Read::Interrupted) {
      take_interrupt();
      buffer.clear();
      std::printf("\nKeyboardInterrupt\n");
      std::fflush(stdout);
      continue;
    }
    if (r == Read::Eof) {
      if (!buffer.empty()) s.run(buffer);
      if (tty) std::printf("\n");
      return s.exit_code.value_or(0);
    }
    // A paste, or a block recalled from the history: its lines at once,
    // run as soon as no bracket or string is left open.
    const bool several = line.find('\n') != std::string::npos;
    if (!several && !line.empty() && line.back() == '\r') line.pop_back();
    blank = line.find_first_not_of(" \t\n") == std::string::npos;
    if (buffer.empty()) {
      if (blank) continue;
      if (line[0] == ':' && !several) {
        if (term) term->remember(line);
        if (!s.command(line) || s.exit_code) return s.exit_code.value_or(0);
        continue;
      }
    }
    buffer += line + "\n";
    if (incomplete(buffer, blank || several)) {
      if (term && !several) Terminal::indent = next_indent(line);
      continue;
    }
    if (term) term->remember(buffer);
    s.run(buffer);
    buffer.clear();
    if (s.exit_code) return *s.exit_code;
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
      unknown_argument("thn repl", arg, {"--interpret"}, kReplUsage);
      return 2;
    }
  }
  const bool tty = isatty(0) && isatty(1);
  if (!tty) return on_big_stack([&] { return repl_loop(interpret, false); });
  // Ctrl-C goes to the REPL's thread (its reads and its computations): the
  // main thread, which only waits for it, blocks SIGINT; other threads pass
  // it on.
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocked read returns EINTR
  sigset_t only_int;
  sigemptyset(&only_int);
  sigaddset(&only_int, SIGINT);
  pthread_sigmask(SIG_BLOCK, &only_int, nullptr);
  return on_big_stack([&] {
    repl_thread = pthread_self();
    sigaction(SIGINT, &sa, nullptr);
    pthread_sigmask(SIG_UNBLOCK, &only_int, nullptr);
    return repl_loop(interpret, true);
  });
}

}  // namespace thn
