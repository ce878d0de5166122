#include "runtime/op_registry.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "runtime/cuda.h"
#include "runtime/error.h"
#include "runtime/threads.h"

namespace thn {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

IValue parse_default(std::string_view text) {
  if (text == "None") return IValue();
  if (text == "True") return IValue(true);
  if (text == "False") return IValue(false);
  if (text == "[]") return IValue::list({});
  if (text.front() == '"') return IValue(std::string(text.substr(1, text.size() - 2)));
  if (text.find_first_of(".eE") != std::string_view::npos) return IValue(std::stod(std::string(text)));
  size_t end = 0;
  const int64_t i = std::stoll(std::string(text), &end);
  if (end != text.size()) throw std::logic_error("ops.def: a default value it cannot read: " + std::string(text));
  return IValue(i);
}

ParamType parse_type(std::string_view t) {
  static const std::unordered_map<std::string_view, ParamType> kTypes = {
      {"Tensor", ParamType::Tensor}, {"Operand", ParamType::Operand}, {"Scalar", ParamType::Scalar},
      {"int", ParamType::Int},       {"int[]", ParamType::IntList},   {"float", ParamType::Float},
      {"bool", ParamType::Bool},     {"str", ParamType::Str},         {"ScalarType", ParamType::DType},
      {"Device", ParamType::Device}, {"Tensor[]", ParamType::TensorList}, {"Any", ParamType::Any}};
  auto it = kTypes.find(t);
  if (it == kTypes.end()) throw std::logic_error("ops.def: unknown parameter type " + std::string(t));
  return it->second;
}

}  // namespace

Schema parse_schema(std::string_view name, std::string_view sig) {
  Schema s;
  s.name = std::string(name);
  size_t close = sig.rfind(')');
  std::string_view params = sig.substr(1, close - 1);
  size_t arrow = sig.find("->", close);
  if (arrow != std::string_view::npos) s.returns = std::string(trim(sig.substr(arrow + 2)));
  bool kwarg_only = false;
  while (!params.empty()) {
    size_t comma = params.find(',');
    std::string_view p = trim(params.substr(0, comma));
    params = comma == std::string_view::npos ? std::string_view() : params.substr(comma + 1);
    if (p == "*") {
      kwarg_only = true;
      continue;
    }
    Param param;
    param.kwarg_only = kwarg_only;
    size_t eq = p.find('=');
    if (eq != std::string_view::npos) {
      param.has_default = true;
      param.default_value = parse_default(trim(p.substr(eq + 1)));
      p = trim(p.substr(0, eq));
    }
    size_t space = p.rfind(' ');
    std::string_view type = p.substr(0, space);
    param.name = std::string(p.substr(space + 1));
    if (type.ends_with("...")) {
      param.varargs = true;
      type.remove_suffix(3);
      type = type == "int" ? "int[]" : type;
    }
    if (type.ends_with('?')) {
      param.optional = true;
      type.remove_suffix(1);
    }
    param.type = parse_type(type);
    if (param.name == "self") s.self_index = int(s.params.size());
    s.params.push_back(std::move(param));
  }
  return s;
}

std::string_view family_name(OpFamily f) {
  switch (f) {
    case OpFamily::Creation: return "creation";
    case OpFamily::Random: return "random";
    case OpFamily::Attribute: return "introspection";
    case OpFamily::Unary: return "elementwise (unary)";
    case OpFamily::Binary: return "elementwise (binary)";
    case OpFamily::Pointwise: return "elementwise (other)";
    case OpFamily::Conversion: return "conversion";
    case OpFamily::Reduction: return "reduction";
    case OpFamily::View: return "view";
    case OpFamily::Copy: return "copy / gather";
    case OpFamily::LinAlg: return "linear algebra";
  }
  return "?";
}

const std::vector<OpDef>& all_ops() {
  static const std::vector<OpDef> ops = [] {
    std::vector<OpDef> v = {
#define THN_OP_NAMED(id, pyname, family, flags, sig) {OpId::id, pyname, OpFamily::family, flags, sig, &op_##id, {}},
#define THN_OP(name, family, flags, sig) THN_OP_NAMED(name, #name, family, flags, sig)
#include "runtime/ops.def"
#undef THN_OP
#undef THN_OP_NAMED
    };
    for (OpDef& op : v) op.schema = parse_schema(op.name, op.signature);
    return v;
  }();
  return ops;
}

