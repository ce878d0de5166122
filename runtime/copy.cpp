// Copies and gathers: every result is a new tensor (the in-place forms write
// into self), laid out as PyTorch 1.13 lays it out. Most ops are a strided
// view of the input copied with copy_into (on CUDA tensors a copy kernel);
// the index ops share one loop, which on CUDA tensors is a kernel of the
// backend's library (runtime/cuda.h), as is tril/triu's.
#include <algorithm>
#include <cstring>

#include "runtime/cuda.h"
#include "runtime/elementwise.h"
#include "runtime/error.h"
#include "runtime/index_walk.h"
#include "runtime/loops.h"
#include "runtime/scalar_math.h"
#include "runtime/views.h"

namespace thn {

namespace {

// A contiguous copy of t (PyTorch's clone(Contiguous)), for the out-of-place
// forms whose result is self modified.
Tensor contiguous_copy(const Tensor& t) {
  Tensor out = empty(t.sizes(), t.dtype(), t.device());
  copy_into(out, t);
  return out;
}

// PyTorch's ensure_nonempty_size/stride: a 0-dim tensor acts as one of shape [1].
int64_t size_or_1(const Tensor& t, int64_t dim) { return t.dim() == 0 ? 1 : t.sizes()[dim]; }
int64_t stride_or_1(const Tensor& t, int64_t dim) { return t.dim() == 0 ? 1 : t.strides()[dim]; }

// ---- cat, stack ----

// PyTorch's legacy rule: 1-D tensors of shape [0] take no part in cat.
bool cat_skips(const Tensor& t) { return t.dim() == 1 && t.sizes()[0] == 0; }

Tensor cat(const std::vector<Tensor>& ts, int64_t dim) {
  THN_CHECK(!ts.empty(), "torch.cat(): expected a non-empty list of Tensors");
  for (size_t i = 0; i < ts.size(); i++)
    THN_CHECK(ts[i].dim() > 0, "zero-dimensional tensor (at position {}) cannot be concatenated", i);
  auto first = std::find_if(ts.begin(), ts.end(), [](const Tensor& t) { return !cat_skips(t); });
  DType dtype = ts[0].dtype();
  Device device = kCPU;  // a CUDA one's, beside numbers on the CPU (is_one_value)
  for (const Tensor& t : ts) {
    dtype = promote_types(dtype, t.dtype());
    if (t.device().type == DeviceType::CUDA) device = t.device();
  }
  if (first == ts.end()) return empty({0}, dtype, device);
  dim = wrap_dim(dim, first->dim());
  Dims shape = first->sizes();
  shape[dim] = 0;
  for (size_t i = 0; i < ts.size(); i++) {
    const Tensor& t = ts[i];
    if (cat_skips(t)) continue;
    THN_CHECK(t.dim() == first->dim(), "Tensors must have same number of dimensions: got {} and {}", first->dim(),
              t.dim());
    for (int64_t d = 0; d < t.dim(); d++)
      THN_CHECK(d == dim || t.sizes()[d] == shape[d],
                "Sizes of tensors must match except in dimension {}. Expected size {} but got size {} for tensor "
                "number {} in the list.",
                dim, shape[d], t.sizes()[d], i);
    shape[dim] += t.sizes()[dim];
  }
  Tensor out = empty(shape, dtype, device);
  int64_t at = 0;
  for (const Tensor& t : ts) {
    if (cat_skips(t)) continue;
    copy_into(narrow(out, dim, at, t.sizes()[dim]), t);
    at += t.sizes()[dim];
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& ts, int64_t dim) {
  THN_CHECK(!ts.empty(), "stack expects a non-empty TensorList");
  dim = wrap_dim(dim, ts[0].dim() + 1);
  std::vector<Tensor> parts;
  for (size_t i = 0; i < ts.size(); i++) {
    THN_CHECK(ts[i].sizes() == ts[0].sizes(),
              "stack expects each tensor to be equal size, but got {} at entry 0 and {} at entry {}",
              dims_str(ts[0].sizes()), dims_str(ts[i].sizes()), i);
    parts.push_back(unsqueeze(ts[i], dim));
  }
  return cat(parts, dim);
}

// ---- the index ops ----

// Calls f(plain_element, indexed_element) (storage pointers) for every
// position, in memory order; index duplicates are visited in index order
// along each line, so accumulation is deterministic.
template <class S, class F>
void walk(const IndexedWalk& w, F&& f) {
  LoopShape<3> ls = plan_loop<3>(w.shape, {w.plain_strides, w.indexed_strides, w.index_strides});
  std::array<char*, 3> base = {static_cast<char*>(w.plain.raw_data()), static_cast<char*>(w.indexed.raw_data()),
                               static_cast<char*>(w.index.raw_data())};
  std::array<int64_t, 3> elem = {int64_t(sizeof(S)), int64_t(sizeof(S)), int64_t(sizeof(int64_t))};
  const int64_t dim_stride = w.indexed_dim_stride;
  for_each_row<3>(ls, base, elem, [&](std::array<char*, 3> p, int64_t n, const std::array<int64_t, 3>& st) {
    S* plain = reinterpret_cast<S*>(p[0]);
    S* indexed = reinterpret_cast<S*>(p[1]);
    const int64_t* idx = reinterpret_cast<const int64_t*>(p[2]);
    for (int64_t i = 0; i < n; i++) f(plain + i * st[0], indexed + i * st[1] + idx[i * st[2]] * dim_stride);
  });
}

using WalkKind = cuda::LineWalk::Kind;

// t on `device`: a CPU operand beside CUDA ones is a number (is_one_value).
Tensor on_device(const Tensor& t, Device device) { return t.device() == device ? t : cuda::to_device(t, device); }

// The walk as a CUDA library kernel: the positions off the indexed dim in
// parallel; a scatter's indexed dim is its serial dim, whose duplicate
// indices apply in index order, as on the CPU (backend/cuda_library.h).
void device_walk(const IndexedWalk& w, WalkKind kind, DType dtype, const Scalar& alpha) {
  const Device device = w.indexed.device();
  const Tensor plain = on_device(w.plain, device), index = on_device(w.index, device);
  std::array<Dims, 3> strides = {w.plain_strides, w.indexed_strides, w.index_strides};
  Dims shape = w.shape;
  int64_t serial = 1;
  std::array<int64_t, 3> serial_strides{};
  if (kind != WalkKind::Gather) {
    serial = shape[size_t(w.dim)];
    serial_strides = {strides[0][size_t(w.dim)], 0, strides[2][size_t(w.dim)]};
    shape.erase(shape.begin() + w.dim);
    for (Dims& s : strides) s.erase(s.begin() + w.dim);
  }
  cuda::LineWalk lw = cuda::plan_walk(kind, dtype, shape, strides);
  lw.serial = serial;
  lw.serial_strides = serial_strides;
  lw.alpha = alpha;
  lw.dim_stride = w.indexed_dim_stride;
  lw.plain = plain.device_address();
  lw.indexed = w.indexed.device_address();
  lw.index = index.device_address();
  cuda::launch_walk(lw);
}

template <class S>
void host_walk(const IndexedWalk& w, WalkKind kind, const Scalar& alpha) {
  switch (kind) {
    case WalkKind::Gather: return walk<S>(w, [](S* o, const S* in) { *o = *in; });
    case WalkKind::Scatter: return walk<S>(w, [](const S* src, S* dst) { *dst = *src; });
    case WalkKind::ScatterAdd: {
      using C = compute_t<S>;
      const C a = alpha.to<C>();
      return walk<S>(w, [a](const S* src, S* dst) { *dst = thn_index_add(*dst, *src, a); });
    }
    default: break;
  }
  throw std::logic_error("host_walk: not an index walk");
}

}  // namespace

void run_walk(const IndexedWalk& w, WalkKind kind, DType dtype, const Scalar& alpha) {
  if (numel_of(w.shape) == 0 || is_meta(w.plain) || is_meta(w.indexed)) return;
  if (w.indexed.device().type == DeviceType::CUDA) return device_walk(w, kind, dtype, alpha);
  dispatch_dtype(dtype, [&]<class S>() { host_walk<S>(w, kind, alpha); });
}

namespace {

// t's strides over a walk of `ndim` dims, with the indexed dim's stride set
// to `dim_stride` (a 0-dim t is walked as a broadcast scalar).
Dims walk_strides(const Tensor& t, size_t ndim, int64_t dim, int64_t dim_stride) {
  Dims s = t.dim() == 0 ? Dims(ndim, 0) : t.strides();
  if (!s.empty()) s[dim] = dim_stride;
  return s;
}

// The index as a contiguous int64 tensor, with every value checked against
// [0, size); on_bad(value) raises the op's error.
template <class OnBad>
Tensor checked_index(const Tensor& index, int64_t size, OnBad&& on_bad) {
  Tensor idx = contiguous(to_dtype(index, DType::Int64));
  if (is_meta(idx)) return idx;  // (checked when the trace runs)
  if (idx.device().type == DeviceType::CUDA) {
    if (std::optional<int64_t> bad = cuda::check_index({idx.device_address(), idx.numel(), size})) on_bad(*bad);
    return idx;
  }
  const int64_t* p = idx.data<int64_t>();
  for (int64_t i = 0; i < idx.numel(); i++)
    if (p[i] < 0 || p[i] >= size) on_bad(p[i]);
  return idx;
}

// A 1-D (or 0-dim) index walked along `dim` of a walk of `ndim` dims.
Dims index_vector_strides(const Tensor& idx, size_t ndim, int64_t dim) {
  Dims s(ndim, 0);
  if (ndim > 0 && idx.dim() == 1) s[dim] = idx.strides()[0];
  return s;
}

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  dim = wrap_dim(dim, self.dim());
  THN_CHECK(index.dim() <= 1, ErrorKind::IndexError, "index_select(): Index is supposed to be a vector");
  THN_CHECK(index.dtype() == DType::Int64 || index.dtype() == DType::Int32,
            "index_select(): Expected dtype int32 or int64 for index");
  const int64_t n = index.numel();
  Dims shape = self.sizes();
  if (self.dim() > 0) shape[dim] = n;
  Tensor out = empty(shape, self.dtype(), self.device());
  if (n == 0) return out;
  // A tensor of at most one dim is indexed by its element count. PyTorch's
  // kernel for dim 1 (and for an empty input) words the range error its own way.
  const int64_t size = self.dim() > 1 ? self.sizes()[dim] : self.numel();
  const bool dim1_kernel = self.dim() > 1 && (dim == 1 || self.numel() == 0);
  THN_CHECK(!(self.dim() > 1 && self.numel() == 0) || size > 0,
            "index_select(): self indexing axis dim should be positive");
  Tensor idx = checked_index(index, size, [&](int64_t v) {
    THN_CHECK(!dim1_kernel, "INDICES element is out of DATA bounds, id={} axis_dim={}", v, size);
    fail(ErrorKind::IndexError, "index out of range in self");
  });
  IndexedWalk w{shape, dim, out, out.strides(), self, walk_strides(self, shape.size(), dim, 0), stride_or_1(self, dim),
                idx, index_vector_strides(idx, shape.size(), dim)};
  run_walk(w, WalkKind::Gather, self.dtype());
  return out;
}

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index) {
  dim = wrap_dim(dim, self.dim());
  Tensor out = empty(index.sizes(), self.dtype(), self.device());
  THN_CHECK(index.dtype() == DType::Int64, "gather(): Expected dtype int64 for index");
  if (index.numel() == 0) return out;
  const int64_t ndim = std::max<int64_t>(self.dim(), 1);
  THN_CHECK(ndim == std::max<int64_t>(index.dim(), 1),
            "Index tensor must have the same number of dimensions as input tensor");
  for (int64_t d = 0; d < ndim; d++)
    THN_CHECK(d == dim || size_or_1(index, d) <= size_or_1(self, d),
              "Size does not match at dimension {} expected index {} to be smaller than self {} apart from "
              "dimension {}",
              d, dims_str(index.sizes()), dims_str(self.sizes()), dim);
  const int64_t size = size_or_1(self, dim);
  Tensor idx = checked_index(index, size, [&](int64_t v) {
    fail("index {} is out of bounds for dimension {} with size {}", v, dim, size);
  });
  const size_t nd = size_t(index.dim());
  IndexedWalk w{index.sizes(), dim, out, out.strides(), self, walk_strides(self, nd, dim, 0), stride_or_1(self, dim),
                idx, idx.strides()};
  run_walk(w, WalkKind::Gather, self.dtype());
  return out;
}

// The walk that scatters source's slices into `target` (self or its copy)
// at the indexed positions along dim; source_strides are over the walk.
IndexedWalk scatter_walk(const Tensor& target, int64_t dim, const Tensor& idx, const Tensor& source,
                         Dims source_strides) {
  Dims shape = target.dim() == 0 ? Dims{idx.numel()} : target.sizes();
  if (target.dim() > 0) shape[dim] = idx.numel();
  return IndexedWalk{shape, dim, source, std::move(source_strides), target,
                     walk_strides(target, shape.size(), dim, 0), stride_or_1(target, dim),
                     idx, index_vector_strides(idx, shape.size(), dim)};
}

void index_copy_into(const Tensor& target, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  const int64_t n = index.numel();
  THN_CHECK(index.dim() < 2, ErrorKind::IndexError, "index_copy_(): Index should have dimension 1 or 0 (got {})",
            index.dim());
  if (source.dim() == 0 && n != 1)
    fail(ErrorKind::IndexError, "index_copy_(): When source is scalar, index should have one element (got {})", n);
  if (source.dim() != self.dim() && source.dim() != 0 && self.dim() != 0)
    fail(ErrorKind::IndexError,
         "index_copy_(): When source and destination are not scalars, their dimensionality must match. Source "
         "dimensionality ({}), destination dimensionality ({})",
         source.dim(), self.dim());
  THN_CHECK(index.dtype() == DType::Int64, "index_copy_(): Expected a long tensor for index, but got {}",
            dtype_torch_name(index.dtype()));
  THN_CHECK(self.dtype() == source.dtype(),
            "index_copy_(): self and source expected to have the same dtype, but got (self) {} and (source) {}",
            dtype_torch_name(self.dtype()), dtype_torch_name(source.dtype()));
  auto slice = [dim](const Tensor& t) {
    Dims s = t.sizes();
    if (!s.empty()) s.erase(s.begin() + dim);
    return fmt::format("{}", fmt::join(s, " "));  // PyTorch prints the vectors space-separated
  };
  if (slice(self) != slice(source))
    fail("index_copy_(): Source/destination tensor must have same slice shapes. Destination slice shape: {} at "
         "dimension {} and source slice shape: {} at dimension 0.",
         slice(self), dim, slice(source));
  if (source.dim() > 0 && n != source.sizes()[dim])
    fail(ErrorKind::IndexError, "index_copy_(): Number of indices ({}) should be equal to source.size(dim) ({})", n,
         source.sizes()[dim]);
  const int64_t size = size_or_1(self, dim);
  Tensor idx = checked_index(index, size, [&](int64_t v) {
    fail(ErrorKind::IndexError, "index_copy_(): index {} is out of bounds for dimension {} with size {}", v, dim, size);
  });
  const size_t nd = size_t(std::max<int64_t>(target.dim(), 1));
  IndexedWalk w = scatter_walk(target, dim, idx, source, walk_strides(source, nd, dim, stride_or_1(source, dim)));
  run_walk(w, WalkKind::Scatter, self.dtype());
}

// index_add's source strides over the walk. PyTorch 1.13 adds each source
// slice into a self slice with add_'s broadcasting, so a source slice may
// broadcast to self's.
Dims index_add_source_strides(const Tensor& self, int64_t dim, const Tensor& source) {
  if (self.dim() <= 1) return Dims(std::max<int64_t>(self.dim(), 1), stride_or_1(source, dim));
  auto drop = [dim](Dims d) {
    if (!d.empty()) d.erase(d.begin() + dim);
    return d;
  };
  Dims self_slice = drop(self.sizes()), source_slice = drop(source.sizes());
  Dims shape = broadcast_shapes(self_slice, source_slice);
  THN_CHECK(shape == self_slice, "output with shape {} doesn't match the broadcast shape {}", dims_str(self_slice),
            dims_str(shape));
  Tensor src_slice = source.as_strided(source_slice, drop(source.strides()), source.offset());
  Dims s = broadcast_strides(src_slice, self_slice);
  s.insert(s.begin() + dim, stride_or_1(source, dim));
  return s;
}

void index_add_into(const Tensor& target, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                    const Scalar& alpha) {
  const int64_t n = index.numel();
  THN_CHECK(index.dim() <= 1, ErrorKind::IndexError,
            "index_add_(): Index is supposed to be a vector, but got dim: {} with type: {} and size: {}", index.dim(),
            dtype_torch_name(index.dtype()), dims_str(index.sizes()));
  THN_CHECK(index.dtype() == DType::Int64 || index.dtype() == DType::Int32,
            "index_add_(): Expected dtype int32/int64 for index but got: {}", dtype_torch_name(index.dtype()));
  THN_CHECK(self.dtype() == source.dtype(), "index_add_(): self ({}) and source ({}) must have the same scalar type",
            dtype_torch_name(self.dtype()), dtype_torch_name(source.dtype()));
  THN_CHECK(dim == 0 || dim < source.dim(),
            "index_add_(): Indexing dim {} is out of bounds of the source tensor with dim {}", dim, source.dim());
  if (n != size_or_1(source, dim)) {
    // PyTorch's message reads source.size(dim), which itself fails on a 0-dim source.
    THN_CHECK(source.dim() > 0, ErrorKind::IndexError, "Dimension specified as {} but tensor has no dimensions", dim);
    fail("index_add_(): Number of indices ({}) should be equal to source.size(dim): ({}), for dim: {}", n,
         source.sizes()[dim], dim);
  }
  THN_CHECK(self.dim() > 1 || source.dim() <= 1, "source.dim() ({}) must one or zero for given self.dim() ({})",
            source.dim(), self.dim());
  if (self.dim() > 1 && (n == 0 || self.numel() == 0)) return;
  Dims source_strides = index_add_source_strides(self, dim, source);
  int64_t size = self.dim() > 1 ? self.sizes()[dim] : self.numel();
  Tensor idx = checked_index(index, size, [](int64_t) { fail(ErrorKind::IndexError, "index out of range in self"); });
  IndexedWalk w = scatter_walk(target, dim, idx, source, std::move(source_strides));
  run_walk(w, WalkKind::ScatterAdd, self.dtype(), alpha);
}

// ---- scatter, scatter_add ----

// src's elements (or one number) at index's positions, written (or added)
// into target at the same positions but for dim, where index's value
// applies. PyTorch 1.13's checks, in its order.
void scatter_into(const Tensor& target, const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src,
                  const std::optional<Scalar>& value, WalkKind kind) {
  THN_CHECK(index.dtype() == DType::Int64, "scatter(): Expected dtype int64 for index");
  THN_CHECK(!src || self.dtype() == src->dtype(), "scatter(): Expected self.dtype to be equal to src.dtype");
  if (index.numel() == 0) return;
  const int64_t ndim = std::max<int64_t>(self.dim(), 1);
  THN_CHECK(ndim == std::max<int64_t>(index.dim(), 1),
            "Index tensor must have the same number of dimensions as self tensor");
  bool wrong = false;
  for (int64_t d = 0; d < ndim && !wrong; d++) wrong = d != dim && size_or_1(index, d) > size_or_1(self, d);
  for (int64_t d = 0; src && d < ndim && !wrong; d++) {
    if (src->dim() > 0 && d >= src->dim())  // PyTorch reads src.size(d)
      fail(ErrorKind::IndexError, "Dimension out of range (expected to be in range of [{}, {}], but got {})",
           -src->dim(), src->dim() - 1, d);
    wrong = size_or_1(index, d) > size_or_1(*src, d);
  }
  if (src)
    THN_CHECK(!wrong, "Expected index {} to be smaller than self {} apart from dimension {} and to be smaller size than src {}",
              dims_str(index.sizes()), dims_str(self.sizes()), dim, dims_str(src->sizes()));
  THN_CHECK(!wrong, "Expected index {} to be smaller than self {} apart from dimension {}", dims_str(index.sizes()),
            dims_str(self.sizes()), dim);
  THN_CHECK(!src || std::max<int64_t>(src->dim(), 1) == ndim,
            "Index tensor must have the same number of dimensions as src tensor");
  if (value) check_fits(*value, self.dtype());
  const int64_t size = size_or_1(self, dim);
  Tensor idx = checked_index(index, size, [&](int64_t v) {
    fail("index {} is out of bounds for dimension {} with size {}", v, dim, size);
  });
  const size_t nd = size_t(ndim);
  const Tensor plain = src ? *src : scalar_tensor(*value, self.dtype());
  IndexedWalk w{index.dim() == 0 ? Dims{1} : index.sizes(), dim, plain, walk_strides(plain, nd, dim, stride_or_1(plain, dim)),
                target, walk_strides(target, nd, dim, 0), stride_or_1(target, dim),
                idx, walk_strides(idx, nd, dim, stride_or_1(idx, dim))};
  if (!src) w.plain_strides.assign(nd, 0);
  run_walk(w, kind, self.dtype());
}

// ---- masked_select, nonzero ----

Tensor masked_select(const Tensor& self, const Tensor& mask) {
  THN_CHECK(mask.dtype() == DType::Bool, "masked_select: expected BoolTensor or ByteTensor for mask");
  Dims shape = broadcast_shapes(mask.sizes(), self.sizes());
  // The selection follows the logical (row-major) order, so both operands are
  // made contiguous in that order first.
  Tensor m = contiguous(broadcast_to(mask, shape)), x = contiguous(broadcast_to(self, shape));
  const bool* mp = m.data<bool>();
  const int64_t total = m.numel();
  Tensor out = empty({int64_t(std::count(mp, mp + total, true))}, self.dtype());
  dispatch_dtype(self.dtype(), [&]<class S>() {
    const S* xp = x.data<S>();
    S* op = out.data<S>();
    for (int64_t i = 0; i < total; i++)
      if (mp[i]) *op++ = xp[i];
  });
  return out;
}

Tensor nonzero(const Tensor& self) {
  Tensor x = contiguous(self);
  const int64_t total = x.numel(), nd = x.dim();
  std::vector<bool> nz(size_t(total), false);
  dispatch_dtype(x.dtype(), [&]<class S>() {
    const S* p = x.data<S>();
    for (int64_t i = 0; i < total; i++) nz[size_t(i)] = compute_t<S>(p[i]) != compute_t<S>(0);
  });
  const int64_t n = std::count(nz.begin(), nz.end(), true);
  // PyTorch's CPU nonzero writes the [n, ndim] result column-major.
  Tensor out = empty_strided({n, nd}, {1, n}, DType::Int64);
  int64_t* op = out.data<int64_t>();
  Dims coord(size_t(nd), 0);
  for (int64_t i = 0, row = 0; i < total; i++) {
    if (nz[size_t(i)]) {
      for (int64_t d = 0; d < nd; d++) op[row + d * n] = coord[d];
      row++;
    }
    for (int64_t d = nd - 1; d >= 0 && ++coord[d] == x.sizes()[d]; d--) coord[d] = 0;
  }
  return out;
}

// ---- tril, triu, flip, roll, repeat ----

// Zeroes the part of t's matrices that tril (lower) or triu does not keep.
void zero_triangle(const Tensor& t, int64_t diagonal, bool lower) {
  const int64_t rows = t.sizes()[t.dim() - 2], cols = t.sizes()[t.dim() - 1];
  if (t.device().type == DeviceType::CUDA) {  // the backend's library kernel, a thread per row
    if (t.numel() == 0) return;
    const size_t nd = size_t(t.dim()) - 1;
    cuda::LineWalk w;
    w.kind = lower ? WalkKind::ZeroAbove : WalkKind::ZeroBelow;
    w.dtype = t.dtype();
    w.shape = Dims(t.sizes().begin(), t.sizes().begin() + nd);
    w.strides = {Dims(nd, 0), Dims(t.strides().begin(), t.strides().begin() + nd), Dims(nd, 0)};
    w.serial = cols;
    w.serial_strides = {0, t.strides()[nd], 0};
    w.plain = w.indexed = t.device_address();
    w.diagonal = diagonal;
    cuda::launch_walk(w);
    return;
  }
  // Host: every dtype's zero is all bits clear; matrix by matrix (an
  // odometer over the leading dims), row by row.
  if (t.numel() == 0 || is_meta(t)) return;
  const size_t lead = size_t(t.dim()) - 2;
  const int64_t size = itemsize(t.dtype()), rs = t.strides()[lead] * size, cs = t.strides()[lead + 1] * size;
  Dims at(lead, 0);
  char* m = static_cast<char*>(t.raw_data());
  while (true) {
    for (int64_t i = 0; i < rows; i++) {
      // tril keeps columns j <= i + diagonal, triu keeps j >= i + diagonal.
      int64_t edge = std::clamp(i + diagonal + (lower ? 1 : 0), int64_t(0), cols);
      int64_t start = lower ? edge : 0, stop = lower ? cols : edge;
      if (cs == size && start < stop) std::memset(m + i * rs + start * cs, 0, size_t((stop - start) * size));
      else
        for (int64_t j = start; j < stop; j++) std::memset(m + i * rs + j * cs, 0, size_t(size));
    }
    size_t d = lead;
    for (; d > 0; d--) {
      m += t.strides()[d - 1] * size;
      if (++at[d - 1] < t.sizes()[d - 1]) break;
      m -= t.strides()[d - 1] * size * t.sizes()[d - 1];
      at[d - 1] = 0;
    }
    if (d == 0) return;
  }
}

// PyTorch 1.13's tril_/triu_ make no overlap check, so neither does this.
Tensor triangle(const Args& a, bool lower) {
  const Tensor& self = a.tensor(0);
  wrap_dim(-2, self.dim());  // PyTorch's error for fewer than two dims
  Tensor out = a.inplace() ? self : contiguous_copy(self);
  zero_triangle(out, a.i64(1), lower);
  return out;
}

Tensor flip(const Tensor& self, const Dims& dims) {
  std::vector<bool> flipped(size_t(self.dim()), false);
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, self.dim());
    if (self.dim() == 0) continue;  // nothing to reverse
    THN_CHECK(!flipped[w], "dim {} appears multiple times in the list of dims", w);
    flipped[w] = true;
  }
  // Reading through negated strides reverses the flipped dims.
  Dims strides = self.strides();
  int64_t offset = self.offset();
  for (int64_t d = 0; d < self.dim(); d++) {
    if (!flipped[d] || self.sizes()[d] == 0) continue;
    offset += (self.sizes()[d] - 1) * strides[d];
    strides[d] = -strides[d];
  }
  Tensor out = empty_like(self);
  copy_into(out, self.as_strided(self.sizes(), strides, offset));
  return out;
}

