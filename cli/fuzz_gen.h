#pragma once
// The random program generator of `thn fuzz`: well-typed thn scripts that
// define one function, wrap it in jit with a random cache and shapes mode,
// and call it a few times on freshly made inputs, printing every result and
// every input's storage after each call.
//
// The function body draws from elementwise ops with broadcasting and type
// promotion, reductions, views (select, slice, narrow, transpose, permute,
// squeeze/unsqueeze, expand_as, reshape, flatten, unflatten, chunk, split,
// unbind, diagonal), copies, gathers (index_select, gather) and scatters
// (index_add_, index_copy_) with indices in range for every size, in-place ops on inputs, intermediates and views
// of both (chains included), setitem, and control flow on number and size
// arguments. The calls pass size-1 and (sometimes) size-0 dims, permuted,
// strided and expanded inputs, the same tensor twice, overlapping slices of
// one storage, a row or the transpose of another argument; some calls repeat
// an earlier one exactly (a cache hit) and some change sizes or numbers.
//
// A fifth of the programs differentiate: f's float arguments, a body that
// writes nothing in place, a float64 sum as its result, and the calls go to
// jit(grad(f, argnums=(0, ...))), printing each argument's gradient (jit's
// backward is traced; --interpret's runs eagerly).
//
// Shapes are tracked symbolically, so one body is valid for every call's
// sizes; ops that would amplify rounding differences between the two paths
// (division by values near zero, float-to-int conversion of computed values,
// comparisons of sums) are left out.
//
// Each call line ends with `# fuzz-key: MUST FULL`: two calls with different
// MUST keys cannot share a cache entry (shapes under shapes="static", numbers
// under cache="constant", every call under cache="none"); two calls with the
// same FULL key must. So a run's misses lie between the count of distinct
// MUST keys and the count of distinct FULL keys.
#include <cstdint>
#include <string>

namespace thn {

// Program `index` of the run seeded with `seed`: the same pair gives the same
// text on every machine. With `cuda` its inputs are moved to CUDA (the same
// numbers: they are drawn on the CPU).
std::string fuzz_program(uint64_t seed, uint64_t index, bool cuda = false);

}  // namespace thn
