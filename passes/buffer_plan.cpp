#include "passes/buffer_plan.h"

#include "passes/alias_analysis.h"
#include "passes/fusion.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace thn {

namespace {

bool same_meta(const Value& a, const Value& b) {
  const auto &p = tensor_proxy(a), &q = tensor_proxy(b);
  return p.dtype() == q.dtype() && p.device() == q.device() && same_sizes(p, q);
}

std::vector<Value> tensors_in(const std::vector<Value>& args) {
  std::vector<Value> ts;
  for_each_proxy(args, [&](const Value& p) {
    if (p.is(Type::Tensor)) ts.push_back(p);
  });
  return ts;
}

class Planner {
 public:
  explicit Planner(Trace t) : t_(std::move(t)) {}

  Trace run() {
    if (plannable()) {
      place_all();
      store_through_views();
    }
    add_frees();
    return std::move(t_);
  }

 private:
  struct Buffer {
    Value input;                  // an updated input's own memory; None for a new buffer
    std::vector<Value> occupants;  // the values written into it, in order
  };

  const Symbolic* owner(const Value& v) const { return memory_owner(t_, v); }

  // Buffers are planned for functional traces; others run in program order.
  bool plannable() const { return t_.functional && !t_.layouts.empty(); }

  void place_all() {
    const size_t n = t_.body.size();
    // The last op that reads each owner's memory (through any view of it);
    // returned values are read at n.
    for (size_t i = 0; i < n; ++i) {
      const BoundSymbol& b = t_.body[i];
      if (b.sym.is_view()) continue;
      // A write-back reads its source; its destination is what it writes.
      std::vector<Value> reads = is_write_back(b) ? tensors_in({write_back_source(b)}) : tensors_in(b.args);
      for (const Value& p : reads) last_read_[owner(p)] = i;
    }
    // An updated input is an input, or the range of memory that inputs
    // share (functionalize: a view of the member at its start).
    std::unordered_set<const Symbolic*> written;
    for (size_t i = 0; i < n; ++i) {
      const BoundSymbol& b = t_.body[i];
      if (!is_write_back(b)) continue;
      const Value& x = write_back_target(b);
      writeback_at_[&x.symbolic()] = i;
      written.insert(owner(x));
      if (!b.sym.op) final_of_[&write_back_source(b).symbolic()] = x;
      buffer_of_[&x.symbolic()] = int(buffers_.size());
      buffers_.push_back({x, {x}});
    }
    // Returned views of an updated input are taken after its write-back
    // (functionalize): they read its new contents, not the old value.
    std::vector<Value> outs;
    collect_proxies(t_.output, outs);
    for (const Value& o : outs) {
      if (!o.is(Type::Tensor)) continue;
      if (!written.count(owner(o))) last_read_[owner(o)] = n;
      returned_.insert(owner(o));
    }

    for (size_t i = 0; i < n; ++i) {
      const BoundSymbol& b = t_.body[i];
      if (b.sym.is_view() || is_write_back(b)) continue;
      std::vector<Value> rs;
      collect_proxies(b.out, rs);
      bool fused = is_fusion(b);
      if (!fused && rs.size() != 1) continue;
      std::vector<Value> into(rs.size());
      const std::vector<Value> reads = tensors_in(b.args);
      bool placed = false;
      for (size_t k = 0; k < rs.size(); ++k) {
        const Value& r = rs[k];
        if (!r.is(Type::Tensor) || owner(r) != &r.symbolic()) continue;
        std::vector<int> candidates;
        if (auto f = final_of_.find(&r.symbolic()); f != final_of_.end())
          candidates.push_back(buffer_of_.at(&f->second.symbolic()));
        for (const Value& a : b.args)
          if (is_tensor_proxy(a))
            if (auto it = buffer_of_.find(&a.symbolic()); it != buffer_of_.end()) candidates.push_back(it->second);
        for (int c : candidates) {
          Value x = fits(i, r, c, reads);
          if (x.is_none()) continue;
          buffers_[size_t(c)].occupants.push_back(r);
          buffer_of_[&r.symbolic()] = c;
          into[k] = x;
          placed = true;
          break;
        }
        if (!buffer_of_.count(&r.symbolic())) {
          buffer_of_[&r.symbolic()] = int(buffers_.size());
          buffers_.push_back({Value(), {r}});
        }
      }
      if (placed) t_.body[i].into = fused ? Value::tuple(std::move(into)) : into[0];
    }

    // Write-backs whose value was computed in place disappear.
    std::vector<BoundSymbol> body;
    for (BoundSymbol& b : t_.body) {
      if (!b.sym.op && b.sym.prim == PrimId::copy_to_out_) {
        auto c = buffer_of_.find(&b.args[0].symbolic());
        if (c != buffer_of_.end() && c->second == buffer_of_.at(&b.args[1].symbolic())) continue;
      }
      body.push_back(std::move(b));
    }
    t_.body = std::move(body);
  }

