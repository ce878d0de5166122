#pragma once
// Python indexing of tensors, `x[...]` and `x[...] = v`, with PyTorch 1.13's
// rules. Integers, slices, `...` and None (basic indexing) give a view;
// integer and bool tensors (advanced indexing) gather into a new tensor whose
// indexed dims go where the first tensor index stood, or to the front when
// the tensor indices are separated by a slice or an integer.
#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "runtime/tensor.h"

namespace thn {

struct Slice {
  std::optional<int64_t> start, stop, step;
};
struct Ellipsis {};
struct NewAxis {};  // None

// One element of an index tuple. A Python bool is its own kind (x[True] adds
// a dim); an integer 0-dim tensor acts as an integer, a bool one as a bool.
struct TensorIndex {
  std::variant<int64_t, Slice, Ellipsis, NewAxis, bool, Tensor> value;
  TensorIndex(int64_t i) : value(i) {}
  TensorIndex(int i) : value(int64_t(i)) {}
  TensorIndex(bool b) : value(b) {}
  TensorIndex(Slice s) : value(s) {}
  TensorIndex(Ellipsis e) : value(e) {}
  TensorIndex(NewAxis n) : value(n) {}
  TensorIndex(Tensor t) : value(std::move(t)) {}
};

// self[idx]: a view for basic indexing, a new tensor for advanced indexing.
// A one-element idx is Python's unparenthesised x[i] (x[0] on a 0-dim tensor
// gets PyTorch's "invalid index of a 0-dim tensor" rather than "too many
// indices").
Tensor index(const Tensor& self, const std::vector<TensorIndex>& idx);
// self[idx] = value: value (a wrapped number is first converted to self's
// dtype) is broadcast to the indexed shape; basic indexing copies it into the
// view with copy_ casting, advanced indexing scatters it and needs self's
// dtype, except for a one-element value under a single bool mask
// (PyTorch's masked_fill_ path).
void index_put(const Tensor& self, const std::vector<TensorIndex>& idx, const Tensor& value);

}  // namespace thn
