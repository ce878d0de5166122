// The tracer's ops: every op of the table, run on meta tensors by the
// runtime's own implementation and recorded with its decomposition, and
// indexing (getitem, setitem).
#include <functional>
#include <optional>

#include "ir/shape_rules.h"
#include "ir/tracer.h"
#include "runtime/error.h"

namespace thn {

namespace {

// Parameters whose numbers only flow into values (x * flag, clamp(min=lo)):
// they may stay symbolic. Every other number (a dim, a size, a count, a
// creation argument) shapes the result, and a static-shape trace needs it exact.
bool is_value_param(const OpDef& op, const Param& p) {
  if (op.family == OpFamily::Creation || op.family == OpFamily::Random) return p.name == "fill_value";
  return p.type == ParamType::Operand || p.type == ParamType::Scalar || p.type == ParamType::Float ||
         p.type == ParamType::Tensor || p.type == ParamType::TensorList;
}

}  // namespace

bool data_dependent_shape(const OpDef& op) { return op.id == OpId::nonzero || op.id == OpId::masked_select; }

Value Tracer::attribute(const OpDef& op, const Value& self, std::span<const Value> args, const CallArgs& kw) {
  auto& p = tensor_proxy(self);
  std::string_view name = op.name;
  if (name == "shape") return Value::size(p.sizes);
  if (name == "stride") depends_on_strides_ = true;
  if (name == "storage_offset") depends_on_offset_ = true;
  if (name == "dtype") return Value(p.dtype());
  if (name == "device") return Value(p.device());
  if (name == "is_cuda") return Value(p.device().type == DeviceType::CUDA);
  if (name == "ndim" || name == "dim") return Value(int64_t(p.sizes.size()));
  if (name == "size") {
    Value dim = !args.empty() ? args[0] : kw.kwargs.empty() ? Value() : kw.kwargs[0].second;
    if (dim.is_none()) return Value::size(p.sizes);
    if (!dim.is_int_like()) fail(ErrorKind::TypeError, "size(): argument 'dim' must be int, not {}", type_name(dim));
    if (p.sizes.empty())
      fail(ErrorKind::IndexError, "Dimension specified as {} but tensor has no dimensions", dim.as_int());
    return p.sizes[size_t(wrap_dim(dim.as_int(), int64_t(p.sizes.size())))];
  }
  if (name == "numel") {
    Value n(int64_t(1));
    for (const Value& s : p.sizes) n = s.is_proxy() || n.is_proxy() ? record_number_op(NumberOp::mul, {n, s}) : Value(n.raw_int() * s.raw_int());
    return n;
  }
  if (name == "item") return item(self);
  if (name == "tolist") data_dependent("tolist() needs the data of a tensor");
  std::vector<IValue> pos;
  for (const Value& a : args) pos.push_back(meta_ivalue(a));
  Kwargs kws;
  for (const auto& [k, v] : kw.kwargs) kws.emplace_back(k, meta_ivalue(v));
  if (name == "result_type") {  // a function (of dtypes and ranks alone: no layout)
    pos.insert(pos.begin(), IValue(p.meta));
    return from_ivalue(call_op(op, std::nullopt, pos, kws));
  }
  // stride(), is_contiguous(), storage_offset(): facts of this call's layout.
  // (is_contiguous() of an input, whose contiguity the prologue checks, or of
  // a layout that is the same on every call the trace serves, is a fact of
  // every call.)
  auto is_input = [&] { return input_leaf_.count(self.object().get()) > 0; };
  if (name != "is_contiguous" || !(is_input() || structural_layout(self))) static_layout(p);
  return present_result(op.name, from_ivalue(call_op(op, IValue(p.meta), pos, kws)));
}

namespace {

// Where an op's tensor result lives: the device it names (creation, `to`),
// else the device of its tensor operands (CUDA if any is: a CPU operand
// beside one is a wrapped number).
Device result_device(const OpDef& op, std::span<const Value> args) {
  // x.to(other): other's device.
  if (op.id == OpId::to && args.size() > 1 && args[1].is_proxy() && args[1].is(Type::Tensor))
    return tensor_proxy(args[1]).device();
  std::optional<Device> named;
  bool cuda = false;
  std::function<void(const Value&)> visit = [&](const Value& v) {
    if (v.is(Type::Device)) named = v.as_device();
    else if (is_device_string(v)) named = parse_device(v.as_str());
    else if (v.is_proxy() && v.is(Type::Tensor)) cuda |= tensor_proxy(v).device().type == DeviceType::CUDA;
    else if (v.is_sequence()) for (const Value& x : v.items()) visit(x);
  };
  for (const Value& a : args) visit(a);
  return named ? *named : cuda ? Device{DeviceType::CUDA} : kCPU;
}

// PyTorch's one-device check (runtime/op_registry.cpp) on the proxies'
// devices: their meta tensors are all the host's.
void check_one_device(std::span<const Value> args) {
  std::optional<Device> first;
  std::function<void(const Value&)> visit = [&](const Value& v) {
    if (v.is_sequence()) {
      for (const Value& x : v.items()) visit(x);
      return;
    }
    if (!is_tensor_proxy(v)) return;
    const TensorProxy& p = tensor_proxy(v);
    if (p.device().type == DeviceType::CPU && joins_any_device(p.meta, true)) return;
    if (!first) first = p.device();
    else if (*first != p.device()) fail_two_devices(*first, p.device());
  };
  for (const Value& a : args) visit(a);
}

}  // namespace

Value Tracer::run_op(const OpDef& op, const Value* self, std::span<const Value> args, const CallArgs& kw, bool inplace) {
  // Introspection (x.shape, x.item(), ...); T and mT are views, recorded below.
  if (op.family == OpFamily::Attribute && op.schema.returns != "Tensor") {
    const Value* t = self ? self : args.empty() ? nullptr : &args[0];
    if (t && t->is(Type::Tensor)) return attribute(op, traced(*t), self ? args : args.subspan(1), kw);
  }
  if (data_dependent_shape(op)) data_dependent(fmt::format("{}() has a shape that depends on tensor data", op.name));

  // Bind on the meta tensors: PyTorch's argument errors, and each parameter's source.
  std::vector<IValue> pos;
  pos.reserve(args.size());
  for (const Value& a : args) pos.push_back(meta_ivalue(a));
  Kwargs kws;
  for (const auto& [k, v] : kw.kwargs) kws.emplace_back(k, meta_ivalue(v));
  std::optional<IValue> s;
  if (self) s = meta_ivalue(*self);
  std::vector<ArgSource> sources;
  Args bound = bind_args(op, s, pos, kws, inplace, &sources);
  if (where_alone(op, bound)) data_dependent("where(condition) has a shape that depends on tensor data");

  const Schema& schema = op.schema;
  std::vector<Value> targs(schema.params.size());
  for (size_t i = 0; i < schema.params.size(); ++i) {
    const ArgSource& src = sources[i];
    switch (src.kind) {
      case ArgSource::Default:
        // The default (a creation op's device may be `thn run --device`'s),
        // on the host like a given device (the meta tensors are the host's).
        targs[i] = from_ivalue(bound[i]);
        if (bound[i].is_device() && bound[i].to_device() != kCPU) {
          std::vector<IValue> values;
          for (size_t k = 0; k < bound.size(); ++k) values.push_back(k == i ? IValue(kCPU) : bound[k]);
          bound = Args(bound.schema(), std::move(values), bound.inplace());
        }
        break;
      case ArgSource::Self: targs[i] = traced(*self); break;
      case ArgSource::Keyword: targs[i] = traced(kw.kwargs[src.index].second); break;
      case ArgSource::Positional:
        if (schema.params[i].varargs && args[src.index].is_int_like()) {
          std::vector<Value> items;
          for (uint32_t k = 0; k < src.count; ++k) items.push_back(traced(args[src.index + k]));
          targs[i] = Value::tuple(std::move(items));
        } else {
          targs[i] = traced(args[src.index]);
        }
        break;
    }
  }

  // A number taken from a tensor has no value while tracing: a parameter
  // that shapes the result (arange's end) cannot take one; one that only
  // scales values (alpha, a fill value, a clamp bound) takes its item(). An
  // op with such a number runs whole (eager's kernel, with eager's checks of
  // the value: "value cannot be converted ... without overflow").
  bool dynamic = false;
  for (size_t i = 0; i < targs.size(); ++i) {
    const Param& p = schema.params[i];
    if (p.type == ParamType::Scalar && is_tensor_proxy(targs[i])) {
      if (!is_value_param(op, p))
        data_dependent(fmt::format("{}() takes '{}' from the value of a tensor", op.name, p.name));
      targs[i] = item(targs[i]);
    }
    for_each_proxy(targs[i], [&](const Value& n) { dynamic |= n.is_number() && number_proxy(n).depends_on_data(); });
    // fill_'s and masked_fill's value, a 0-dim tensor of another dtype, is
    // checked by its value to fit the receiver's dtype.
    if ((op.id == OpId::fill_ || op.id == OpId::masked_fill) && p.name == "value" && is_tensor_proxy(targs[i]) &&
        !tensor_proxy(targs[i]).meta.is_wrapped_number() &&
        tensor_proxy(targs[i]).dtype() != tensor_proxy(targs[0]).dtype())
      dynamic = true;
  }
  if (checks_one_device(op)) check_one_device(targs);
  // Whether a reshape of a non-contiguous tensor is a view or a copy depends
  // on its strides, which the prologue then checks; under symbolic shapes,
  // for a layout that is the same on every call, on sizes (guarded below).
  const bool reshape = op.id == OpId::reshape || op.id == OpId::flatten || op.id == OpId::unflatten ||
                       op.id == OpId::view;
  bool structural_reshape = false;
  if (reshape && views_non_contiguous(tensor_proxy(targs[0]).meta)) {
    structural_reshape = opts_.symbolic_shapes && structural_layout(targs[0]);
    if (!structural_reshape) {
      depends_on_strides_ = true;
      static_layout(tensor_proxy(targs[0]));
    }
  }
  const Device device = result_device(op, targs);
  IValue result = [&] {  // on the meta tensors: eager shapes, dtypes and errors (the device's)
    KernelDeviceScope scope(device);
    MetaScope meta;
    return op.impl(bound);
  }();
  // x.float() of a float32 x is x (the prologue guards the dtype); the
  // meta tensors are all the host's, so x.to("cpu") of a CUDA x is not.
  if (!inplace && result.is_tensor() && is_tensor_proxy(targs[0]) &&
      tensor_proxy(targs[0]).device() == device &&
      returns_input(op, tensor_proxy(targs[0]).meta, result.to_tensor()))
    return self ? *self : args[0];
  Value out = inplace ? targs[size_t(schema.self_index)] : wrap_result(result, device);
  // Under shapes="symbolic" a shape rule gives the outputs symbolic sizes;
  // an op without one (or whose rule disagrees with the eager result) makes
  // the sizes of its inputs static instead.
  bool symbolic = opts_.symbolic_shapes && apply_shape_rule(*this, op, targs, out, inplace);
  if (structural_reshape) {
    const TensorProxy& in = tensor_proxy(targs[0]);
    const bool view = result.to_tensor().storage() == in.meta.storage();
    if (!symbolic || in.meta.numel() == 0 ||
        reshape_is_view(*this, in.sizes, in.meta.strides(), tensor_proxy(out).sizes) != view) {
      depends_on_strides_ = true;  // (the guards above are then true but not needed)
      static_layout(in);  // (out too, where it views in)
    }
  }
  for (size_t i = 0; i < targs.size(); ++i)
    if (!is_value_param(op, schema.params[i]) && !(symbolic && consumes_symbolic(op, schema.params[i])))
      make_static_all(targs[i]);
  if (opts_.symbolic_shapes && !symbolic)
    for (const Value& a : targs) {
      for_each_proxy(a, [&](const Value& t) {
        if (t.is(Type::Tensor)) make_static_all(Value::tuple(tensor_proxy(t).sizes));
      });
    }
  // A write whose result depends on eager's loop order runs as eager's op.
  bool ordered = (inplace || op.name.ends_with('_')) && loop_order_write(tensor_proxy(targs[size_t(schema.self_index)]).meta, targs);
  if (inplace) {
    record(Symbol::of(op, true), std::move(targs), Value(), /*whole=*/ordered || dynamic);
    return self ? *self : args[0];
  }
  record(Symbol::of(op, false), std::move(targs), out, /*whole=*/ordered || dynamic);
  // copy_, fill_, zero_ return their receiver, as in eager.
  if (op.name.ends_with('_') && self) return *self;
  return present_result(op.name, out);
}

namespace {

bool is_mask(const Value& v) {
  return v.is(Type::Tensor) && v.is_proxy() && tensor_proxy(v).dtype() == DType::Bool;
}

// A slice with a tensor bound (`x[:t]`): the bound is a value of data.
bool has_tensor_bound(const Value& v) {
  if (!v.is(Type::Slice)) return false;
  const auto& s = v.obj<SliceObj>();
  return s.start.is(Type::Tensor) || s.stop.is(Type::Tensor) || s.step.is(Type::Tensor);
}

// A 0-dim integer tensor as an index: PyTorch selects by its value (a view
// whose offset is the value), which the metadata cannot tell.
bool is_number_index(const Value& v) {
  return is_tensor_proxy(v) && tensor_proxy(v).sizes.empty() && is_integral(tensor_proxy(v).dtype(), false);
}

}  // namespace

// Under shapes="symbolic", the sizes of t[idx] (basic_index_rule); for
// another index, or without symbolic shapes, nullopt, with t's sizes made
// static.
std::optional<std::vector<Value>> Tracer::symbolic_index_sizes(const Value& t, const std::vector<Value>& idx) {
  if (!opts_.symbolic_shapes) return std::nullopt;
  const std::vector<Value>& sizes = tensor_proxy(t).sizes;
  auto out = basic_index_rule(*this, sizes, idx);
  if (!out) out = tensor_index_sizes(sizes, idx);
  if (!out) {
    // Sizes of the indexed tensor and of the index tensors, all exact.
    make_static_all(Value::tuple(sizes));
    for (const Value& v : idx)
      if (is_tensor_proxy(v)) make_static_all(Value::tuple(tensor_proxy(v).sizes));
  }
  return out;
}

// x[idx], x[:, idx], x[..., idx] with one integer tensor idx and full
// slices elsewhere: the dim it indexes is replaced by idx's sizes.
std::optional<std::vector<Value>> Tracer::tensor_index_sizes(const std::vector<Value>& sizes,
                                                             const std::vector<Value>& idx) const {
  auto full = [](const Value& v) {
    if (!v.is(Type::Slice)) return false;
    const auto& s = v.obj<SliceObj>();
    return s.start.is_none() && s.stop.is_none() && s.step.is_none();
  };
  std::optional<size_t> at;
  for (size_t k = 0; k < idx.size(); ++k) {
    if (full(idx[k])) continue;
    if (at || !is_tensor_proxy(idx[k]) || !is_integral(tensor_proxy(idx[k]).dtype(), false)) return std::nullopt;
    at = k;
  }
  if (!at || idx.size() > sizes.size()) return std::nullopt;
  std::vector<Value> out(sizes.begin(), sizes.begin() + long(*at));
  const std::vector<Value>& is = tensor_proxy(idx[*at]).sizes;
  out.insert(out.end(), is.begin(), is.end());
  out.insert(out.end(), sizes.begin() + long(*at) + 1, sizes.end());
  return out;
}

std::vector<Value> Tracer::traced_index(const Value& tensor, std::span<const Value> index, const char* mask) {
  std::vector<Value> idx;
  // (the dims the items take: None and a bool none, a tensor its own, others one)
  auto takes = [](const Value& v) -> size_t {
    if (v.is_none() || v.is(Type::Bool)) return 0;
    return is_tensor_proxy(v) && tensor_proxy(v).dtype() == DType::Bool ? tensor_proxy(v).sizes.size() : 1;
  };
  for (size_t k = 0; k < index.size(); ++k) {
    Value v = index[k];
    // A list of bools is a mask known when tracing: the positions of its
    // Trues, as PyTorch indexes with it, once its length is the dim's.
    if (v.is(Type::List) && !v.items().empty() && is_tensor_proxy(tensor) &&
        std::all_of(v.items().begin(), v.items().end(), [](const Value& b) { return b.is(Type::Bool); })) {
      const std::vector<Value>& sizes = tensor_proxy(tensor).sizes;
      const bool after_ellipsis = std::any_of(index.begin(), index.begin() + long(k), [](const Value& x) { return x.is(Type::Ellipsis); });
      size_t dim = 0;
      if (after_ellipsis)
        for (size_t j = k; j < index.size(); ++j) dim += takes(index[j]);
      else
        for (size_t j = 0; j < k; ++j) dim += takes(index[j]);
      if (after_ellipsis) dim = dim <= sizes.size() ? sizes.size() - dim : sizes.size();
      if (dim < sizes.size() && !sizes[dim].is_proxy()) {
        if (sizes[dim].raw_int() != int64_t(v.items().size())) {
          std::vector<Value> shape;
          for (const Value& n : sizes) shape.push_back(Value(n.raw_int()));
          fail(ErrorKind::IndexError, "The shape of the mask [{}] at index 0 does not match the shape of the indexed tensor {} at index {}",
               v.items().size(), to_str(Value::list(std::move(shape))), dim);
        }
        std::vector<Value> at;
        for (size_t i = 0; i < v.items().size(); ++i)
          if (v.items()[i].as_bool()) at.push_back(Value(int64_t(i)));
        v = Value::list(std::move(at));
      }
    }
    if (is_mask(v) || (v.is(Type::List) && !v.items().empty() && v.items()[0].is(Type::Bool))) data_dependent(mask);
    idx.push_back(traced(v));
    if (is_number_index(idx.back())) data_dependent("indexing with a 0-dim tensor selects by its value");
    if (has_tensor_bound(idx.back())) data_dependent("a slice bound is the value of a tensor");
    make_static_all(idx.back());
  }
  return idx;
}

Value Tracer::getitem(const Value& tensor, std::span<const Value> index) {
  std::vector<Value> idx =
      traced_index(tensor, index, "indexing with a boolean mask gives a shape that depends on tensor data");
  Value t = traced(tensor);
  std::vector<Value> sidx;
  for (const Value& v : idx) sidx.push_back(on_meta(v));
  Value r = [&] {  // (first: its errors come before the rule's guards)
    MetaScope meta;
    return eager_.getitem(on_meta(t), sidx);
  }();
  Value out = new_tensor(r.as_tensor(), tensor_proxy(t).device());
  if (auto sizes = symbolic_index_sizes(t, idx)) {
    const Dims& real = r.as_tensor().sizes();
    bool same = sizes->size() == real.size();
    for (size_t d = 0; same && d < real.size(); ++d) same = (*sizes)[d].raw_int() == real[d];
    if (!same) throw std::logic_error("basic_index_rule: sizes that differ from eager's");
    tensor_proxy(out).sizes = std::move(*sizes);
  }
  std::vector<Value> args{t};
  args.insert(args.end(), idx.begin(), idx.end());
  record(Symbol::of(PrimId::getitem), std::move(args), out);
  return out;
}

// x[mask] = v with a mask over x's leading dims and a value for one selected
// element (a number, or a tensor that broadcasts to x's other dims): no
// shape depends on the data. It is x.copy_(where(mask, v, x)), the mask
// viewed with a size-1 dim per other dim; false for any other mask index.
bool Tracer::mask_assign(const Value& tensor, const Value& mask, const Value& value) {
  if (!tensor.is(Type::Tensor) || !(value.is_number() || value.is(Type::Tensor))) return false;
  const Tensor &x = tensor_proxy(traced(tensor)).meta, &m = tensor_proxy(traced(mask)).meta;
  const size_t k = size_t(m.dim());
  if (k > size_t(x.dim()) || !std::equal(m.sizes().begin(), m.sizes().end(), x.sizes().begin())) return false;
  const Dims rest(x.sizes().begin() + long(k), x.sizes().end());
  if (value.is(Type::Tensor)) {  // (a leading size 1 broadcasts over the selected elements)
    const Tensor& v = tensor_proxy(traced(value)).meta;
    if (size_t(v.dim()) > rest.size() + 1 || (size_t(v.dim()) == rest.size() + 1 && v.sizes()[0] != 1)) return false;
    for (size_t d = 0; d < size_t(v.dim()) && d < rest.size(); ++d) {
      const int64_t s = v.sizes()[size_t(v.dim()) - 1 - d], r = rest[rest.size() - 1 - d];
      if (s != 1 && s != r) return false;
    }
  }
  Value where_mask = mask;
  if (k < size_t(x.dim())) {
    std::vector<Value> shape;
    for (int64_t s : m.sizes()) shape.push_back(Value(s));
    shape.resize(size_t(x.dim()), Value(int64_t(1)));
    const Value sizes = Value::tuple(std::move(shape));
    where_mask = call(op_def(OpId::reshape), &mask, std::span<const Value>(&sizes, 1), CallArgs{}, false);
  }
  const Value operands[] = {where_mask, value, tensor};
  const Value w = call(op_def(OpId::where), nullptr, operands, CallArgs{}, false);
  call(op_def(OpId::copy_), &tensor, std::span<const Value>(&w, 1), CallArgs{}, false);
  return true;
}

void Tracer::setitem(const Value& tensor, std::span<const Value> index, const Value& value) {
  if (index.size() == 1 && is_mask(index[0]) && mask_assign(tensor, index[0], value)) return;
  std::vector<Value> idx = traced_index(tensor, index, "assigning through a boolean mask depends on tensor data");
  // A list or tuple value is the tensor eager makes of it (`x[0:2] = [1, 2]`).
  Value t = traced(tensor),
        val = value.is_sequence() ? call(op_def(OpId::tensor), nullptr, std::span<const Value>(&value, 1), CallArgs{}, false)
                                  : traced(value);
  std::vector<Value> sidx;
  for (const Value& v : idx) sidx.push_back(on_meta(v));
  // A value that shares memory with the elements written, but not element
  // for element, runs the op whole (eager's loop order); basic indices
  // write a view (`x[0] = x[1]` reads other elements, `x[:, 1:] *= 2` the
  // view's own), which functionalization follows; others may write anywhere.
  const bool basic = std::none_of(idx.begin(), idx.end(), [](const Value& v) { return v.is(Type::Tensor) || v.is(Type::List); });
  bool ordered;
  if (basic) {
    MetaScope meta;
    ordered = loop_order_write(eager_.getitem(on_meta(t), sidx).as_tensor(), std::span<const Value>(&val, 1));
  } else {
    ordered = loop_order_write(tensor_proxy(t).meta, std::span<const Value>(&val, 1));
  }
  {
    MetaScope meta;
    eager_.setitem(on_meta(t), sidx, on_meta(val));
  }
  std::optional<std::vector<Value>> view = symbolic_index_sizes(t, idx);
  if (view && is_tensor_proxy(val)) {
    // The value broadcasts to the view: each of its sizes other than 1 is
    // guarded equal to the view's (else a later call would fail in the
    // trace's expand, not with eager's error).
    const std::vector<Value>& vs = tensor_proxy(val).sizes;
    for (size_t k = 1; k <= std::min(vs.size(), view->size()); ++k) {
      const Value &a = vs[vs.size() - k], &b = (*view)[view->size() - k];
      const bool one = !a.is_proxy() && a.raw_int() == 1;
      if ((a.is_proxy() || b.is_proxy()) && !one && !(a.is_proxy() && b.is_proxy() && &b.symbolic() == &a.symbolic()))
        assume(number_node(NumberOp::eq, {b, a}));
    }
  }
  std::vector<Value> args{t};
  args.insert(args.end(), idx.begin(), idx.end());
  args.push_back(val);
  BoundSymbol& b = record(Symbol::of(PrimId::setitem_), std::move(args), Value());
  if (ordered) b.subsymbols.clear();
}

}  // namespace thn