Tensor roll(const Tensor& self, const Dims& shifts, const Dims& dims) {
  if (shifts.size() == 1 && dims.size() == 1) {
    if (self.numel() == 0) return clone(self);
    THN_CHECK(self.dim() > 0, ErrorKind::IndexError, "Dimension specified as {} but tensor has no dimensions", dims[0]);
    const int64_t dim = wrap_dim(dims[0], self.dim()), size = self.sizes()[dim];
    const int64_t start = ((size - shifts[0]) % size + size) % size;
    return cat({narrow(self, dim, start, size - start), narrow(self, dim, 0, start)}, dim);
  }
  THN_CHECK(!shifts.empty(), "`shifts` required");
  if (dims.empty() && shifts.size() == 1)
    return view(roll(view(contiguous(self), {self.numel()}), shifts, {0}), self.sizes());
  THN_CHECK(shifts.size() == dims.size(), "shifts and dimensions must align. shifts: {}, dims:{}", shifts.size(),
            dims.size());
  Tensor out = self;
  for (size_t i = 0; i < dims.size(); i++) out = roll(out, {shifts[i]}, {dims[i]});
  return out;
}

Tensor repeat(const Tensor& self, const Dims& repeats) {
  const int64_t nr = int64_t(repeats.size()), lead = nr - self.dim();
  THN_CHECK(lead >= 0, "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  // self with a leading size-1 dim for every extra repeat
  Dims in_sizes(size_t(lead), 1), in_strides(size_t(lead), 0);
  in_sizes.insert(in_sizes.end(), self.sizes().begin(), self.sizes().end());
  in_strides.insert(in_strides.end(), self.strides().begin(), self.strides().end());
  Dims shape;
  for (int64_t d = 0; d < nr; d++) {
    int64_t n = 0;
    THN_CHECK(!__builtin_mul_overflow(repeats[d], in_sizes[d], &n), "Storage size calculation overflowed with repeats={}",
              dims_str(repeats));
    shape.push_back(n);
  }
  Tensor out = empty(shape, self.dtype(), self.device());
  if (out.numel() == 0) return out;  // the view below would have stride 0 along a repeat
  // out viewed as [r0, s0, r1, s1, ...]; self is read with stride 0 along each r.
  Dims sizes, out_strides, self_strides;
  for (int64_t d = 0; d < nr; d++) {
    sizes.insert(sizes.end(), {repeats[d], in_sizes[d]});
    out_strides.insert(out_strides.end(), {in_sizes[d] * out.strides()[d], out.strides()[d]});
    self_strides.insert(self_strides.end(), {0, in_strides[d]});
  }
  copy_into(out.as_strided(sizes, out_strides, 0), self.as_strided(sizes, self_strides, self.offset()));
  return out;
}

}  // namespace

