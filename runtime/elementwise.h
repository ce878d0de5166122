#pragma once
// Elementwise ops (unary, binary, where/clamp/lerp/addc*/masked_fill,
// conversions, copy_/fill_) and the machinery other families share:
// broadcasting, type promotion, casts, layout-preserving allocation and the
// checks PyTorch makes before an in-place write.
#include <initializer_list>
#include <optional>
#include <span>

#include "runtime/op_registry.h"
#include "runtime/tensor.h"

namespace thn {

// Broadcast shape of a and b; PyTorch's error when they don't broadcast.
Dims broadcast_shapes(const Dims& a, const Dims& b);
// t viewed with `shape` (t's shape must broadcast to it): stride 0 on new dims.
Tensor broadcast_to(const Tensor& t, const Dims& shape);
// torch.result_type over operands: dimensioned tensors > 0-dim tensors >
// wrapped Python numbers, within the highest category present.
DType result_type(std::initializer_list<Tensor> operands);
// What result_type reads of an operand: its dtype and its category (the
// tracer promotes values it holds no tensor for).
struct PromotionOperand {
  enum class Kind : uint8_t { Dimensioned, ZeroDim, Wrapped };
  DType dtype;
  Kind kind;
};
DType result_type(std::span<const PromotionOperand> operands);

// TensorIterator's stride order for a new output of `shape`, given each
// operand's strides broadcast to it (0 on broadcast dims).
Dims iterator_strides(const Dims& shape, const std::vector<Dims>& operand_strides);
// The strides of a new elementwise output over `inputs` (all of `shape` or
// broadcastable to it): contiguous when they are, else their stride order.
Dims output_strides(const Dims& shape, std::span<const Tensor> inputs);
// A tensor of the same shape, and of t's strides when t is dense (PyTorch's
// empty_like with preserve_format).
Tensor empty_like(const Tensor& t, std::optional<DType> dtype = std::nullopt);
// t itself when it already has dtype d, else a converted copy.
Tensor to_dtype(const Tensor& t, DType d);
Tensor contiguous(const Tensor& t);  // t itself when contiguous
Tensor clone(const Tensor& t);       // a copy with t's layout (when dense)
// dst.copy_(src): broadcasts src to dst, casts, checks overlap (unless
// !check_write: a write the caller knows eager allowed, fill_ of an
// expanded tensor replayed by a trace).
void copy_into(const Tensor& dst, const Tensor& src, bool check_write = true);
void fill(const Tensor& dst, const Scalar& v);
// PyTorch's checked conversion of a Python number written into a tensor of
// dtype d (fill_, a scalar assignment, masked_fill, a scalar clamp bound,
// alpha): "value cannot be converted to type int without overflow" (d's C++
// name, or `type_name`) where d cannot hold it.
void check_fits(const Scalar& v, DType d);
void check_fits(const Scalar& v, DType d, std::string_view type_name);

// Errors PyTorch raises before writing `out`: internal overlap (an expanded
// tensor) and partial overlap with any input.
void check_inplace_write(const Tensor& out, std::initializer_list<Tensor> inputs);
// PyTorch's assert_no_overlap: `in` may not share any element with `out`
// (an op that reads `in` while writing `out` element by element: index_put_,
// index_copy_, scatter).
void check_no_overlap(const Tensor& out, const Tensor& in);
// Some dim of size > 1 has stride 0: elements share memory (an expansion).
bool has_internal_overlap(const Tensor& t);

// The elementwise ops by id, for C++ callers (other families, later the trace
// executor). `out` set: the in-place form writing into it.
Tensor unary(OpId op, const Tensor& x, const Tensor* out = nullptr);
Tensor binary(OpId op, const Tensor& a, const Tensor& b, const Tensor* out = nullptr);
// Result dtypes, shared with the tracer.
bool is_predicate(OpId op);  // an elementwise op with a bool result
DType unary_result_dtype(OpId op, DType in, Device device);
DType binary_result_dtype(OpId op, const Tensor& a, const Tensor& b);

}  // namespace thn
