// Replays the PyTorch-generated cases of tests/runtime/expected/*.txt (see
// torch_cases.py) through thn's op table and compares every variable.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "runtime/elementwise.h"
#include "runtime/error.h"
#include "runtime/op_registry.h"

using namespace thn;

namespace {

struct Reader {
  std::istringstream in;
  explicit Reader(const std::string& line) : in(line) {}
  std::string word() {
    std::string w;
    in >> w;
    return w;
  }
  int64_t integer() { return std::stoll(word()); }
  std::string str() {  // s<len>:<bytes>
    in >> std::ws;
    char s = char(in.get());
    REQUIRE(s == 's');
    size_t len = 0;
    in >> len;
    REQUIRE(char(in.get()) == ':');
    std::string out(len, '\0');
    in.read(out.data(), std::streamsize(len));
    return out;
  }
};

double parse_double(const std::string& w) { return std::strtod(w.c_str(), nullptr); }

Dims read_dims(Reader& r, int64_t n) {
  Dims d(n);
  for (auto& x : d) x = r.integer();
  return d;
}

// Values written in logical order into a contiguous tensor of `dtype`.
Tensor read_values(Reader& r, DType dtype, const Dims& sizes, int64_t count) {
  Tensor t = empty(sizes, dtype);
  dispatch_dtype(dtype, [&]<class S>() {
    S* p = t.data<S>();
    for (int64_t i = 0; i < count; i++) p[i] = S(compute_t<S>(parse_double(r.word())));
  });
  return t;
}

struct Expected {
  IValue value;
  bool strides = true;
};

IValue read_value(Reader& r, const std::string& tok, const std::map<std::string, IValue>* vars) {
  switch (tok[0]) {
    case 'N': return IValue();
    case 'b': return IValue(tok[1] == '1');
    case 'i': return IValue(int64_t(std::stoll(tok.substr(1))));
    case 'f': return IValue(parse_double(tok.substr(1)));
    case 'd': return IValue(*dtype_from_name(tok.substr(1)));
    case 'D': return IValue(Device{tok.substr(1) == "cuda" ? DeviceType::CUDA : DeviceType::CPU});
    case '@': return vars->at(tok.substr(1));
    case 's': {  // re-read: the token was cut at a space
      r.in.seekg(-std::streamoff(tok.size()), std::ios::cur);
      return IValue(r.str());
    }
    case 'L':
    case 'U': {
      int64_t n = std::stoll(tok.substr(1));
      std::vector<IValue> items;
      for (int64_t i = 0; i < n; i++) items.push_back(read_value(r, r.word(), vars));
      return IValue::list(std::move(items), tok[0] == 'U');
    }
    case 'S': {  // an input: storage values, then a strided view of them
      DType dt = *dtype_from_name(r.word());
      int64_t nd = r.integer();
      Dims sizes = read_dims(r, nd), strides = read_dims(r, nd);
      int64_t offset = r.integer(), n = r.integer();
      Tensor base = read_values(r, dt, {n}, n);
      return IValue(base.as_strided(sizes, strides, offset));
    }
    case 'T': {  // an expectation: values in logical order, with strides to compare
      DType dt = *dtype_from_name(r.word());
      int64_t nd = r.integer();
      Dims sizes = read_dims(r, nd), strides = read_dims(r, nd);
      int64_t n = r.integer();
      Tensor t = read_values(r, dt, sizes, n);
      return IValue(t.as_strided(sizes, strides, 0));  // strides kept only for comparison
    }
  }
  FAIL("bad token " << tok);
  return IValue();
}


struct Tolerance {
  double rtol = -1, atol = -1;
};

void check_tensor(const std::string& where, const Tensor& got, const Tensor& want, bool strides, Tolerance tol) {
  INFO(where);
  REQUIRE(dtype_name(got.dtype()) == dtype_name(want.dtype()));
  REQUIRE(dims_str(got.sizes()) == dims_str(want.sizes()));
  if (strides && got.numel() > 1) CHECK(dims_str(got.strides()) == dims_str(want.strides()));
  Tensor g = contiguous(to_dtype(got, DType::Float64));
  Tensor w = empty(want.sizes(), want.dtype());
  std::memcpy(w.raw_data(), want.raw_data(), size_t(want.numel() * itemsize(want.dtype())));
  w = to_dtype(w, DType::Float64);
  double rtol = 0, atol = 0;
  switch (want.dtype()) {
    case DType::Float16: rtol = 1e-3, atol = 1e-5; break;
    case DType::BFloat16: rtol = 1.6e-2, atol = 1e-5; break;
    case DType::Float32: rtol = 1.3e-6, atol = 1e-5; break;
    case DType::Float64: rtol = 1e-7, atol = 1e-7; break;
    default: break;
  }
  if (tol.rtol >= 0) rtol = tol.rtol, atol = tol.atol;
  const double* gp = g.data<double>();
  const double* wp = w.data<double>();
  for (int64_t i = 0; i < g.numel(); i++) {
    bool ok = (std::isnan(gp[i]) && std::isnan(wp[i])) || gp[i] == wp[i] ||
              std::fabs(gp[i] - wp[i]) <= atol + rtol * std::fabs(wp[i]);
    if (!ok) FAIL_CHECK("element " << i << ": got " << gp[i] << ", want " << wp[i]);
  }
}

void check_value(const std::string& where, const IValue& got, const IValue& want, bool strides, Tolerance tol) {
  INFO(where);
  if (want.is_tensor()) {
    REQUIRE(got.is_tensor());
    check_tensor(where, got.to_tensor(), want.to_tensor(), strides, tol);
  } else if (want.is_list()) {
    REQUIRE(got.is_list());
    const auto& g = got.to_list().items;
    const auto& w = want.to_list().items;
    REQUIRE(g.size() == w.size());
    for (size_t i = 0; i < g.size(); i++) check_value(where + "[" + std::to_string(i) + "]", g[i], w[i], strides, tol);
  } else if (want.is_double()) {
    REQUIRE(got.is_double());
    double a = got.to_double(), b = want.to_double();
    CHECK(((std::isnan(a) && std::isnan(b)) || std::fabs(a - b) <= 1e-6 * std::fabs(b) + 1e-12));
  } else {
    CHECK(got.type_name() == want.type_name());
    if (want.is_int()) CHECK(got.to_int() == want.to_int());
    if (want.is_bool()) CHECK(got.to_bool() == want.to_bool());
    if (want.is_dtype()) CHECK(dtype_name(got.to_dtype()) == dtype_name(want.to_dtype()));
  }
}

// The metadata of an expectation: dtype, sizes and (where compared) strides.
void check_metadata(const std::string& where, const IValue& got, const IValue& want, bool strides) {
  INFO(where);
  if (want.is_tensor()) {
    REQUIRE(got.is_tensor());
    const Tensor &g = got.to_tensor(), &w = want.to_tensor();
    CHECK(dtype_name(g.dtype()) == dtype_name(w.dtype()));
    CHECK(dims_str(g.sizes()) == dims_str(w.sizes()));
    if (strides && g.numel() > 1 && g.sizes() == w.sizes()) CHECK(dims_str(g.strides()) == dims_str(w.strides()));
  } else if (want.is_list() && got.is_list() && got.to_list().items.size() == want.to_list().items.size()) {
    for (size_t i = 0; i < want.to_list().items.size(); i++)
      check_metadata(where + "[" + std::to_string(i) + "]", got.to_list().items[i], want.to_list().items[i], strides);
  }
}

// A meta tensor (no bytes) with t's layout.
IValue meta_of(const IValue& v) {
  if (!v.is_tensor()) return v;
  const Tensor& t = v.to_tensor();
  return IValue(Tensor(std::make_shared<Storage>(t.storage()->nbytes(), kCPU, true), t.offset(), t.sizes(), t.strides(),
                       t.dtype()));
}

// Replays a case file. With `meta`, on meta tensors inside a MetaScope, as
// tracing runs them: every result has PyTorch's dtype, sizes and strides,
// every error is PyTorch's or (a check of values) none, which the names of
// `data_checks` collect; no element is read.
void run_case_file(const std::filesystem::path& path, bool meta = false, std::vector<std::string>* data_checks = nullptr) {
  std::ifstream f(path);
  REQUIRE(f.good());
  std::string line, name;
  std::map<std::string, IValue> vars;
  Tolerance tol;
  std::optional<Error> raised;
  bool error_expected = false, skip = false;
  int cases = 0;
  while (std::getline(f, line)) {
    Reader r(line);
    std::string kind = r.word();
    if (kind == "case") {
      name = r.str();
      vars.clear();
      tol = {};
      raised.reset();
      error_expected = false;
      skip = false;
      cases++;
    } else if (skip) {
      continue;
    } else if (kind == "tol") {
      tol.rtol = parse_double(r.word());
      tol.atol = parse_double(r.word());
    } else if (kind == "input") {
      std::string v = r.word();
      vars[v] = read_value(r, r.word(), &vars);
      if (meta) vars[v] = meta_of(vars[v]);
    } else if (kind == "step") {
      std::string v = r.word(), how = r.word(), op = r.str();
      std::vector<IValue> args;
      for (int64_t n = r.integer(); n > 0; n--) args.push_back(read_value(r, r.word(), &vars));
      Kwargs kwargs;
      for (int64_t n = r.integer(); n > 0; n--) {
        std::string k = r.str();
        kwargs.emplace_back(k, read_value(r, r.word(), &vars));
      }
      // (Ops whose result is values, or has a shape that depends on them:
      // the tracer never runs them on meta tensors.)
      if (meta && (op == "item" || op == "tolist" || op == "nonzero" || op == "masked_select")) skip = true;
      if (raised || skip) continue;
      INFO(path.filename().string() << ": " << name << ": " << op);
      try {
        std::optional<MetaScope> scope;
        if (meta) scope.emplace();
        if (how == "F") {
          vars[v] = call(op, args, kwargs);
        } else {
          Tensor self = args[0].to_tensor();
          args.erase(args.begin());
          vars[v] = call_method(self, op, args, kwargs);
        }
      } catch (const Error& e) {
        raised = e;
      } catch (const std::logic_error& e) {
        FAIL_CHECK("internal error: " << e.what());
        raised = Error(ErrorKind::RuntimeError, e.what());
      }
    } else if (kind == "error") {
      std::string type = r.word(), msg = r.str();
      error_expected = true;
      INFO(path.filename().string() << ": " << name);
      if (!raised && meta) {
        data_checks->push_back(path.stem().string() + ": " + name + ": " + msg);
      } else if (!raised) {
        FAIL_CHECK("expected " << type << ": " << msg);
      } else {
        CHECK(std::string(error_kind_name(raised->kind())) == type);
        CHECK(std::string(raised->what()) == msg);
      }
    } else if (kind == "expect") {
      std::string v = r.word();
      bool strides = r.word() == "strides";
      IValue want = read_value(r, r.word(), nullptr);
      INFO(path.filename().string() << ": " << name);
      if (raised && !error_expected) {
        FAIL_CHECK("unexpected error: " << raised->what());
        continue;
      }
      if (meta && error_expected && !raised) continue;  // (a check of data: the values never come)
      REQUIRE(vars.count(v));
      if (meta) check_metadata(v, vars[v], want, strides);
      else check_value(v, vars[v], want, strides, tol);
    }
  }
  CHECK(cases > 0);
}

}  // namespace

