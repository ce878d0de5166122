#include "passes/verify.h"

#include "passes/fusion.h"

#include <fmt/format.h>

#include <unordered_map>
#include <unordered_set>

namespace thn {

namespace {

class Verifier {
 public:
  Verifier(const Trace& t, const std::string& pass) : t_(t), pass_(pass) {}

  void run() {
    for (const Value& v : t_.inputs) define(v, "an input");
    for (const auto& [proxy, tensor] : t_.captured) define(proxy, "a captured tensor");
    for (const BoundSymbol& b : t_.body) {
      for (const Value& a : b.args) use(a, b.sym.name());
      if (!b.into.is_none()) use(b.into, b.sym.name());
      std::vector<Value> outs;
      collect_proxies(b.out, outs);
      for (const Value& o : outs) define(o, b.sym.name());
      for (const Value& f : b.frees) dropped_.insert(&f.symbolic());
    }
    use(t_.output, "the output");
    if (t_.functional) check_functional();
    if (t_.functional && planned()) replay_buffers();
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::logic_error(fmt::format("verify after {}: {}\n{}", pass_, what, print_trace(t_)));
  }

  void define(const Value& v, const std::string& by) {
    if (!defined_.insert(&v.symbolic()).second) fail(fmt::format("a value is defined twice (again by {})", by));
  }

  void use(const Value& v, const std::string& who) {
    std::vector<Value> ps;
    collect_proxies(v, ps);
    for (const Value& p : ps) {
      if (!defined_.count(&p.symbolic())) fail(fmt::format("{} uses a value before it is defined", who));
      if (dropped_.count(&p.symbolic())) fail(fmt::format("{} uses a value after it was dropped", who));
    }
  }

  // The only writes are write-backs into inputs, after every other op but
  // the views of returned inputs.
  void check_functional() const {
    std::unordered_map<const Symbolic*, const Symbolic*> viewed;  // a view -> its operand
    bool tail = false;
    for (const BoundSymbol& b : t_.body) {
      if (b.sym.is_view() && b.out.is_proxy()) viewed[&b.out.symbolic()] = &b.args[0].symbolic();
      if (is_write_back(b)) {
        tail = true;
        // Into an input, or a view of one (memory that inputs share).
        const Symbolic* x = &write_back_target(b).symbolic();
        for (auto it = viewed.find(x); it != viewed.end(); it = viewed.find(x)) x = it->second;
        bool input = false;
        for (const Value& v : t_.inputs) input |= v.is_proxy() && &v.symbolic() == x;
        for (const auto& [proxy, tensor] : t_.captured) input |= &proxy.symbolic() == x;
        if (!input) fail(fmt::format("{} writes into a value that is not an input", b.sym.name()));
      } else if (b.sym.mutates()) {
        fail(fmt::format("{} writes in place in a functional trace", b.sym.name()));
      } else if (tail && !b.sym.is_view()) {
        fail(fmt::format("{} runs after the write-backs", b.sym.name()));
      }
    }
  }

  bool planned() const {
    for (const BoundSymbol& b : t_.body)
      if (!b.into.is_none() || !b.frees.empty()) return true;
    return false;
  }

  const Symbolic* owner(const Value& v) const { return memory_owner(t_, v); }

