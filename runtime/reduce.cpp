// PLACEHOLDER: being implemented; every op below must get a real kernel.
#include "runtime/elementwise.h"
#include "runtime/error.h"

namespace thn {

IValue op_sum(const Args&) { fail(ErrorKind::NotImplementedError, "sum: not implemented yet"); }
IValue op_mean(const Args&) { fail(ErrorKind::NotImplementedError, "mean: not implemented yet"); }
IValue op_prod(const Args&) { fail(ErrorKind::NotImplementedError, "prod: not implemented yet"); }
IValue op_amax(const Args&) { fail(ErrorKind::NotImplementedError, "amax: not implemented yet"); }
IValue op_amin(const Args&) { fail(ErrorKind::NotImplementedError, "amin: not implemented yet"); }
IValue op_max(const Args&) { fail(ErrorKind::NotImplementedError, "max: not implemented yet"); }
IValue op_min(const Args&) { fail(ErrorKind::NotImplementedError, "min: not implemented yet"); }
IValue op_argmax(const Args&) { fail(ErrorKind::NotImplementedError, "argmax: not implemented yet"); }
IValue op_argmin(const Args&) { fail(ErrorKind::NotImplementedError, "argmin: not implemented yet"); }
IValue op_var(const Args&) { fail(ErrorKind::NotImplementedError, "var: not implemented yet"); }
IValue op_std(const Args&) { fail(ErrorKind::NotImplementedError, "std: not implemented yet"); }
IValue op_all(const Args&) { fail(ErrorKind::NotImplementedError, "all: not implemented yet"); }
IValue op_any(const Args&) { fail(ErrorKind::NotImplementedError, "any: not implemented yet"); }
IValue op_logsumexp(const Args&) { fail(ErrorKind::NotImplementedError, "logsumexp: not implemented yet"); }
IValue op_cumsum(const Args&) { fail(ErrorKind::NotImplementedError, "cumsum: not implemented yet"); }

}  // namespace thn
