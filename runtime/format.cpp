// Python's float repr and PyTorch's tensor printing (torch/_tensor_str.py of
// PyTorch 1.13), reproduced step by step; the comments name the Python
// function each piece follows.
#include "runtime/format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <vector>

#include "runtime/cuda.h"
#include "runtime/error.h"
#include "runtime/views.h"

namespace thn {

std::string repr_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof buf, std::fabs(v), std::chars_format::scientific);
  std::string_view sci(buf, size_t(res.ptr - buf));  // d[.ddd]e±XX, shortest round-trip digits
  size_t e = sci.find('e');
  std::string digits(sci.substr(0, 1));
  if (e > 2) digits += sci.substr(2, e - 2);  // the digits after the point
  int exp = std::stoi(std::string(sci.substr(e + 1)));
  int ndigits = int(digits.size());
  std::string out = std::signbit(v) ? "-" : "";
  if (exp < -4 || exp >= 16) {
    out += digits.substr(0, 1);
    if (ndigits > 1) out += fmt::format(".{}", digits.substr(1));
    out += fmt::format("e{}{:02d}", exp < 0 ? '-' : '+', std::abs(exp));
  } else if (exp < 0) {
    out += fmt::format("0.{}{}", std::string(size_t(-exp - 1), '0'), digits);
  } else if (ndigits <= exp + 1) {
    out += fmt::format("{}{}.0", digits, std::string(size_t(exp + 1 - ndigits), '0'));
  } else {
    out += fmt::format("{}.{}", digits.substr(0, size_t(exp + 1)), digits.substr(size_t(exp + 1)));
  }
  return out;
}

namespace {

// torch._tensor_str.PRINT_OPTS at its defaults.
constexpr int kPrecision = 4;
constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr int64_t kLineWidth = 80;

// Python's format(v, ".{precision}{conv}") for conv 'f' or 'e'. Both glibc and
// Python round the exact binary value correctly, so the digits agree.
std::string format_double(double v, char conv, int precision) {
  if (std::isnan(v)) return "nan";  // Python drops the sign of a NaN
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[400];  // "%.4f" of the largest double needs 315
  const char* spec = conv == 'e' ? "%.*e" : "%.*f";
  int n = std::snprintf(buf, sizeof buf, spec, precision, v);
  return std::string(buf, size_t(n));
}

// Python's str() of a bool or int element.
std::string integral_str(const Scalar& v) {
  if (v.is_bool()) return v.to_bool() ? "True" : "False";
  return std::to_string(v.to_int());
}

// _Formatter: picks one notation and one width for all the elements shown.
class Formatter {
 public:
  Formatter(const std::vector<Scalar>& shown, bool floating) : floating_(floating) {
    if (!floating_) {
      for (const Scalar& v : shown) widen(integral_str(v));
      return;
    }
    std::vector<double> finite;  // the nonzero finite values
    for (const Scalar& v : shown) {
      double d = v.to_double();
      if (std::isfinite(d) && d != 0) finite.push_back(d);
    }
    if (finite.empty()) return;
    double min_abs = INFINITY, max_abs = 0;
    for (double d : finite) {
      min_abs = std::min(min_abs, std::fabs(d));
      max_abs = std::max(max_abs, std::fabs(d));
      if (d != std::ceil(d)) int_mode_ = false;
    }
    sci_mode_ = max_abs / min_abs > 1000.0 || max_abs > 1.0e8 || (!int_mode_ && min_abs < 1.0e-4);
    for (double d : finite) widen(unpadded(d));
  }

  int64_t width() const { return max_width_; }

  std::string format(const Scalar& v) const {
    std::string s = floating_ ? unpadded(v.to_double()) : integral_str(v);
    return std::string(size_t(std::max<int64_t>(0, max_width_ - int64_t(s.size()))), ' ') + s;
  }

 private:
  void widen(const std::string& s) { max_width_ = std::max(max_width_, int64_t(s.size())); }

  std::string unpadded(double d) const {
    if (sci_mode_) return format_double(d, 'e', kPrecision);
    if (!int_mode_) return format_double(d, 'f', kPrecision);
    // Integral floats keep a "." so that the dtype still shows; inf and nan do not.
    return format_double(d, 'f', 0) + (std::isfinite(d) ? "." : "");
  }

