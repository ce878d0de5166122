#pragma once
// Creation helpers shared by the creation and random ops and by other
// families.
#include <optional>

#include "runtime/tensor.h"

namespace thn {

// The device a creation op allocates on: CPU; a RuntimeError for CUDA, which
// this build cannot provide.
Device creation_device(std::optional<Device> device);
// torch.full: a new contiguous tensor holding v, with PyTorch's "value cannot
// be converted to type int without overflow" when v does not fit dtype.
Tensor full(const Dims& sizes, const Scalar& v, DType dtype);

}  // namespace thn
