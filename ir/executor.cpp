#include "ir/executor.h"

#include <algorithm>
#include <unordered_set>

#include "interp/objects.h"
#include "runtime/cuda.h"
#include "runtime/elementwise.h"
#include "runtime/views.h"
#include "runtime/error.h"

namespace thn {

namespace {

class EagerFusion : public FusionKernel {
 public:
  explicit EagerFusion(const BoundSymbol& f) : exec_(region(f)) {}
  std::vector<Value> run(Interpreter& in, std::span<const Value> leaves, std::span<const Value> into,
                         std::span<int64_t>) const override {
    std::vector<Value> outs = exec_.run(in, leaves).items();
    for (size_t k = 0; k < outs.size(); ++k)
      if (k < into.size() && !into[k].is_none()) {
        copy_into(into[k].as_tensor(), outs[k].as_tensor());
        outs[k] = into[k];
      }
    return outs;
  }

 private:
  static Trace region(const BoundSymbol& f) {
    Trace t;
    t.inputs = f.args;
    t.body = f.subsymbols;
    t.output = f.out;
    return t;
  }
  TraceExecutor exec_;
};

}  // namespace

ExecCounters& exec_counters() {
  static thread_local ExecCounters c;
  return c;
}

namespace {
}  // namespace

int64_t distinct_bytes(const Value& v) {
  if (v.is(Type::Tensor)) {
    const Tensor& t = v.as_tensor();
    int64_t n = 1;
    for (size_t d = 0; d < t.sizes().size(); ++d)
      if (t.strides()[d] != 0 || t.sizes()[d] == 0) n *= t.sizes()[d];
    return n * itemsize(t.dtype());
  }
  int64_t n = 0;
  if (v.is_sequence())
    for (const Value& x : v.items()) n += distinct_bytes(x);
  return n;
}

std::shared_ptr<const FusionKernel> eager_fusion(const BoundSymbol& fusion) {
  return std::make_shared<EagerFusion>(fusion);
}

TraceExecutor::TraceExecutor(const Trace& t, FusionKernels kernels) : kernels_(std::move(kernels)) {
  size_t fusions = 0;
  for (const Value& in : t.inputs) inputs_.push_back(ref(in).slot);
  for (const auto& [proxy, tensor] : t.captured) captured_.emplace_back(ref(proxy).slot, tensor);
  // The input whose memory a value is (alias analysis: itself or a view of it).
  std::unordered_map<const Symbolic*, int> input_index;
  for (size_t i = 0; i < t.inputs.size(); ++i)
    if (t.inputs[i].is_proxy()) input_index.emplace(&t.inputs[i].symbolic(), int(i));
  auto memory_of = [&](const Value& v) {
    if (!is_tensor_proxy(v)) return -1;
    auto it = input_index.find(memory_owner(t, v));
    return it == input_index.end() ? -1 : it->second;
  };
  for (const BoundSymbol& b : t.body) {
    Step s;
    s.sym = b.sym;
    for (const Value& a : b.args) s.args.push_back(ref(a));
    s.out = ref(b.out);
    if (!b.into.is_none()) {
      s.mode = b.sym.writes_into_any() ? Mode::Out : Mode::InPlace;
      s.into = ref(b.into);
      if (b.into.is_sequence())
        for (const Value& x : b.into.items()) s.into_memory.push_back(memory_of(x));
      else
        s.into_memory.push_back(memory_of(b.into));
      // A result written into an input's memory is that input's memory too
      // (what later steps read of it, or of its views, is read of the input).
      const std::vector<Value> outs = b.out.is_sequence() ? b.out.items() : std::vector<Value>{b.out};
      for (size_t k = 0; k < outs.size() && k < s.into_memory.size(); ++k)
        if (s.into_memory[k] >= 0 && is_tensor_proxy(outs[k])) input_index.emplace(&outs[k].symbolic(), s.into_memory[k]);
    }
    // What it reads: a fusion, the operands its prims take whole (the rest
    // only through views inside its kernel); a write-back, its source.
    std::unordered_set<const Symbolic*> whole;
    for (const BoundSymbol& m : b.subsymbols)
      if (!m.sym.is_view())
        for_each_proxy(m.args, [&](const Value& p) { whole.insert(&p.symbolic()); });
    for (size_t k = 0; k < b.args.size(); ++k) {
      Use use = Use::Read;
      const bool elementwise = b.sym.op && (b.sym.op->family == OpFamily::Unary || b.sym.op->family == OpFamily::Binary ||
                                            b.sym.op->family == OpFamily::Pointwise);
      if (is_write_back(b)) use = k == (b.sym.op ? 0 : 1) ? Use::Write : Use::Read;
      else if (k == 0 && b.sym.mutates()) use = elementwise ? Use::ReadWrite : Use::Update;
      else if (k == 0 && s.mode == Mode::InPlace) use = Use::Update;
      else if (is_fusion(b) && b.args[k].is_proxy() && !whole.count(&b.args[k].symbolic())) use = Use::ViewedOnly;
      else if (b.sym.is_view() || (!b.sym.op && b.sym.prim == PrimId::shape)) use = Use::ViewedOnly;  // (metadata)
      s.uses.push_back(use);
      s.memory.push_back(memory_of(b.args[k]));
    }
    for (const Value& f : b.frees) s.frees.push_back(ref(f).slot);
    s.loc = b.loc;
    if (is_fusion(b)) {
      s.fusion = int(fusions++);
      if (size_t(s.fusion) >= kernels_.size()) kernels_.push_back(eager_fusion(b));
    }
    steps_.push_back(std::move(s));
  }
  output_ = ref(t.output);
}

TraceExecutor::Ref TraceExecutor::ref(const Value& v) {
  Ref r;
  if (v.is_proxy()) {
    auto [it, fresh] = slot_of_.try_emplace(&v.symbolic(), slots_);
    if (fresh) slots_++;
    r.slot = it->second;
    return r;
  }
  if (v.is_sequence() || v.is(Type::Slice)) {
    r.seq = v.type();
    if (v.is(Type::Slice)) {
      auto& s = v.obj<SliceObj>();
      for (const Value* x : {&s.start, &s.stop, &s.step}) r.items.push_back(ref(*x));
    } else {
      r.like = v.like({});
      for (const Value& x : v.items()) r.items.push_back(ref(x));
    }
    return r;
  }
  r.constant = v;
  return r;
}

Value TraceExecutor::resolve(const Ref& r, std::vector<Value>& slots) const {
  if (r.slot >= 0) return slots[size_t(r.slot)];
  if (r.seq == Type::None) return r.constant;
  std::vector<Value> items;
  items.reserve(r.items.size());
  for (const Ref& x : r.items) items.push_back(resolve(x, slots));
  if (r.seq == Type::Slice) {
    auto s = std::make_shared<SliceObj>();
    s->start = items[0];
    s->stop = items[1];
    s->step = items[2];
    return Value(Type::Slice, s);
  }
  return r.like.like(std::move(items));
}

void TraceExecutor::assign(const Ref& r, const Value& v, std::vector<Value>& slots) const {
  if (r.slot >= 0) {
    slots[size_t(r.slot)] = v;
    return;
  }
  if (r.seq == Type::None) return;
  if (!v.is_sequence() || v.items().size() != r.items.size())
    throw std::logic_error("executor: an op's result does not have the traced structure");
  for (size_t i = 0; i < r.items.size(); ++i) assign(r.items[i], v.items()[i], slots);
}

Tensor TraceExecutor::select_view(Interpreter& in, const Tensor& t, const Value& steps) const {
  Value view = Value::tensor(t);
  for (const Value& step : steps.items()) {
    const std::vector<Value>& items = step.items();
    Step v;
    v.sym = symbol_named(items[0].as_str());
    std::vector<Value> a{view};
    a.insert(a.end(), items.begin() + 1, items.end());
    view = run_step(in, v, a, Value());
  }
  return view.as_tensor();
}

namespace {

// The view prims a training step runs most, without binding their
// arguments: a step's metadata, taken as the op's impl takes it.
std::optional<Tensor> metadata_view(OpId id, const Tensor& t, const Value& a) {
  auto dims = [&] {
    Dims d;
    for (const Value& v : a.items()) d.push_back(v.as_int());
    return d;
  };
  switch (id) {
    case OpId::reshape: return a.is_sequence() ? std::optional(reshape(t, dims())) : std::nullopt;
    case OpId::permute: return a.is_sequence() ? std::optional(permute(t, dims())) : std::nullopt;
    case OpId::expand: return a.is_sequence() ? std::optional(expand(t, dims())) : std::nullopt;
    case OpId::unsqueeze: return a.is(Type::Int) ? std::optional(unsqueeze(t, a.as_int())) : std::nullopt;
    case OpId::squeeze: return a.is(Type::Int) ? std::optional(squeeze(t, a.as_int())) : std::nullopt;
    default: return std::nullopt;
  }
}

}  // namespace

Value TraceExecutor::run_step(Interpreter& in, const Step& s, std::vector<Value>& args, const Value& into,
                             std::span<int64_t> loaded) const {
  if (s.fusion >= 0) {
    std::vector<Value> targets = into.is_none() ? std::vector<Value>() : into.items();
    return Value::tuple(kernels_[size_t(s.fusion)]->run(in, args, targets, loaded));
  }
  if (s.sym.is_prim && s.sym.op && s.sym.op->id == OpId::copy_ && s.mode == Mode::Fresh &&
      has_internal_overlap(args[0].as_tensor())) {
    // A write into a tensor with repeated elements (an expanded input) is
    // fill_'s or zero_'s: tracing ran it eagerly, where a copy_ raised, and
    // the prologue guards the layout. Every repeat gets the one value.
    copy_into(args[0].as_tensor(), args[1].as_tensor(), /*check_write=*/false);
    return s.sym.inplace ? Value() : args[0];
  }
  if (s.sym.is_prim && s.sym.op && s.mode == Mode::Fresh && args.size() == 2 && args[0].is(Type::Tensor))
    if (std::optional<Tensor> v = metadata_view(s.sym.op->id, args[0].as_tensor(), args[1])) return Value::tensor(*v);
  if (s.sym.op) {
    std::vector<IValue> values;
    values.reserve(args.size());
    for (const Value& a : args) values.push_back(to_ivalue(a));
    Args bound = bind_params(*s.sym.op, std::move(values), s.sym.inplace || s.mode == Mode::InPlace);
    if (s.mode == Mode::Out) bound.set_out(&into.as_tensor());
    // A view prim only makes metadata (a prims.reshape is a view: the
    // decomposition made its operand contiguous where it must copy), on
    // any device; other ops go through the device dispatch.
    IValue r = s.sym.is_prim && s.sym.is_view() ? s.sym.op->impl(bound) : call_bound(*s.sym.op, bound);
    if (s.mode != Mode::Fresh) return into;
    if (s.sym.inplace) return Value();
    return present_result(s.sym.op->name, from_ivalue(r));
  }
  if (s.sym.is_number_op()) return eval_number_op(in, NumberOp(int(s.sym.prim)), args);
  switch (s.sym.prim) {
    case PrimId::shape: {
      std::vector<Value> sizes;
      for (int64_t d : args[0].as_tensor().sizes()) sizes.push_back(Value(d));
      return Value::tuple(std::move(sizes));
    }
    case PrimId::item: {
      const Tensor& t = args[0].as_tensor();
      if (t.numel() != 1) fail(ErrorKind::ValueError, "only one element tensors can be converted to Python scalars");
      return from_ivalue(IValue(t.item()));
    }
    case PrimId::wrap_number: return eager_.wrap_number(args[0]);
    case PrimId::convert_element_type: return Value::tensor(to_dtype(args[0].as_tensor(), args[1].as_dtype()));
    case PrimId::copy_into_view: {
      // In place (the plan's `into` is the base) or into a copy of the base
      // with its strides where it is dense: the steps were traced over the
      // base's layout (a reshape is a view or a copy by the strides), so
      // they must select the same elements of the copy.
      const Tensor& base = args[0].as_tensor();
      Tensor out = base;
      if (s.mode == Mode::Fresh) {
        out = empty_like(base);
        copy_into(out, base);
      }
      auto select = [&](const Tensor& t) { return select_view(in, t, args[2]); };
      // Views of views share the base's storage; a step that copied does not.
      Tensor view = select(out);
      if (view.storage() == out.storage()) {
        // Tracing ran the write eagerly, with its overlap checks: an expanded
        // view here is one fill_ wrote (a value the same everywhere).
        copy_into(view, args[1].as_tensor(), /*check_write=*/false);
        return Value::tensor(out);
      }
      // A step copied: the base's layout is not the one the program's view
      // was traced over (its value came from a tensor of another layout).
      // The steps then select logical positions (counted on the host), and
      // the value is scattered to them: index_copy_ over the flattened base
      // (on CUDA tensors the library's scatter kernel).
      Tensor pos = empty(out.sizes(), DType::Int64);
      auto* p = static_cast<int64_t*>(pos.raw_data());
      for (int64_t i = 0; i < pos.numel(); ++i) p[i] = i;
      Tensor dense = contiguous(out);
      auto flat = [&](const Tensor& t) {
        Tensor c = cuda::to_device(contiguous(t), dense.device());
        return c.as_strided({c.numel()}, {1}, c.offset());
      };
      Tensor picked = select(pos);
      Tensor sel = flat(picked), value = flat(broadcast_to(to_dtype(args[1].as_tensor(), out.dtype()), picked.sizes()));
      call_method(flat(dense), "index_copy_", {IValue(int64_t(0)), IValue(sel), IValue(value)});
      if (dense.storage() != out.storage()) copy_into(out, dense);
      return Value::tensor(out);
    }
    case PrimId::index_put: {  // in place (the plan's `into` is t) or into a copy of t
      Value out = args[0];
      if (s.mode == Mode::Fresh) {
        out = Value::tensor(empty_like(args[0].as_tensor()));
        copy_into(out.as_tensor(), args[0].as_tensor());
      }
      eager_.setitem(out, std::span<const Value>(args).subspan(1, args.size() - 2), args.back());
      return out;
    }
    case PrimId::copy_to_out_: copy_into(args[1].as_tensor(), args[0].as_tensor()); return Value();
    case PrimId::slice: {
      const Tensor& t = args[0].as_tensor();
      Dims sizes = t.sizes(), strides = t.strides();
      int64_t offset = t.offset();
      for (size_t d = 0; d < sizes.size(); ++d) {
        int64_t start = args[1].items()[d].as_int(), end = args[2].items()[d].as_int(), step = args[3].items()[d].as_int();
        offset += start * strides[d];
        sizes[d] = std::max<int64_t>(0, (end - start + step - 1) / step);
        strides[d] *= step;
      }
      return Value::tensor(t.as_strided(sizes, strides, offset));
    }
    case PrimId::as_strided: {
      const Tensor& t = args[0].as_tensor();
      Dims sizes, strides;
      for (const Value& v : args[1].items()) sizes.push_back(v.as_int());
      for (const Value& v : args[2].items()) strides.push_back(v.as_int());
      return Value::tensor(t.as_strided(sizes, strides, t.offset() + args[3].as_int()));
    }
    case PrimId::getitem: return eager_.getitem(args[0], std::span<const Value>(args).subspan(1));
    case PrimId::setitem_:
      eager_.setitem(args[0], std::span<const Value>(args).subspan(1, args.size() - 2), args.back());
      return Value();
    case PrimId::print: {
      size_t n = args.size() - 2;
      std::vector<Value> printed;  // (the dicts and objects the tracer encoded)
      for (size_t i = 0; i < n; ++i) printed.push_back(decode_mappings(args[i]));
      eager_.print(in, printed, args[n].as_str(), args[n + 1].as_str());
      return Value();
    }
    default: break;
  }
  throw std::logic_error("executor: unknown prim " + s.sym.name());
}

Value TraceExecutor::run(Interpreter& in, std::span<const Value> inputs, InputTraffic* traffic) const {
  if (traffic) {
    traffic->read.assign(inputs.size(), 0);
    traffic->written.assign(inputs.size(), 0);
  }
  auto note = [&](bool read, int i, int64_t bytes) {
    if (!traffic || i < 0) return;
    int64_t& most = (read ? traffic->read : traffic->written)[size_t(i)];
    most = std::max(most, bytes);
  };
  std::vector<Value> slots(static_cast<size_t>(slots_));
  for (size_t i = 0; i < inputs_.size(); ++i) slots[size_t(inputs_[i])] = inputs[i];
  for (const auto& [slot, tensor] : captured_) slots[size_t(slot)] = tensor;
  std::vector<Value> args;
  std::vector<int64_t> loaded;
  for (const Step& s : steps_) {
    args.clear();
    loaded.clear();
    for (const Ref& a : s.args) args.push_back(resolve(a, slots));
    try {
      const Value into = s.mode == Mode::Fresh ? Value() : resolve(s.into, slots);
      if (traffic && s.fusion >= 0) loaded.assign(args.size(), 0);
      Value r = run_step(in, s, args, into, loaded);
      // A library op or copy: one kernel reading its operands and writing
      // its result (or the operand it updates).
      // (An operand updated in part is written where the other operands say,
      // at most all of the largest of them: counted so, with no bound noted.)
      int64_t bytes = 0, largest = 0;
      bool updates = false;
      for (size_t k = 0; k < args.size(); ++k) {
        const Use use = s.uses[k];
        if (use == Use::ViewedOnly) {  // (a fusion's loads through views)
          if (traffic && s.fusion >= 0) note(true, s.memory[k], loaded[k]);
          continue;
        }
        if (use == Use::Update) {
          updates = true;
          continue;
        }
        const int64_t b = distinct_bytes(args[k]);
        largest = std::max(largest, b);
        if (use != Use::Write) note(true, s.memory[k], b);
        if (use != Use::Read) note(false, s.memory[k], b);
        bytes += use == Use::ReadWrite ? 2 * b : b;
      }
      // copy_into_view in place writes all of its view.
      if (updates && traffic && !s.sym.op && s.sym.prim == PrimId::copy_into_view)
        note(false, s.memory[0], distinct_bytes(Value::tensor(select_view(in, args[0].as_tensor(), args[2]))));
      if (s.mode == Mode::Out) {
        const std::vector<Value> targets = into.is_sequence() ? into.items() : std::vector<Value>{into};
        for (size_t k = 0; k < targets.size() && k < s.into_memory.size(); ++k)
          if (targets[k].is(Type::Tensor)) note(false, s.into_memory[k], distinct_bytes(targets[k]));
      }
      if (is_library(s.sym)) {
        const int64_t result = updates ? largest : s.sym.mutates() ? 0 : distinct_bytes(r);
        if (result > 0 || s.sym.mutates()) exec_counters().kernels++;
        exec_counters().bytes += bytes + result;
      }
      assign(s.out, r, slots);
    } catch (const Error& e) {
      // Data the guards cannot see (an index out of range, say): report it
      // where the traced program performed the op.
      if (!s.loc.source || dynamic_cast<const LocatedError*>(&e)) throw;
      TracedError t(e.kind(), e.what(), s.loc);
      t.with_note_of(e);
      if (s.loc.calls) t.trace = *s.loc.calls;
      throw t;
    }
    for (int f : s.frees) slots[size_t(f)] = Value();
  }
  return resolve(output_, slots);
}

}  // namespace thn