// Other names PyTorch gives an op: the same op under each name.
// PyTorch's other names of ops (torch.swapaxes is torch.transpose).
constexpr std::pair<std::string_view, OpId> kAliases[] = {
    {"absolute", OpId::abs},     {"arccos", OpId::acos},      {"arccosh", OpId::acosh},  {"arcsin", OpId::asin},
    {"arcsinh", OpId::asinh},    {"arctan", OpId::atan},      {"arctan2", OpId::atan2},  {"arctanh", OpId::atanh},
    {"clip", OpId::clamp},       {"concat", OpId::cat},       {"divide", OpId::div},     {"fix", OpId::trunc},
    {"greater", OpId::gt},       {"greater_equal", OpId::ge}, {"less", OpId::lt},        {"less_equal", OpId::le},
    {"moveaxis", OpId::movedim}, {"multiply", OpId::mul},     {"negative", OpId::neg},
    {"not_equal", OpId::ne},     {"sgn", OpId::sign},         {"subtract", OpId::sub},     {"swapaxes", OpId::transpose},
    {"swapdims", OpId::transpose}};

std::vector<std::string_view> aliases_of(const OpDef& op) {
  std::vector<std::string_view> names;
  for (const auto& [name, id] : kAliases)
    if (id == op.id) names.push_back(name);
  return names;
}

namespace {
struct NameTables {
  std::unordered_map<std::string_view, const OpDef*> functions, attributes;
  std::unordered_map<std::string, MethodRef> methods;
};
const NameTables& tables() {
  static const NameTables t = [] {
    NameTables t;
    for (const OpDef& op : all_ops()) {
      std::vector<std::string_view> names = aliases_of(op);
      names.insert(names.begin(), op.name);
      for (std::string_view name : names) {
        if (op.has('F')) t.functions[name] = &op;
        if (op.has('A')) t.attributes[name] = &op;
        if (op.has('M')) t.methods[std::string(name)] = {&op, false};
        if (op.has('I')) t.methods[std::string(name) + "_"] = {&op, true};
      }
    }
    return t;
  }();
  return t;
}
}  // namespace

