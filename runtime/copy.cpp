// PLACEHOLDER: being implemented; every op below must get a real kernel.
#include "runtime/elementwise.h"
#include "runtime/error.h"

namespace thn {

IValue op_clone(const Args&) { fail(ErrorKind::NotImplementedError, "clone: not implemented yet"); }
IValue op_contiguous(const Args&) { fail(ErrorKind::NotImplementedError, "contiguous: not implemented yet"); }
IValue op_cat(const Args&) { fail(ErrorKind::NotImplementedError, "cat: not implemented yet"); }
IValue op_stack(const Args&) { fail(ErrorKind::NotImplementedError, "stack: not implemented yet"); }
IValue op_index_select(const Args&) { fail(ErrorKind::NotImplementedError, "index_select: not implemented yet"); }
IValue op_gather(const Args&) { fail(ErrorKind::NotImplementedError, "gather: not implemented yet"); }
IValue op_index_copy(const Args&) { fail(ErrorKind::NotImplementedError, "index_copy: not implemented yet"); }
IValue op_index_add(const Args&) { fail(ErrorKind::NotImplementedError, "index_add: not implemented yet"); }
IValue op_masked_select(const Args&) { fail(ErrorKind::NotImplementedError, "masked_select: not implemented yet"); }
IValue op_nonzero(const Args&) { fail(ErrorKind::NotImplementedError, "nonzero: not implemented yet"); }
IValue op_tril(const Args&) { fail(ErrorKind::NotImplementedError, "tril: not implemented yet"); }
IValue op_triu(const Args&) { fail(ErrorKind::NotImplementedError, "triu: not implemented yet"); }
IValue op_flip(const Args&) { fail(ErrorKind::NotImplementedError, "flip: not implemented yet"); }
IValue op_roll(const Args&) { fail(ErrorKind::NotImplementedError, "roll: not implemented yet"); }
IValue op_repeat(const Args&) { fail(ErrorKind::NotImplementedError, "repeat: not implemented yet"); }

}  // namespace thn