  void replay_buffers() {
    // buffer: owner value -> the buffer (named by its first owner);
    // holds: buffer -> the owner value it holds now.
    std::unordered_map<const Symbolic*, const Symbolic*> buffer, holds, also_holds;
    auto buffer_of = [&](const Symbolic* o) {
      auto it = buffer.find(o);
      return it == buffer.end() ? o : it->second;
    };
    // Returned views of updated inputs are re-derived from the inputs at the
    // end (functionalize): there an input names its final contents.
    std::unordered_set<const Symbolic*> inputs;
    for (const Value& v : t_.inputs) inputs.insert(&v.symbolic());
    for (const auto& [proxy, tensor] : t_.captured) inputs.insert(&proxy.symbolic());
    bool at_end = false;
    auto check_read = [&](const Value& p, const std::string& who) {
      if (!p.is(Type::Tensor)) return;
      const Symbolic* o = owner(p);
      if (at_end && inputs.count(o)) return;
      const Symbolic* b = buffer_of(o);
      auto h = holds.find(b);
      auto a = also_holds.find(b);
      if (h != holds.end() && h->second != o && (a == also_holds.end() || a->second != o))
        fail(fmt::format("{} reads a value whose memory was overwritten by a later value", who));
    };
    for (const BoundSymbol& b : t_.body) {
      std::string who = b.sym.name();
      bool writeback = is_write_back(b);
      std::vector<Value> reads;
      if (writeback) collect_proxies(write_back_source(b), reads);
      else if (!b.sym.is_view())
        for (const Value& a : b.args) collect_proxies(a, reads);
      for (const Value& p : reads) check_read(p, who);
      if (writeback) {
        holds[buffer_of(owner(write_back_target(b)))] = &write_back_source(b).symbolic();
        also_holds.erase(buffer_of(owner(write_back_target(b))));
        continue;
      }
      if (b.into.is_none()) continue;
      std::vector<Value> rs, into;
      collect_proxies(b.out, rs);
      if (is_fusion(b)) into = b.into.items();
      else into.push_back(b.into);
      if (into.size() != rs.size()) fail(fmt::format("{} has {} outputs but {} out= targets", who, rs.size(), into.size()));
      for (size_t k = 0; k < rs.size(); ++k) {
        if (into[k].is_none()) continue;
        const Symbolic* target = buffer_of(owner(into[k]));
        const bool through_view = is_fusion(b) && owner(into[k]) != &into[k].symbolic();
        int in_target = 0;
        bool elementwise = true;
        std::vector<Value> target_reads;
        for (const Value& p : reads) {
          if (!p.is(Type::Tensor) || buffer_of(owner(p)) != target) continue;
          target_reads.push_back(p);
          // The target itself (a range of shared memory updated in place),
          // or what owns its memory, read element for element.
          bool whole = owner(p) == &p.symbolic() || &p.symbolic() == &into[k].symbolic();
          if (!whole && writes_apart(t_, b, p)) continue;
          elementwise = elementwise && whole &&
                        !(is_fusion(b) && (!fusion_reads_elementwise(b, p) || !fusion_stores_after_reads(b, rs[k], p)));
          ++in_target;
        }
        // A fusion output stored through a view of a buffer (the plan's
        // store_through_views) updates the value the buffer holds, which
        // later ops read (or the output, where the view is a range of shared
        // memory, named by it).
        if (through_view && !elementwise) view_store(b, rs[k], into[k], target_reads);
        else if (!elementwise)
          fail(fmt::format("{} writes into memory it reads through a view, or in a later sweep", who));
        if (through_view) also_holds[target] = owner(into[k]);
        if (!b.sym.writes_into_any()) {
          if (!b.sym.updates_operand0() || b.args.empty() || !b.args[0].is_proxy() ||
              &b.args[0].symbolic() != &into[k].symbolic() || in_target != 1)
            fail(fmt::format("{} writes into a tensor that is not the operand it updates in place", who));
        }
        buffer[&rs[k].symbolic()] = target;
        holds[target] = &rs[k].symbolic();
        if (!through_view) also_holds.erase(target);
      }
    }
    at_end = true;
    std::vector<Value> outs;
    collect_proxies(t_.output, outs);
    for (const Value& o : outs) check_read(o, "the output");
  }

  // A fusion output stored through a view of a buffer (buffer_plan's
  // store_through_views) updates part of the value the buffer holds (its
  // owner's or, for a write-back, an earlier value in the input's memory,
  // laid out as the input); the fusion reads each element of that buffer it
  // stores at the same index, or none.
  void view_store(const BoundSymbol& b, const Value& out, const Value& view, const std::vector<Value>& in_target) const {
    const std::string who = b.sym.name();
    std::optional<Region> store = region_of(t_, view);
    if (!store) fail(fmt::format("{} writes through a view whose layout is not known", who));
    for (const Value& p : in_target) {
      std::optional<Region> at = region_of(t_, p);
      if (!at || !fusion_reads_at_store(b, p, *at, *store))
        fail(fmt::format("{} writes through a view into memory it reads elsewhere", who));
      if (!fusion_stores_after_reads(b, out, p))
        fail(fmt::format("{} writes through a view into memory a later sweep of its kernel reads", who));
    }
  }

  const Trace& t_;
  std::string pass_;
  std::unordered_set<const Symbolic*> defined_, dropped_;
};

}  // namespace

void verify(const Trace& t, const std::string& after_pass) { Verifier(t, after_pass).run(); }

}  // namespace thn
