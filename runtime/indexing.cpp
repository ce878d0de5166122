// Python indexing, following PyTorch 1.13's applySlicing (basic indexing as
// views), make_info/AdvancedIndex (tensor indices) and the index/index_put_
// kernels (gathers and scatters of blocks of the non-indexed dims).
#include "runtime/indexing.h"

#include <algorithm>

#include "runtime/cuda.h"
#include "runtime/elementwise.h"
#include "runtime/error.h"
#include "runtime/index_walk.h"
#include "runtime/loops.h"
#include "runtime/views.h"

namespace thn {

namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;  // clang 14 has no aggregate deduction (the libFuzzer build)

// ---- basic indexing ----

Tensor apply_select(const Tensor& t, int64_t dim, int64_t index, int64_t real_dim) {
  if (t.dim() == 0) {
    THN_CHECK(index != 0, ErrorKind::IndexError,
              "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert "
              "a 0-dim tensor to a number");
    fail(ErrorKind::IndexError, "index {} is out of bounds for dimension {} with size 0", index, real_dim);
  }
  int64_t size = t.sizes()[dim];
  if (index < -size || index >= size)
    fail(ErrorKind::IndexError, "index {} is out of bounds for dimension {} with size {}", index, real_dim, size);
  return select(t, dim, index);
}

// Python slice semantics for a positive step; out-of-range bounds clamp.
Tensor apply_slice(const Tensor& t, int64_t dim, const Slice& s) {
  int64_t step = s.step.value_or(1);
  THN_CHECK(step != 0, ErrorKind::ValueError, "slice step cannot be zero");
  THN_CHECK(step > 0, ErrorKind::ValueError, "step must be greater than zero");
  int64_t size = t.sizes()[dim];
  auto wrap = [&](int64_t v, int64_t lo) { return std::clamp(v < 0 ? v + size : v, lo, size); };
  int64_t start = wrap(s.start.value_or(0), 0);
  int64_t stop = wrap(s.stop.value_or(size), start);
  Dims sizes = t.sizes(), strides = t.strides();
  sizes[dim] = (stop - start + step - 1) / step;
  strides[dim] *= step;
  return t.as_strided(std::move(sizes), std::move(strides), t.offset() + start * t.strides()[dim]);
}

// x[True] indexes a new size-1 dim with [0], x[False] with [].
Tensor bool_index(bool b) {
  Tensor t = empty({b ? 1 : 0}, DType::Int64);
  if (b && !is_meta(t)) *t.data<int64_t>() = 0;
  return t;
}

bool is_integral_0dim(const Tensor& t) { return t.dim() == 0 && is_integral(t.dtype(), /*include_bool=*/true); }

// Dims of self that idx consumes (None, ..., bools: none; a mask: its dims).
int64_t count_specified_dims(const std::vector<TensorIndex>& idx) {
  int64_t n = 0;
  for (const TensorIndex& i : idx) {
    if (std::holds_alternative<int64_t>(i.value) || std::holds_alternative<Slice>(i.value)) n++;
    if (const Tensor* t = std::get_if<Tensor>(&i.value)) n += t->dtype() == DType::Bool ? t->dim() : 1;
  }
  return n;
}

// The view that basic indexing leaves, and the tensor indices of advanced
// indexing, each at the dim of the view it indexes (undefined: not indexed).
struct Sliced {
  Tensor view;
  std::vector<Tensor> indices;
};

Sliced apply_slicing(const Tensor& self, const std::vector<TensorIndex>& idx) {
  if (idx.size() == 1 && std::holds_alternative<int64_t>(idx[0].value))
    return {apply_select(self, 0, std::get<int64_t>(idx[0].value), 0), {}};
  int64_t specified = count_specified_dims(idx);
  THN_CHECK(specified <= self.dim(), ErrorKind::IndexError, "too many indices for tensor of dimension {}", self.dim());
  Sliced r{self, {}};
  int64_t dim = 0;
  auto record = [&](const Tensor& t) {
    r.indices.resize(dim + 1);
    r.indices[dim++] = t;
  };
  auto add_bool_dim = [&](bool b) {
    r.view = unsqueeze(r.view, dim);
    record(bool_index(b));
  };
  for (size_t i = 0; i < idx.size(); i++) {
    std::visit(Overloaded{
                   [&](int64_t n) { r.view = apply_select(r.view, dim, n, int64_t(i)); },
                   [&](const Slice& s) { r.view = apply_slice(r.view, dim++, s); },
                   [&](Ellipsis) { dim += self.dim() - specified; },
                   [&](NewAxis) { r.view = unsqueeze(r.view, dim++); },
                   [&](bool b) { add_bool_dim(b); },
                   [&](const Tensor& t) {
                     if (!is_integral_0dim(t)) return record(t);
                     if (t.dtype() == DType::Bool) return add_bool_dim(t.item().to_bool());
                     r.view = apply_select(r.view, dim, t.item().to_int(), int64_t(i));
                   },
               },
               idx[i].value);
  }
  return r;
}

// ---- advanced indexing ----

// Row-major coordinates of the true elements: an int64 [n, mask.dim()] tensor.
Tensor nonzero(const Tensor& mask) {
  Tensor m = contiguous(mask);
  const bool* p = m.data<bool>();
  int64_t n = m.numel(), nd = m.dim(), count = std::count(p, p + n, true);
  Tensor out = empty({count, nd}, DType::Int64);
  int64_t* o = out.data<int64_t>();
  Dims coord(nd, 0);
  for (int64_t i = 0; i < n; i++) {
    if (p[i]) o = std::copy(coord.begin(), coord.end(), o);
    for (int64_t d = nd - 1; d >= 0 && ++coord[d] == m.sizes()[d]; d--) coord[d] = 0;
  }
  return out;
}

// Masks become one int64 index per mask dim (PyTorch's expandTensors).
std::vector<Tensor> expand_masks(const Tensor& self, const std::vector<Tensor>& indices) {
  std::vector<Tensor> out;
  for (const Tensor& index : indices) {
    if (!index.defined() || index.dtype() != DType::Bool) {
      out.push_back(index);
      continue;
    }
    for (int64_t j = 0; j < index.dim(); j++) {
      int64_t src = int64_t(out.size()) + j;
      if (index.sizes()[j] != self.size(src))
        fail(ErrorKind::IndexError,
             "The shape of the mask {} at index {} does not match the shape of the indexed tensor {} at index {}",
             dims_str(index.sizes()), j, dims_str(self.sizes()), src);
    }
    Tensor nz = nonzero(index);
    for (int64_t j = 0; j < index.dim(); j++) out.push_back(select(nz, 1, j));
  }
  return out;
}

Dims broadcast_indices(const std::vector<Tensor>& indices) {
  Dims shape;
  std::vector<std::string> shapes;
  for (const Tensor& t : indices) {
    if (t.defined()) shapes.push_back(dims_str(t.sizes()));
  }
  try {
    for (const Tensor& t : indices)
      if (t.defined()) shape = broadcast_shapes(shape, t.sizes());
  } catch (const Error&) {
    fail(ErrorKind::IndexError, "shape mismatch: indexing tensors could not be broadcast together with shapes {}",
         fmt::join(shapes, ", "));
  }
  return shape;
}

// Element offsets of a block of dims (sizes, strides), in row-major order.
std::vector<int64_t> block_offsets(const Dims& sizes, const Dims& strides) {
  std::vector<int64_t> out(numel_of(sizes));
  Dims coord(sizes.size(), 0);
  int64_t off = 0;
  for (int64_t& o : out) {
    o = off;
    for (int64_t d = int64_t(sizes.size()) - 1; d >= 0; d--) {
      off += strides[d];
      if (++coord[d] < sizes[d]) break;
      off -= strides[d] * sizes[d];
      coord[d] = 0;
    }
  }
  return out;
}

Dims erase_range(Dims d, int64_t begin, int64_t end) {
  d.erase(d.begin() + begin, d.begin() + end);
  return d;
}


// PyTorch's AdvancedIndex: src with its indexed dims adjacent (moved to the
// front when the tensor indices were separated), the int64 indices broadcast
// to index_shape, which replaces the indexed dims in the result.
struct AdvancedIndex {
  Tensor src;
  int64_t first = 0;  // the first indexed dim of src
  std::vector<Tensor> indices;
  Dims index_shape;