TEST_CASE("runtime ops agree with PyTorch", "[runtime][torch]") {
  std::filesystem::path dir = std::filesystem::path(THN_TEST_DIR) / "runtime" / "expected";
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".txt") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(!files.empty());
  for (const auto& p : files) {
    SECTION(p.stem().string()) { run_case_file(p); }
  }
}

// Tracing runs the same cases on meta tensors. The checks that need values
// are listed in tests/runtime/data_checks.txt (regenerate it with
// THN_WRITE_DATA_CHECKS=1): the jit raises them when a trace runs
// (tests/jit/data_checks.thn shows a first and a cached call agree).
TEST_CASE("runtime ops on meta tensors give PyTorch's metadata and errors", "[runtime][torch][meta]") {
  std::filesystem::path dir = std::filesystem::path(THN_TEST_DIR) / "runtime";
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir / "expected"))
    if (e.path().extension() == ".txt") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<std::string> checks;
  for (const auto& p : files) run_case_file(p, true, &checks);
  std::string listed;
  for (const std::string& c : checks) listed += c + "\n";
  const std::filesystem::path golden = dir / "data_checks.txt";
  if (std::getenv("THN_WRITE_DATA_CHECKS")) std::ofstream(golden) << listed;
  std::ifstream in(golden);
  std::stringstream want;
  want << in.rdbuf();
  CHECK(listed == want.str());
}
