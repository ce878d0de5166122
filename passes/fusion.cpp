#include "passes/fusion.h"

#include "passes/alias_analysis.h"

#include <algorithm>
#include <queue>
#include <limits>
#include <unordered_map>
#include <unordered_set>

namespace thn {

namespace {

// A region stops taking stored values past this many prims: one kernel per
// few optimizer parameters compiles in well under a second, one for a
// hundred takes the host compiler many seconds.
constexpr size_t kMaxStoreJoin = 48;  // (below kMaxMembers)
// No region takes more prims than this, recomputed values included: the
// host compiler's time grows faster than a kernel's size (bfloat16
// layer_norm's emulation of PyTorch's kernel is ~700 prims at width 128,
// 75 s to compile as one kernel).
constexpr size_t kMaxMembers = 192;

// Whether operand a can be read by a kernel writing `out`: on its device,
// or a CPU tensor of one value (a 0-dim wrapped number, or its expansion:
// stride 0 along every dim longer than 1; see is_one_value) beside a CUDA
// one, as PyTorch allows.
bool same_device(const Trace& t, const Value& a, const Value& out) {
  const TensorProxy& p = tensor_proxy(a);
  if (p.device() == tensor_proxy(out).device()) return true;
  if (p.device().type != DeviceType::CPU) return false;
  auto it = t.layouts.find(&a.symbolic());
  auto sizes = static_sizes(a);
  if (!sizes || (!sizes->empty() && (it == t.layouts.end() || it->second.strides.size() != sizes->size()))) return false;
  for (size_t d = 0; d < sizes->size(); ++d)
    if ((*sizes)[d] != 1 && it->second.strides[d] != 0) return false;
  return true;
}

// A prim with a kernel in the code generators (backend/kernel_ir.h).
bool fusible_compute(const Trace& t, const BoundSymbol& b) {
  if (!is_tensor_proxy(b.out)) return false;
  for (const Value& a : b.args)
    if (is_tensor_proxy(a) && !same_device(t, a, b.out)) return false;
  // A wrapped number (`1.0 + t`) is the number itself in a kernel.
  if (!b.sym.op) return b.sym.prim == PrimId::convert_element_type || b.sym.prim == PrimId::wrap_number;
  if (!b.sym.is_prim) return false;
  // A constant tensor (zero_, fill_, zeros in a trace): a kernel's store,
  // when its shape is static (a kernel with nothing to load takes its index
  // space from its output's sizes as traced) and its value a constant (a
  // symbolic one is checked to fit the dtype by the runtime's full).
  if (b.sym.op->id == OpId::full) return static_sizes(b.out).has_value() && !b.args[1].is_proxy();
  bool integral = is_integral(prim_compute_dtype(b), true);
  switch (b.sym.op->family) {
    case OpFamily::Unary:
      // round(x, decimals) scales in the tensor's precision: a library op.
      return b.sym.op->id != OpId::round || b.args.size() < 2 || (!b.args[1].is_proxy() && b.args[1].raw_int() == 0);
    case OpFamily::Binary:
      switch (b.sym.op->id) {
        // Integer division raises on a zero divisor; integer pow on a negative exponent.
        case OpId::floor_divide: case OpId::remainder: case OpId::fmod: case OpId::pow: return !integral;
        case OpId::div: return !integral || b.args.size() < 3 || b.args[2].is_none();
        default: return true;
      }
    case OpFamily::Copy: {
      // A copy whose result has the contiguous strides eager gives it: a
      // clone of a contiguous tensor, or contiguous() of a strided one
      // (of a contiguous one it is the operand itself).
      if (b.sym.op->id != OpId::clone && b.sym.op->id != OpId::contiguous) return false;
      auto it = t.layouts.find(&b.args[0].symbolic());
      auto sizes = static_sizes(b.args[0]);
      if (it == t.layouts.end() || !sizes || it->second.strides.size() != sizes->size()) return false;
      bool contiguous = it->second.strides == contiguous_strides(*sizes);
      return b.sym.op->id == OpId::clone ? contiguous : !contiguous;
    }
    case OpFamily::Pointwise:
      switch (b.sym.op->id) {
        case OpId::where: case OpId::clamp: case OpId::lerp: case OpId::addcmul: case OpId::addcdiv:
        case OpId::masked_fill: return true;
        default: return false;
      }
    default: return false;
  }
}

bool fusible_reduction(const BoundSymbol& b) {
  return is_fusible_reduction(b) && tensor_proxy(b.args[0]).device() == tensor_proxy(b.out).device();
}

class Fuser {
 public:
  explicit Fuser(Trace t) : t_(std::move(t)), n_(t_.body.size()), users_(n_), region_of_(n_, -1) {}