  int64_t last() const { return first + int64_t(indices.size()); }
  Dims result_shape() const {
    Dims s = erase_range(src.sizes(), first, last());
    s.insert(s.begin() + first, index_shape.begin(), index_shape.end());
    return s;
  }
  // Splits t (of the result's shape) into the view of its non-indexed dims and
  // the offset of each index position within it.
  std::pair<Tensor, std::vector<int64_t>> split_result(const Tensor& t) const {
    int64_t end = first + int64_t(index_shape.size());
    Dims block(t.strides().begin() + first, t.strides().begin() + end);
    Tensor rest = t.as_strided(erase_range(t.sizes(), first, end), erase_range(t.strides(), first, end), t.offset());
    return {rest, block_offsets(index_shape, block)};
  }
  // The same split of src: the index values, bounds-checked, become offsets.
  std::pair<Tensor, std::vector<int64_t>> split_src() const {
    Tensor rest = src.as_strided(erase_range(src.sizes(), first, last()), erase_range(src.strides(), first, last()),
                                 src.offset());
    std::vector<int64_t> offsets(numel_of(index_shape), 0);
    for (size_t j = 0; j < indices.size(); j++) {
      int64_t size = src.sizes()[first + j], stride = src.strides()[first + j];
      const int64_t* base = indices[j].data<int64_t>();
      std::vector<int64_t> at = block_offsets(index_shape, indices[j].strides());
      for (size_t p = 0; p < offsets.size(); p++) {
        int64_t v = base[at[p]];
        if (v < -size || v >= size)
          fail(ErrorKind::IndexError, "index {} is out of bounds for dimension {} with size {}", v, j, size);
        offsets[p] += (v < 0 ? v + size : v) * stride;
      }
    }
    return {rest, offsets};
  }
  // The layout TensorIterator gives index()'s output, from src restrided to
  // the result's shape and each index reshaped to it (reshape_indexer).
  Dims output_strides() const {
    Dims shape = result_shape();
    int64_t after = src.dim() - last();
    Dims src_strides = erase_range(src.strides(), first, last());
    src_strides.insert(src_strides.begin() + first, index_shape.size(), 0);
    std::vector<Dims> operands{src_strides};
    for (const Tensor& index : indices) {
      Dims view_shape(first, 1);
      view_shape.insert(view_shape.end(), index_shape.begin(), index_shape.end());
      view_shape.insert(view_shape.end(), after, 1);
      Dims s = *view_strides(index, view_shape);
      for (size_t d = 0; d < s.size(); d++)
        if (view_shape[d] == 1 && shape[d] != 1) s[d] = 0;
      operands.push_back(s);
    }
    return iterator_strides(shape, operands);
  }
};

AdvancedIndex make_info(const Tensor& self, const std::vector<Tensor>& given) {
  for (const Tensor& t : given)
    THN_CHECK(!t.defined() || t.dtype() == DType::Int64 || t.dtype() == DType::Bool, ErrorKind::IndexError,
              "tensors used as indices must be long, byte or bool tensors");
  std::vector<Tensor> indices = expand_masks(self, given);
  Dims index_shape = broadcast_indices(indices);
  indices.resize(self.dim());
  // Indexed dims separated by a non-indexed one move to the front, in order.
  Dims order;
  for (int pass = 0; pass < 2; pass++)
    for (int64_t d = 0; d < self.dim(); d++)
      if (indices[d].defined() == (pass == 0)) order.push_back(d);
  auto defined = [](const Tensor& t) { return t.defined(); };
  auto first = std::find_if(indices.begin(), indices.end(), defined);
  auto last = std::find_if(indices.rbegin(), indices.rend(), defined).base();
  bool adjacent = std::all_of(first, last, defined);

  AdvancedIndex info;
  info.index_shape = index_shape;
  info.src = adjacent ? self : permute(self, order);
  info.first = adjacent ? first - indices.begin() : 0;
  for (const Tensor& t : indices)
    if (t.defined()) info.indices.push_back(expand(t, index_shape));
  bool empty_dim = false;
  for (int64_t d = info.first; d < info.last(); d++) empty_dim = empty_dim || info.src.sizes()[d] == 0;
  THN_CHECK(!empty_dim || numel_of(index_shape) == 0, ErrorKind::IndexError,
            "index is out of bounds for dimension with size 0");
  return info;
}

// For each index position p, copies the block of non-indexed dims at
// src_off[p] in src to dst_off[p] in dst (same dtype, same block shape).
void copy_blocks(const Tensor& dst, const std::vector<int64_t>& dst_off, const Tensor& src,
                 const std::vector<int64_t>& src_off) {
  dispatch_dtype(dst.dtype(), [&]<class S>() {
    S* d = dst.data<S>();
    const S* s = src.data<S>();
    if (dst.numel() == 1) {  // no non-indexed dims: one element per position
      for (size_t p = 0; p < dst_off.size(); p++) d[dst_off[p]] = s[src_off[p]];
      return;
    }
    LoopShape<2> ls = plan_loop<2>(dst.sizes(), {dst.strides(), src.strides()});
    for (size_t p = 0; p < dst_off.size(); p++) {
      std::array<char*, 2> base{reinterpret_cast<char*>(d + dst_off[p]),
                                reinterpret_cast<char*>(const_cast<S*>(s + src_off[p]))};
      for_each_row<2>(ls, base, {int64_t(sizeof(S)), int64_t(sizeof(S))},
                      [](std::array<char*, 2> ptr, int64_t n, const std::array<int64_t, 2>& st) {
                        S* o = reinterpret_cast<S*>(ptr[0]);
                        const S* i = reinterpret_cast<const S*>(ptr[1]);
                        for (int64_t k = 0; k < n; k++) o[k * st[0]] = i[k * st[1]];
                      });
    }
  });
}

Dims strip_leading_ones(const Dims& sizes) {
  auto it = std::find_if(sizes.begin(), sizes.end(), [](int64_t s) { return s != 1; });
  return Dims(it, sizes.end());
}

// PyTorch's copy_to: the value of a basic-indexing assignment.
void copy_to(const Tensor& dst, const Tensor& src) {
  if (dst.sizes() == src.sizes()) return copy_into(dst, src);
  if (src.dim() == 0) return is_meta(dst) ? void() : fill(dst, src.item());
  copy_into(dst, expand(view(src, strip_leading_ones(src.sizes())), dst.sizes()));
}

bool expandable_to(const Dims& from, const Dims& to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 1; i <= from.size(); i++) {
    int64_t f = from[from.size() - i], t = to[to.size() - i];
    if (f != t && f != 1) return false;
  }
  return true;
}