  int64_t last_read(const Symbolic* v) const {
    auto it = last_read_.find(v);
    return it == last_read_.end() ? -1 : int64_t(it->second);
  }

  // Whether op i, which reads the tensors `reads`, may write its result r
  // into buffer c; the tensor to write into when it may, else None.
  Value fits(size_t i, const Value& r, int c, const std::vector<Value>& reads) const {
    const Buffer& buf = buffers_[size_t(c)];
    const BoundSymbol& b = t_.body[i];
    if (!same_meta(r, buf.occupants.front())) return Value();
    // An updated input's memory is overwritten by its write-back: a value
    // other than its final one must be dead by then.
    if (!buf.input.is_none()) {
      auto f = final_of_.find(&r.symbolic());
      bool is_final = f != final_of_.end() && &f->second.symbolic() == &buf.input.symbolic();
      if (!is_final && last_read(&r.symbolic()) >= int64_t(writeback_at_.at(&buf.input.symbolic()))) return Value();
      // A returned value (or view of it) copied into an input keeps memory
      // of its own, as eager's does: the caller may write through it.
      if (returned_.count(&r.symbolic())) return Value();
    }
    // Every earlier value of the buffer is dead, or read for the last time
    // by this op as the very tensor it updates in place.
    // (An occupant joined once every earlier one was dead: walking back, the
    // first dead one ends the search.)
    Value live;
    for (auto o = buf.occupants.rbegin(); o != buf.occupants.rend(); ++o) {
      const Value& occ = *o;
      // Its memory (an updated range of shared memory is a view of an input).
      const Symbolic* memory = owner(occ);
      int64_t lr = last_read(memory);
      if (lr < int64_t(i)) break;
      if (lr > int64_t(i)) return Value();
      int count = 0;
      for (const Value& p : reads) {
        if (owner(p) != memory) continue;
        if (&p.symbolic() != &occ.symbolic()) {  // a view of it: other elements
          if (writes_apart(t_, b, p)) continue;
          return Value();
        }
        if (is_fusion(b) && !fusion_reads_elementwise(b, p)) return Value();  // viewed inside the fusion
        if (is_fusion(b) && !fusion_stores_after_reads(b, r, p)) return Value();  // a later sweep reads it
        ++count;
      }
      live = occ;
      if (!b.sym.writes_into_any() &&
          !(b.sym.updates_operand0() && count == 1 && &b.args[0].symbolic() == &occ.symbolic()))
        return Value();
    }
    if (!buf.input.is_none()) {
      if (b.sym.writes_into_any()) return buf.input;
      return live.is_none() ? Value() : live;
    }
    // A new buffer's tensor is reachable through its value read here only.
    return live;
  }

