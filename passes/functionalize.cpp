#include "passes/functionalize.h"

#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace thn {

namespace {

// One view prim of a chain: the symbol, its operands after the tensor, and
// the value it defined (for its metadata).
struct Step {
  Symbol sym;
  std::vector<Value> rest;
  Value out;
};

// What an original tensor value is: `chain` applied to `base` (a base has an
// empty chain). `value` is what uses read, computed from the base's value
// `derived_from`; a write into the base makes it stale.
struct Alias {
  Value base;
  std::vector<Step> chain;
  const Symbolic* derived_from = nullptr;
  Value value;
};

Value fresh_like(const Value& v) {
  const auto& p = tensor_proxy(v);
  return metadata_tensor(p.dtype(), p.device(), p.sizes);
}

class Functionalizer {
 public:
  explicit Functionalizer(const Trace& t) : in_(t) {}

  std::optional<Trace> run() {
    out_ = in_.shell();
    out_.body.reserve(in_.body.size());
    alias_.reserve(in_.body.size() + in_.inputs.size());
    current_.reserve(in_.body.size() + in_.inputs.size());
    uses_.reserve(in_.body.size() + in_.inputs.size());
    for (const Value& v : in_.inputs)
      if (is_tensor_proxy(v)) add_input(v);
    for (const auto& [proxy, tensor] : in_.captured) add_input(proxy);
    for (const StorageGroup& g : in_.storage_groups) share_memory(g);
    auto use = [&](const Value& u) { uses_[&u.symbolic()]++; };
    for (const BoundSymbol& b : in_.body) for_each_proxy(b.args, use);
    for_each_proxy(in_.output, use);
    for (const BoundSymbol& b : in_.body) {
      if (b.sym.mutates()) {
        if (!(b.sym.op && b.sym.is_prim && b.sym.op->id == OpId::copy_)) return std::nullopt;
        // Inputs that overlap without storage groups (of several dtypes).
        if (in_.inputs_overlap && in_.storage_groups.empty() && is_input(alias_.at(&b.args[0].symbolic()).base))
          return std::nullopt;
        write(b);
      } else if (b.sym.is_view()) {
        view(b);
      } else {
        BoundSymbol c = b;
        for (Value& a : c.args) a = rewrite(a);
        out_.body.push_back(std::move(c));
        for_each_proxy(b.out, [&](const Value& o) {
          if (o.is(Type::Tensor)) {
            add_base(o);
            computed_.insert(&o.symbolic());
          }
        });
      }
    }
    finish();
    out_.functional = true;
    return std::move(out_);
  }

 private:
  void add_base(const Value& v) {
    alias_[&v.symbolic()] = Alias{v, {}, &v.symbolic(), v};
    current_[&v.symbolic()] = v;
  }
  void add_input(const Value& v) {
    add_base(v);
    inputs_.push_back(v);
    input_set_.insert(&v.symbolic());
  }

  // Inputs sharing memory become views of one base, the range they share
  // (as_strided of the member at its start): a write through one member is
  // a write into the base, which the others' reads then see, and the base
  // is written back once.
  void share_memory(const StorageGroup& g) {
    size_t first = size_t(std::find(g.offsets.begin(), g.offsets.end(), 0) - g.offsets.begin());
    const auto& p = tensor_proxy(g.members[first]);
    auto ints = [](const std::vector<int64_t>& xs) {
      std::vector<Value> vs;
      for (int64_t x : xs) vs.push_back(Value(x));
      return Value::tuple(std::move(vs));
    };
    Value base = emit(Symbol::of(PrimId::as_strided), {g.members[first], ints({g.extent}), ints({1}), Value(int64_t(0))},
                      metadata_tensor(p.dtype(), p.device(), {Value(g.extent)}), loc_);
    add_input(base);
    shared_bases_.insert(&base.symbolic());
    for (size_t k = 0; k < g.members.size(); ++k) {
      const Value& m = g.members[k];
      Step step{Symbol::of(PrimId::as_strided), {ints(g.sizes[k]), ints(g.strides[k]), Value(g.offsets[k])}, m};
      Alias a{base, {step}, &base.symbolic(), Value()};
      a.value = replay(base, a.chain);
      alias_[&m.symbolic()] = std::move(a);
      current_.erase(&m.symbolic());
      std::erase_if(inputs_, [&](const Value& v) { return &v.symbolic() == &m.symbolic(); });
      input_set_.erase(&m.symbolic());
    }
  }

