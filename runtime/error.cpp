#include "runtime/error.h"

namespace thn {

const char* error_kind_name(ErrorKind k) {
  switch (k) {
    case ErrorKind::RuntimeError: return "RuntimeError";
    case ErrorKind::IndexError: return "IndexError";
    case ErrorKind::ValueError: return "ValueError";
    case ErrorKind::TypeError: return "TypeError";
    case ErrorKind::ZeroDivisionError: return "ZeroDivisionError";
    case ErrorKind::OverflowError: return "OverflowError";
    case ErrorKind::NotImplementedError: return "NotImplementedError";
  }
  return "Error";
}

}  // namespace thn
