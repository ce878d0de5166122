// PLACEHOLDER: being implemented; every op below must get a real kernel.
#include "runtime/elementwise.h"
#include "runtime/error.h"

namespace thn {

IValue op_matmul(const Args&) { fail(ErrorKind::NotImplementedError, "matmul: not implemented yet"); }
IValue op_mm(const Args&) { fail(ErrorKind::NotImplementedError, "mm: not implemented yet"); }
IValue op_bmm(const Args&) { fail(ErrorKind::NotImplementedError, "bmm: not implemented yet"); }
IValue op_linear(const Args&) { fail(ErrorKind::NotImplementedError, "linear: not implemented yet"); }
IValue op_outer(const Args&) { fail(ErrorKind::NotImplementedError, "outer: not implemented yet"); }

}  // namespace thn
