#include "passes/alias_analysis.h"

#include <fmt/format.h>

#include <optional>

#include "runtime/views.h"

namespace thn {

namespace {

int64_t wrap_dim(int64_t d, size_t n) { return d < 0 ? d + int64_t(n) : d; }

// An int argument, or nullopt when it is symbolic.
std::optional<int64_t> static_int(const Value& v) {
  if (v.is_proxy() || !v.is(Type::Int)) return std::nullopt;
  return v.raw_int();
}

}  // namespace

ViewResult view_region(const Symbol& sym, std::span<const Value> rest, const Region& in, const Dims* out_sizes) {
  ViewResult r;
  Region& v = r.region;
  v.offset = in.offset;
  auto ints = [&](size_t k) { return k < rest.size() && rest[k].is_sequence() ? static_ints(rest[k].items()) : std::nullopt; };
  if (!sym.op) {
    if (sym.prim == PrimId::as_strided) {  // as_strided(t, sizes, strides, offset)
      auto sizes = ints(0), strides = ints(1);
      auto off = static_int(rest[2]);
      if (!sizes || !strides) return r;
      v.sizes = *sizes, v.strides = *strides;
      v.offset = in.offset && off ? std::optional<int64_t>(*in.offset + *off) : std::nullopt;
      r.known = true;
      return r;
    }
    // prims.slice(t, starts, ends, steps)
    auto starts = ints(0), ends = ints(1), steps = ints(2);
    if (!steps || in.strides.size() != steps->size()) return r;
    v.strides = in.strides;
    for (size_t d = 0; d < v.strides.size(); ++d) v.strides[d] *= (*steps)[d];
    if (starts && ends) {
      for (size_t d = 0; d < steps->size(); ++d) {
        v.sizes.push_back(std::max<int64_t>(0, ((*ends)[d] - (*starts)[d] + (*steps)[d] - 1) / (*steps)[d]));
        if (v.offset) *v.offset += (*starts)[d] * in.strides[d];
      }
    } else {
      v.offset.reset();
      if (!out_sizes) return r;
      v.sizes = *out_sizes;
    }
    r.known = true;
    return r;
  }
  const Dims& s = in.strides;
  switch (sym.op->id) {
    case OpId::reshape: case OpId::expand: {
      auto shape = ints(0);
      if (!shape) return r;
      v.sizes = *shape;
      if (sym.op->id == OpId::reshape) {
        std::optional<Dims> st = view_strides(in.sizes, s, v.sizes);
        if (!st) {
          r.copies = true;
          return r;
        }
        v.strides = *st;
      } else {
        v.strides.assign(v.sizes.size(), 0);
        size_t lead = v.sizes.size() - s.size();
        for (size_t d = 0; d < s.size(); ++d) v.strides[lead + d] = in.sizes[d] == v.sizes[lead + d] ? s[d] : 0;
      }
      break;
    }
    case OpId::permute: {
      auto dims = ints(0);
      if (!dims) return r;
      for (int64_t d : *dims) {
        size_t k = size_t(wrap_dim(d, s.size()));
        v.sizes.push_back(in.sizes[k]);
        v.strides.push_back(s[k]);
      }
      break;
    }
    case OpId::unsqueeze: {
      auto dim = static_int(rest[0]);
      if (!dim) return r;
      size_t d = size_t(wrap_dim(*dim, s.size() + 1));
      v.sizes = in.sizes, v.strides = s;
      v.sizes.insert(v.sizes.begin() + long(d), 1);
      v.strides.insert(v.strides.begin() + long(d), d >= s.size() ? 1 : in.sizes[d] * s[d]);
      break;
    }
    case OpId::squeeze: {
      auto dim = static_int(rest[0]);
      if (!dim) return r;
      size_t d = size_t(wrap_dim(*dim, s.size()));
      v.sizes = in.sizes, v.strides = s;
      if (in.sizes[d] == 1) {
        v.sizes.erase(v.sizes.begin() + long(d));
        v.strides.erase(v.strides.begin() + long(d));
      }
      break;
    }
    case OpId::diagonal: {  // diagonal(t, offset, dim1, dim2)
      auto off = static_int(rest[0]), a = static_int(rest[1]), b = static_int(rest[2]);
      if (!off || !a || !b) return r;
      size_t d1 = size_t(wrap_dim(*a, s.size())), d2 = size_t(wrap_dim(*b, s.size()));
      for (size_t d = 0; d < s.size(); ++d)
        if (d != d1 && d != d2) v.sizes.push_back(in.sizes[d]), v.strides.push_back(s[d]);
      int64_t n = *off >= 0 ? std::min(in.sizes[d1], in.sizes[d2] - *off) : std::min(in.sizes[d1] + *off, in.sizes[d2]);
      v.sizes.push_back(std::max<int64_t>(0, n));
      v.strides.push_back(s[d1] + s[d2]);
      if (v.offset && n > 0) *v.offset += *off >= 0 ? *off * s[d2] : -*off * s[d1];
      break;
    }
    default: return r;
  }
  r.known = true;
  return r;
}

bool disjoint(const Region& a, const Region& b) {
  if (!a.offset || !b.offset) return false;
  auto range = [](const Region& r) {
    int64_t extent = 1;
    for (size_t d = 0; d < r.sizes.size(); ++d) {
      if (r.sizes[d] == 0) return std::pair<int64_t, int64_t>(*r.offset, *r.offset);
      extent += (r.sizes[d] - 1) * r.strides[d];
    }
    return std::pair<int64_t, int64_t>(*r.offset, *r.offset + extent);
  };
  auto [a0, a1] = range(a);
  auto [b0, b1] = range(b);
  return a0 == a1 || b0 == b1 || a1 <= b0 || b1 <= a0;
}

std::optional<Region> region_of(const Trace& t, const Value& v) {
  auto it = t.layouts.find(&v.symbolic());
  auto sizes = static_sizes(v);
  if (it == t.layouts.end() || !sizes || !it->second.offset || it->second.strides.size() != sizes->size()) return std::nullopt;
  return Region{*sizes, it->second.strides, it->second.offset};
}

std::optional<Region> steps_region(Region in, const Value& steps) {
  for (const Value& step : steps.items()) {
    const std::vector<Value>& items = step.items();
    ViewResult r = view_region(symbol_named(items[0].as_str()), std::span<const Value>(items).subspan(1), in, nullptr);
    if (!r.known) return std::nullopt;
    in = std::move(r.region);
  }
  return in;
}

bool writes_apart(const Trace& t, const BoundSymbol& b, const Value& p) {
  if (b.sym.op || b.sym.prim != PrimId::copy_into_view || &p.symbolic() == &b.args[0].symbolic()) return false;
  std::optional<Region> base = region_of(t, b.args[0]), read = region_of(t, p);
  if (!base || !read || base->offset != 0) return false;
  std::optional<Region> written = steps_region(*base, b.args[2]);
  return written && disjoint(*written, *read);
}

namespace {

// contiguous, to and convert_element_type return their operand when it
// already has the layout or dtype asked for, else a copy: for buffer
// planning they may alias it.
bool returns_operand_when_possible(const Symbol& s) {
  if (!s.op) return s.prim == PrimId::convert_element_type;
  return s.is_prim && (s.op->id == OpId::contiguous || s.op->id == OpId::to);
}

}  // namespace

Trace alias_analysis(Trace t) {
  auto& layouts = t.layouts;
  layouts.clear();
  auto own = [&](const Value& v, Dims strides, std::optional<int64_t> offset) {
    layouts[&v.symbolic()] = Layout{v, std::move(strides), false, offset};
  };
  // An input's layout is what the prologue guarantees; a computed tensor's
  // is its producer's (unknown here), but for copy_into_view and index_put:
  // their operand's, and for matmul and full: contiguous.
  for (const Value& v : t.inputs)
    if (is_tensor_proxy(v)) own(v, tensor_proxy(v).strides, 0);
  for (const auto& [proxy, tensor] : t.captured) own(proxy, tensor_proxy(proxy).strides, 0);
  for (const BoundSymbol& b : t.body) {
    if (b.sym.is_view()) {
      const Layout& in = layouts.at(&b.args[0].symbolic());
      auto in_sizes = static_sizes(b.args[0]), out_sizes = static_sizes(b.out);
      ViewResult r;
      // (a 0-dim operand's strides are known: none; as_strided needs none)
      const bool as_strided = !b.sym.op && b.sym.prim == PrimId::as_strided;
      if (in_sizes && out_sizes && (!in.strides.empty() || in_sizes->empty() || as_strided))
        r = view_region(b.sym, std::span<const Value>(b.args).subspan(1), Region{*in_sizes, in.strides, in.offset}, &*out_sizes);
      if (r.known && r.region.sizes != *out_sizes) throw std::logic_error("alias_analysis: a view's sizes differ from its prim's");
      if (r.copies) layouts[&b.out.symbolic()] = Layout{in.base, {}, true, std::nullopt};
      else if (r.known) layouts[&b.out.symbolic()] = Layout{in.base, std::move(r.region.strides), in.may_copy, r.region.offset};
      else layouts[&b.out.symbolic()] = Layout{in.base, {}, in.may_copy, std::nullopt};
      continue;
    }
    // The operand itself when nothing changes; never across a dtype change.
    if (returns_operand_when_possible(b.sym) &&
        tensor_proxy(b.out).dtype() == tensor_proxy(b.args[0]).dtype()) {
      const Layout& in = layouts.at(&b.args[0].symbolic());
      layouts[&b.out.symbolic()] = Layout{in.base, {}, true, std::nullopt};
      continue;
    }
    if (!b.sym.op && (b.sym.prim == PrimId::copy_into_view || b.sym.prim == PrimId::index_put)) {
      const Layout& in = layouts.at(&b.args[0].symbolic());
      const bool whole = &in.base.symbolic() == &b.args[0].symbolic() && in.offset == 0;
      own(b.out, whole ? in.strides : Dims(), whole ? std::optional<int64_t>(0) : std::nullopt);
      continue;
    }
    // A matmul's result is a new contiguous tensor (runtime/linalg.cpp:
    // every case, the folded transposed one made contiguous, as PyTorch's),
    // and so is full's (zeros, a constant).
    if (b.sym.op && b.sym.is_prim && (b.sym.op->id == OpId::matmul || b.sym.op->id == OpId::full) &&
        is_tensor_proxy(b.out)) {
      if (auto sizes = static_sizes(b.out)) {
        own(b.out, contiguous_strides(*sizes), 0);
        continue;
      }
    }
    for_each_proxy(b.out, [&](const Value& o) {
      if (o.is(Type::Tensor)) own(o, {}, std::nullopt);
    });
  }
  return t;
}

}  // namespace thn
