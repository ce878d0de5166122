#pragma once
// Source files, locations and located errors. Every AST node carries a Loc;
// every error the user sees names `file:line:col`, shows the line and a caret.
#include <memory>
#include <string>
#include <vector>

#include "runtime/error.h"

namespace thn {

// Made with make_shared (load() does): an error located in a source keeps it
// alive, so a parse's error can be reported after its text is dropped.
struct Source : std::enable_shared_from_this<Source> {
  std::string path;  // as the user named it
  std::string text;
  std::vector<std::string> lines;
  // A standard-library module's name ("nn"), "" for the program's own
  // files: traces name the library functions their ops come from.
  std::string library;
  Source(std::string path, std::string text);
  // Reads a file; an unreadable file is an error naming it.
  static std::shared_ptr<const Source> load(const std::string& path, std::string library = "");
  std::string_view line(int n) const;  // 1-based; empty when out of range
};

struct Loc {
  const Source* source = nullptr;
  int line = 0;  // 1-based
  int col = 0;   // 0-based, printed 1-based
};

// One line of a traceback: a function and where in it.
struct TraceEntry {
  std::string function;
  Loc loc;
};

// Where a traced op was performed, with the calls inside the jitted function
// that led there, innermost first: a traceback for an error raised when a
// cached trace runs names them as eager's would.
struct Place : Loc {
  std::shared_ptr<const std::vector<TraceEntry>> calls;
};

// Text from a source file or a value, as a terminal may show it: control
// characters (a NUL, an escape sequence's ESC) written as Python writes
// them in a repr, \x00 and \x1b; tabs and line breaks stay.
std::string printable(std::string_view text);

// "file:line:col: Kind: message", the source line and a caret under col;
// with colour, ANSI escapes for a terminal. The line and the message are
// printable().
std::string format_located(const Loc& loc, std::string_view kind, const std::string& message, bool colour = false);

// An error with a location: syntax errors, and runtime errors once the
// interpreter has placed them.
class LocatedError : public Error {
 public:
  LocatedError(ErrorKind kind, std::string msg, Loc loc) : Error(kind, std::move(msg)) { place(loc); }
  const Loc& loc() const { return loc_; }
  // Places an error raised where no location was known (by a builtin).
  void place(const Loc& loc) {
    loc_ = loc;
    source_ = loc.source ? loc.source->weak_from_this().lock() : nullptr;
  }

 private:
  Loc loc_;
  std::shared_ptr<const Source> source_;  // what loc_ points into, while the error lives
};

template <class... A>
[[noreturn]] void fail_at(const Loc& loc, ErrorKind k, fmt::format_string<A...> f, A&&... a) {
  throw LocatedError(k, fmt::format(f, std::forward<A>(a)...), loc);
}

}  // namespace thn