  Trace run() {
    if (!t_.functional) return std::move(t_);  // in-place ops run in program order
    index();
    for (size_t i = n_; i-- > 0;) place(i);
    std::vector<BoundSymbol> body = ordered();
    t_.body = std::move(body);
    return std::move(t_);
  }

 private:
  struct Region {
    std::vector<size_t> members;  // in the order they joined (reverse program order)
    Value domain;                 // a value of the region's shape (pointwise regions)
    Value reduced;                // the output of one of its reductions, if any (reduction_valid)

    bool reduces() const { return !reduced.is_none(); }
  };

  void index() {
    for (size_t i = 0; i < n_; ++i) {
      for_each_proxy(t_.body[i].out, [&](const Value& d) { producer_[&d.symbolic()] = i; });
    }
    for (size_t j = 0; j < n_; ++j)
      for_each_proxy(t_.body[j].args, [&](const Value& p) {
        if (auto it = producer_.find(&p.symbolic()); it != producer_.end()) users_[it->second].push_back(j);
      });
    for_each_proxy(t_.output, [&](const Value& o) {
      if (auto it = producer_.find(&o.symbolic()); it != producer_.end()) users_[it->second].push_back(n_);
    });
  }

  // The region every use of op i's value is in, or -1.
  int region_of_all_users(size_t i) const {
    int r = -1;
    for (size_t j : users_[i]) {
      if (j == n_ || region_of_[j] < 0 || (r >= 0 && region_of_[j] != r)) return -1;
      r = region_of_[j];
    }
    return r;
  }

  void join(size_t i, int r) {
    region_of_[i] = r;
    regions_[size_t(r)].members.push_back(i);
    if (fusible_reduction(t_.body[i]) && !regions_[size_t(r)].reduces()) regions_[size_t(r)].reduced = t_.body[i].out;
  }

  void place(size_t i) {
    const BoundSymbol& b = t_.body[i];
    bool view = b.sym.is_view() && is_tensor_proxy(b.out);
    bool reduction = fusible_reduction(b);
    if (!view && !reduction && !fusible_compute(t_, b)) return;
    if (int r = region_of_all_users(i); r >= 0 && regions_[size_t(r)].members.size() < kMaxMembers && admits(r, i)) {
      join(i, r);  // recomputed where it is used, never stored
      return;
    }
    if (view) return;  // a view that escapes is taken on the host
    if (!b.sym.op && b.sym.prim == PrimId::wrap_number) return;  // read by host ops or several kernels: a tensor
    // A store: into the region of a user, or beside a region of its shape.
    const TensorProxy& value = tensor_proxy(b.out);
    // Independent work joins a region with a reduction when it is a
    // reduction too, pointwise of the reductions' output shape (it runs once
    // per output element), or reads a tensor the region reads (one pass over
    // it instead of two); other pointwise work over the reductions' input
    // would only crowd their loops.
    std::vector<int> candidates;
    for (size_t j : users_[i])
      if (j < n_ && region_of_[j] >= 0) candidates.push_back(region_of_[j]);
    size_t of_users = candidates.size();
    for (size_t r = regions_.size(); r-- > 0 && candidates.size() < 16;) candidates.push_back(int(r));
    std::unordered_set<int> tried;
    for (size_t c = 0; c < candidates.size(); ++c) {
      int r = candidates[c];
      if (!tried.insert(r).second) continue;
      const Region& region = regions_[size_t(r)];
      const TensorProxy& d = tensor_proxy(region.domain);
      if (region.members.size() >= kMaxStoreJoin || d.device() != value.device()) continue;
      if (!region.reduces() && !reduction && !same_sizes(d, value)) continue;
      if (c >= of_users && region.reduces() != reduction &&
          !same_sizes(region.reduces() ? tensor_proxy(region.reduced) : d, value) && !shares_input(r, i))
        continue;
      if (!admits(r, i) || reaches(i, r)) continue;
      join(i, r);
      return;
    }
    regions_.push_back({{}, b.out, Value()});
    join(i, int(regions_.size()) - 1);
  }