  bool floating_;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  int64_t max_width_ = 1;
};

constexpr int64_t kEllipsis = -1;

// The indices along a dim of `size` that are printed, with kEllipsis where
// the summarized middle goes.
std::vector<int64_t> shown_indices(int64_t size, bool summarize) {
  std::vector<int64_t> idx;
  bool cut = summarize && size > 2 * kEdgeItems;
  for (int64_t i = 0; i < size; i++) {
    if (cut && i == kEdgeItems) {
      idx.push_back(kEllipsis);
      i = size - kEdgeItems;
    }
    idx.push_back(i);
  }
  return idx;
}

// get_summarized_data, flattened: the elements the printout will show.
void collect_shown(const Tensor& t, bool summarize, std::vector<Scalar>& out) {
  if (t.dim() == 0) {
    out.push_back(t.item());
    return;
  }
  for (int64_t i : shown_indices(t.size(0), summarize))
    if (i != kEllipsis) collect_shown(select(t, 0, i), summarize, out);
}

// _vector_str: elements wrapped to the line width.
std::string vector_str(const Tensor& t, int64_t indent, bool summarize, const Formatter& f) {
  int64_t element_length = f.width() + 2;  // with ", "
  size_t per_line = size_t(std::max<int64_t>(1, (kLineWidth - indent) / element_length));
  std::vector<std::string> elements;
  for (int64_t i : shown_indices(t.size(0), summarize))
    elements.push_back(i == kEllipsis ? " ..." : f.format(select(t, 0, i).item()));
  std::vector<std::string> lines;
  for (size_t i = 0; i < elements.size(); i += per_line) {
    auto begin = elements.begin() + long(i);
    auto end = elements.begin() + long(std::min(elements.size(), i + per_line));
    lines.push_back(fmt::format("{}", fmt::join(begin, end, ", ")));
  }
  return fmt::format("[{}]", fmt::join(lines, fmt::format(",\n{:{}}", "", indent + 1)));
}

// _tensor_str_with_formatter
std::string tensor_str(const Tensor& t, int64_t indent, bool summarize, const Formatter& f) {
  if (t.dim() == 0) return f.format(t.item());
  if (t.dim() == 1) return vector_str(t, indent, summarize, f);
  std::vector<std::string> slices;
  for (int64_t i : shown_indices(t.size(0), summarize))
    slices.push_back(i == kEllipsis ? "..." : tensor_str(select(t, 0, i), indent + 1, summarize, f));
  std::string sep = fmt::format(",{}{:{}}", std::string(size_t(t.dim() - 1), '\n'), "", indent + 1);
  return fmt::format("[{}]", fmt::join(slices, sep));
}

// _tensor_str for a tensor with elements.
std::string tensor_contents(const Tensor& t, int64_t indent) {
  bool summarize = t.numel() > kThreshold;
  std::vector<Scalar> shown;
  collect_shown(t, summarize, shown);
  return tensor_str(t, indent, summarize, Formatter(shown, is_floating(t.dtype())));
}

// _add_suffixes: ", suffix" on the last line while it fits the line width.
std::string add_suffixes(std::string s, const std::vector<std::string>& suffixes, int64_t indent) {
  // As in PyTorch, the count is the last line's length plus 2.
  int64_t last_line_len = int64_t(s.size()) - int64_t(s.rfind('\n')) + 1;
  for (const std::string& suffix : suffixes) {
    int64_t len = int64_t(suffix.size());
    if (last_line_len + len + 2 > kLineWidth) {
      s += fmt::format(",\n{:{}}{}", "", indent, suffix);
      last_line_len = indent + len;
    } else {
      s += ", " + suffix;
      last_line_len += len + 2;
    }
  }
  return s + ")";
}

std::string shape_tuple(const Dims& sizes) {  // str(tuple(t.shape))
  return fmt::format("({}{})", fmt::join(sizes, ", "), sizes.size() == 1 ? "," : "");
}

std::string dtype_suffix(DType t) { return fmt::format("dtype=torch.{}", dtype_name(t)); }

}  // namespace

// _str_intern for a plain strided tensor.
std::string tensor_repr(const Tensor& t) {
  const std::string prefix = "tensor(";
  const int64_t indent = int64_t(prefix.size());
  std::vector<std::string> suffixes;
  // PyTorch names the device when it is not the default (CPU). Printing a CUDA
  // tensor's elements needs them copied to the CPU first.
  if (t.device().type == DeviceType::CUDA) suffixes.push_back("device='cuda:0'");
  std::string body = "[]";
  if (t.numel() == 0) {
    // numpy's convention: the shape unless it is (0,), and the dtype unless
    // it is the default float one, since no element shows it.
    if (t.dim() != 1) suffixes.push_back("size=" + shape_tuple(t.sizes()));
    if (t.dtype() != kDefaultFloat) suffixes.push_back(dtype_suffix(t.dtype()));
  } else {
    DType dt = t.dtype();
    if (dt != kDefaultFloat && dt != kDefaultInt && dt != DType::Bool) suffixes.push_back(dtype_suffix(dt));
    body = tensor_contents(t.device().type == DeviceType::CUDA ? cuda::to_device(t, kCPU) : t, indent);
  }
  return add_suffixes(prefix + body, suffixes, indent);
}

}  // namespace thn