  // The memory a value is in: its buffer's (named by the buffer's first
  // value), or its owner's.
  const Symbolic* memory(const Value& v) const {
    const Symbolic* o = owner(v);
    auto it = buffer_of_.find(o);
    return it == buffer_of_.end() ? o : &buffers_[size_t(it->second)].occupants.front().symbolic();
  }

  // Whether a region has elements at one place (an expanded view: its
  // writes are fill_'s, which the copy makes).
  static bool overlaps_itself(const Region& r) {
    std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size) of the dims of size > 1
    for (size_t d = 0; d < r.sizes.size(); ++d)
      if (r.sizes[d] > 1) dims.emplace_back(r.strides[d], r.sizes[d]);
    std::sort(dims.begin(), dims.end());
    int64_t span = 0;  // of the dims inside: the last element's distance from the first
    for (auto [stride, size] : dims) {
      if (stride <= span) return true;
      span += (size - 1) * stride;
    }
    return false;
  }

  // A fusion result whose one use puts it into a view of other memory is
  // stored there by the fusion: the kernel writes `x[:, 1:] *= 2` into x.
  //  - t = copy_into_view(x, r, steps), planned in place: r goes into
  //    steps(x), the copy goes and t's uses read x;
  //  - copy_to_out_(w, x) with w a reshape of r and x contiguous: r goes into
  //    x viewed in r's shape, the write-back goes.
  // Nothing may read that memory between the fusion and the copy, and the
  // fusion reads each element of it it stores at the same index, or none.
  void store_through_views() {
    std::vector<BoundSymbol>& body = t_.body;
    std::unordered_map<const Symbolic*, std::vector<size_t>> readers;  // memory -> the ops reading it
    std::unordered_map<const Symbolic*, size_t> def;
    for (size_t i = 0; i < body.size(); ++i) {
      const BoundSymbol& b = body[i];
      for_each_proxy(b.out, [&](const Value& o) { def[&o.symbolic()] = i; });
      if (b.sym.is_view()) continue;
      for (const Value& p : is_write_back(b) ? tensors_in({write_back_source(b)}) : tensors_in(b.args)) {
        std::vector<size_t>& r = readers[memory(p)];
        if (r.empty() || r.back() != i) r.push_back(i);
      }
    }
    std::vector<std::vector<BoundSymbol>> before(body.size());
    std::vector<char> drop(body.size(), 0);
    for (size_t j = 0; j < body.size(); ++j) {
      const BoundSymbol& c = body[j];
      Value dst, r;
      std::vector<std::pair<Symbol, std::vector<Value>>> steps;
      if (!c.sym.op && c.sym.prim == PrimId::copy_into_view && !c.into.is_none()) {
        dst = c.args[0], r = c.args[1];
        for (const Value& step : c.args[2].items())
          steps.emplace_back(symbol_named(step.items()[0].as_str()), std::vector<Value>(step.items().begin() + 1, step.items().end()));
      } else if (!c.sym.op && c.sym.prim == PrimId::copy_to_out_) {
        dst = c.args[1], r = c.args[0];
        while (def.count(&r.symbolic()) && body[def.at(&r.symbolic())].sym.is_view()) {
          const BoundSymbol& v = body[def.at(&r.symbolic())];
          const OpId id = v.sym.op ? v.sym.op->id : OpId::clone;
          if (id != OpId::reshape && id != OpId::squeeze && id != OpId::unsqueeze) break;
          r = v.args[0];
        }
        auto sizes = static_sizes(r), dst_sizes = static_sizes(dst);
        if (&r.symbolic() == &c.args[0].symbolic() || !sizes || !dst_sizes) continue;
        std::optional<Region> whole = region_of(t_, dst);
        if (!whole || whole->offset != 0 || whole->strides != contiguous_strides(*dst_sizes)) continue;
        std::vector<Value> shape;
        for (int64_t d : *sizes) shape.push_back(Value(d));
        steps.emplace_back(Symbol::prim_op(op_def(OpId::reshape)), std::vector<Value>{Value::tuple(std::move(shape))});
      } else {
        continue;
      }
      // r: a fresh output of a fusion, used by this op alone.
      auto d = def.find(&r.symbolic());
      if (d == def.end() || !is_fusion(body[d->second]) || owner(r) != &r.symbolic() || returned_.count(&r.symbolic())) continue;
      const size_t i = d->second;
      BoundSymbol& f = body[i];
      const std::vector<Value>& outs = f.out.items();
      const size_t k = size_t(std::find_if(outs.begin(), outs.end(), [&](const Value& o) { return &o.symbolic() == &r.symbolic(); }) - outs.begin());
      if (f.into.is_sequence() && !f.into.items()[k].is_none()) continue;
      if (readers[memory(r)] != std::vector<size_t>{j}) continue;
      // dst's memory (dst, or a range of shared memory), from before the
      // fusion, unread until j.
      const Symbolic* m = memory(dst);
      if (def.count(&dst.symbolic()) && def.at(&dst.symbolic()) >= i) continue;
      const std::vector<size_t>& rd = readers[m];
      if (std::any_of(rd.begin(), rd.end(), [&](size_t x) { return x > i && x < j; })) continue;
      // The view: dst's region through the steps, of r's sizes.
      std::optional<Region> at = region_of(t_, dst);
      if (!at || !at->offset) continue;
      std::vector<BoundSymbol> views;
      std::vector<Region> regions;
      Value v = dst;
      for (auto& [sym, rest] : steps) {
        ViewResult n = view_region(sym, rest, *at, nullptr);
        if (!n.known) break;
        at = n.region;
        regions.push_back(n.region);
        BoundSymbol b;
        b.sym = sym;
        b.args = {v};
        b.args.insert(b.args.end(), rest.begin(), rest.end());
        std::vector<Value> sizes;
        for (int64_t x : at->sizes) sizes.push_back(Value(x));
        b.out = metadata_tensor(tensor_proxy(dst).dtype(), tensor_proxy(dst).device(), std::move(sizes));
        b.loc = c.loc;
        v = b.out;
        views.push_back(std::move(b));
      }
      if (views.size() != steps.size() || static_sizes(r) != at->sizes || overlaps_itself(*at)) continue;
      // (With reductions, a store in an earlier sweep than a read of the
      // memory would overwrite what that read needs.)
      bool apart = true;
      for (const Value& a : f.args) {
        if (!is_tensor_proxy(a) || memory(a) != m) continue;
        std::optional<Region> ra = region_of(t_, a);
        apart = apart && ra && fusion_reads_at_store(f, a, *ra, *at) && fusion_stores_after_reads(f, r, a);
      }
      if (!apart) continue;
      for (size_t q = 0; q < views.size(); ++q)
        t_.layouts[&views[q].out.symbolic()] = Layout{t_.layouts.at(&dst.symbolic()).base, regions[q].strides, false, regions[q].offset};
      std::vector<Value> into = f.into.is_sequence() ? f.into.items() : std::vector<Value>(outs.size());
      into[k] = v;
      f.into = Value::tuple(std::move(into));
      for (BoundSymbol& b : views) before[i].push_back(std::move(b));
      drop[j] = 1;
      // t's uses read dst, which now holds t.
      if (c.out.is_proxy()) {
        // So do the readers of t's views (their layouts name t): a later
        // write into dst must see them as readers of dst's memory.
        const Symbolic* held = memory(c.out);
        if (held != m) {
          std::vector<size_t>& into = readers[m];
          const std::vector<size_t>& from = readers[held];
          into.insert(into.end(), from.begin(), from.end());
          std::sort(into.begin(), into.end());
          into.erase(std::unique(into.begin(), into.end()), into.end());
        }
        std::unordered_map<const Symbolic*, Value> rename{{&c.out.symbolic(), dst}};
        for (size_t q = j + 1; q < body.size(); ++q) {
          for (Value& a : body[q].args) a = substitute(a, rename);
          for (BoundSymbol& m : body[q].subsymbols)  // (a fusion's prims read its leaves)
            for (Value& a : m.args) a = substitute(a, rename);
          body[q].into = substitute(body[q].into, rename);
        }
        t_.output = substitute(t_.output, rename);
      }
    }
    std::vector<BoundSymbol> out;
    for (size_t i = 0; i < body.size(); ++i) {
      for (BoundSymbol& b : before[i]) out.push_back(std::move(b));
      if (!drop[i]) out.push_back(std::move(body[i]));
    }
    body = std::move(out);
  }

