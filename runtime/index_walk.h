#pragma once
// The one loop of the index ops (runtime/copy.cpp), which advanced indexing
// on CUDA tensors (runtime/indexing.cpp) shares: a host loop on CPU tensors,
// the backend's library walk (runtime/cuda.h's LineWalk) on CUDA ones.
#include "runtime/cuda.h"
#include "runtime/tensor.h"

namespace thn {

// A walk over `shape`. `plain` is walked with its strides; `indexed` has
// stride 0 along the indexed dim `dim` and is displaced by index[i] *
// indexed_dim_stride instead; `index` (int64, in range) is walked with its
// strides.
struct IndexedWalk {
  Dims shape;
  int64_t dim;
  Tensor plain;
  Dims plain_strides;
  Tensor indexed;
  Dims indexed_strides;
  int64_t indexed_dim_stride;
  Tensor index;
  Dims index_strides;
};

// Gather: plain = indexed[index]; Scatter: indexed[index] = plain;
// ScatterAdd: indexed[index] += alpha * plain. Duplicate indices along
// `dim` apply in index order (on CUDA too: the last copy wins, additions
// run in order).
void run_walk(const IndexedWalk& w, cuda::LineWalk::Kind kind, DType dtype, const Scalar& alpha = Scalar(int64_t(1)));

}  // namespace thn
