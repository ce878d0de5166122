// View ops: every result shares the input's storage (Tensor::as_strided) with
// the sizes, strides and offset PyTorch 1.13 gives it.
#include "runtime/views.h"

#include <algorithm>
#include <functional>
#include <numeric>

#include "runtime/elementwise.h"
#include "runtime/error.h"

namespace thn {

namespace {

Tensor with_geometry(const Tensor& t, Dims sizes, Dims strides) {
  return t.as_strided(std::move(sizes), std::move(strides), t.offset());
}

Tensor alias(const Tensor& t) { return with_geometry(t, t.sizes(), t.strides()); }

// PyTorch's self.size(dim) for a wrapped dim: a 0-dim tensor has no size to give.
int64_t dim_size(const Tensor& t, int64_t dim) {
  THN_CHECK(t.dim() > 0, ErrorKind::IndexError, "Dimension specified as {} but tensor has no dimensions", dim);
  return t.sizes()[dim];
}

// Index `dim` removed from both sizes and strides.
Tensor drop_dim(const Tensor& t, int64_t dim, int64_t offset) {
  Dims sizes = t.sizes(), strides = t.strides();
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  return t.as_strided(std::move(sizes), std::move(strides), offset);
}

bool all_unique(Dims dims) {
  std::sort(dims.begin(), dims.end());
  return std::adjacent_find(dims.begin(), dims.end()) == dims.end();
}

Dims wrap_dims(const Dims& dims, int64_t ndim) {
  Dims out;
  for (int64_t d : dims) out.push_back(wrap_dim(d, ndim));
  return out;
}

// Slices [start, start + length) of `dim` (already checked to be in range).
Tensor slice_dim(const Tensor& t, int64_t dim, int64_t start, int64_t length) {
  Dims sizes = t.sizes();
  sizes[dim] = length;
  return t.as_strided(std::move(sizes), t.strides(), t.offset() + start * t.strides()[dim]);
}

}  // namespace

Dims infer_size(const Dims& shape, int64_t numel) {
  Dims out = shape;
  std::optional<size_t> infer;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); i++) {
    if (shape[i] == -1) {
      THN_CHECK(!infer, "only one dimension can be inferred");
      infer = i;
    } else {
      THN_CHECK(shape[i] >= 0, "invalid shape dimension {}", shape[i]);
      known *= shape[i];
    }
  }
  if (numel == known || (infer && known > 0 && numel % known == 0)) {
    if (infer) {
      // -1 against 0 elements could be any size.
      THN_CHECK(known != 0,
                "cannot reshape tensor of 0 elements into shape {} because the unspecified dimension size -1 can be "
                "any value and is ambiguous",
                dims_str(shape));
      out[*infer] = numel / known;
    }
    return out;
  }
  fail("shape '{}' is invalid for input of size {}", dims_str(shape), numel);
}

// PyTorch's computeStride: the old dims are split into chunks that are
// contiguous with each other; each chunk must be covered exactly by a run of
// new dims, which then get strides within that chunk.
std::optional<Dims> view_strides(const Tensor& t, const Dims& shape) { return view_strides(t.sizes(), t.strides(), shape); }