// PyTorch's canDispatchToMaskedFill: one element assigned under one bool mask.
bool is_masked_fill(const std::vector<Tensor>& indices, const Tensor& value) {
  int defined = 0;
  bool mask = false;
  for (const Tensor& t : indices) {
    if (!t.defined()) continue;
    defined++;
    mask = t.dtype() == DType::Bool;
  }
  return value.numel() == 1 && defined == 1 && mask;
}

// Indices of a CPU tensor must be on the CPU (PyTorch's check); those of a
// CUDA tensor may be on either.
bool on_cuda(const Sliced& s) {
  if (s.view.device().type == DeviceType::CUDA) return true;
  for (const Tensor& t : s.indices)
    THN_CHECK(!t.defined() || t.device().type != DeviceType::CUDA,
              "indices should be either on cpu or on the same device as the indexed tensor (cpu)");
  return false;
}

// Without the backend's library kernels (under --interpret), advanced
// indexing of a CUDA tensor runs on host mirrors of the storages.
Sliced mirrored(cuda::HostMirror& m, const Sliced& s) {
  Sliced h{m.host(s.view), {}};
  for (const Tensor& t : s.indices) h.indices.push_back(t.defined() ? m.host(t) : t);
  return h;
}

// ---- advanced indexing of CUDA tensors ----
// With them it stays on the device: a mask's true positions are found on a
// host copy of the mask (a shape that depends on its values), each index's
// element offsets are summed by the library's index check (which raises the
// CPU's error for the first one out of range), and the elements move in the
// index ops' walk (runtime/index_walk.h).