  // Drops every computed value after its last appearance (returned values
  // and inputs stay).
  void add_frees() {
    std::unordered_set<const Symbolic*> kept;
    std::vector<Value> outs;
    collect_proxies(t_.output, outs);
    for (const Value& o : outs) kept.insert(&o.symbolic());
    std::unordered_map<const Symbolic*, size_t> last;
    std::vector<Value> order;
    for (size_t i = 0; i < t_.body.size(); ++i) {
      BoundSymbol& b = t_.body[i];
      b.frees.clear();
      auto read = [&](const Value& p) {
        if (auto it = last.find(&p.symbolic()); it != last.end()) it->second = i;
      };
      for_each_proxy(b.args, read);
      for_each_proxy(b.into, read);
      for_each_proxy(b.out, [&](const Value& d) {
        if (d.is(Type::Tensor) && !kept.count(&d.symbolic())) {
          last[&d.symbolic()] = i;
          order.push_back(d);
        }
      });
    }
    for (const Value& v : order) t_.body[last.at(&v.symbolic())].frees.push_back(v);
  }

  Trace t_;
  std::unordered_map<const Symbolic*, size_t> last_read_;
  std::unordered_map<const Symbolic*, size_t> writeback_at_;  // an updated input -> its write-back
  std::unordered_map<const Symbolic*, Value> final_of_;       // computed -> the input it is copied to
  std::unordered_set<const Symbolic*> returned_;             // the memory of the returned tensors
  std::vector<Buffer> buffers_;
  std::unordered_map<const Symbolic*, int> buffer_of_;
};

}  // namespace