  // Whether op i reads a tensor that a member of region r reads.
  bool shares_input(int r, size_t i) const {
    std::unordered_set<const Symbolic*> read;
    for (size_t m : regions_[size_t(r)].members)
      for_each_proxy(t_.body[m].args, [&](const Value& p) { read.insert(&p.symbolic()); });
    bool shares = false;
    for_each_proxy(t_.body[i].args, [&](const Value& p) { shares = shares || (p.is(Type::Tensor) && read.count(&p.symbolic())); });
    return shares;
  }

  // Whether region r may take op i: always for a pointwise region staying
  // pointwise; with a reduction, when the region stays one pass over the
  // reduction's input (reduction_valid).
  bool admits(int r, size_t i) const {
    const Region& region = regions_[size_t(r)];
    if (!region.reduces() && !fusible_reduction(t_.body[i])) return true;
    Candidate c(t_, region.members, i);
    return reduction_valid(c) && !computed_twice(c, i);
  }

  // A region with op i added: its members in program order, and the values
  // computed from its reductions.
  struct Candidate {
    Candidate(const Trace& t, std::vector<size_t> ms, size_t i) : members(std::move(ms)) {
      members.push_back(i);
      std::sort(members.begin(), members.end());
      set.insert(members.begin(), members.end());
      for (size_t m : members) prims.push_back(&t.body[m]);
      after = reduced_values(prims);
    }
    std::vector<size_t> members;
    std::unordered_set<size_t> set;
    std::vector<const BoundSymbol*> prims;
    std::unordered_set<const Symbolic*> after;
  };

  // Whether op i, read by a reduction of the region and by a value computed
  // from that reduction's result, would be computed in two sweeps (softmax's
  // exp, read by the sum and by the division): worth it for a view, a
  // conversion, add, sub, mul, neg and a select (an attention mask's
  // masked_fill, read by the max and by x - max), and on CUDA for any
  // elementwise op (a GPU computes an exp in far less time than it stores
  // and reloads one, and its row cache keeps the sweeps' operands); any
  // other op on the host is stored once instead.
  bool computed_twice(const Candidate& c, size_t i) const {
    const BoundSymbol& b = t_.body[i];
    auto cheap = [](OpId id) {
      return id == OpId::add || id == OpId::sub || id == OpId::mul || id == OpId::neg || id == OpId::masked_fill ||
             id == OpId::where;
    };
    if (b.sym.is_view() || !b.sym.op || cheap(b.sym.op->id)) return false;
    if ((b.sym.op->family == OpFamily::Unary || b.sym.op->family == OpFamily::Binary) &&
        tensor_proxy(b.out).device().type == DeviceType::CUDA)
      return false;
    bool reduced = false, after_read = false;
    for (size_t j : users_[i]) {
      if (j == n_ || !c.set.count(j)) continue;
      reduced |= fusible_reduction(t_.body[j]);
      after_read |= !fusible_reduction(t_.body[j]) && c.after.count(&t_.body[j].out.symbolic());
    }
    return reduced && after_read;
  }