std::vector<Tensor> masks_on_host(const std::vector<Tensor>& indices) {
  std::vector<Tensor> out;
  for (const Tensor& t : indices)
    out.push_back(t.defined() && t.dtype() == DType::Bool && t.device().type == DeviceType::CUDA ? cuda::to_device(t, kCPU)
                                                                                                : t);
  return out;
}

// The element offset into info.src of each index position: int64, of
// index_shape, contiguous, on `device`.
Tensor device_offsets(const AdvancedIndex& info, Device device) {
  Tensor offsets = empty(info.index_shape, DType::Int64, device);
  for (size_t j = 0; j < info.indices.size(); j++) {
    const int64_t size = info.src.sizes()[info.first + int64_t(j)];
    Tensor idx = contiguous(cuda::to_device(info.indices[j], device));
    cuda::IndexCheck c{idx.device_address(), idx.numel(), size, /*negative=*/true, offsets.device_address(),
                       info.src.strides()[info.first + int64_t(j)], /*accumulate=*/j > 0};
    if (std::optional<int64_t> bad = cuda::check_index(c))
      fail(ErrorKind::IndexError, "index {} is out of bounds for dimension {} with size {}", *bad, j, size);
  }
  return offsets;
}

// `rest` (strides of the non-indexed dims) with `block` where the index
// positions go.
Dims with_block(Dims rest, int64_t first, const Dims& block) {
  rest.insert(rest.begin() + first, block.begin(), block.end());
  return rest;
}

