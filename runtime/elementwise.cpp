#include "runtime/elementwise.h"

#include <numeric>

#include "runtime/elementwise_impl.h"
#include "runtime/cuda.h"
#include "runtime/error.h"
#include "runtime/scalar_math.h"

namespace thn {

Dims broadcast_shapes(const Dims& a, const Dims& b) {
  size_t n = std::max(a.size(), b.size());
  Dims out(n);
  for (size_t i = n; i-- > 0;) {  // from the last dim, as PyTorch reports the first mismatch
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      fail("The size of tensor a ({}) must match the size of tensor b ({}) at non-singleton dimension {}", da, db, i);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Dims broadcast_strides(const Dims& sizes, const Dims& strides, const Dims& shape) {
  Dims s(shape.size(), 0);
  size_t lead = shape.size() - sizes.size();
  for (size_t i = 0; i < sizes.size(); i++) s[lead + i] = sizes[i] == 1 ? 0 : strides[i];
  return s;
}

Dims broadcast_strides(const Tensor& t, const Dims& shape) { return broadcast_strides(t.sizes(), t.strides(), shape); }

Tensor broadcast_to(const Tensor& t, const Dims& shape) {
  return t.as_strided(shape, broadcast_strides(t, shape), t.offset());
}

DType result_type(std::span<const PromotionOperand> operands) {
  // One promoted dtype per category, then PyTorch's combine_categories.
  std::optional<DType> dim, zero, wrapped;
  auto update = [](std::optional<DType>& acc, DType d) { acc = acc ? promote_types(*acc, d) : d; };
  for (const PromotionOperand& o : operands) {
    switch (o.kind) {
      case PromotionOperand::Kind::Wrapped: update(wrapped, is_floating(o.dtype) ? kDefaultFloat : o.dtype); break;
      case PromotionOperand::Kind::ZeroDim: update(zero, o.dtype); break;
      case PromotionOperand::Kind::Dimensioned: update(dim, o.dtype); break;
    }
  }
  auto combine = [](std::optional<DType> higher, std::optional<DType> lower) -> std::optional<DType> {
    if (!higher) return lower;
    if (!lower || is_floating(*higher)) return higher;
    if (*higher == DType::Bool || is_floating(*lower)) return promote_types(*higher, *lower);
    return higher;
  };
  return *combine(dim, combine(zero, wrapped));
}

DType result_type(std::initializer_list<Tensor> operands) {
  std::vector<PromotionOperand> os;
  for (const Tensor& t : operands) {
    if (!t.defined()) continue;
    using K = PromotionOperand::Kind;
    os.push_back({t.dtype(), t.is_wrapped_number() ? K::Wrapped : t.dim() == 0 ? K::ZeroDim : K::Dimensioned});
  }
  return result_type(std::span<const PromotionOperand>(os));
}

Dims iterator_strides(const Dims& shape, const std::vector<Dims>& operands) {
  const int64_t nd = int64_t(shape.size());
  std::vector<int64_t> perm(nd);  // perm[0]: the innermost dim, as in TensorIterator
  for (int64_t i = 0; i < nd; i++) perm[i] = nd - 1 - i;
  auto should_swap = [&](int64_t d0, int64_t d1) {
    for (const Dims& s : operands) {
      if (s[d0] == 0 || s[d1] == 0) continue;
      if (s[d0] != s[d1]) return s[d0] < s[d1] ? -1 : 1;
      if (shape[d0] > shape[d1]) return 1;
    }
    return 0;
  };
  for (int64_t i = 1; i < nd; i++) {
    for (int64_t d0 = i - 1, d1 = i; d0 >= 0; d0--) {
      int c = should_swap(perm[d0], perm[d1]);
      if (c < 0) break;
      if (c > 0) std::swap(perm[d0], perm[d1]), d1 = d0;
    }
  }
  bool natural = true;
  for (int64_t i = 0; i < nd; i++) natural = natural && perm[i] == nd - 1 - i;
  if (natural) return contiguous_strides(shape);
  Dims strides(nd);
  int64_t next = 1;
  for (int64_t d : perm) {
    strides[d] = next;
    next *= shape[d];  // TensorIterator does not clamp size-0 dims here
  }
  return strides;
}

namespace {

// TensorIterator's stride order for a new output: dims sorted by the inputs'
// strides (broadcast dims ignored), ties broken by size; contiguous when the
// inputs don't decide.
Dims strides_for(const Dims& shape, std::span<const Tensor> inputs) {
  bool same = true;
  for (const Tensor& t : inputs) same = same && t.sizes() == shape;
  if (same && inputs.size() > 0) {
    const Tensor& first = inputs.front();
    bool all_contig = true, all_same_dense = first.is_non_overlapping_and_dense();
    for (const Tensor& t : inputs) {
      all_contig = all_contig && t.is_contiguous();
      all_same_dense = all_same_dense && t.strides() == first.strides();
    }
    if (all_contig) return contiguous_strides(shape);
    if (all_same_dense) return first.strides();
  }
  std::vector<Dims> st;
  for (const Tensor& t : inputs) st.push_back(broadcast_strides(t, shape));
  return iterator_strides(shape, st);
}

// Overlap of two tensors' memory, as PyTorch's get_overlap_status.
enum class Overlap { No, Full, Partial, TooHard };
Overlap overlap(const Tensor& a, const Tensor& b) {
  if (a.storage() != b.storage() || a.numel() == 0 || b.numel() == 0) return Overlap::No;
  if (!a.is_non_overlapping_and_dense() || !b.is_non_overlapping_and_dense()) return Overlap::TooHard;
  auto span = [](const Tensor& t) {
    int64_t lo = t.offset(), hi = t.offset();
    for (int64_t d = 0; d < t.dim(); d++) hi += (t.sizes()[d] - 1) * t.strides()[d];
    return std::pair{lo, hi + 1};
  };
  auto [a0, a1] = span(a);
  auto [b0, b1] = span(b);
  if (a0 == b0 && a1 == b1 && a.strides() == b.strides()) return Overlap::Full;
  if (a0 < b1 && b0 < a1) return Overlap::Partial;
  return Overlap::No;
}

}  // namespace

bool has_internal_overlap(const Tensor& t) {
  if (t.numel() == 0) return false;  // as PyTorch: an empty tensor is contiguous
  for (int64_t d = 0; d < t.dim(); d++)
    if (t.strides()[d] == 0 && t.sizes()[d] > 1) return true;
  return false;
}

void check_inplace_write(const Tensor& out, std::initializer_list<Tensor> inputs) {
  if (has_internal_overlap(out))
    fail("unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
         "Please clone() the tensor before performing the operation.");
  for (const Tensor& in : inputs) {
    if (in.defined() && overlap(out, in) == Overlap::Partial)
      fail("unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
           "memory location. Please clone() the tensor before performing the operation.");
  }
}

void check_no_overlap(const Tensor& out, const Tensor& in) {
  const bool same = in.storage() == out.storage() && in.offset() == out.offset() && in.numel() > 0 &&
                    in.sizes() == out.sizes() && in.strides() == out.strides();
  const Overlap o = overlap(out, in);
  if (same || o == Overlap::Full || o == Overlap::Partial)
    fail("unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
         "memory location. Please clone() the tensor before performing the operation.");
}

Dims output_strides(const Dims& shape, std::span<const Tensor> inputs) { return strides_for(shape, inputs); }

namespace {
Dims output_strides(const Dims& shape, std::initializer_list<Tensor> inputs) {
  return strides_for(shape, std::span<const Tensor>(inputs.begin(), inputs.size()));
}
}  // namespace

Tensor elementwise_output(const Dims& shape, DType dtype, std::initializer_list<Tensor> inputs, const Tensor* out) {
  if (!out) return empty_strided(shape, output_strides(shape, inputs), dtype);
  if (out->sizes() != shape)
    fail("output with shape {} doesn't match the broadcast shape {}", dims_str(out->sizes()), dims_str(shape));
  if (!can_cast(dtype, out->dtype()))
    fail("result type {} can't be cast to the desired output type {}", dtype_torch_name(dtype),
         dtype_torch_name(out->dtype()));
  check_inplace_write(*out, inputs);
  if (out->dtype() != dtype) return empty_strided(shape, output_strides(shape, inputs), dtype);
  return *out;
}

Tensor finish_inplace(const Tensor& computed, const Tensor* out) {
  if (!out) return computed;
  if (out->storage() != computed.storage()) copy_into(*out, computed);
  return *out;
}

Tensor empty_like(const Tensor& t, std::optional<DType> dtype) {
  DType d = dtype.value_or(t.dtype());
  if (t.is_non_overlapping_and_dense()) return empty_strided(t.sizes(), t.strides(), d, t.device());
  return empty_strided(t.sizes(), output_strides(t.sizes(), {t}), d, t.device());
}

namespace {
// dst[i] = src[i] converted, over dst's shape (src already broadcast).
void cast_kernel(const Tensor& dst, const Tensor& src) {
  if (dst.device().type == DeviceType::CUDA || src.device().type == DeviceType::CUDA) {
    // The copy_ op on CUDA: a one-op fusion's kernel where the jit installed
    // its handler, else on host mirrors of the memory. A CPU value broadcast
    // (fill, setitem of a number) goes as the 0-dim tensor it is: a kernel
    // argument, not a host tensor the size of dst.
    const OpDef& copy = op_def(OpId::copy_);
    Tensor from = src.device().type == DeviceType::CPU && src.numel() > 0 && is_one_value(src) ? one_value(src) : src;
    call_bound(copy, Args(copy.schema, {IValue(dst), IValue(from)}, false));
    return;
  }
  dispatch_dtype(dst.dtype(), [&]<class D>() {
    dispatch_dtype(src.dtype(), [&]<class S>() {
      map_kernel<D, S>(dst, [](auto v) { return compute_t<D>(v); }, src);
    });
  });
}
}  // namespace

namespace {
// t's first element along each expanded (stride-0) dim: its distinct memory.
Tensor first_of_repeats(const Tensor& t, const Tensor& like) {
  Dims sizes = t.sizes();
  for (size_t d = 0; d < sizes.size(); d++)
    if (like.strides()[d] == 0) sizes[d] = std::min<int64_t>(sizes[d], 1);
  return t.as_strided(sizes, t.strides(), t.offset());
}
}  // namespace

void copy_into(const Tensor& dst, const Tensor& src, bool check_write) {
  Dims shape = broadcast_shapes(dst.sizes(), src.sizes());
  if (shape != dst.sizes())
    fail("output with shape {} doesn't match the broadcast shape {}", dims_str(dst.sizes()), dims_str(shape));
  if (check_write) check_inplace_write(dst, {src});
  else if (has_internal_overlap(dst))  // a value the same along the repeats: written once
    return copy_into(first_of_repeats(dst, dst), first_of_repeats(broadcast_to(src, dst.sizes()), dst), true);
  if (overlap(dst, src) == Overlap::Full && dst.dtype() == src.dtype()) return;
  Tensor s = broadcast_to(src, dst.sizes());
  if (overlap(dst, src) != Overlap::No) s = clone(s);  // TooHard: read from a copy
  cast_kernel(dst, s);
}

Tensor to_dtype(const Tensor& t, DType d) {
  if (t.dtype() == d) return t;
  Tensor out = empty_like(t, d);
  cast_kernel(out, t);
  return out;
}

Tensor contiguous(const Tensor& t) {
  if (t.is_contiguous()) return t;
  Tensor out = empty(t.sizes(), t.dtype(), t.device());
  cast_kernel(out, t);
  return out;
}

Tensor clone(const Tensor& t) {
  Tensor out = empty_like(t);
  cast_kernel(out, t);
  return out;
}

namespace {

// PyTorch's c10::overflows for a Python number stored as dtype d: an integer
// type must hold the value (never NaN); a float type any infinity or NaN and
// finite values within its range; bool and float64 hold anything.
template <class I> bool int_overflows(const Scalar& v) {
  using L = std::numeric_limits<I>;
  if (v.is_int()) return v.to_int() < int64_t(L::lowest()) || v.to_int() > int64_t(L::max());
  double f = v.to_double();
  return !(f >= double(L::lowest()) && f <= double(L::max()));
}
bool float_overflows(const Scalar& v, double max) {
  double f = v.to_double();
  return std::isfinite(f) && std::fabs(f) > max;
}
bool overflows(const Scalar& v, DType d) {
  if (v.is_bool()) return false;
  switch (d) {
    case DType::Int32: return int_overflows<int32_t>(v);
    case DType::Int64: return int_overflows<int64_t>(v);
    case DType::Float16: return float_overflows(v, 65504.0);
    case DType::BFloat16: return float_overflows(v, 3.3895313892515355e38);
    case DType::Float32: return float_overflows(v, std::numeric_limits<float>::max());
    default: return false;
  }
}

}  // namespace

void check_fits(const Scalar& v, DType d, std::string_view type_name) {
  if (overflows(v, d)) fail("value cannot be converted to type {} without overflow", type_name);
}

namespace {
// How PyTorch's fill_ names the C++ type in its overflow message.
std::string_view fill_type_name(DType d) {
  switch (d) {
    case DType::Int32: return "int";
    case DType::Int64: return "int64_t";
    case DType::Float16: return "at::Half";
    case DType::BFloat16: return "at::BFloat16";
    case DType::Float32: return "float";
    default: return "double";  // bool and float64 never overflow
  }
}

}  // namespace

void check_fits(const Scalar& v, DType d) { check_fits(v, d, fill_type_name(d)); }

// (No internal-overlap check: PyTorch fills an expanded tensor.)
void fill(const Tensor& dst, const Scalar& v) {
  if (is_meta(dst)) return;
  if (has_internal_overlap(dst)) return fill(first_of_repeats(dst, dst), v);
  Tensor s = scalar_tensor(v, dst.dtype());
  cast_kernel(dst, broadcast_to(s, dst.sizes()));
}

// ---- ops.def rows: Pointwise ----

namespace {

Dims broadcast_all(std::initializer_list<Tensor> ts) {
  Dims shape;
  for (const Tensor& t : ts)
    if (t.defined()) shape = broadcast_shapes(shape, t.sizes());
  return shape;
}

// Runs a same-dtype kernel over (self, others...) in `dtype`, into the
// in-place target when asked: the shared path of clamp, lerp, addcmul, addcdiv.
template <class Kernel>
Tensor pointwise(const Args& a, DType dtype, std::initializer_list<Tensor> ins, Kernel&& kernel) {
  Dims shape = broadcast_all(ins);
  const Tensor* out = a.target();
  Tensor o = elementwise_output(shape, dtype, ins, out);
  std::vector<Tensor> cast;
  for (const Tensor& t : ins) cast.push_back(to_dtype(t, dtype));
  kernel(o, cast);
  return finish_inplace(o, out);
}

}  // namespace

IValue op_where(const Args& a) {
  // where(condition) alone is nonzero(condition, as_tuple=True) (call_bound).
  if (a[1].is_none() || a[2].is_none())
    fail(ErrorKind::TypeError,
         "where() received an invalid combination of arguments: give the condition alone, or it with self and other");
  const Tensor &cond = a.tensor(0), &x = a.tensor(1), &y = a.tensor(2);
  if (cond.dtype() != DType::Bool)
    fail("where expected condition to be a boolean tensor, but got a tensor with dtype {}",
         dtype_torch_name(cond.dtype()));
  DType dt = result_type({x, y});
  for (const Tensor& t : {x, y})
    if (t.is_wrapped_number()) check_fits(t.item(), dt);
  Dims shape = broadcast_all({cond, x, y});
  Tensor o = elementwise_output(shape, dt, {cond, x, y}, a.target());
  Tensor xc = to_dtype(x, dt), yc = to_dtype(y, dt);
  dispatch_dtype(dt, [&]<class S>() {
    map_kernel<S, bool, S, S>(o, [](bool c, auto u, auto v) { return thn_where(c, u, v); }, cond, xc, yc);
  });
  return finish_inplace(o, a.target());
}

std::string_view cpp_type_name(DType d) {
  switch (d) {
    case DType::Bool: return "bool";
    case DType::Int32: return "int";
    case DType::Int64: return "long int";
    default: return dtype_torch_name(d);
  }
}

IValue op_clamp(const Args& a) {
  const Tensor& self = a.tensor(0);
  auto lo = a.opt_tensor(1), hi = a.opt_tensor(2);
  if (!lo && !hi) fail("torch.clamp: At least one of 'min' or 'max' must not be None");
  DType dt = result_type({self, lo.value_or(Tensor()), hi.value_or(Tensor())});
  if (a.inplace() && !can_cast(dt, self.dtype()))  // clamp_'s message names C++ types
    fail("result type {} can't be cast to the desired output type {}", dtype_torch_name(dt), cpp_type_name(self.dtype()));
  for (const auto& bound : {lo, hi})
    if (bound && bound->is_wrapped_number()) check_fits(bound->item(), dt);
  if (lo && hi) {
    return pointwise(a, dt, {self, *lo, *hi}, [](const Tensor& o, const std::vector<Tensor>& c) {
      dispatch_dtype(o.dtype(), [&]<class S>() {
        map_kernel<S, S, S, S>(o, [](auto x, auto l, auto h) { return thn_clamp(x, l, h); }, c[0], c[1], c[2]);
      });
    });
  }
  // One bound: a number bound that is NaN leaves the values as they are
  // (PyTorch 1.13's clamp_min/clamp_max with a scalar); a tensor's NaN spreads.
  const bool is_min = bool(lo), number = (is_min ? *lo : *hi).is_wrapped_number();
  return pointwise(a, dt, {self, is_min ? *lo : *hi}, [is_min, number](const Tensor& o, const std::vector<Tensor>& c) {
    dispatch_dtype(o.dtype(), [&]<class S>() {
      if (number && is_min) map_kernel<S, S, S>(o, [](auto x, auto l) { return thn_clamp_min_number(x, l); }, c[0], c[1]);
      else if (number) map_kernel<S, S, S>(o, [](auto x, auto h) { return thn_clamp_max_number(x, h); }, c[0], c[1]);
      else if (is_min) map_kernel<S, S, S>(o, [](auto x, auto l) { return thn_clamp_min(x, l); }, c[0], c[1]);
      else map_kernel<S, S, S>(o, [](auto x, auto h) { return thn_clamp_max(x, h); }, c[0], c[1]);
    });
  });
}

IValue op_lerp(const Args& a) {
  const Tensor &self = a.tensor(0), &end = a.tensor(1), &w = a.tensor(2);
  if (!is_floating(self.dtype())) not_implemented("lerp_kernel_scalar", self.dtype(), self.device(), "lerp_cuda");
  if (end.dtype() != self.dtype())
    fail("expected dtype {} for `end` but got dtype {}", dtype_torch_name(self.dtype()), dtype_torch_name(end.dtype()));
  // A number weight is taken in the computation dtype (float for float16
  // and bfloat16), not rounded to self's.
  const bool number = w.is_wrapped_number();
  return pointwise(a, self.dtype(), {self, end, w}, [&](const Tensor& o, const std::vector<Tensor>& c) {
    dispatch_floating(o.dtype(), [&]<class S>() {
      using C = compute_t<S>;
      if (number)
        map_kernel<S, S, S, C>(o, [](C x, C e, C t) { return thn_lerp(x, e, t); }, c[0], c[1],
                               to_dtype(w, dtype_of<C>()));
      else map_kernel<S, S, S, S>(o, [](auto x, auto e, auto t) { return thn_lerp(x, e, t); }, c[0], c[1], c[2]);
    });
  });
}

namespace {
IValue addc(const Args& a, bool divide) {
  const Tensor &self = a.tensor(0), &t1 = a.tensor(1), &t2 = a.tensor(2);
  Scalar value = a.scalar(3);
  DType dt = result_type({self, t1, t2});
  if (divide && is_integral(t1.dtype(), true) && is_integral(t2.dtype(), true))
    fail("Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a true "
         "division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * "
         "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
         "tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: (input + value * "
         "tensor1 / tensor2), for all dtypes.");
  return pointwise(a, dt, {self, t1, t2}, [&](const Tensor& o, const std::vector<Tensor>& c) {
    dispatch_dtype(o.dtype(), [&]<class S>() {
      using C = compute_t<S>;
      if constexpr (!std::is_same_v<S, bool>) {
        C v = value.to<C>();
        if (divide) map_kernel<S, S, S, S>(o, [v](C x, C p, C q) { return C(x + v * p / q); }, c[0], c[1], c[2]);
        else map_kernel<S, S, S, S>(o, [v](C x, C p, C q) { return thn_muladd(C(v * p), q, x); }, c[0], c[1], c[2]);
      } else {
        not_implemented(divide ? "addcdiv_cpu_out" : "addcmul_cpu_out", DType::Bool, self.device());
      }
    });
  });
}
}  // namespace

IValue op_addcmul(const Args& a) { return addc(a, false); }
IValue op_addcdiv(const Args& a) { return addc(a, true); }

// PyTorch's isclose: equal, both NaN (equal_nan), or a finite |self - other|
// within atol + |rtol * other|, each op rounded in the inputs' dtype as
// eager rounds it (bool inputs in the default float dtype).
IValue op_isclose(const Args& a) {
  const Tensor &self = a.tensor(0), &other = a.tensor(1);
  const double rtol = a.f64(2), atol = a.f64(3);
  if (self.dtype() != other.dtype())
    fail("{} did not match {}", dtype_torch_name(self.dtype()), dtype_torch_name(other.dtype()));
  THN_CHECK(rtol >= 0, "rtol must be greater than or equal to zero, but got {}", rtol);
  THN_CHECK(atol >= 0, "atol must be greater than or equal to zero, but got {}", atol);
  Tensor close = binary(OpId::eq, self, other);
  if (a.boolean(4) && is_floating(self.dtype()))
    close = binary(OpId::logical_or, close,
                   binary(OpId::logical_and, unary(OpId::isnan, self), unary(OpId::isnan, other)));
  if (rtol == 0 && atol == 0) return close;
  auto as_number = [](const Tensor& t) { return t.dtype() == DType::Bool ? to_dtype(t, kDefaultFloat) : t; };
  const Tensor s = as_number(self), o = as_number(other);
  Tensor allowed = binary(OpId::add, unary(OpId::abs, binary(OpId::mul, o, wrap_scalar(Scalar(rtol)))),
                          wrap_scalar(Scalar(atol)));
  Tensor actual = unary(OpId::abs, binary(OpId::sub, s, o));
  Tensor within = binary(OpId::logical_and, binary(OpId::le, actual, allowed),
                         unary(OpId::logical_not, unary(OpId::isinf, actual)));
  return binary(OpId::logical_or, close, within);
}

IValue op_masked_fill(const Args& a) {
  const Tensor &self = a.tensor(0), &mask = a.tensor(1), &value = a.tensor(2);
  if (value.dim() != 0)
    fail("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {} dimension(s).", value.dim());
  if (mask.dtype() != DType::Bool && mask.dtype() != DType::Int64 && mask.dtype() != DType::Int32)
    fail("masked_fill_ only supports boolean masks, but got mask with dtype {}", dtype_name(mask.dtype()));
  if (a.inplace() && broadcast_shapes(self.sizes(), mask.sizes()) != self.sizes())
    fail("output with shape {} doesn't match the broadcast shape {}", dims_str(self.sizes()),
         dims_str(broadcast_shapes(self.sizes(), mask.sizes())));
  Dims shape = broadcast_shapes(self.sizes(), mask.sizes());
  const Tensor* out = a.target();
  Tensor o = elementwise_output(shape, self.dtype(), {self, mask}, out);
  if (!is_meta(value)) check_fits(value.item(), self.dtype());
  Tensor v = to_dtype(value, self.dtype());
  Tensor m = to_dtype(mask, DType::Bool);
  dispatch_dtype(self.dtype(), [&]<class S>() {
    map_kernel<S, S, bool, S>(o, [](auto x, bool c, auto f) { return c ? f : x; }, self, m, v);
  });
  return finish_inplace(o, out);
}

IValue op_copy_(const Args& a) {
  copy_into(a.tensor(0), a.tensor(1));
  return a.tensor(0);
}

IValue op_fill_(const Args& a) {
  const Tensor& v = a.tensor(1);
  if (v.dim() != 0)
    fail("fill_ only supports 0-dimension value tensor but got tensor with {} dimensions.", v.dim());
  if (is_meta(v)) return a.tensor(0);  // a value computed while tracing (into a meta tensor too)
  check_fits(v.item(), a.tensor(0).dtype());
  fill(a.tensor(0), v.item());
  return a.tensor(0);
}

IValue op_zero_(const Args& a) {
  fill(a.tensor(0), Scalar(int64_t(0)));
  return a.tensor(0);
}

// ---- ops.def rows: Conversion ----

namespace {
Tensor convert(const Tensor& t, DType d, bool copy) { return copy && t.dtype() == d ? clone(t) : to_dtype(t, d); }
}  // namespace

IValue op_to(const Args& a) {
  const Tensor& self = a.tensor(0);
  std::optional<DType> dtype = a.opt_dtype(3);
  std::optional<Device> device = a.opt_device(4);
  for (size_t i : {1, 2}) {
    const IValue& v = a[i];
    if (v.is_dtype()) dtype = v.to_dtype();
    else if (v.is_device()) device = v.to_device();
    else if (v.is_tensor()) dtype = v.to_tensor().dtype(), device = v.to_tensor().device();  // x.to(other)
    else if (v.is_string()) device = parse_device(v.to_string());
    else if (!v.is_none()) fail(ErrorKind::TypeError, "to() received an invalid combination of arguments");
  }
  // Between devices the dtype changes on the host side; on one device it is
  // a kernel of that device.
  const DType d = dtype.value_or(self.dtype());
  const bool copy = a.boolean(5);
  if (!device || *device == self.device()) {
    return convert(self, d, copy);
  }
  if (device->type == DeviceType::CUDA) return cuda::to_device(convert(self, d, false), *device);
  return convert(cuda::to_device(self, *device), d, false);
}

IValue op_to_float(const Args& a) { return to_dtype(a.tensor(0), DType::Float32); }
IValue op_to_double(const Args& a) { return to_dtype(a.tensor(0), DType::Float64); }
IValue op_to_half(const Args& a) { return to_dtype(a.tensor(0), DType::Float16); }
IValue op_to_bfloat16(const Args& a) { return to_dtype(a.tensor(0), DType::BFloat16); }
IValue op_to_int(const Args& a) { return to_dtype(a.tensor(0), DType::Int32); }
IValue op_to_long(const Args& a) { return to_dtype(a.tensor(0), DType::Int64); }
IValue op_to_bool(const Args& a) { return to_dtype(a.tensor(0), DType::Bool); }

}  // namespace thn
