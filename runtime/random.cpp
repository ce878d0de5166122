// PLACEHOLDER: being implemented; every op below must get a real kernel.
#include "runtime/elementwise.h"
#include "runtime/error.h"

namespace thn {

IValue op_manual_seed(const Args&) { fail(ErrorKind::NotImplementedError, "manual_seed: not implemented yet"); }
IValue op_rand(const Args&) { fail(ErrorKind::NotImplementedError, "rand: not implemented yet"); }
IValue op_randn(const Args&) { fail(ErrorKind::NotImplementedError, "randn: not implemented yet"); }
IValue op_randint(const Args&) { fail(ErrorKind::NotImplementedError, "randint: not implemented yet"); }

}  // namespace thn
