#pragma once
// View ops as C++ functions: the result shares the input's storage. The op
// table rows (view, reshape, permute, ...) call these; so do other families.
#include <optional>

#include "runtime/tensor.h"

namespace thn {

// Replaces one -1 in `shape` so that it has `numel` elements; PyTorch's
// "shape '[2, 5]' is invalid for input of size 6" otherwise.
Dims infer_size(const Dims& shape, int64_t numel);
// Strides for viewing `t` as `shape` without a copy, if PyTorch's
// computeStride allows it.
std::optional<Dims> view_strides(const Tensor& t, const Dims& shape);
// The same from sizes and strides alone (alias analysis, no tensor at hand).
std::optional<Dims> view_strides(const Dims& sizes, const Dims& strides, const Dims& shape);
Tensor view(const Tensor& t, const Dims& shape);
Tensor reshape(const Tensor& t, const Dims& shape);  // a view when strides allow, else a copy
Tensor permute(const Tensor& t, const Dims& dims);
Tensor transpose(const Tensor& t, int64_t dim0, int64_t dim1);
Tensor unsqueeze(const Tensor& t, int64_t dim);
Tensor squeeze(const Tensor& t, std::optional<int64_t> dim);
Tensor expand(const Tensor& t, const Dims& sizes);
Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length);
Tensor select(const Tensor& t, int64_t dim, int64_t index);
Tensor flatten(const Tensor& t, int64_t start_dim, int64_t end_dim);
Tensor movedim(const Tensor& t, const Dims& source, const Dims& destination);

}  // namespace thn
