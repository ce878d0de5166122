#pragma once
// Errors raised by the runtime. The kind is the Python exception type a
// PyTorch user would see; the message uses PyTorch's wording.
#include <fmt/format.h>
#include <stdexcept>
#include <string>

namespace thn {

// Python's exception types; the interpreter raises the language-level ones.
#define THN_ERROR_KINDS(X)                                                                 \
  X(RuntimeError) X(IndexError) X(ValueError) X(TypeError) X(ZeroDivisionError)           \
  X(OverflowError) X(NotImplementedError) X(NameError) X(UnboundLocalError)               \
  X(AttributeError) X(AssertionError) X(RecursionError) X(ModuleNotFoundError)            \
  X(ImportError) X(KeyError) X(SyntaxError) X(IndentationError) X(TabError)             \
  X(KeyboardInterrupt) X(MemoryError) X(OSError) X(FileNotFoundError)
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

 private:
  ErrorKind kind_;
};

template <class... A>
[[noreturn]] void fail(fmt::format_string<A...> f, A&&... a) {
  throw Error(ErrorKind::RuntimeError, fmt::format(f, std::forward<A>(a)...));
}
template <class... A>
[[noreturn]] void fail(ErrorKind k, fmt::format_string<A...> f, A&&... a) {
  throw Error(k, fmt::format(f, std::forward<A>(a)...));
}
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
