// PLACEHOLDER: being implemented; every op below must get a real kernel.
#include "runtime/elementwise.h"
#include "runtime/error.h"

namespace thn {

IValue op_tensor(const Args&) { fail(ErrorKind::NotImplementedError, "tensor: not implemented yet"); }
IValue op_zeros(const Args&) { fail(ErrorKind::NotImplementedError, "zeros: not implemented yet"); }
IValue op_ones(const Args&) { fail(ErrorKind::NotImplementedError, "ones: not implemented yet"); }
IValue op_empty(const Args&) { fail(ErrorKind::NotImplementedError, "empty: not implemented yet"); }
IValue op_full(const Args&) { fail(ErrorKind::NotImplementedError, "full: not implemented yet"); }
IValue op_zeros_like(const Args&) { fail(ErrorKind::NotImplementedError, "zeros_like: not implemented yet"); }
IValue op_ones_like(const Args&) { fail(ErrorKind::NotImplementedError, "ones_like: not implemented yet"); }
IValue op_empty_like(const Args&) { fail(ErrorKind::NotImplementedError, "empty_like: not implemented yet"); }
IValue op_full_like(const Args&) { fail(ErrorKind::NotImplementedError, "full_like: not implemented yet"); }
IValue op_arange(const Args&) { fail(ErrorKind::NotImplementedError, "arange: not implemented yet"); }
IValue op_linspace(const Args&) { fail(ErrorKind::NotImplementedError, "linspace: not implemented yet"); }
IValue op_eye(const Args&) { fail(ErrorKind::NotImplementedError, "eye: not implemented yet"); }
IValue op_shape(const Args&) { fail(ErrorKind::NotImplementedError, "shape: not implemented yet"); }
IValue op_dtype(const Args&) { fail(ErrorKind::NotImplementedError, "dtype: not implemented yet"); }
IValue op_device(const Args&) { fail(ErrorKind::NotImplementedError, "device: not implemented yet"); }
IValue op_ndim(const Args&) { fail(ErrorKind::NotImplementedError, "ndim: not implemented yet"); }
IValue op_size(const Args&) { fail(ErrorKind::NotImplementedError, "size: not implemented yet"); }
IValue op_stride(const Args&) { fail(ErrorKind::NotImplementedError, "stride: not implemented yet"); }
IValue op_dim(const Args&) { fail(ErrorKind::NotImplementedError, "dim: not implemented yet"); }
IValue op_numel(const Args&) { fail(ErrorKind::NotImplementedError, "numel: not implemented yet"); }
IValue op_is_contiguous(const Args&) { fail(ErrorKind::NotImplementedError, "is_contiguous: not implemented yet"); }
IValue op_storage_offset(const Args&) { fail(ErrorKind::NotImplementedError, "storage_offset: not implemented yet"); }
IValue op_item(const Args&) { fail(ErrorKind::NotImplementedError, "item: not implemented yet"); }
IValue op_tolist(const Args&) { fail(ErrorKind::NotImplementedError, "tolist: not implemented yet"); }

}  // namespace thn
