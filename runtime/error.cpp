#include "runtime/error.h"

namespace thn {

const char* error_kind_name(ErrorKind k) {
  switch (k) {
#define THN_X(k) \
  case ErrorKind::k: return #k;
    THN_ERROR_KINDS(THN_X)
#undef THN_X
  }
  return "Error";
}

}  // namespace thn