  Value emit(Symbol sym, std::vector<Value> args, Value out, const Place& loc) {
    BoundSymbol b;
    b.sym = sym;
    b.args = std::move(args);
    b.out = out;
    b.loc = loc;
    out_.body.push_back(std::move(b));
    return out;
  }

  Value replay(Value x, const std::vector<Step>& chain) {
    const Symbolic* root = &x.symbolic();
    for (const Step& s : chain) {
      std::vector<Value> args{x};
      args.insert(args.end(), s.rest.begin(), s.rest.end());
      x = emit(s.sym, std::move(args), fresh_like(s.out), loc_);
      replayed_from_[&x.symbolic()] = root;
    }
    return x;
  }

  // The value whose memory v views, when v is a view (original or re-derived).
  const Symbolic* viewed(const Value& v) const {
    if (auto r = replayed_from_.find(&v.symbolic()); r != replayed_from_.end()) return r->second;
    if (auto a = alias_.find(&v.symbolic()); a != alias_.end() && !a->second.chain.empty()) return &a->second.base.symbolic();
    return nullptr;
  }

  // The value an original tensor value has now. A view the base's last
  // write wrote whole is that write's value (`x[0].mul_(b).add_(c)` reads
  // the product), for the ops of the body (returned views stay views).
  Value read(const Value& v, bool forward = false) {
    auto it = alias_.find(&v.symbolic());
    if (it == alias_.end()) return v;
    Alias& a = it->second;
    const Value& cur = current_.at(&a.base.symbolic());
    auto w = last_write_.find(&a.base.symbolic());
    if (w != last_write_.end() && w->second.result == &cur.symbolic()) {
      if (forward && !a.chain.empty() && same_chain(w->second.chain, a.chain)) return w->second.src;
      w->second.read = true;
    }
    if (a.chain.empty()) return cur;
    if (a.derived_from != &cur.symbolic()) {  // the base was written since: re-derive
      a.value = replay(cur, a.chain);
      a.derived_from = &cur.symbolic();
    }
    return a.value;
  }

  // An op's operand as the value it has now; `forward`: a view the last
  // write wrote whole may be that write's value (for ops that compute, not
  // for views: a view of the forwarded value would alias its memory).
  Value rewrite(const Value& v, bool forward = true) {
    if (is_tensor_proxy(v)) return read(v, forward);
    return map_items(v, [this, forward](const Value& x) { return rewrite(x, forward); });
  }

  void view(const BoundSymbol& b) {
    loc_ = b.loc;
    BoundSymbol c = b;
    for (Value& a : c.args) a = rewrite(a, false);
    out_.body.push_back(std::move(c));
    const Alias& in = alias_.at(&b.args[0].symbolic());
    Alias a{in.base, in.chain, &current_.at(&in.base.symbolic()).symbolic(), b.out};
    a.chain.push_back({b.sym, std::vector<Value>(b.args.begin() + 1, b.args.end()), b.out});
    alias_[&b.out.symbolic()] = std::move(a);
  }