// Every result element in parallel: out = src[offset + its block position].
Tensor gather_on_device(const Tensor& self, const std::vector<Tensor>& indices) {
  AdvancedIndex info = make_info(self, masks_on_host(indices));
  Tensor out = empty_strided(info.result_shape(), info.output_strides(), self.dtype(), self.device());
  Tensor offsets = device_offsets(info, self.device());
  const Dims rest = erase_range(info.src.strides(), info.first, info.last());
  IndexedWalk w{out.sizes(), info.first, out, out.strides(),
                info.src, with_block(rest, info.first, Dims(info.index_shape.size(), 0)), 1,
                offsets, with_block(Dims(rest.size(), 0), info.first, offsets.strides())};
  run_walk(w, cuda::LineWalk::Kind::Gather, self.dtype());
  return out;
}

// The index positions as the walk's serial dim, so that a duplicate's last
// value wins, as on the CPU.
void put_on_device(const AdvancedIndex& info, const Tensor& value) {
  const Device device = info.src.device();
  Tensor offsets = device_offsets(info, device);
  Dims shape = info.result_shape();
  Tensor v = broadcast_to(cuda::to_device(value, device), shape);
  Dims flat = erase_range(shape, info.first, info.first + int64_t(info.index_shape.size()));
  flat.insert(flat.begin() + info.first, offsets.numel());
  std::optional<Dims> v_strides = view_strides(v, flat);
  if (!v_strides) {
    v = contiguous(v);
    v_strides = view_strides(v, flat);
  }
  const Dims rest = erase_range(info.src.strides(), info.first, info.last());
  IndexedWalk w{flat, info.first, v, *v_strides, info.src, with_block(rest, info.first, {0}), 1,
                offsets, with_block(Dims(rest.size(), 0), info.first, {1})};
  run_walk(w, cuda::LineWalk::Kind::Scatter, info.src.dtype());
}