IValue op_clone(const Args& a) { return clone(a.tensor(0)); }
IValue op_contiguous(const Args& a) { return contiguous(a.tensor(0)); }
IValue op_cat(const Args& a) { return cat(a.tensors(0), a.i64(1)); }
IValue op_stack(const Args& a) { return stack(a.tensors(0), a.i64(1)); }
IValue op_index_select(const Args& a) { return index_select(a.tensor(0), a.i64(1), a.tensor(2)); }
IValue op_gather(const Args& a) { return gather(a.tensor(0), a.i64(1), a.tensor(2)); }

namespace {
// Where index_copy/index_add write: self for the in-place form, after
// PyTorch's assert_no_internal_overlap and assert_no_overlap (which, unlike
// an elementwise op, rejects a source that is self itself); else a
// contiguous copy of self.
Tensor scatter_target(const Args& a, const Tensor& self, std::initializer_list<Tensor> read) {
  if (!a.inplace()) return contiguous_copy(self);
  check_inplace_write(self, read);
  for (const Tensor& source : read) check_no_overlap(self, source);
  return self;
}
}  // namespace

IValue op_index_copy(const Args& a) {
  const Tensor &self = a.tensor(0), &source = a.tensor(3);
  const int64_t dim = wrap_dim(a.i64(1), self.dim());
  Tensor target = scatter_target(a, self, {source});
  index_copy_into(target, self, dim, a.tensor(2), source);
  return target;
}