  // A region with reductions is one kernel that, per element of the
  // reductions' output, sweeps over the reduced elements of their input
  // (inner phase: the reductions' operands, and stores of the input's
  // shape) and computes what follows the reductions (outer phase); a
  // reduction of values computed from another (softmax) is a later sweep.
  // Valid when every reduction has the same input shape, dims and keepdim,
  // the only views of reduced values broadcast them back over the reduced
  // dims (one value per output element), and stored values have the
  // output's shape or the input's.
  bool reduction_valid(const Candidate& c) const {
    const BoundSymbol* first = nullptr;
    for (const BoundSymbol* b : c.prims) {
      if (!fusible_reduction(*b)) continue;
      if (!first) first = b;
      else if (!same_sizes(tensor_proxy(first->args[0]), tensor_proxy(b->args[0])) ||
               reduced_dims(*first) != reduced_dims(*b) || reduction_keepdim(*first) != reduction_keepdim(*b))
        return false;
    }
    if (!first) return true;
    const TensorProxy &in = tensor_proxy(first->args[0]), &out = tensor_proxy(first->out);
    for (const BoundSymbol* b : c.prims)
      if (b->sym.is_view() && c.after.count(&b->out.symbolic()) && !broadcasts_reduced(*b, *first)) return false;
    for (size_t m : c.members) {
      bool stored = false;
      for (size_t j : users_[m]) stored |= j == n_ || !c.set.count(j);
      if (!stored) continue;
      const TensorProxy& v = tensor_proxy(t_.body[m].out);
      if (!same_sizes(v, out) && !same_sizes(v, in)) return false;
    }
    return true;
  }

  // Whether view b of a reduced value reads, at each element, the value of
  // that element's output: an unsqueeze or reshape of the output to the
  // kept-dims shape (reduction r without keepdim), or an expand of that
  // shape to the input's.
  static bool broadcasts_reduced(const BoundSymbol& b, const BoundSymbol& r) {
    const TensorProxy &in = tensor_proxy(r.args[0]), &from = tensor_proxy(b.args[0]), &to = tensor_proxy(b.out);
    std::vector<int64_t> dims = reduced_dims(r);
    auto is_kept = [&](const TensorProxy& p) {
      if (p.sizes.size() != in.sizes.size()) return false;
      for (size_t d = 0; d < in.sizes.size(); ++d) {
        const Value &x = p.sizes[d], &y = in.sizes[d];
        bool reduced = std::find(dims.begin(), dims.end(), int64_t(d)) != dims.end();
        if (reduced ? x.is_proxy() || x.raw_int() != 1
                    : x.is_proxy() != y.is_proxy() || (x.is_proxy() ? &x.symbolic() != &y.symbolic() : x.raw_int() != y.raw_int()))
          return false;
      }
      return true;
    };
    if (!b.sym.op) return false;
    switch (b.sym.op->id) {
      case OpId::expand: return is_kept(from) && same_sizes(to, in);
      case OpId::unsqueeze: case OpId::reshape:
        return !reduction_keepdim(r) && same_sizes(from, tensor_proxy(r.out)) && is_kept(to);
      default: return false;
    }
  }

  // Whether a path leads from op i's value to region r through ops outside
  // r (joining would make a cycle). Regions on the way count as one node.
  bool reaches(size_t i, int r) const {
    // (visited marks by search number: a search costs what it visits)
    ++search_;
    seen_op_.resize(n_, 0);
    seen_region_.resize(regions_.size(), 0);
    auto visit = [&](std::vector<uint64_t>& seen, size_t k) {
      if (seen[k] == search_) return false;
      seen[k] = search_;
      return true;
    };
    std::vector<size_t> stack;
    for (size_t j : users_[i])
      if (j < n_ && region_of_[j] != r) stack.push_back(j);
    while (!stack.empty()) {
      size_t j = stack.back();
      stack.pop_back();
      int rj = region_of_[j];
      if (rj == r) return true;
      if (rj >= 0) {
        if (!visit(seen_region_, size_t(rj))) continue;
        for (size_t m : regions_[size_t(rj)].members)
          for (size_t k : users_[m])
            if (k < n_) stack.push_back(k);
      } else {
        if (!visit(seen_op_, j)) continue;
        for (size_t k : users_[j])
          if (k < n_) stack.push_back(k);
      }
    }
    return false;
  }

