#pragma once
// Errors raised by the runtime. The kind is the Python exception type a
// PyTorch user would see; the message uses PyTorch's wording.
#include <fmt/format.h>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace thn {

// Python's exception types; the interpreter raises the language-level ones.
#define THN_ERROR_KINDS(X)                                                                 \
  X(RuntimeError) X(IndexError) X(ValueError) X(TypeError) X(ZeroDivisionError)           \
  X(OverflowError) X(NotImplementedError) X(NameError) X(UnboundLocalError)               \
  X(AttributeError) X(AssertionError) X(RecursionError) X(ModuleNotFoundError)            \
  X(ImportError) X(KeyError) X(SyntaxError) X(IndentationError) X(TabError)             \
  X(KeyboardInterrupt) X(MemoryError) X(OSError) X(FileNotFoundError) X(SystemExit)
enum class ErrorKind {
#define THN_X(k) k,
  THN_ERROR_KINDS(THN_X)
#undef THN_X
};

const char* error_kind_name(ErrorKind k);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string msg) : std::runtime_error(std::move(msg)), kind_(kind) {}
  virtual ~Error() = default;
  ErrorKind kind() const { return kind_; }
  // The exception's type as printed: the kind's name, or a class's
  // (a `raise` of an instance of a user-defined exception class).
  virtual const char* kind_name() const { return error_kind_name(kind_); }
  // What a report adds after the message (". Did you mean: 'sum'?"), as
  // CPython's traceback does: not part of the message an `except` sees.
  // A lazy note is worked out when first asked for (by a report), so an
  // error that is caught (hasattr, getattr with a default) costs nothing.
  const std::string& note() const {
    if (lazy_note_) note_ = std::exchange(lazy_note_, nullptr)();
    return note_;
  }
  Error& with_note(std::string note) {
    note_ = std::move(note);
    lazy_note_ = nullptr;
    return *this;
  }
  Error& with_lazy_note(std::function<std::string()> note) {
    lazy_note_ = std::move(note);
    return *this;
  }
  Error& with_note_of(const Error& other) {
    note_ = other.note_, lazy_note_ = other.lazy_note_;
    return *this;
  }

 private:
  ErrorKind kind_;
  mutable std::string note_;
  mutable std::function<std::string()> lazy_note_;
};

// The candidate closest to `name` by CPython 3.12's rule (an edit distance
// where a case change costs half a substitution, within a third of the
// characters involved; the first such candidate in order on a tie), as
// ". Did you mean: 'x'?"; "" when none is close. `quote` false gives
// CPython 3.13's keyword-argument form, ". Did you mean 'x'?".
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates, bool colon = true);
// The closest candidate itself ("" when none).
std::string closest_name(std::string_view name, const std::vector<std::string>& candidates);

template <class... A>
[[noreturn]] void fail(fmt::format_string<A...> f, A&&... a) {
  throw Error(ErrorKind::RuntimeError, fmt::format(f, std::forward<A>(a)...));
}
template <class... A>
[[noreturn]] void fail(ErrorKind k, fmt::format_string<A...> f, A&&... a) {
  throw Error(k, fmt::format(f, std::forward<A>(a)...));
}
// PyTorch's and Python's "f() got an unexpected keyword argument 'k'", with
// the closest parameter suggested.
[[noreturn]] void unexpected_keyword(std::string_view fn, std::string_view k, const std::vector<std::string>& params);
// Ctrl-C: asks the running program to stop. Async-signal-safe; the
// interpreter raises KeyboardInterrupt at its next statement, and a wait on
// a kernel compiler stops it.
void request_interrupt();
// Whether a request is pending (a wait polls it).
bool interrupt_requested();
// Drops a request no statement has seen yet (the REPL, when Ctrl-C cancels
// typed input rather than a computation). Returns whether there was one.
bool take_interrupt();

#define THN_CHECK(cond, ...) \
  do {                       \
    if (!(cond)) ::thn::fail(__VA_ARGS__); \
  } while (0)

}  // namespace thn