// ---- the two ----

Tensor gather_advanced(const Sliced& s) {
  if (on_cuda(s)) return gather_on_device(s.view, s.indices);
  AdvancedIndex info = make_info(s.view, s.indices);
  Tensor out = empty_strided(info.result_shape(), info.output_strides(), s.view.dtype());
  if (is_meta(out)) return out;  // (the indices are checked when the trace runs)
  auto [src, src_off] = info.split_src();
  auto [dst, dst_off] = info.split_result(out);
  copy_blocks(dst, dst_off, src, src_off);
  return out;
}

void put_advanced(const Sliced& s, Tensor v) {
  const Tensor& self = s.view;
  v = view(v, strip_leading_ones(v.sizes()));
  if (is_masked_fill(s.indices, v)) v = to_dtype(view(v, {}), self.dtype());
  check_inplace_write(s.view, {v});
  // (as PyTorch's index_put_: the value and the indices are read while
  // the target is written; a mask is read into positions first)
  check_no_overlap(s.view, v);
  for (const Tensor& i : s.indices)
    if (i.dtype() != DType::Bool) check_no_overlap(s.view, i);
  const bool cuda = on_cuda(s);
  AdvancedIndex info = make_info(s.view, cuda ? masks_on_host(s.indices) : s.indices);
  Dims shape = info.result_shape();
  THN_CHECK(expandable_to(v.sizes(), shape), "shape mismatch: value tensor of shape {} cannot be broadcast to indexing "
            "result of shape {}", dims_str(v.sizes()), dims_str(shape));
  THN_CHECK(v.dtype() == self.dtype(),
            "Index put requires the source and destination dtypes match, got {} for the destination and {} for the "
            "source.",
            dtype_torch_name(self.dtype()), dtype_torch_name(v.dtype()));
  if (cuda) return put_on_device(info, v);
  if (is_meta(self)) return;
  auto [dst, dst_off] = info.split_src();
  auto [src, src_off] = info.split_result(broadcast_to(cuda::to_device(v, kCPU), shape));
  copy_blocks(dst, dst_off, src, src_off);
}

}  // namespace

Tensor index(const Tensor& self, const std::vector<TensorIndex>& idx) {
  Sliced s = apply_slicing(self, idx);
  if (s.indices.empty()) return s.view;
  if (!on_cuda(s) || cuda::library_kernels()) return gather_advanced(s);
  cuda::HostMirror m;
  return cuda::to_device(gather_advanced(mirrored(m, s)), self.device());
}

void index_put(const Tensor& self, const std::vector<TensorIndex>& idx, const Tensor& value) {
  if (value.is_wrapped_number()) check_fits(value.item(), self.dtype());
  Tensor v = value.is_wrapped_number() ? to_dtype(value, self.dtype()) : value;
  // A lone bool is basic indexing in PyTorch's setitem (no dtype check).
  if (idx.size() == 1 && std::holds_alternative<bool>(idx[0].value)) {
    if (std::get<bool>(idx[0].value)) copy_to(unsqueeze(self, 0), v);
    return;
  }
  Sliced s = apply_slicing(self, idx);
  if (s.indices.empty()) return copy_to(s.view, v);
  if ((!on_cuda(s) && v.device().type != DeviceType::CUDA) || cuda::library_kernels()) return put_advanced(s, v);
  cuda::HostMirror m;
  put_advanced(mirrored(m, s), m.host(v));
  m.write_back();
}

}  // namespace thn