const OpDef* find_function(std::string_view name) {
  auto it = tables().functions.find(name);
  return it == tables().functions.end() ? nullptr : it->second;
}
const OpDef* find_attribute(std::string_view name) {
  auto it = tables().attributes.find(name);
  return it == tables().attributes.end() ? nullptr : it->second;
}
std::vector<std::string> tensor_member_names() {
  std::vector<std::string> names;
  for (const auto& [name, op] : tables().attributes) names.emplace_back(name);
  for (const auto& [name, m] : tables().methods) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<MethodRef> find_method(std::string_view name) {
  auto it = tables().methods.find(std::string(name));
  if (it == tables().methods.end()) return std::nullopt;
  return it->second;
}

namespace {

// `position` is 1-based for a positional argument, 0 for a keyword one.
[[noreturn]] void type_error(const Schema& s, const Param& p, const IValue& v, std::string_view expected,
                             size_t position) {
  std::string pos = position ? fmt::format(" (position {})", position) : "";
  fail(ErrorKind::TypeError, "{}(): argument '{}'{} must be {}, not {}", s.name, p.name, pos, expected, v.type_name());
}

bool is_int_like(const IValue& v) { return v.is_int() || v.is_bool(); }

// Checks v against p's type and converts where PyTorch does (a number for an
// Operand becomes a wrapped 0-dim tensor, an int for int[] a one-element list).
IValue convert(const Schema& s, const Param& p, const IValue& v, size_t position) {
  if (v.is_none()) {
    if (p.optional || p.type == ParamType::Any) return v;
    type_error(s, p, v, "not None", position);
  }
  switch (p.type) {
    case ParamType::Any: return v;
    case ParamType::Tensor:
      if (!v.is_tensor()) type_error(s, p, v, "Tensor", position);
      return v;
    case ParamType::Operand:
      if (v.is_tensor()) return v;
      if (v.is_number()) return IValue(wrap_scalar(v.to_scalar()));
      type_error(s, p, v, "Tensor or Number", position);
    case ParamType::Scalar:
      if (v.is_number()) return v;
      if (v.is_tensor() && v.to_tensor().numel() == 1) {
        const Tensor& t = v.to_tensor();
        // (a value computed while tracing, for a parameter that only scales
        // values: the tracer refuses one that shapes the result)
        return IValue(is_meta(t) ? meta_stand_in(t.dtype()) : t.item());
      }
      type_error(s, p, v, "Number", position);
    case ParamType::Int:
      if (v.is_int()) return v;
      if (v.is_bool()) return IValue(int64_t(v.to_bool()));
      type_error(s, p, v, "int", position);
    case ParamType::IntList: {
      if (v.is_int()) return IValue::dims({v.to_int()});
      if (!v.is_list()) type_error(s, p, v, "tuple of ints", position);
      for (const IValue& e : v.to_list().items)
        if (!is_int_like(e)) type_error(s, p, v, "tuple of ints", position);
      return v;
    }
    case ParamType::Float:
      if (v.is_number()) return IValue(v.to_scalar().to_double());
      type_error(s, p, v, "float", position);
    case ParamType::Bool:
      if (v.is_bool()) return v;
      type_error(s, p, v, "bool", position);
    case ParamType::Str:
      if (v.is_string()) return v;
      type_error(s, p, v, "str", position);
    case ParamType::DType:
      if (v.is_dtype()) return v;
      type_error(s, p, v, "torch.dtype", position);
    case ParamType::Device:
      if (v.is_device()) return v;
      if (v.is_string()) return IValue(parse_device(v.to_string()));
      type_error(s, p, v, "torch.device", position);
    case ParamType::TensorList: {
      if (!v.is_list()) type_error(s, p, v, "tuple of Tensors", position);
      for (const IValue& e : v.to_list().items)
        if (!e.is_tensor()) type_error(s, p, v, "tuple of Tensors", position);
      return v;
    }
  }
  return v;
}

}  // namespace

namespace {

Device default_device = kCPU;

// A creation or random op that takes no tensor (zeros, randn; not zeros_like,
// whose device is its operand's): without a device it makes its result on the
// default device.
bool makes_on_default_device(const OpDef& op) {
  if (default_device.type == DeviceType::CPU) return false;
  if (op.family != OpFamily::Creation && op.family != OpFamily::Random) return false;
  return std::none_of(op.schema.params.begin(), op.schema.params.end(),
                      [](const Param& p) { return p.type == ParamType::Tensor; });
}

}  // namespace

void set_default_device(Device d) { default_device = d; }

Args bind_args(const OpDef& op, std::optional<IValue> self, std::span<const IValue> positional, const Kwargs& kwargs,
               bool inplace, std::vector<ArgSource>* sources) {
  const Schema& s = op.schema;
  std::vector<IValue> bound(s.params.size());
  std::vector<bool> given(s.params.size(), false);
  if (sources) sources->assign(s.params.size(), ArgSource{});
  auto set = [&](size_t i, IValue v, bool positional, ArgSource from) {
    if (given[i]) fail(ErrorKind::TypeError, "{}() got multiple values for argument '{}'", s.name, s.params[i].name);
    bound[i] = convert(s, s.params[i], v, positional ? i + 1 : 0);
    given[i] = true;
    if (sources) (*sources)[i] = from;
  };
  if (self) {
    if (s.self_index < 0) fail(ErrorKind::TypeError, "{}() is not a method", s.name);
    set(size_t(s.self_index), *self, true, {ArgSource::Self, 0, 1});
  }
  size_t next = 0;
  for (size_t k = 0; k < positional.size(); k++) {
    while (next < s.params.size() && given[next]) next++;
    if (next >= s.params.size() || s.params[next].kwarg_only) {
      size_t max_pos = 0;
      for (const Param& p : s.params) max_pos += !p.kwarg_only;
      fail(ErrorKind::TypeError, "{}() takes {} positional arguments but {} were given", s.name, max_pos,
           positional.size() + (self ? 1 : 0));
    }
    const Param& p = s.params[next];
    // `int... size`: zeros(2, 3) gathers the remaining ints into one list.
    if (p.varargs && positional[k].is_int()) {
      std::vector<IValue> items;
      size_t first = k;
      while (k < positional.size() && is_int_like(positional[k])) items.push_back(positional[k++]);
      k--;
      set(next, IValue::list(std::move(items), true), true, {ArgSource::Positional, uint32_t(first), uint32_t(k + 1 - first)});
    } else {
      set(next, positional[k], true, {ArgSource::Positional, uint32_t(k), 1});
    }
  }
  for (size_t j = 0; j < kwargs.size(); j++) {
    // (NumPy's axis= and keepdims= are the schema's names by now: OpDispatch::call)
    const auto& [name, value] = kwargs[j];
    size_t i = 0;
    while (i < s.params.size() && s.params[i].name != name) i++;
    if (i == s.params.size()) {
      std::vector<std::string> names;
      for (const Param& p : s.params) names.push_back(p.name);
      unexpected_keyword(s.name, name, names);
    }
    set(i, value, false, {ArgSource::Keyword, uint32_t(j), 1});
  }
  for (size_t i = 0; i < s.params.size(); i++) {
    if (given[i]) continue;
    if (!s.params[i].has_default)
      fail(ErrorKind::TypeError, "{}() missing required argument '{}' (pos {})", s.name, s.params[i].name, i + 1);
    bound[i] = s.params[i].type == ParamType::Device && makes_on_default_device(op) ? IValue(default_device)
                                                                                    : s.params[i].default_value;
  }
  return Args(s, std::move(bound), inplace);
}

Args bind_params(const OpDef& op, std::vector<IValue> values, bool inplace) {
  const Schema& s = op.schema;
  for (size_t i = 0; i < values.size(); i++) values[i] = convert(s, s.params[i], values[i], i + 1);
  return Args(s, std::move(values), inplace);
}

namespace {

CudaOpHandler cuda_handler = nullptr;

bool on_cuda(const IValue& v) {
  if (v.is_tensor()) return v.to_tensor().device().type == DeviceType::CUDA;
  if (v.is_device()) return v.to_device().type == DeviceType::CUDA;
  if (v.is_list()) {
    for (const IValue& e : v.to_list().items)
      if (on_cuda(e)) return true;
  }
  return false;
}

// v with its CUDA tensors copied to the host and CUDA devices made None.
IValue on_host(const IValue& v) {
  if (v.is_tensor() && v.to_tensor().device().type == DeviceType::CUDA) return IValue(cuda::to_device(v.to_tensor(), kCPU));
  if (v.is_device() && v.to_device().type == DeviceType::CUDA) return IValue();
  if (v.is_list() && on_cuda(v)) {
    std::vector<IValue> items;
    for (const IValue& e : v.to_list().items) items.push_back(on_host(e));
    return IValue::list(std::move(items), v.to_list().is_tuple);
  }
  return v;
}

void check_same_device(const OpDef& op, const Args& a) {
  if (!checks_one_device(op)) return;
  std::optional<Device> first;
  for (size_t i = 0; i < a.size(); i++) same_device(a[i], first, false);
  if (a.out()) same_device(IValue(*a.out()), first, false);
}

// An op some of whose arguments are CUDA tensors or devices. `to` moves data
// itself; attributes read metadata (item/tolist a host copy); creation and
// random ops fill on the host and copy the result over, so that the same seed
// gives the same numbers on both devices; every other op is the CUDA
// backend's (a one-op fusion) once one is installed.
IValue call_on_cuda(const OpDef& op, const Args& a) {
  cuda::driver();  // without a GPU, the error says why first
  if (op.id == OpId::to) return op.impl(a);
  const bool host_copy = op.family == OpFamily::Creation || op.family == OpFamily::Random ||
                         op.id == OpId::item || op.id == OpId::tolist;
  if (op.family == OpFamily::Attribute && !host_copy) return op.impl(a);
  if (host_copy) {
    KernelDeviceScope on_cuda(Device{DeviceType::CUDA});
    std::vector<IValue> values;
    for (size_t i = 0; i < a.size(); i++) values.push_back(on_host(a[i]));
    IValue r = op.impl(Args(a.schema(), std::move(values), a.inplace()));
    if (op.family == OpFamily::Attribute) return r;
    return r.is_tensor() ? IValue(cuda::to_device(r.to_tensor(), Device{DeviceType::CUDA})) : r;
  }
  // Views that never copy only read metadata; contiguous() of a contiguous
  // tensor is the tensor itself.
  if ((op.family == OpFamily::View && op.id != OpId::reshape && op.id != OpId::flatten && op.id != OpId::unflatten) ||
      (op.id == OpId::contiguous && a.tensor(0).is_contiguous()))
    return op.impl(a);
  check_same_device(op, a);
  // matmul and the other products call cuBLAS themselves; the library ops
  // run their own kernels where the backend installed them.
  if (op.family == OpFamily::LinAlg || (cuda_library(op.id) != CudaLibrary::None && cuda::library_kernels()))
    return op.impl(a);
  if (cuda_handler)
    if (std::optional<IValue> r = cuda_handler(op, a)) return *std::move(r);
  return cuda::run_on_host(a, [&](const Args& h) { return op.impl(h); });
}

}  // namespace

bool checks_one_device(const OpDef& op) {
  switch (op.family) {
    case OpFamily::Creation: case OpFamily::Random: case OpFamily::Attribute: return false;
    case OpFamily::View: return op.id == OpId::reshape || op.id == OpId::flatten || op.id == OpId::unflatten;
    default: return op.id != OpId::copy_ && op.id != OpId::to && op.id != OpId::item && op.id != OpId::tolist;
  }
}

// PyTorch's check that an op's tensors are on one device.
void same_device(const IValue& v, std::optional<Device>& first, bool in_program) {
  if (v.is_list()) {
    for (const IValue& e : v.to_list().items) same_device(e, first, in_program);
    return;
  }
  if (!v.is_tensor()) return;
  const Tensor& t = v.to_tensor();
  if (joins_any_device(t, in_program)) return;
  if (!first) first = t.device();
  else if (*first != t.device()) fail_two_devices(*first, t.device());
}

void fail_two_devices(Device a, Device b) {
  fail("Expected all tensors to be on the same device, but found at least two devices, {} and {}!", a.str(), b.str());
}

void set_cuda_op_handler(CudaOpHandler h) { cuda_handler = h; }

CudaLibrary cuda_library(OpId id) {
  switch (id) {
    case OpId::index_select: case OpId::gather: case OpId::index_copy: case OpId::index_add: case OpId::cumsum:
    case OpId::cumprod: case OpId::logcumsumexp: case OpId::cummax: case OpId::cummin:
    case OpId::argmax: case OpId::argmin: case OpId::tril: case OpId::triu:
      return CudaLibrary::Kernel;
    case OpId::cat: case OpId::stack: case OpId::flip: case OpId::roll: case OpId::repeat: return CudaLibrary::Copies;
    default: return CudaLibrary::None;
  }
}

IValue call_op(const OpDef& op, std::optional<IValue> self, std::span<const IValue> positional, const Kwargs& kwargs,
               bool inplace) {
  return call_bound(op, bind_args(op, std::move(self), positional, kwargs, inplace));
}

IValue call_bound(const OpDef& op, const Args& a) {
  adapt_threads();
  if (where_alone(op, a)) return call_op(op_def(OpId::nonzero), a[0], {}, {{"as_tuple", IValue(true)}});
  bool cuda = a.out() && a.out()->device().type == DeviceType::CUDA;
  for (size_t i = 0; i < a.size() && !cuda; i++) cuda = on_cuda(a[i]);
  return cuda ? call_on_cuda(op, a) : op.impl(a);
}

IValue call(std::string_view function, std::vector<IValue> positional, const Kwargs& kwargs) {
  const OpDef* op = find_function(function);
  if (!op) fail(ErrorKind::TypeError, "no function named '{}'", function);
  return call_op(*op, std::nullopt, positional, kwargs);
}

IValue call_method(const Tensor& self, std::string_view method, std::vector<IValue> positional, const Kwargs& kwargs) {
  if (const OpDef* attr = find_attribute(method); attr && positional.empty())
    return call_op(*attr, IValue(self), {}, kwargs);
  auto m = find_method(method);
  if (!m)
    throw Error(ErrorKind::AttributeError, fmt::format("'Tensor' object has no attribute '{}'", method))
        .with_lazy_note([m = std::string(method)] { return did_you_mean(m, tensor_member_names()); });
  return call_op(*m->op, IValue(self), positional, kwargs, m->inplace);
}

std::optional<Tensor> Args::opt_tensor(size_t i) const {
  if (v_[i].is_none()) return std::nullopt;
  return v_[i].to_tensor();
}
std::optional<Scalar> Args::opt_scalar(size_t i) const {
  if (v_[i].is_none()) return std::nullopt;
  return v_[i].to_scalar();
}
std::optional<int64_t> Args::opt_i64(size_t i) const {
  if (v_[i].is_none()) return std::nullopt;
  return v_[i].to_int();
}
Dims Args::dims(size_t i) const {
  if (v_[i].is_int()) return {v_[i].to_int()};
  Dims d;
  for (const IValue& e : v_[i].to_list().items) d.push_back(e.is_bool() ? int64_t(e.to_bool()) : e.to_int());
  return d;
}
std::optional<Dims> Args::opt_dims(size_t i) const {
  if (v_[i].is_none()) return std::nullopt;
  return dims(i);
}
std::optional<std::string> Args::opt_str(size_t i) const {
  if (v_[i].is_none()) return std::nullopt;
  return v_[i].to_string();
}
std::optional<DType> Args::opt_dtype(size_t i) const {
  if (v_[i].is_none()) return std::nullopt;
  return v_[i].to_dtype();
}
std::optional<Device> Args::opt_device(size_t i) const {
  if (v_[i].is_none()) return std::nullopt;
  return v_[i].to_device();
}
std::vector<Tensor> Args::tensors(size_t i) const {
  std::vector<Tensor> ts;
  for (const IValue& e : v_[i].to_list().items) ts.push_back(e.to_tensor());
  return ts;
}

}  // namespace thn
