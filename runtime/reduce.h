#pragma once
// Reductions as C++ functions: the op table rows (sum, mean, amax, ...) call
// these; so do other families. Dims may be negative; an absent or empty dim
// list reduces every dim (PyTorch's deprecated empty-list behaviour). Results
// are newly allocated and contiguous; keepdim keeps reduced dims as size 1.
#include <optional>
#include <utility>

#include "runtime/op_registry.h"
#include "runtime/tensor.h"

namespace thn {

// Integer and bool inputs sum to int64 unless `dtype` says otherwise; with
// `dtype` the input is converted first. float32 accumulates in float32 by
// PyTorch's cascade summation, float16/bfloat16 in float.
Tensor sum(const Tensor& x, const std::optional<Dims>& dim, bool keepdim, std::optional<DType> dtype = std::nullopt);
// Floating inputs (or a floating `dtype`) only.
Tensor mean(const Tensor& x, const std::optional<Dims>& dim, bool keepdim, std::optional<DType> dtype = std::nullopt);
Tensor prod(const Tensor& x, std::optional<int64_t> dim, bool keepdim, std::optional<DType> dtype = std::nullopt);
// NaN propagates; reducing a size-0 dim is an error.
Tensor amax(const Tensor& x, const Dims& dim, bool keepdim);
Tensor amin(const Tensor& x, const Dims& dim, bool keepdim);
// max(dim) / min(dim): (values, int64 indices of the first extreme; NaN counts as the extreme).
std::pair<Tensor, Tensor> max_dim(const Tensor& x, int64_t dim, bool keepdim);
std::pair<Tensor, Tensor> min_dim(const Tensor& x, int64_t dim, bool keepdim);
// No dim: the index into the flattened tensor.
Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim);
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim);
// Sum of squared deviations / (n - correction), two-pass in double.
Tensor var(const Tensor& x, const std::optional<Dims>& dim, double correction, bool keepdim);
Tensor std_dev(const Tensor& x, const std::optional<Dims>& dim, double correction, bool keepdim);
// bool results.
Tensor all(const Tensor& x, std::optional<int64_t> dim, bool keepdim);
Tensor any(const Tensor& x, std::optional<int64_t> dim, bool keepdim);
// log(sum(exp(x))) computed with the max subtracted; integer inputs give float32.
Tensor logsumexp(const Tensor& x, const Dims& dim, bool keepdim);
// The scans along dim: cumsum and cumprod (integer and bool inputs give
// int64 unless `dtype` says otherwise), logcumsumexp (floating inputs).
Tensor scan(OpId op, const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
// x.cumsum_(dim), x.cumprod_(dim): in place, x's dtype kept.
void scan_inplace(OpId op, const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
// cummax, cummin: the running extreme and its position (the last of equal
// ones; a NaN, once seen, stays).
std::pair<Tensor, Tensor> scan_extreme(OpId op, const Tensor& x, int64_t dim);

}  // namespace thn