  static bool same_chain(const std::vector<Step>& a, const std::vector<Step>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].sym.name() != b[i].sym.name() || a[i].rest.size() != b[i].rest.size()) return false;
      for (size_t k = 0; k < a[i].rest.size(); ++k)
        if (to_repr(a[i].rest[k].without_proxy()) != to_repr(b[i].rest[k].without_proxy()) ||
            a[i].rest[k].is_proxy() != b[i].rest[k].is_proxy() ||
            (a[i].rest[k].is_proxy() && &a[i].rest[k].symbolic() != &b[i].rest[k].symbolic()))
          return false;
    }
    return true;
  }

  // t = prims.copy_(dst, src): the base of dst gets a new value.
  void write(const BoundSymbol& b) {
    loc_ = b.loc;
    const Alias dst = alias_.at(&b.args[0].symbolic());
    Value base = dst.base;
    Value& cur = current_.at(&base.symbolic());
    auto s = alias_.find(&b.args[1].symbolic());
    if (s != alias_.end() && &s->second.base.symbolic() == &base.symbolic() && same_chain(s->second.chain, dst.chain)) {
      // `x[0] += 1` stores x[0]'s own current value back into x[0]: no write.
    } else if (dst.chain.empty()) {
      cur = read(b.args[1]);
      // The base now holds a value something else may hold too (an input,
      // a view, a tensor the program still uses), unless the source is a
      // temporary only this write reads (`x.add_(1)` is add, then copy_).
      const Alias& src = alias_.at(&b.args[1].symbolic());
      bool temporary = uses_[&b.args[1].symbolic()] == 1 && src.chain.empty() &&
                       &src.base.symbolic() == &b.args[1].symbolic() && !is_input(src.base);
      if (temporary) borrowed_.erase(&base.symbolic());
      else borrowed_.insert(&base.symbolic());
    } else if (reshapes_only(dst.chain) && same_sizes(tensor_proxy(b.args[1]), tensor_proxy(b.args[0])) &&
               tensor_proxy(b.args[1]).dtype() == tensor_proxy(base).dtype()) {
      // A view of all of the base in its element order (`v = q.view(-1);
      // v.add_(1)`): the base's new value is the value written, reshaped back.
      const Alias& src = alias_.at(&b.args[1].symbolic());
      const Value value = read(b.args[1]);
      cur = emit(Symbol::prim_op(op_def(OpId::reshape)), {value, Value::tuple(tensor_proxy(base).sizes)},
                 fresh_like(base), b.loc);
      if (computed_.count(&value.symbolic())) computed_.insert(&cur.symbolic());
      bool temporary = uses_[&b.args[1].symbolic()] == 1 && src.chain.empty() &&
                       &src.base.symbolic() == &b.args[1].symbolic() && !is_input(src.base);
      if (temporary) borrowed_.erase(&base.symbolic());
      else borrowed_.insert(&base.symbolic());
    } else {
      Value src = read(b.args[1]);
      std::vector<Value> steps;
      for (const Step& s : dst.chain) {
        std::vector<Value> step{Value::str(s.sym.name())};
        step.insert(step.end(), s.rest.begin(), s.rest.end());
        steps.push_back(Value::tuple(std::move(step)));
      }
      // A write over the last one, whose value nothing read, writes into
      // the value before it (the last one is then dead).
      Value before = cur;
      auto w = last_write_.find(&base.symbolic());
      if (w != last_write_.end() && w->second.result == &cur.symbolic() && !w->second.read &&
          same_chain(w->second.chain, dst.chain))
        before = w->second.before;
      cur = emit(Symbol::of(PrimId::copy_into_view), {before, src, Value::list(std::move(steps))}, fresh_like(base), b.loc);
      computed_.insert(&cur.symbolic());
      borrowed_.erase(&base.symbolic());
      const TensorProxy &sp = tensor_proxy(src), &vp = tensor_proxy(dst.chain.back().out);
      if (sp.dtype() == vp.dtype() && same_sizes(sp, vp))
        last_write_[&base.symbolic()] = {dst.chain, src, before, &cur.symbolic(), false};
      else
        last_write_.erase(&base.symbolic());
    }
    if (b.out.is_proxy()) alias_[&b.out.symbolic()] = Alias{base, dst.chain, nullptr, Value()};
  }

  // Views that keep every element of what they view, in its order.
  static bool reshapes_only(const std::vector<Step>& chain) {
    return std::all_of(chain.begin(), chain.end(), [](const Step& s) {
      return s.sym.op && (s.sym.op->id == OpId::reshape || s.sym.op->id == OpId::squeeze || s.sym.op->id == OpId::unsqueeze);
    });
  }

  bool is_shared_memory(const Value& base) const { return shared_bases_.count(&base.symbolic()) > 0; }

  bool is_input(const Value& base) const { return input_set_.count(&base.symbolic()) > 0; }

  // The write-backs in an order where one whose value reads another mutated
  // input's old memory (`b.copy_(a); a.fill_(1)`) runs before that input is
  // overwritten; a cycle (a swap) is broken by copying one value first.
  // Of the write-backs ready at each point, the first in `mutated` goes.
  std::vector<Value> ordered_write_backs(const std::vector<Value>& mutated) {
    std::unordered_map<const Symbolic*, size_t> index;
    for (size_t i = 0; i < mutated.size(); ++i) index[&mutated[i].symbolic()] = i;
    // reads[k]: the write-back whose old memory k's value still reads (it is
    // that input, or a view taken before the input was written), or none.
    constexpr size_t kNone = SIZE_MAX;
    std::vector<size_t> reads(mutated.size(), kNone), readers(mutated.size(), 0);
    auto old_read = [&](size_t k) {
      auto a = alias_.find(&current_.at(&mutated[k].symbolic()).symbolic());
      if (a == alias_.end()) return kNone;
      auto m = index.find(&a->second.base.symbolic());
      return m == index.end() || m->second == k ? kNone : m->second;
    };
    for (size_t k = 0; k < mutated.size(); ++k)
      if ((reads[k] = old_read(k)) != kNone) ++readers[reads[k]];
    std::set<size_t> ready, left;
    for (size_t k = 0; k < mutated.size(); ++k) {
      left.insert(k);
      if (readers[k] == 0) ready.insert(k);
    }
    std::vector<Value> order;
    while (!left.empty()) {
      if (ready.empty()) {
        size_t k = *left.begin();  // a cycle: copy one value out of the way
        Value& c = current_.at(&mutated[k].symbolic());
        c = emit(Symbol::prim_op(op_def(OpId::clone)), {c}, fresh_like(c), loc_);
        computed_.insert(&c.symbolic());
        if (reads[k] != kNone && --readers[reads[k]] == 0) ready.insert(reads[k]);
        reads[k] = kNone;
        continue;
      }
      size_t k = *ready.begin();
      ready.erase(ready.begin());
      left.erase(k);
      order.push_back(mutated[k]);
      if (reads[k] != kNone && --readers[reads[k]] == 0) ready.insert(reads[k]);
    }
    return order;
  }

  // Outputs that are (views of) inputs are produced from the inputs after
  // their write-backs, so they alias them; the rest read current values,
  // but (views of) a base that holds a borrowed value are made from one
  // copy of it: `t.copy_(x); return t` must not return x itself.
  void finish() {
    std::unordered_map<const Symbolic*, Value> copies;  // per borrowed base
    auto own = [&](const Value& v, const Value& r) {
      const Alias& a = alias_.at(&v.symbolic());
      // An input holding its own old value again (`b.copy_(a); a.copy_(b)`)
      // is returned as itself, as eager returns it.
      if (!borrowed_.count(&a.base.symbolic()) || is_input(a.base)) return r;
      auto [it, fresh] = copies.try_emplace(&a.base.symbolic());
      if (fresh) {
        const Value& cur = current_.at(&a.base.symbolic());
        it->second = emit(Symbol::prim_op(op_def(OpId::clone)), {cur}, fresh_like(cur), loc_);
      }
      return a.chain.empty() ? it->second : replay(it->second, a.chain);
    };
    std::vector<Value> deferred;  // input-rooted output proxies
    std::unordered_map<const Symbolic*, Value> computed;
    auto plan = [&](const Value& v, auto& self) -> Value {
      if (is_tensor_proxy(v)) {
        auto it = alias_.find(&v.symbolic());
        if (it != alias_.end() && is_input(it->second.base) &&
            (&current_.at(&it->second.base.symbolic()).symbolic() != &it->second.base.symbolic() ||
             is_shared_memory(it->second.base))) {
          deferred.push_back(v);
          return v;
        }
        Value r = it != alias_.end() ? own(v, read(v)) : read(v);
        computed[&v.symbolic()] = r;
        return r;
      }
      return map_items(v, [&](const Value& x) { return self(x, self); });
    };
    Value output = plan(in_.output, plan);

    // Write-backs: copy_to_out_ when nothing else uses the computed value.
    // A returned view of the computed value uses it too: written straight
    // into the input, the view would alias the input.
    std::unordered_map<const Symbolic*, int> uses;
    for (const auto& [orig, r] : computed) {
      uses[&r.symbolic()]++;
      if (const Symbolic* base = viewed(r)) uses[base]++;
    }
    std::vector<Value> mutated;
    for (const Value& x : inputs_)
      if (&current_.at(&x.symbolic()).symbolic() != &x.symbolic()) {
        mutated.push_back(x);
        uses[&current_.at(&x.symbolic()).symbolic()]++;
      }
    // A value used elsewhere too, or not computed here (an input, a view),
    // is cloned for x, before every write-back (it is the value before
    // them): the clone, a kernel store, fuses with what reads the value. (A
    // value on another device goes over as it is, by copy_ where it has
    // other uses.)
    std::vector<std::pair<Value, Value>> write_backs;  // (value, input)
    for (const Value& x : ordered_write_backs(mutated)) {
      const Value& c = current_.at(&x.symbolic());
      const bool other_device = tensor_proxy(c).device() != tensor_proxy(x).device();
      auto u = uses.find(&c.symbolic());  // (none: the clone that broke a cycle)
      const bool shared = u != uses.end() && u->second != 1;
      if (other_device && shared) write_backs.emplace_back(Value(), x);
      else if (!other_device && (shared || !computed_.count(&c.symbolic())))
        write_backs.emplace_back(emit(Symbol::prim_op(op_def(OpId::clone)), {c}, fresh_like(c), loc_), x);
      else
        write_backs.emplace_back(c, x);
    }
    for (const auto& [v, x] : write_backs) {
      if (v.is_none()) emit(Symbol::prim_op(op_def(OpId::copy_)), {x, current_.at(&x.symbolic())}, Value(), loc_);
      else emit(Symbol::of(PrimId::copy_to_out_), {v, x}, Value(), loc_);
    }
    std::unordered_map<const Symbolic*, Value> views;
    for (const Value& v : deferred) {
      const Alias& a = alias_.at(&v.symbolic());
      if (views.count(&v.symbolic())) continue;
      // A (view of a) member of shared memory comes from the member itself.
      if (is_shared_memory(a.base))
        views[&v.symbolic()] = replay(a.chain[0].out, std::vector<Step>(a.chain.begin() + 1, a.chain.end()));
      else
        views[&v.symbolic()] = a.chain.empty() ? a.base : replay(a.base, a.chain);
    }
    out_.output = substitute(output, views);
  }

  const Trace& in_;
  Trace out_;
  std::unordered_map<const Symbolic*, Alias> alias_;
  std::unordered_map<const Symbolic*, Value> current_;  // a base's value now
  std::vector<Value> inputs_;                           // tensor arguments and captured tensors
  std::unordered_set<const Symbolic*> input_set_;       // inputs_, to look up
  std::unordered_map<const Symbolic*, int> uses_;       // of each original value, the output included
  std::unordered_set<const Symbolic*> borrowed_;        // bases whose value came whole from another tensor
  std::unordered_set<const Symbolic*> computed_;        // values an op of the body computes
  std::unordered_map<const Symbolic*, const Symbolic*> replayed_from_;  // re-derived view -> the value it views
  std::unordered_set<const Symbolic*> shared_bases_;     // the bases of inputs that share memory
  struct LastWrite {
    std::vector<Step> chain;  // the view written
    Value src;                // the value written, of the view's sizes and dtype
    Value before;             // the base's value it wrote into
    const Symbolic* result;   // the base's value it made
    bool read;                // whether anything read that value but through the view
  };
  std::unordered_map<const Symbolic*, LastWrite> last_write_;  // per base
  Place loc_;
};

}  // namespace

Trace functionalize(Trace t) {
  // A trace with ops it cannot functionalize (in-place ops kept whole:
  // their result is eager's loop order's) runs in program order.
  std::optional<Trace> r = Functionalizer(t).run();
  return r ? std::move(*r) : std::move(t);
}

}  // namespace thn