  // The node an op runs in: itself, or its region (numbered after the ops).
  size_t node(size_t i) const { return region_of_[i] < 0 ? i : n_ + size_t(region_of_[i]); }

  // Ops and regions in a topological order, the original one where possible
  // (the ops are moved out of t_).
  std::vector<BoundSymbol> ordered() {
    const size_t nodes = n_ + regions_.size();
    std::vector<std::vector<size_t>> succ(nodes);
    std::vector<int> preds(nodes, 0);
    std::vector<size_t> key(nodes, SIZE_MAX);
    std::vector<char> present(nodes, 0);
    for (size_t i = 0; i < n_; ++i) {
      key[node(i)] = std::min(key[node(i)], i);
      present[node(i)] = 1;
    }
    auto edge = [&](size_t from, size_t to) {
      if (from == to) return;
      succ[from].push_back(to);
      ++preds[to];
    };
    for (size_t i = 0; i < n_; ++i)
      for (size_t j : users_[i])
        if (j < n_) edge(node(i), node(j));
    // Side effects keep their order; a write-back into x keeps its place
    // relative to every op that touches x's memory (the ops by the written
    // memory they touch, found once).
    std::unordered_map<const Symbolic*, std::vector<size_t>> touching;
    for (const BoundSymbol& b : t_.body)
      if (is_write_back(b)) touching.try_emplace(memory_owner(t_, write_back_target(b)));
    for (size_t j = 0; j < n_ && !touching.empty(); ++j)
      for_each_proxy(t_.body[j].args, [&](const Value& p) {
        if (!p.is(Type::Tensor)) return;
        auto it = touching.find(memory_owner(t_, p));
        if (it != touching.end() && (it->second.empty() || it->second.back() != j)) it->second.push_back(j);
      });
    size_t last_effect = SIZE_MAX;
    for (size_t i = 0; i < n_; ++i) {
      const BoundSymbol& b = t_.body[i];
      if (!b.sym.has_side_effect()) continue;
      if (last_effect != SIZE_MAX) edge(node(last_effect), node(i));
      last_effect = i;
      if (!is_write_back(b)) continue;
      auto ops = touching.find(memory_owner(t_, write_back_target(b)));
      if (ops == touching.end()) continue;
      for (size_t j : ops->second) {
        if (j < i) edge(node(j), node(i));
        else if (j > i) edge(node(i), node(j));
      }
    }
    using Item = std::pair<size_t, size_t>;  // (key, node)
    std::priority_queue<Item, std::vector<Item>, std::greater<>> ready;
    for (size_t v = 0; v < nodes; ++v)
      if (present[v] && preds[v] == 0) ready.push({key[v], v});
    std::vector<BoundSymbol> body;
    while (!ready.empty()) {
      size_t v = ready.top().second;
      ready.pop();
      body.push_back(v < n_ ? std::move(t_.body[v]) : fused(regions_[v - n_]));
      for (size_t w : succ[v])
        if (--preds[w] == 0) ready.push({key[w], w});
    }
    size_t expected = 0;
    for (char p : present) expected += size_t(p);
    if (body.size() != expected) throw std::logic_error("fusion: the regions form a cycle");
    return body;
  }