IValue op_index_add(const Args& a) {
  const Tensor &self = a.tensor(0), &source = a.tensor(3);
  const int64_t dim = wrap_dim(a.i64(1), self.dim());
  Tensor target = scatter_target(a, self, {source});
  index_add_into(target, self, dim, a.tensor(2), source, a.scalar(4));
  return target;
}

// scatter(self, dim, index, src) or (self, dim, index, value): src a
// tensor or a number, value= a number; exactly one of them.
IValue op_scatter(const Args& a) {
  const Tensor& self = a.tensor(0);
  const int64_t dim = wrap_dim(a.i64(1), self.dim());
  const std::optional<Tensor> src = a.opt_tensor(3);
  std::optional<Scalar> value = a.opt_scalar(4);
  THN_CHECK(src.has_value() != value.has_value(), ErrorKind::TypeError,
            "scatter() takes a tensor src or a number value, but got {}", src ? "both" : "neither");
  const bool number = src && src->is_wrapped_number();
  if (number) value = src->item();
  const Tensor* source = src && !number ? &*src : nullptr;
  const Tensor& index = a.tensor(2);
  Tensor target = scatter_target(a, self, {source ? *source : index, index});
  scatter_into(target, self, dim, index, source, value, WalkKind::Scatter);
  return target;
}

