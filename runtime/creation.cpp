// The creation ops (tensor, zeros, ones, empty, full, *_like, arange,
// linspace, eye) and the introspection ops (shape, dtype, size, item, tolist,
// ...). New tensors are contiguous, except that *_like and tensor(t) keep a
// dense input's strides, as PyTorch's preserve_format does.
#include "runtime/creation.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "runtime/elementwise.h"
#include "runtime/error.h"
#include "runtime/views.h"

namespace thn {

Device creation_device(std::optional<Device> device) {
  if (device && device->type == DeviceType::CUDA)
    fail("CUDA is not available: thn was built or is running without a GPU");
  return kCPU;
}

namespace {

// Writes v into every element of t, a tensor allocated in this file: dense
// from its first element, so its numel elements are one block.
void fill_new(const Tensor& t, const Scalar& v) {
  if (is_meta(t)) return;
  dispatch_dtype(t.dtype(), [&]<class S>() { std::fill_n(t.data<S>(), t.numel(), S(v.to<compute_t<S>>())); });
}

// fill_ of a Python number, with its overflow check.
void fill_checked(const Tensor& t, const Scalar& v) {
  check_fits(v, t.dtype());
  fill_new(t, v);
}

// ---- torch.tensor(data) ----

// The dtype PyTorch infers for nested data: every number, tensor and empty
// list (the default float type) in it, promoted together.
void promote_data_dtype(const IValue& v, std::optional<DType>& acc) {
  if (v.is_list() && !v.to_list().items.empty()) {
    for (const IValue& e : v.to_list().items) promote_data_dtype(e, acc);
    return;
  }
  DType d;
  if (v.is_list()) d = kDefaultFloat;
  else if (v.is_number()) d = v.to_scalar().dtype();
  else if (v.is_tensor()) d = v.to_tensor().dtype();
  else if (v.is_none()) fail("Could not infer dtype of NoneType");
  else fail(ErrorKind::TypeError, "new(): invalid data type '{}'", v.type_name());
  acc = acc ? promote_types(*acc, d) : d;
}

// The shape follows the first element at every depth; a tensor there counts
// as one number.
Dims data_sizes(const IValue& data) {
  Dims sizes;
  for (const IValue* v = &data; v->is_list(); v = &v->to_list().items[0]) {
    sizes.push_back(int64_t(v->to_list().items.size()));
    if (sizes.back() == 0) break;
  }
  return sizes;
}

// The number one element of the data stands for, stored as d. Integer types
// read it as Python's __index__ does, float types as __float__, with their
// errors.
Scalar data_element(const IValue& v, DType d) {
  const bool integral = !is_floating(d);
  Scalar s;
  if (v.is_number()) {
    s = v.to_scalar();
  } else if (v.is_tensor()) {
    const Tensor& t = v.to_tensor();
    if (integral && (t.numel() != 1 || is_floating(t.dtype())))
      fail(ErrorKind::TypeError, "only integer tensors of a single element can be converted to an index");
    if (t.numel() != 1) fail(ErrorKind::ValueError, "only one element tensors can be converted to Python scalars");
    if (is_meta(t)) return Scalar(int64_t(0));  // (the result is a meta tensor too)
    s = t.item();
  } else if (integral) {
    fail(ErrorKind::TypeError, "'{}' object cannot be interpreted as an integer", v.type_name());
  } else {
    fail(ErrorKind::TypeError, "must be real number, not {}", v.type_name());
  }
  if (is_integral(d, false)) check_fits(s, d, dtype_name(d));
  return s;
}

// Appends the elements of v (the data at depth dim) in row-major order. A
// tensor where a sequence is expected is read as the sequence of its rows.
void flatten_data(const IValue& v, size_t dim, const Dims& sizes, DType d, std::vector<Scalar>& out) {
  if (dim == sizes.size()) {
    out.push_back(data_element(v, d));
    return;
  }
  std::vector<IValue> rows;
  if (v.is_tensor() && v.to_tensor().dim() > 0) {
    for (int64_t i = 0; i < v.to_tensor().size(0); i++) rows.emplace_back(select(v.to_tensor(), 0, i));
  } else if (!v.is_list()) {
    fail(ErrorKind::TypeError, "not a sequence");
  }
  const std::vector<IValue>& items = v.is_list() ? v.to_list().items : rows;
  if (int64_t(items.size()) != sizes[dim])
    fail(ErrorKind::ValueError, "expected sequence of length {} at dim {} (got {})", sizes[dim], dim, items.size());
  for (const IValue& e : items) flatten_data(e, dim + 1, sizes, d, out);
}

Tensor tensor_from_data(const IValue& data, std::optional<DType> dtype) {
  if (!dtype) promote_data_dtype(data, dtype);
  Dims sizes = data_sizes(data);
  std::vector<Scalar> values;
  if (numel_of(sizes) > 0) flatten_data(data, 0, sizes, *dtype, values);
  Tensor t = empty(sizes, *dtype);
  if (is_meta(t)) return t;
  dispatch_dtype(*dtype, [&]<class S>() {
    S* p = t.data<S>();
    for (size_t i = 0; i < values.size(); i++) p[i] = S(values[i].to<compute_t<S>>());
  });
  return t;
}

// zeros / ones / empty: (int... size, *, dtype, device).
Tensor new_sized(const Args& a) {
  creation_device(a.opt_device(2));
  return empty(a.dims(0), a.opt_dtype(1).value_or(kDefaultFloat));
}

// The *_like ops: (Tensor self, [fill_value,] *, dtype, device).
Tensor new_like(const Args& a, size_t dtype_index) {
  creation_device(a.opt_device(dtype_index + 1));
  return empty_like(a.tensor(0), a.opt_dtype(dtype_index));
}

// ---- arange, linspace ----

// The type PyTorch's CPU kernels compute ranges in (at::acc_type<S, false>).
template <class S>
using cpu_acc_t = std::conditional_t<std::is_integral_v<S>, int64_t, std::conditional_t<sizeof(S) == 2, float, double>>;

template <class S> Tensor arange_as(const Scalar& start, const Scalar& end, const Scalar& step) {
  using Acc = cpu_acc_t<S>;
  const Acc xstart = start.to<Acc>(), xend = end.to<Acc>(), xstep = step.to<Acc>();
  THN_CHECK(xstep > 0 || xstep < 0, "step must be nonzero");
  THN_CHECK(std::isfinite(double(xstart)) && std::isfinite(double(xend)), "unsupported range: {:g} -> {:g}",
            double(xstart), double(xend));
  THN_CHECK((xstep > 0 && xend >= xstart) || (xstep < 0 && xend <= xstart),
            "upper bound and larger bound inconsistent with step sign");
  // The length in double whatever the dtype, so that every device agrees;
  // int64 subtracts exactly first.
  double size_d;
  if constexpr (std::is_same_v<S, int64_t>) size_d = std::ceil(double(xend - xstart) / double(xstep));
  else size_d = std::ceil((end.to_double() - start.to_double()) / step.to_double());
  THN_CHECK(size_d >= 0 && size_d <= double(std::numeric_limits<int64_t>::max()), "invalid size, possible overflow?");
  Tensor t = empty({int64_t(size_d)}, dtype_of<S>());
  if (is_meta(t)) return t;
  S* p = t.data<S>();
  for (int64_t i = 0; i < t.numel(); i++) p[i] = S(xstart + xstep * Acc(i));
  return t;
}

// PyTorch's symmetric formula: the first half steps up from start, the second
// half down from end, so both ends are exact. Integer types step in double.
template <class S> void linspace_into(const Tensor& t, const Scalar& start_v, const Scalar& end_v) {
  using C = compute_t<S>;
  using Step = std::conditional_t<std::is_integral_v<S>, double, C>;
  if (is_meta(t)) return;
  const int64_t steps = t.numel(), halfway = steps / 2;
  const C start = C(S(start_v.to<C>())), end = C(S(end_v.to<C>()));
  const Step step = (Step(end) - Step(start)) / Step(steps - 1);
  S* p = t.data<S>();
  for (int64_t i = 0; i < steps; i++) p[i] = S(i < halfway ? start + step * Step(i) : end - step * Step(steps - i - 1));
}

// ---- introspection ----

// size(dim) / stride(dim): the tuple of all dims, or one.
IValue per_dim(const Args& a, const Dims& all) {
  std::optional<int64_t> dim = a.opt_i64(1);
  if (!dim) return IValue::dims(all);
  if (all.empty()) fail(ErrorKind::IndexError, "Dimension specified as {} but tensor has no dimensions", *dim);
  return IValue(all[wrap_dim(*dim, int64_t(all.size()))]);
}

template <class S> Scalar python_number(S v) {
  if constexpr (std::is_same_v<S, bool>) return Scalar(v);
  else if constexpr (std::is_integral_v<S>) return Scalar(int64_t(v));
  else return Scalar(double(compute_t<S>(v)));
}

template <class S> IValue nested_list(const Tensor& t, int64_t dim, const S* p) {
  if (dim == t.dim()) return IValue(python_number(*p));
  std::vector<IValue> items;
  for (int64_t i = 0; i < t.sizes()[dim]; i++) items.push_back(nested_list(t, dim + 1, p + i * t.strides()[dim]));
  return IValue::list(std::move(items));
}

}  // namespace

Tensor full(const Dims& sizes, const Scalar& v, DType dtype) {
  Tensor t = empty(sizes, dtype);
  fill_checked(t, v);
  return t;
}

IValue op_tensor(const Args& a) {
  creation_device(a.opt_device(2));
  if (!a[0].is_tensor()) return tensor_from_data(a[0], a.opt_dtype(1));
  const Tensor& src = a.tensor(0);  // a copy, keeping a dense layout
  Tensor t = empty_like(src, a.opt_dtype(1));
  copy_into(t, src);
  return t;
}

IValue op_zeros(const Args& a) {
  Tensor t = new_sized(a);
  fill_new(t, 0);
  return t;
}
IValue op_ones(const Args& a) {
  Tensor t = new_sized(a);
  fill_new(t, 1);
  return t;
}
IValue op_empty(const Args& a) { return new_sized(a); }

IValue op_full(const Args& a) {
  creation_device(a.opt_device(3));
  Scalar v = a.scalar(1);
  return full(a.dims(0), v, a.opt_dtype(2).value_or(v.dtype()));
}

IValue op_zeros_like(const Args& a) {
  Tensor t = new_like(a, 1);
  fill_new(t, 0);
  return t;
}
IValue op_ones_like(const Args& a) {
  Tensor t = new_like(a, 1);
  fill_new(t, 1);
  return t;
}
IValue op_empty_like(const Args& a) { return new_like(a, 1); }
IValue op_full_like(const Args& a) {
  Tensor t = new_like(a, 2);
  fill_checked(t, a.scalar(1));
  return t;
}

IValue op_arange(const Args& a) {
  Scalar start = Scalar(0), end = a.scalar(0), step = a.scalar(2);
  if (!a.is_none(1)) start = end, end = a.scalar(1);  // arange(start, end) rather than arange(end)
  const bool integral = start.is_integral() && end.is_integral() && step.is_integral();
  DType dtype = a.opt_dtype(3).value_or(integral ? kDefaultInt : kDefaultFloat);
  creation_device(a.opt_device(4));
  return dispatch_dtype(dtype, [&]<class S>() -> Tensor {
    if constexpr (std::is_same_v<S, bool>) not_implemented("arange_cpu", dtype, kCPU);
    else return arange_as<S>(start, end, step);
  });
}

IValue op_linspace(const Args& a) {
  const int64_t steps = a.i64(2);
  THN_CHECK(steps >= 0, "number of steps must be non-negative");
  creation_device(a.opt_device(4));
  Tensor t = empty({steps}, a.opt_dtype(3).value_or(kDefaultFloat));
  if (steps == 1) fill_checked(t, a.scalar(0));
  if (steps < 2) return t;
  dispatch_dtype(t.dtype(), [&]<class S>() {
    if constexpr (std::is_same_v<S, bool>) not_implemented("linspace_cpu", t.dtype(), kCPU);
    else linspace_into<S>(t, a.scalar(0), a.scalar(1));
  });
  return t;
}

IValue op_eye(const Args& a) {
  const int64_t n = a.i64(0), m = a.opt_i64(1).value_or(n);
  THN_CHECK(n >= 0, "n must be greater or equal to 0, got {}", n);
  THN_CHECK(m >= 0, "m must be greater or equal to 0, got {}", m);
  creation_device(a.opt_device(3));
  Tensor t = empty({n, m}, a.opt_dtype(2).value_or(kDefaultFloat));
  fill_new(t, 0);
  if (is_meta(t)) return t;
  dispatch_dtype(t.dtype(), [&]<class S>() {
    for (int64_t i = 0; i < std::min(n, m); i++) t.data<S>()[i * (m + 1)] = S(compute_t<S>(1));
  });
  return t;
}

IValue op_shape(const Args& a) { return IValue::dims(a.tensor(0).sizes()); }
IValue op_dtype(const Args& a) { return IValue(a.tensor(0).dtype()); }
IValue op_result_type(const Args& a) { return IValue(result_type({a.tensor(0), a.tensor(1)})); }
IValue op_device(const Args& a) { return IValue(a.tensor(0).device()); }
IValue op_ndim(const Args& a) { return IValue(a.tensor(0).dim()); }
IValue op_is_cuda(const Args& a) { return IValue(a.tensor(0).device().type == DeviceType::CUDA); }
IValue op_size(const Args& a) { return per_dim(a, a.tensor(0).sizes()); }
IValue op_stride(const Args& a) { return per_dim(a, a.tensor(0).strides()); }
IValue op_dim(const Args& a) { return IValue(a.tensor(0).dim()); }
IValue op_numel(const Args& a) { return IValue(a.tensor(0).numel()); }
IValue op_is_contiguous(const Args& a) { return IValue(a.tensor(0).is_contiguous()); }
IValue op_storage_offset(const Args& a) { return IValue(a.tensor(0).offset()); }

IValue op_item(const Args& a) {
  const Tensor& t = a.tensor(0);
  if (t.numel() != 1) fail(ErrorKind::ValueError, "only one element tensors can be converted to Python scalars");
  return IValue(t.item());
}

IValue op_tolist(const Args& a) {
  const Tensor& t = a.tensor(0);
  return dispatch_dtype(t.dtype(), [&]<class S>() { return nested_list(t, 0, t.data<S>()); });
}

}  // namespace thn