  // Region r as one prims.fusion, its members moved out of t_.
  BoundSymbol fused(const Region& r) {
    std::vector<size_t> members = r.members;
    std::sort(members.begin(), members.end());
    std::unordered_set<const Symbolic*> defined, seen;
    BoundSymbol f;
    f.sym = Symbol::of(PrimId::fusion);
    std::vector<Value> outs;
    for (size_t m : members) {
      BoundSymbol& b = t_.body[m];
      for_each_proxy(b.args, [&](const Value& p) {
        if (!defined.count(&p.symbolic()) && seen.insert(&p.symbolic()).second) f.args.push_back(p);
      });
      defined.insert(&b.out.symbolic());
      bool escapes = false;
      for (size_t j : users_[m]) escapes |= j == n_ || region_of_[j] != region_of_[m];
      if (escapes) outs.push_back(b.out);
      if (!f.loc.source) f.loc = b.loc;
      f.subsymbols.push_back(std::move(b));
      f.subsymbols.back().subsymbols.clear();
    }
    f.out = Value::tuple(std::move(outs));
    return f;
  }

  Trace t_;
  size_t n_;
  std::unordered_map<const Symbolic*, size_t> producer_;
  std::vector<std::vector<size_t>> users_;  // per op: the ops reading its values (n_: returned)
  std::vector<int> region_of_;
  std::vector<Region> regions_;
  mutable uint64_t search_ = 0;  // reaches()'s
  mutable std::vector<uint64_t> seen_op_, seen_region_;
};

}  // namespace

namespace {

// A write-back into a CUDA tensor of a value no kernel computes (an input,
// a view of one, a wrapped number) would run as the runtime's copy, a
// one-op copy kernel per write-back: it becomes
// copy_to_out_(convert_element_type(src), dst), a conversion to the same
// dtype, which fuses into a copy kernel the buffer plan writes into dst
// (horizontally with the trace's other write-backs). The result of a
// library op that updates its operand 0 in place (index_copy_ into a kv
// cache) stays: the buffer plan has the op write into dst itself where no
// later step reads dst's old value, which a copy kernel would prevent. On
// the host the runtime's copy is the same loop, so CPU traces keep it.
Trace device_copies(Trace t) {
  if (!t.functional) return t;
  std::unordered_map<const Symbolic*, const BoundSymbol*> producer;
  for (const BoundSymbol& b : t.body) {
    for_each_proxy(b.out, [&](const Value& d) { producer[&d.symbolic()] = &b; });
  }
  // The conversions go before the first write-back: a functional trace's
  // writes all come at its end.
  std::vector<BoundSymbol> converts;
  for (BoundSymbol& b : t.body) {
    if (b.sym.op || b.sym.prim != PrimId::copy_to_out_ || !is_tensor_proxy(b.args[0])) continue;
    const Value &src = b.args[0], &dst = b.args[1];
    const TensorProxy &s = tensor_proxy(src), &d = tensor_proxy(dst);
    auto it = producer.find(&src.symbolic());
    const BoundSymbol* p = it == producer.end() ? nullptr : it->second;
    if (d.device().type != DeviceType::CUDA || s.dtype() != d.dtype() || !same_sizes(s, d) ||
        (p && (fusible_compute(t, *p) || fusible_reduction(*p) || (is_library(p->sym) && p->sym.updates_operand0()))) ||
        !same_device(t, src, dst))
      continue;
    BoundSymbol convert;
    convert.sym = Symbol::of(PrimId::convert_element_type);
    convert.args = {src, Value(d.dtype())};
    convert.out = metadata_tensor(d.dtype(), d.device(), d.sizes);
    convert.loc = b.loc;
    b.args[0] = convert.out;
    converts.push_back(std::move(convert));
  }
  if (converts.empty()) return t;
  auto first = std::find_if(t.body.begin(), t.body.end(), [](const BoundSymbol& b) { return is_write_back(b); });
  t.body.insert(first, std::make_move_iterator(converts.begin()), std::make_move_iterator(converts.end()));
  return t;
}

}  // namespace

Trace fusion(Trace t) { return Fuser(device_copies(std::move(t))).run(); }

std::string_view codegen_status(const OpDef& op) {
  switch (op.family) {
    case OpFamily::Unary: return op.id == OpId::round ? "fused (decimals=0)" : "fused";
    case OpFamily::Binary:
      switch (op.id) {
        case OpId::floor_divide: case OpId::remainder: case OpId::fmod: case OpId::pow: case OpId::div:
          return "fused (float)";
        default: return "fused";
      }
    case OpFamily::Pointwise:
      switch (op.id) {
        case OpId::where: case OpId::clamp: case OpId::lerp: case OpId::addcmul: case OpId::addcdiv:
        case OpId::masked_fill: case OpId::isclose: return "fused";
        default: return "library";
      }
    case OpFamily::Reduction:
      switch (op.id) {
        case OpId::sum: case OpId::mean: case OpId::prod: case OpId::amax: case OpId::amin: case OpId::logsumexp:
          return "fused";
        case OpId::max: case OpId::min: return "fused (values)";
        // Two sweeps in float64 (decompose.cpp) unless a reduced size is symbolic.
        case OpId::var: case OpId::std: return "fused (static dims)";
        // A count of nonzero (zero) elements compared with 0.
        case OpId::all: case OpId::any: return "fused";
        default: return "library";
      }
    case OpFamily::Conversion: return "fused";
    case OpFamily::View: return "view";
    // Read from the proxies' metadata while tracing (x.T, x.mT: views);
    // item and tolist read the values.
    case OpFamily::Attribute:
      if (op.id == OpId::item || op.id == OpId::tolist) return "library";
      return op.schema.returns == "Tensor" ? "view" : "metadata";
    case OpFamily::Copy:
      // A copy kernel where its result keeps eager's contiguous strides.
      return op.id == OpId::clone || op.id == OpId::contiguous ? "fused (contiguous result)" : "library";
    default: return "library";
  }
}

bool fusion_reads_elementwise(const BoundSymbol& f, const Value& leaf) {
  if (!is_tensor_proxy(leaf)) return true;
  bool shaped = false;
  for (const Value& o : f.out.items()) shaped |= same_sizes(tensor_proxy(o), tensor_proxy(leaf));
  if (!shaped) return false;
  // Values read through a view. (A leaf read over a reduction's elements
  // and written by an output of its shape is read and written at one
  // index: the output is a store of the reduction's input shape, or the
  // reduced dims have size 1.)
  std::unordered_set<const Symbolic*> viewed;
  for (size_t k = f.subsymbols.size(); k-- > 0;) {
    const BoundSymbol& m = f.subsymbols[k];
    if (!m.sym.is_view() && !viewed.count(&m.out.symbolic())) continue;
    for (const Value& a : m.args)
      if (is_tensor_proxy(a)) viewed.insert(&a.symbolic());
  }
  return !viewed.count(&leaf.symbolic());
}

bool fusion_stores_after_reads(const BoundSymbol& f, const Value& out, const Value& leaf) {
  // As backend/kernel_ir sweeps: a value's level is the reductions it needs,
  // nested (a reduction's is its operand's plus its own). An output is
  // stored in the sweep of its level; one of the reduced shape after every
  // sweep (per reduced element). An elementwise value is computed, and its
  // leaves loaded, in every sweep whose values use it: the latest of them
  // is where the leaf is read last. A reduction folds its operand in the
  // sweep before its level.
  // (Without a reduction there is one sweep: every store follows its loads.)
  if (std::none_of(f.subsymbols.begin(), f.subsymbols.end(), [](const BoundSymbol& m) { return is_fusible_reduction(m); }))
    return true;
  constexpr int kEnd = std::numeric_limits<int>::max();
  std::unordered_map<const Symbolic*, int> level;
  const Value* reduced = nullptr;
  auto level_of = [&](const Value& v) {
    auto it = level.find(&v.symbolic());
    return it == level.end() ? 0 : it->second;
  };
  for (const BoundSymbol& m : f.subsymbols) {
    std::vector<Value> ps;
    for (const Value& a : m.args) collect_proxies(a, ps);
    int l = 0;
    for (const Value& p : ps) l = std::max(l, level_of(p));
    if (is_fusible_reduction(m) && !reduced) reduced = &m.out;
    std::vector<Value> outs;
    collect_proxies(m.out, outs);
    for (const Value& o : outs) level[&o.symbolic()] = l + int(is_fusible_reduction(m));
  }
  auto stored_at = [&](const Value& o) {
    return reduced && same_sizes(tensor_proxy(o), tensor_proxy(*reduced)) ? kEnd : level_of(o);
  };
  std::unordered_map<const Symbolic*, int> need;  // the latest sweep that reads a value
  auto read_in = [&](const Value& v, int sweep) {
    auto [it, fresh] = need.try_emplace(&v.symbolic(), sweep);
    if (!fresh) it->second = std::max(it->second, sweep);
  };
  std::vector<Value> outs;
  collect_proxies(f.out, outs);
  for (const Value& o : outs)
    if (o.is(Type::Tensor)) read_in(o, stored_at(o));
  for (size_t k = f.subsymbols.size(); k-- > 0;) {
    const BoundSymbol& m = f.subsymbols[k];
    std::vector<Value> mine;
    collect_proxies(m.out, mine);
    int sweep = -1;
    for (const Value& o : mine)
      if (auto it = need.find(&o.symbolic()); it != need.end()) sweep = std::max(sweep, it->second);
    if (sweep < 0) continue;  // unused
    if (is_fusible_reduction(m)) sweep = level_of(m.out) - 1;
    std::vector<Value> ps;
    for (const Value& a : m.args) collect_proxies(a, ps);
    for (const Value& p : ps)
      if (p.is(Type::Tensor)) read_in(p, sweep);
  }
  auto it = need.find(&leaf.symbolic());
  return it == need.end() || stored_at(out) >= it->second;
}

bool fusion_reads_at_store(const BoundSymbol& f, const Value& leaf, const Region& leaf_region, const Region& store) {
  // Each value computed from the leaf: the regions of the leaf's memory its
  // element at index i reads (a view maps them as it maps indices; a
  // pointwise prim's operands are of its shape, by the prim contract; a
  // reduction of them reads other elements: refused, unless it reduces
  // size-1 dims only).
  std::unordered_map<const Symbolic*, std::vector<Region>> reads{{&leaf.symbolic(), {leaf_region}}};
  for (const BoundSymbol& m : f.subsymbols) {
    std::vector<Region> rs;
    bool from_leaf = false, ok = true;
    for_each_proxy(m.args, [&](const Value& a) {
      auto it = reads.find(&a.symbolic());
      if (it == reads.end()) return;
      from_leaf = true;
      if (m.sym.is_view()) {
        auto out = static_sizes(m.out);
        for (const Region& r : it->second) {
          ViewResult v = view_region(m.sym, std::span<const Value>(m.args).subspan(1), r, out ? &*out : nullptr);
          ok = ok && v.known;
          rs.push_back(std::move(v.region));
        }
      } else {
        ok = ok && m.out.is(Type::Tensor) && same_sizes(tensor_proxy(a), tensor_proxy(m.out));
        rs.insert(rs.end(), it->second.begin(), it->second.end());
      }
    });
    if (!from_leaf) continue;
    if (!ok) return false;
    reads[&m.out.symbolic()] = std::move(rs);
  }
  // Read where it is stored, at the same index, or apart from the store.
  auto same_elements = [](const Region& a, const Region& b) {
    if (a.sizes != b.sizes || !a.offset || a.offset != b.offset) return false;
    for (size_t d = 0; d < a.sizes.size(); ++d)
      if (a.sizes[d] > 1 && a.strides[d] != b.strides[d]) return false;
    return true;
  };
  for (const Value& o : f.out.items())
    if (auto it = reads.find(&o.symbolic()); it != reads.end())
      for (const Region& r : it->second)
        if (!same_elements(r, store) && !disjoint(r, store)) return false;
  return true;
}

}  // namespace thn