IValue op_scatter_add(const Args& a) {
  const Tensor &self = a.tensor(0), &src = a.tensor(3);
  const int64_t dim = wrap_dim(a.i64(1), self.dim());
  Tensor target = scatter_target(a, self, {src, a.tensor(2)});
  scatter_into(target, self, dim, a.tensor(2), &src, std::nullopt, WalkKind::ScatterAdd);
  return target;
}

IValue op_masked_select(const Args& a) { return masked_select(a.tensor(0), a.tensor(1)); }
IValue op_nonzero(const Args& a) {
  const Tensor& x = a.tensor(0);
  if (!a.boolean(1)) return nonzero(x);
  // as_tuple: one index tensor per dim (a 0-dim tensor counts as 1-dim).
  Tensor n = nonzero(x.dim() == 0 ? view(x, {1}) : x);
  std::vector<IValue> indices;
  for (int64_t d = 0; d < n.size(1); d++) indices.push_back(IValue(select(n, 1, d)));
  return IValue::tuple(std::move(indices));
}
IValue op_tril(const Args& a) { return triangle(a, true); }
IValue op_triu(const Args& a) { return triangle(a, false); }
IValue op_flip(const Args& a) { return flip(a.tensor(0), a.dims(1)); }
IValue op_roll(const Args& a) { return roll(a.tensor(0), a.dims(1), a.opt_dims(2).value_or(Dims{})); }
IValue op_repeat(const Args& a) { return repeat(a.tensor(0), a.dims(1)); }

}  // namespace thn