std::optional<Dims> view_strides(const Dims& old_sizes, const Dims& old_strides, const Dims& shape) {
  if (old_sizes.empty()) return Dims(shape.size(), 1);
  int64_t numel = 1;
  for (int64_t s : old_sizes) numel *= s;
  if (numel == 0 && old_sizes == shape) return old_strides;
  if (numel == 0) return contiguous_strides(shape);

  Dims strides(shape.size());
  int64_t view_d = int64_t(shape.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = int64_t(old_sizes.size()) - 1; d >= 0; d--) {
    tensor_numel *= old_sizes[d];
    bool chunk_ends = d == 0 || (old_sizes[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
      strides[view_d] = view_numel * chunk_base_stride;
      view_numel *= shape[view_d];
      view_d--;
    }
    if (view_numel != tensor_numel) return std::nullopt;
    if (d > 0) {
      chunk_base_stride = old_strides[d - 1];
      tensor_numel = view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return strides;
}

Tensor view(const Tensor& t, const Dims& shape) {
  Dims sizes = infer_size(shape, t.numel());
  std::optional<Dims> strides = view_strides(t, sizes);
  THN_CHECK(strides,
            "view size is not compatible with input tensor's size and stride (at least one dimension spans across two "
            "contiguous subspaces). Use .reshape(...) instead.");
  return with_geometry(t, std::move(sizes), std::move(*strides));
}

Tensor reshape(const Tensor& t, const Dims& shape) {
  Dims sizes = infer_size(shape, t.numel());
  if (std::optional<Dims> strides = view_strides(t, sizes)) return with_geometry(t, std::move(sizes), std::move(*strides));
  // t is not contiguous here, so this is a contiguous copy (PyTorch's clone(Contiguous)).
  return with_geometry(contiguous(t), sizes, contiguous_strides(sizes));
}

Tensor permute(const Tensor& t, const Dims& dims) {
  THN_CHECK(int64_t(dims.size()) == t.dim(),
            "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired "
            "ordering of dimensions i.e. input.dim() = {} is not equal to len(dims) = {}",
            t.dim(), dims.size());
  Dims wrapped = wrap_dims(dims, t.dim());
  THN_CHECK(all_unique(wrapped), "permute(): duplicate dims are not allowed.");
  Dims sizes, strides;
  for (int64_t d : wrapped) {
    sizes.push_back(t.sizes()[d]);
    strides.push_back(t.strides()[d]);
  }
  return with_geometry(t, std::move(sizes), std::move(strides));
}

Tensor transpose(const Tensor& t, int64_t dim0, int64_t dim1) {
  dim0 = wrap_dim(dim0, t.dim());
  dim1 = wrap_dim(dim1, t.dim());
  Dims sizes = t.sizes(), strides = t.strides();
  if (t.dim() > 0) {
    std::swap(sizes[dim0], sizes[dim1]);
    std::swap(strides[dim0], strides[dim1]);
  }
  return with_geometry(t, std::move(sizes), std::move(strides));
}

Tensor unsqueeze(const Tensor& t, int64_t dim) {
  dim = wrap_dim(dim, t.dim() + 1);
  Dims sizes = t.sizes(), strides = t.strides();
  int64_t stride = dim >= t.dim() ? 1 : sizes[dim] * strides[dim];
  sizes.insert(sizes.begin() + dim, 1);
  strides.insert(strides.begin() + dim, stride);
  return with_geometry(t, std::move(sizes), std::move(strides));
}

Tensor squeeze(const Tensor& t, std::optional<int64_t> dim) {
  if (dim) {
    int64_t d = wrap_dim(*dim, t.dim());
    if (t.dim() == 0 || t.sizes()[d] != 1) return alias(t);
    return drop_dim(t, d, t.offset());
  }
  Dims sizes, strides;
  for (int64_t d = 0; d < t.dim(); d++) {
    if (t.sizes()[d] == 1) continue;
    sizes.push_back(t.sizes()[d]);
    strides.push_back(t.strides()[d]);
  }
  return with_geometry(t, std::move(sizes), std::move(strides));
}

// PyTorch's inferExpandGeometry: sizes align from the right; a size-1 dim
// grows with stride 0; -1 keeps the existing size.
Tensor expand(const Tensor& t, const Dims& sizes) {
  int64_t ndim = int64_t(sizes.size()), tdim = t.dim();
  THN_CHECK(ndim >= tdim,
            "expand(torch.{}Tensor{{{}}}, size={}): the number of sizes provided ({}) must be greater or equal to the "
            "number of dimensions in the tensor ({})",
            dtype_torch_name(t.dtype()), dims_str(t.sizes()), dims_str(sizes), ndim, tdim);
  Dims out_sizes(ndim), out_strides(ndim);
  for (int64_t i = ndim - 1; i >= 0; i--) {
    int64_t d = tdim - (ndim - i);
    int64_t size = d >= 0 ? t.sizes()[d] : 1;
    int64_t stride = d >= 0 ? t.strides()[d] : (i + 1 < ndim ? out_sizes[i + 1] * out_strides[i + 1] : 1);
    int64_t target = sizes[i];
    if (target == -1) {
      THN_CHECK(d >= 0, "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {}", i);
      target = size;
    }
    if (size != target) {
      THN_CHECK(size == 1,
                "The expanded size of the tensor ({}) must match the existing size ({}) at non-singleton dimension "
                "{}.  Target sizes: {}.  Tensor sizes: {}",
                target, size, i, dims_str(sizes), dims_str(t.sizes()));
      size = target;
      stride = 0;
    }
    out_sizes[i] = size;
    out_strides[i] = stride;
  }
  return with_geometry(t, std::move(out_sizes), std::move(out_strides));
}

Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length) {
  THN_CHECK(t.dim() > 0, "narrow() cannot be applied to a 0-dim tensor.");
  dim = wrap_dim(dim, t.dim());
  int64_t size = t.sizes()[dim];
  if (start != size) start = wrap_dim(start, size);  // start == size is a valid empty slice
  THN_CHECK(length >= 0 && start <= size - length, "start ({}) + length ({}) exceeds dimension size ({}).", start,
            length, size);
  return slice_dim(t, dim, start, length);
}

Tensor select(const Tensor& t, int64_t dim, int64_t index) {
  THN_CHECK(t.dim() > 0, ErrorKind::IndexError, "select() cannot be applied to a 0-dim tensor.");
  dim = wrap_dim(dim, t.dim());
  int64_t size = t.sizes()[dim];
  if (index < -size || index >= size)
    fail(ErrorKind::IndexError, "select(): index {} out of range for tensor of size {} at dimension {}", index,
         dims_str(t.sizes()), dim);
  if (index < 0) index += size;
  return drop_dim(t, dim, t.offset() + index * t.strides()[dim]);
}

Tensor flatten(const Tensor& t, int64_t start_dim, int64_t end_dim) {
  start_dim = wrap_dim(start_dim, t.dim());
  end_dim = wrap_dim(end_dim, t.dim());
  THN_CHECK(start_dim <= end_dim, "flatten() has invalid args: start_dim cannot come after end_dim");
  if (t.dim() == 0) return reshape(t, {1});
  if (start_dim == end_dim) return alias(t);
  Dims shape(t.sizes().begin(), t.sizes().begin() + start_dim);
  shape.push_back(std::accumulate(t.sizes().begin() + start_dim, t.sizes().begin() + end_dim + 1, int64_t(1),
                                  std::multiplies<>()));
  shape.insert(shape.end(), t.sizes().begin() + end_dim + 1, t.sizes().end());
  return reshape(t, shape);
}

// PyTorch's algorithm: the named dims go to their destinations, the others
// fill the remaining positions in their original order.
Tensor movedim(const Tensor& t, const Dims& source, const Dims& destination) {
  THN_CHECK(source.size() == destination.size(),
            "movedim: Invalid source or destination dims: source ({} dims) should contain the same number of dims as "
            "destination ({} dims)",
            dims_str(source), dims_str(destination));
  Dims src = wrap_dims(source, t.dim()), dst = wrap_dims(destination, t.dim());
  THN_CHECK(all_unique(src), "movedim: repeated dim in `source` ({})", dims_str(source));
  THN_CHECK(all_unique(dst), "movedim: repeated dim in `destination` ({})", dims_str(destination));
  if (t.dim() == 0) return alias(t);
  Dims order(t.dim(), -1);
  std::vector<bool> src_used(t.dim(), false);
  for (size_t i = 0; i < src.size(); i++) {
    order[dst[i]] = src[i];
    src_used[src[i]] = true;
  }
  int64_t next = 0;
  for (int64_t& o : order) {
    if (o != -1) continue;
    while (src_used[next]) next++;
    o = next++;
  }
  return permute(t, order);
}

// ---- op table rows ----

namespace {

Tensor matrix_transpose(const Tensor& t) {
  THN_CHECK(t.dim() != 1, "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.");
  // A 0-dim tensor passes through, as in PyTorch.
  return t.dim() == 0 ? alias(t) : transpose(t, -2, -1);
}

std::vector<Tensor> split_sizes(const Tensor& t, const Dims& sizes, int64_t dim) {
  THN_CHECK(t.dim() != 0, "split expects at least a 1-dimensional tensor");
  dim = wrap_dim(dim, t.dim());
  int64_t total = 0;
  for (int64_t s : sizes) {
    THN_CHECK(s >= 0, "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes={}",
              dims_str(sizes));
    total += s;
  }
  THN_CHECK(total == t.sizes()[dim],
            "split_with_sizes expects split_sizes to sum exactly to {} (input tensor's size at dimension {}), but got "
            "split_sizes={}",
            t.sizes()[dim], dim, dims_str(sizes));
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t s : sizes) {
    out.push_back(slice_dim(t, dim, start, s));
    start += s;
  }
  return out;
}

// Pieces of split_size along dim, the last one shorter; one piece at least.
std::vector<Tensor> split_even(const Tensor& t, int64_t split_size, int64_t dim) {
  THN_CHECK(t.dim() != 0, "split expects at least a 1-dimensional tensor");
  THN_CHECK(split_size >= 0, "split expects split_size be non-negative, but got split_size={}", split_size);
  int64_t size = t.size(dim);
  THN_CHECK(split_size > 0 || size == 0,
            "split_size can only be 0 if dimension size is 0, but got dimension size of {}", size);
  int64_t n = split_size == 0 ? 1 : std::max<int64_t>((size + split_size - 1) / split_size, 1);
  Dims sizes(n, split_size);
  sizes.back() = size - split_size * (n - 1);
  return split_sizes(t, sizes, dim);
}

}  // namespace

IValue op_T(const Args& a) {
  const Tensor& t = a.tensor(0);
  Dims reversed(t.dim());
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  return permute(t, reversed);
}
IValue op_mT(const Args& a) { return matrix_transpose(a.tensor(0)); }
IValue op_view(const Args& a) { return view(a.tensor(0), a.dims(1)); }
IValue op_reshape(const Args& a) { return reshape(a.tensor(0), a.dims(1)); }
IValue op_permute(const Args& a) { return permute(a.tensor(0), a.dims(1)); }
IValue op_transpose(const Args& a) { return transpose(a.tensor(0), a.i64(1), a.i64(2)); }
IValue op_t(const Args& a) {
  const Tensor& t = a.tensor(0);
  THN_CHECK(t.dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is {}D", t.dim());
  return t.dim() < 2 ? alias(t) : transpose(t, 0, 1);
}
IValue op_unsqueeze(const Args& a) { return unsqueeze(a.tensor(0), a.i64(1)); }
IValue op_squeeze(const Args& a) { return squeeze(a.tensor(0), a.opt_i64(1)); }
IValue op_expand(const Args& a) { return expand(a.tensor(0), a.dims(1)); }
IValue op_expand_as(const Args& a) { return expand(a.tensor(0), a.tensor(1).sizes()); }
IValue op_flatten(const Args& a) { return flatten(a.tensor(0), a.i64(1), a.i64(2)); }

IValue op_unflatten(const Args& a) {
  const Tensor& t = a.tensor(0);
  int64_t dim = wrap_dim(a.i64(1), t.dim());
  Dims sizes = a.dims(2);
  THN_CHECK(!sizes.empty(), "unflatten: sizes must be non-empty");
  int64_t size = dim_size(t, dim);
  Dims inferred;
  try {
    inferred = infer_size(sizes, size);
  } catch (const Error& e) {
    // PyTorch rewords only the "is invalid for input of size" failure.
    if (std::string_view(e.what()).find("is invalid for input of size") == std::string_view::npos)
      fail("unflatten got an unexpected error:");
    fail("unflatten: Provided sizes {} don't multiply up to the size of dim {} ({}) in the input tensor",
         dims_str(sizes), dim, size);
  }
  Dims shape = t.sizes();
  shape.erase(shape.begin() + dim);
  shape.insert(shape.begin() + dim, inferred.begin(), inferred.end());
  return view(t, shape);
}

IValue op_narrow(const Args& a) { return narrow(a.tensor(0), a.i64(1), a.i64(2), a.i64(3)); }
IValue op_select(const Args& a) { return select(a.tensor(0), a.i64(1), a.i64(2)); }

IValue op_split(const Args& a) {
  const Tensor& t = a.tensor(0);
  const IValue& spec = a[1];
  if (spec.is_int()) return IValue::tensors(split_even(t, spec.to_int(), a.i64(2)));
  if (spec.is_list()) {
    Dims sizes;
    for (const IValue& e : spec.to_list().items) {
      if (!e.is_int())
        fail(ErrorKind::TypeError,
             "split_with_sizes(): argument 'split_sizes' must be tuple of ints, but found element of type {} at pos {}",
             e.type_name(), sizes.size() + 1);
      sizes.push_back(e.to_int());
    }
    return IValue::tensors(split_sizes(t, sizes, a.i64(2)));
  }
  fail(ErrorKind::TypeError, "split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of ints, not {}",
       spec.type_name());
}

IValue op_chunk(const Args& a) {
  const Tensor& t = a.tensor(0);
  int64_t chunks = a.i64(1), dim = a.i64(2);
  THN_CHECK(t.dim() > 0, "chunk expects at least a 1-dimensional tensor");
  THN_CHECK(chunks > 0, "chunk expects `chunks` to be greater than 0, got: {}", chunks);
  int64_t size = t.size(dim);
  int64_t split_size = (size + chunks - 1) / chunks;
  // An empty dim still gives `chunks` empty pieces.
  if (size == 0) return IValue::tensors(split_sizes(t, Dims(chunks, 0), dim));
  return IValue::tensors(split_even(t, split_size, dim));
}

IValue op_unbind(const Args& a) {
  const Tensor& t = a.tensor(0);
  int64_t dim = wrap_dim(a.i64(1), t.dim());
  std::vector<Tensor> out;
  for (int64_t i = 0, n = dim_size(t, dim); i < n; i++) out.push_back(select(t, dim, i));
  return IValue::tensors(out);
}

IValue op_diagonal(const Args& a) {
  const Tensor& t = a.tensor(0);
  int64_t offset = a.i64(1);
  int64_t d1 = wrap_dim(a.i64(2), t.dim()), d2 = wrap_dim(a.i64(3), t.dim());
  THN_CHECK(d1 != d2, "diagonal dimensions cannot be identical {}, {}", a.i64(2), a.i64(3));
  int64_t n1 = t.sizes()[d1], n2 = t.sizes()[d2], s1 = t.strides()[d1], s2 = t.strides()[d2];
  // A positive offset drops leading columns (dim2), a negative one leading rows (dim1).
  int64_t len = std::max<int64_t>(offset >= 0 ? std::min(n1, n2 - offset) : std::min(n1 + offset, n2), 0);
  int64_t start = t.offset();
  if (len > 0) start += offset >= 0 ? offset * s2 : -offset * s1;
  Dims sizes = t.sizes(), strides = t.strides();
  for (int64_t d : {std::max(d1, d2), std::min(d1, d2)}) {
    sizes.erase(sizes.begin() + d);
    strides.erase(strides.begin() + d);
  }
  sizes.push_back(len);
  strides.push_back(s1 + s2);
  return t.as_strided(std::move(sizes), std::move(strides), start);
}

IValue op_movedim(const Args& a) { return movedim(a.tensor(0), a.dims(1), a.dims(2)); }

}  // namespace thn