Trace buffer_plan(Trace t) { return Planner(std::move(t)).run(); }

BufferStats buffer_stats(const Trace& planned) {
  BufferStats s;
  auto owner = [&](const Value& v) { return memory_owner(planned, v); };
  // Each computed value's buffer: its own, or the one it was written into.
  std::unordered_map<const Symbolic*, const Symbolic*> buffer;
  auto buffer_of = [&](const Symbolic* v) {
    auto it = buffer.find(v);
    return it == buffer.end() ? v : it->second;
  };
  std::vector<const Symbolic*> fresh;
  for (const BoundSymbol& b : planned.body) {
    if (is_write_back(b)) {
      ++s.writeback_copies;
      continue;
    }
    if (b.sym.is_view()) continue;
    std::vector<Value> rs, into;
    collect_proxies(b.out, rs);
    if (b.into.is_sequence()) into = b.into.items();
    else into.push_back(b.into);
    for (size_t k = 0; k < rs.size(); ++k) {
      const Value& r = rs[k];
      if (!r.is(Type::Tensor) || owner(r) != &r.symbolic()) continue;
      const Value& x = k < into.size() ? into[k] : Value();
      if (x.is_none()) fresh.push_back(&r.symbolic());
      else buffer[&r.symbolic()] = buffer_of(owner(x));
    }
  }
  std::unordered_set<const Symbolic*> returned;
  std::vector<Value> outs;
  collect_proxies(planned.output, outs);
  for (const Value& o : outs)
    if (o.is(Type::Tensor)) returned.insert(buffer_of(owner(o)));
  s.new_buffers = int(fresh.size());
  for (const Symbolic* f : fresh) s.temporaries += !returned.count(f);
  return s;
}

}  // namespace thn
