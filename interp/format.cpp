// Strings: format() with Python's format-spec mini-language (f-strings and
// str.format use it), %-formatting, and the methods of str.
#include <cmath>
#include <cstring>

#include "frontend/unicode.h"
#include "interp/interpreter.h"
#include "interp/objects.h"
#include "runtime/format.h"

namespace thn {

namespace {

// [[fill]align][sign][z][#][0][width][grouping][.precision][type]
struct Spec {
  std::string fill = " ";
  bool fill_given = false;
  char align = 0, sign = '-', type = 0, grouping = 0;
  bool alternate = false, zero = false, no_neg_zero = false;
  int64_t min_digits = 0;  // %-formatting's precision of an int: zero-padded to this many digits
  int64_t width = -1, precision = -1;
};

Spec parse_spec(const std::string& text, const char* type_name) {
  Spec s;
  size_t i = 0, n = text.size();
  auto is_align = [](char c) { return c == '<' || c == '>' || c == '^' || c == '='; };
  // The fill may be any character (a UTF-8 sequence) followed by an align.
  size_t first = n ? 1 : 0;
  while (first < n && (static_cast<unsigned char>(text[first]) & 0xC0) == 0x80) ++first;
  if (first < n && is_align(text[first])) {
    s.fill = text.substr(0, first);
    s.fill_given = true;
    s.align = text[first];
    i = first + 1;
  } else if (i < n && is_align(text[i])) {
    s.align = text[i++];
  }
  if (i < n && (text[i] == '+' || text[i] == '-' || text[i] == ' ')) s.sign = text[i++];
  if (i < n && text[i] == 'z') s.no_neg_zero = true, ++i;
  if (i < n && text[i] == '#') s.alternate = true, ++i;
  if (i < n && text[i] == '0') s.zero = true, ++i;
  auto digits = [&]() -> int64_t {
    size_t start = i;
    int64_t v = 0;
    while (i < n && std::isdigit(static_cast<unsigned char>(text[i]))) {
      v = v * 10 + (text[i++] - '0');
      if (v > 1000000) fail(ErrorKind::ValueError, "Too many decimal digits in format string");
    }
    return i == start ? -1 : v;
  };
  s.width = digits();
  if (i < n && (text[i] == ',' || text[i] == '_')) s.grouping = text[i++];
  if (i < n && text[i] == '.') {
    ++i;
    s.precision = digits();
    if (s.precision < 0) fail(ErrorKind::ValueError, "Format specifier missing precision");
  }
  if (i < n) s.type = text[i++];
  if (i < n) fail(ErrorKind::ValueError, "Invalid format specifier '{}' for object of type '{}'", text, type_name);
  if (s.zero && !s.fill_given) {  // `0` zero-fills: after the sign unless an alignment is given
    s.fill = "0";
    if (!s.align) s.align = '=';
  }
  return s;
}

// Pads `body` (after `prefix`: a sign and 0x) to the width.
// `fill` k times, allocated at once (a width no memory holds is a
// MemoryError at once, not a string grown until the machine runs out).
std::string repeated(const std::string& fill, size_t k) {
  std::string out;
  if (k > 0 && fill.size() > std::string().max_size() / k) throw std::bad_alloc();
  out.reserve(fill.size() * k);
  for (size_t j = 0; j < k; ++j) out += fill;
  return out;
}

std::string pad(const Spec& s, const std::string& prefix, const std::string& body, char default_align) {
  size_t len = char_count(prefix) + char_count(body);
  if (s.width < 0 || size_t(s.width) <= len) return prefix + body;
  size_t missing = size_t(s.width) - len;
  auto fill = [&](size_t k) { return repeated(s.fill, k); };
  switch (s.align ? s.align : default_align) {
    case '<': return prefix + body + fill(missing);
    case '^': return fill(missing / 2) + prefix + body + fill(missing - missing / 2);
    case '=': return prefix + fill(missing) + body;
    default: return fill(missing) + prefix + body;
  }
}

// Zero padding that goes through the separators (format(1234, "010,") is
// 00,001,234): `digits` take leading zeros until, grouped, they fill the width.
std::string group(const std::string& digits, char sep, int every);
std::string zero_grouped(const Spec& s, const std::string& before, std::string digits, int every) {
  if (s.fill == "0" && s.align == '=' && s.width > 0)
    while (char_count(before) + char_count(group(digits, s.grouping, every)) < size_t(s.width)) digits.insert(0, "0");
  return group(digits, s.grouping, every);
}

// Separators every `every` digits of the integer part of `digits`.
std::string group(const std::string& digits, char sep, int every) {
  size_t end = digits.find_first_not_of("0123456789abcdefABCDEF");
  if (end == std::string::npos) end = digits.size();
  std::string head = digits.substr(0, end), out;
  for (size_t k = 0; k < head.size(); ++k) {
    if (k && (head.size() - k) % size_t(every) == 0) out += sep;
    out += head[k];
  }
  return out + digits.substr(end);
}

std::string format_int(int64_t v, const Spec& s) {
  bool neg = v < 0;
  uint64_t m = neg ? uint64_t(0) - uint64_t(v) : uint64_t(v);
  std::string digits, prefix;
  switch (s.type) {
    case 'b': digits = fmt::format("{:b}", m); prefix = s.alternate ? "0b" : ""; break;
    case 'o': digits = fmt::format("{:o}", m); prefix = s.alternate ? "0o" : ""; break;
    case 'x': digits = fmt::format("{:x}", m); prefix = s.alternate ? "0x" : ""; break;
    case 'X': digits = fmt::format("{:X}", m); prefix = s.alternate ? "0X" : ""; break;
    case 'c': {
      if (v < 0 || v > 0x10FFFF) fail(ErrorKind::OverflowError, "%c arg not in range(0x110000)");
      std::string ch;
      uint32_t cp = uint32_t(v);
      if (cp < 0x80) ch += char(cp);
      else if (cp < 0x800) ch += {char(0xC0 | (cp >> 6)), char(0x80 | (cp & 0x3F))};
      else if (cp < 0x10000) ch += {char(0xE0 | (cp >> 12)), char(0x80 | ((cp >> 6) & 0x3F)), char(0x80 | (cp & 0x3F))};
      else ch += {char(0xF0 | (cp >> 18)), char(0x80 | ((cp >> 12) & 0x3F)), char(0x80 | ((cp >> 6) & 0x3F)), char(0x80 | (cp & 0x3F))};
      return pad(s, "", ch, '<');
    }
    default: digits = std::to_string(m);
  }
  if (int64_t(digits.size()) < s.min_digits) digits.insert(0, size_t(s.min_digits) - digits.size(), '0');
  std::string sign = neg ? "-" : s.sign == '+' ? "+" : s.sign == ' ' ? " " : "";
  if (s.grouping) digits = zero_grouped(s, sign + prefix, digits, s.type && std::strchr("boxX", s.type) ? 4 : 3);
  return pad(s, sign + prefix, digits, '>');
}

// Python's repr-style 'g' for the None type with a precision: fixed
// notation keeps one digit after the point, and scientific starts at exp >= p - 1.
std::string general(double x, int64_t p, bool repr_style, bool alternate, bool upper) {
  if (p == 0) p = 1;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", int(p - 1), x);
  int exp = std::atoi(std::strchr(buf, 'e') + 1);
  bool sci = exp < -4 || exp >= (repr_style ? p - 1 : p);
  if (repr_style && !sci && exp == p - 1) sci = true;
  std::string out;
  if (sci) {
    std::string mant(buf, std::strchr(buf, 'e'));
    if (!alternate && mant.find('.') != std::string::npos) {
      while (mant.back() == '0') mant.pop_back();
      if (mant.back() == '.') mant.pop_back();
    }
    if (alternate && mant.find('.') == std::string::npos) mant += '.';  // (#: the point stays, 1.e+20)
    out = mant + fmt::format("e{}{:02d}", exp < 0 ? '-' : '+', std::abs(exp));
  } else {
    std::snprintf(buf, sizeof buf, "%.*f", int(std::max<int64_t>(0, p - 1 - exp)), x);
    out = buf;
    if (!alternate && out.find('.') != std::string::npos) {
      while (out.back() == '0') out.pop_back();
      if (out.back() == '.') out.pop_back();
    }
    if (alternate && out.find('.') == std::string::npos) out += '.';
    if (repr_style && out.find('.') == std::string::npos) out += ".0";
  }
  if (upper)
    for (char& c : out) c = char(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string format_float(double x, const Spec& s) {
  char type = s.type;
  bool upper = type && std::isupper(static_cast<unsigned char>(type));
  bool neg = std::signbit(x) && !(s.no_neg_zero && x == 0);
  double a = std::fabs(x);
  std::string body;
  if (std::isnan(x) || std::isinf(x)) {
    body = std::isnan(x) ? "nan" : "inf";
    if (upper) body = std::isnan(x) ? "NAN" : "INF";
    if (type == '%') body += "%";
    neg = std::signbit(x) && !std::isnan(x);
  } else {
    char buf[512];
    int64_t p = s.precision < 0 ? 6 : s.precision;
    if (p > 400) fail(ErrorKind::ValueError, "precision too big");
    switch (type) {
      case 'f': case 'F': std::snprintf(buf, sizeof buf, s.alternate ? "%#.*f" : "%.*f", int(p), a); body = buf; break;
      case 'e': case 'E': std::snprintf(buf, sizeof buf, s.alternate ? "%#.*e" : "%.*e", int(p), a); body = buf; break;
      case '%': std::snprintf(buf, sizeof buf, s.alternate ? "%#.*f" : "%.*f", int(p), a * 100); body = std::string(buf) + "%"; break;
      case 'g': case 'G': case 'n': body = general(a, p, false, s.alternate, upper); break;
      default:
        body = s.precision < 0 ? repr_float(a) : general(a, s.precision, true, s.alternate, false);
        if (s.alternate && body.find('.') == std::string::npos && body.find('e') != std::string::npos)
          body.insert(body.find('e'), ".");  // (format(1e20, "#"): 1.e+20)
    }
    if (type == 'E') {
      std::snprintf(buf, sizeof buf, s.alternate ? "%#.*E" : "%.*E", int(p), a);
      body = buf;
    }
  }
  // z: a result that rounds to zero is positive zero (-0.04 -> "0.0").
  if (neg && s.no_neg_zero && std::isfinite(x) && body.find_first_of("123456789") == std::string::npos) neg = false;
  std::string sign = neg ? "-" : s.sign == '+' ? "+" : s.sign == ' ' ? " " : "";
  if (s.grouping) body = std::isfinite(x) ? zero_grouped(s, sign, body, 3) : group(body, s.grouping, 3);
  return pad(s, sign, body, '>');
}

std::string format_str(const std::string& v, const Spec& s) {
  if (s.type && s.type != 's') fail(ErrorKind::ValueError, "Unknown format code '{}' for object of type 'str'", s.type);
  if (s.sign != '-') fail(ErrorKind::ValueError, "Sign not allowed in string format specifier");
  Spec t = s;
  if (s.zero && !s.fill_given && s.align == '=') t.align = '<';  // format("ab", "05"): zero-filled on the right
  else if (s.align == '=') fail(ErrorKind::ValueError, "'=' alignment not allowed in string format specifier");
  std::string body = v;
  if (s.precision >= 0) {  // the first `precision` code points
    size_t k = 0, n = 0;
    while (k < body.size() && n < size_t(s.precision)) {
      ++k;
      while (k < body.size() && (static_cast<unsigned char>(body[k]) & 0xC0) == 0x80) ++k;
      ++n;
    }
    body.resize(k);
  }
  return pad(t, "", body, '<');
}

}  // namespace

std::string Interpreter::format(const Value& v, const std::string& spec) {
  if (v.is(Type::Tensor)) {
    if (tensor_dim(v) == 0) {  // Tensor.__format__: a 0-dim tensor formats as its item
      Value item = dispatch_->call(op_named("item"), &v, {}, CallArgs{}, false);
      return format(item, spec);
    }
    if (spec.empty()) return str(v);
    fail(ErrorKind::TypeError, "unsupported format string passed to Tensor.__format__");
  }
  if (v.is(Type::Instance)) {
    Value m = special(v, "__format__");
    if (!m.is(Type::Unbound)) {
      CallArgs args{{Value::str(spec)}, {}};
      Value r = call(m, args);
      if (!r.is(Type::Str)) fail(ErrorKind::TypeError, "__format__ must return a str, not {}", type_name(r));
      return r.as_str();
    }
  }
  if (spec.empty()) return str(v);
  if (v.is(Type::Str)) return format_str(v.as_str(), parse_spec(spec, "str"));
  if (v.is_int_like()) {
    Spec s = parse_spec(spec, type_name(v).c_str());
    if (!s.type || std::strchr("bcdoxXn", s.type)) {
      if (s.precision >= 0) fail(ErrorKind::ValueError, "Precision not allowed in integer format specifier");
      return format_int(v.as_int(), s);
    }
    if (std::strchr("eEfFgG%", s.type)) return format_float(double(v.as_int()), s);
    fail(ErrorKind::ValueError, "Unknown format code '{}' for object of type '{}'", s.type, type_name(v));
  }
  if (v.is(Type::Float)) {
    Spec s = parse_spec(spec, "float");
    if (s.type && !std::strchr("eEfFgGn%", s.type))
      fail(ErrorKind::ValueError, "Unknown format code '{}' for object of type 'float'", s.type);
    return format_float(v.as_float(), s);
  }
  fail(ErrorKind::TypeError, "unsupported format string passed to {}.__format__", type_name(v));
}

// ---- %-formatting ----

Value percent_format(Interpreter& in, const std::string& fmt, const Value& args) {
  std::vector<Value> items;
  bool mapping = args.is(Type::Dict);
  if (args.is(Type::Tuple)) items = args.items();
  else items.push_back(args);
  size_t next = 0;
  auto take = [&]() -> Value {
    if (next >= items.size()) fail(ErrorKind::TypeError, "not enough arguments for format string");
    return items[next++];
  };
  std::string out;
  size_t i = 0, n = fmt.size();
  while (i < n) {
    char c = fmt[i++];
    if (c != '%') {
      out += c;
      continue;
    }
    if (i >= n) fail(ErrorKind::ValueError, "incomplete format");
    Value arg;
    bool have = false;
    if (fmt[i] == '(') {
      size_t close = fmt.find(')', i);
      if (close == std::string::npos) fail(ErrorKind::ValueError, "incomplete format key");
      if (!mapping) fail(ErrorKind::TypeError, "format requires a mapping");
      arg = in.getitem(args, Value::str(fmt.substr(i + 1, close - i - 1)));
      have = true;
      i = close + 1;
    }
    Spec s;
    for (; i < n && std::strchr("-+ #0", fmt[i]); ++i) {
      if (fmt[i] == '-') s.align = '<';
      else if (fmt[i] == '+') s.sign = '+';
      else if (fmt[i] == ' ' && s.sign != '+') s.sign = ' ';
      else if (fmt[i] == '#') s.alternate = true;
      else if (fmt[i] == '0') s.zero = true;
    }
    auto number = [&](int64_t& field) {
      if (i < n && fmt[i] == '*') {
        ++i;
        Value w = take();
        if (!w.is_int_like()) fail(ErrorKind::TypeError, "* wants int");
        field = w.as_int();
        return;
      }
      int64_t v = -1;
      while (i < n && std::isdigit(static_cast<unsigned char>(fmt[i]))) v = std::max<int64_t>(v, 0) * 10 + (fmt[i++] - '0');
      field = v;
    };
    number(s.width);
    if (s.width < -1) {
      s.align = '<';
      s.width = -s.width;
    }
    if (i < n && fmt[i] == '.') {
      ++i;
      number(s.precision);
      if (s.precision < 0) s.precision = 0;
    }
    while (i < n && std::strchr("hlL", fmt[i])) ++i;
    if (i >= n) fail(ErrorKind::ValueError, "incomplete format");
    char type = fmt[i++];
    if (type == '%') {
      out += '%';
      continue;
    }
    if (!have) arg = take();
    if (!s.align) s.align = '>';
    if (s.zero && s.align == '>' && type != 's' && type != 'r' && type != 'a' && type != 'c') {
      s.fill = "0";
      s.align = '=';
    }
    switch (type) {
      case 's': case 'r': case 'a': {
        Spec t = s;
        t.sign = '-';
        out += format_str(type == 's' ? in.str(arg) : in.repr(arg), t);
        break;
      }
      case 'd': case 'i': case 'u': case 'x': case 'X': case 'o': {
        Value v = arg;
        if (v.is(Type::Tensor)) v = in.dispatch().call(op_named("item"), &v, {}, CallArgs{}, false);
        if (v.is(Type::Float) && (type == 'd' || type == 'i' || type == 'u')) {
          double f = std::trunc(v.as_float());
          if (!std::isfinite(f)) fail(ErrorKind::OverflowError, "cannot convert float {} to integer", repr_float(v.as_float()));
          if (f >= 9223372036854775808.0 || f < -9223372036854775808.0)
            fail(ErrorKind::OverflowError, "int overflow: {} does not fit in a 64-bit int", repr_float(f));
          v = Value(int64_t(f));
        }
        if (!v.is_int_like())
          fail(ErrorKind::TypeError, "%{} format: {} is required, not {}", type,
               type == 'x' || type == 'X' || type == 'o' ? "an integer" : "a real number", type_name(arg));
        Spec t = s;
        t.type = type == 'i' || type == 'u' ? 'd' : type;
        t.min_digits = s.precision;
        t.precision = -1;
        out += format_int(v.as_int(), t);
        break;
      }
      case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': {
        Value v = arg;
        if (v.is(Type::Tensor)) v = in.dispatch().call(op_named("item"), &v, {}, CallArgs{}, false);
        if (!v.is_number()) fail(ErrorKind::TypeError, "must be real number, not {}", type_name(arg));
        Spec t = s;
        t.type = type;
        out += format_float(v.as_float(), t);
        break;
      }
      case 'c': {
        Spec t = s;
        t.type = 'c';
        if (arg.is(Type::Str)) {
          if (arg.as_str().empty() || char_count(arg.as_str()) != 1)
            fail(ErrorKind::TypeError, "%c requires an int or a unicode character, not a string of length {}", char_count(arg.as_str()));
          Spec c;
          c.fill = t.fill;
          c.align = t.align;
          c.width = t.width;
          out += format_str(arg.as_str(), c);
        }
        else out += format_int(arg.as_int(), t);
        break;
      }
      default:
        fail(ErrorKind::ValueError, "unsupported format character '{}' (0x{:x}) at index {}", type, int(type), i - 1);
    }
  }
  if (!mapping && next < items.size()) fail(ErrorKind::TypeError, "not all arguments converted during string formatting");
  return Value::str(std::move(out));
}

// ---- str.format ----

namespace {

Value format_method(Interpreter& in, const std::string& fmt, CallArgs& a) {
  int auto_index = 0;
  bool manual = false, automatic = false;
  // The value a field name names: an argument, then .attr and [key] lookups.
  auto field_value = [&](const std::string& name) -> Value {
    size_t k = 0;
    while (k < name.size() && name[k] != '.' && name[k] != '[') ++k;
    std::string head = name.substr(0, k);
    Value v;
    if (head.empty() || std::all_of(head.begin(), head.end(), ::isdigit)) {
      size_t idx;
      if (head.empty()) {
        if (manual) fail(ErrorKind::ValueError, "cannot switch from manual field specification to automatic field numbering");
        automatic = true;
        idx = size_t(auto_index++);
      } else {
        if (automatic) fail(ErrorKind::ValueError, "cannot switch from automatic field numbering to manual field specification");
        manual = true;
        if (head.size() > 18) fail(ErrorKind::ValueError, "Too many decimal digits in format string");
        idx = size_t(std::stoul(head));
      }
      if (idx >= a.args.size())
        fail(ErrorKind::IndexError, "Replacement index {} out of range for positional args tuple", idx);
      v = a.args[idx];
    } else {
      bool found = false;
      for (auto& [key, x] : a.kwargs)
        if (key == head) v = x, found = true;
      if (!found) fail(ErrorKind::KeyError, "'{}'", head);
    }
    while (k < name.size()) {
      if (name[k] == '.') {
        size_t e = k + 1;
        while (e < name.size() && name[e] != '.' && name[e] != '[') ++e;
        v = in.getattr(v, name.substr(k + 1, e - k - 1));
        k = e;
      } else {
        size_t e = name.find(']', k);
        if (e == std::string::npos) fail(ErrorKind::ValueError, "Missing ']' in format string");
        std::string key = name.substr(k + 1, e - k - 1);
        bool digits = !key.empty() && std::all_of(key.begin(), key.end(), ::isdigit);
        if (digits && key.size() > 18) fail(ErrorKind::ValueError, "Too many decimal digits in format string");
        v = in.getitem(v, digits ? Value(int64_t(std::stoll(key))) : Value::str(key));
        k = e + 1;
      }
    }
    return v;
  };
  std::function<std::string(const std::string&, int)> expand = [&](const std::string& text, int depth) {
    std::string result;
    size_t j = 0, m = text.size();
    while (j < m) {
      char c = text[j];
      if (c == '{' && j + 1 < m && text[j + 1] == '{') {
        result += '{';
        j += 2;
        continue;
      }
      if (c == '}' && j + 1 < m && text[j + 1] == '}') {
        result += '}';
        j += 2;
        continue;
      }
      if (c == '}') fail(ErrorKind::ValueError, "Single '}}' encountered in format string");
      if (c != '{') {
        result += c;
        ++j;
        continue;
      }
      if (depth > 1) fail(ErrorKind::ValueError, "Max string recursion exceeded");
      // The field runs to the matching '}' (a spec may hold nested fields).
      size_t e = j + 1;
      int nest = 1;
      while (e < m && nest) {
        if (text[e] == '{') ++nest;
        else if (text[e] == '}') --nest;
        if (nest) ++e;
      }
      if (e >= m) fail(ErrorKind::ValueError, "expected '}}' before end of string");
      std::string field = text.substr(j + 1, e - j - 1);
      j = e + 1;
      size_t colon = std::string::npos, bang = std::string::npos;
      for (size_t k = 0, br = 0; k < field.size(); ++k) {
        if (field[k] == '[') ++br;
        else if (field[k] == ']' && br) --br;
        else if (!br && field[k] == '!' && bang == std::string::npos && colon == std::string::npos) bang = k;
        else if (!br && field[k] == ':') {
          colon = k;
          break;
        }
      }
      std::string name = field.substr(0, std::min(bang, colon));
      Value v = field_value(name);
      if (bang != std::string::npos) {
        std::string conv = field.substr(bang + 1, colon == std::string::npos ? std::string::npos : colon - bang - 1);
        if (conv == "r" || conv == "a") v = Value::str(in.repr(v));
        else if (conv == "s") v = Value::str(in.str(v));
        else fail(ErrorKind::ValueError, "Unknown conversion specifier {}", conv);
      }
      std::string spec = colon == std::string::npos ? "" : expand(field.substr(colon + 1), depth + 1);
      result += in.format(v, spec);
    }
    return result;
  };
  return Value::str(expand(fmt, 0));
}

// The characters of s with their byte offsets (and s.size() after the last).
struct Chars {
  std::vector<size_t> at;
  std::vector<char32_t> c;
  explicit Chars(const std::string& s) : at(char_offsets(s)) {
    for (size_t k = 0; k + 1 < at.size(); ++k) {
      size_t i = at[k];
      c.push_back(next_char(s, i));
    }
  }
  size_t size() const { return c.size(); }
};

}  // namespace

namespace {

// The part of s that str.find/count/startswith/... look at: their optional
// start and end arguments (args 1 and 2; None for none), in characters,
// adjusted as a slice's; not `valid` when start is past the end or end
// before start.
struct Window {
  bool valid = true;
  size_t begin = 0, end = 0;  // byte offsets
  int64_t first = 0;          // the character index of begin
};

Window window(const std::string& s, const CallArgs& a) {
  const std::vector<size_t> at = char_offsets(s);
  const int64_t n = int64_t(at.size()) - 1;
  auto bound = [&](size_t k, int64_t dflt) {
    if (a.args.size() <= k || a.args[k].is_none()) return dflt;
    if (!a.args[k].is_int_like())
      fail(ErrorKind::TypeError, "slice indices must be integers or None or have an __index__ method");
    int64_t v = a.args[k].as_int();
    if (v < 0) v = std::max<int64_t>(v + n, 0);
    return v;
  };
  const int64_t start = bound(1, 0), end = std::min(bound(2, n), n);
  if (start > n || end < start) return Window{false, 0, 0, 0};
  return Window{true, at[size_t(start)], at[size_t(end)], start};
}

}  // namespace

Value Interpreter::str_method(const Value& self, const std::string& name) {
  auto need = [name](CallArgs& a, size_t lo, size_t hi) { method_arity(name, a, lo, hi); };
  auto str_arg = [name](const Value& v, const char* what = "argument") -> const std::string& {
    if (!v.is(Type::Str)) fail(ErrorKind::TypeError, "{} {} must be str, not {}", name, what, type_name(v));
    return v.as_str();
  };
  auto fn = [&](NativeFn f) { return make_builtin(name, std::move(f)); };
  if (name == "upper" || name == "lower")
    return fn([self, need, up = name == "upper"](Interpreter&, CallArgs& a) {
      need(a, 0, 0);
      return Value::str(up ? to_upper(self.as_str()) : to_lower(self.as_str()));
    });
  if (name == "strip" || name == "lstrip" || name == "rstrip")
    return fn([self, need, name](Interpreter&, CallArgs& a) {
      need(a, 0, 1);
      std::string chars;
      bool ws = a.args.empty() || a.args[0].is_none();
      if (!ws) {
        if (!a.args[0].is(Type::Str)) fail(ErrorKind::TypeError, "{} arg must be None or str", name);
        chars = a.args[0].as_str();
      }
      const Chars strip(chars);
      auto strip_char = [&](char32_t c) {
        return ws ? char_is_space(c) : std::find(strip.c.begin(), strip.c.end(), c) != strip.c.end();
      };
      const std::string& t = self.as_str();
      const Chars tc(t);
      size_t b = 0, e = tc.size();
      if (name != "rstrip")
        while (b < e && strip_char(tc.c[b])) ++b;
      if (name != "lstrip")
        while (e > b && strip_char(tc.c[e - 1])) --e;
      return Value::str(t.substr(tc.at[b], tc.at[e] - tc.at[b]));
    });
  if (name == "split")
    return fn([self](Interpreter&, CallArgs& a) {
      Value sep, maxsplit(int64_t(-1));
      if (a.args.size() > 2) fail(ErrorKind::TypeError, "split() takes at most 2 arguments ({} given)", a.args.size());
      if (a.args.size() > 0) sep = a.args[0];
      if (a.args.size() > 1) maxsplit = a.args[1];
      for (auto& [k, v] : a.kwargs) {
        if (k == "sep") sep = v;
        else if (k == "maxsplit") maxsplit = v;
        else fail(ErrorKind::TypeError, "split() got an unexpected keyword argument '{}'", k);
      }
      int64_t limit = maxsplit.as_int();
      const std::string& t = self.as_str();
      std::vector<Value> parts;
      if (sep.is_none()) {  // (runs of whitespace, by character)
        const Chars tc(t);
        const size_t n = tc.size();
        auto text = [&](size_t b, size_t e) { return Value::str(t.substr(tc.at[b], tc.at[e] - tc.at[b])); };
        size_t i = 0;
        while (true) {
          while (i < n && char_is_space(tc.c[i])) ++i;
          if (i >= n) break;
          if (limit >= 0 && int64_t(parts.size()) == limit) {  // the rest as it is, trailing space included
            parts.push_back(text(i, n));
            break;
          }
          size_t j = i;
          while (j < n && !char_is_space(tc.c[j])) ++j;
          parts.push_back(text(i, j));
          i = j;
        }
        return Value::list(std::move(parts));
      }
      if (!sep.is(Type::Str)) fail(ErrorKind::TypeError, "must be str or None, not {}", type_name(sep));
      const std::string& d = sep.as_str();
      if (d.empty()) fail(ErrorKind::ValueError, "empty separator");
      size_t i = 0;
      while (true) {
        size_t j = t.find(d, i);
        if (j == std::string::npos || (limit >= 0 && int64_t(parts.size()) == limit)) {
          parts.push_back(Value::str(t.substr(i)));
          break;
        }
        parts.push_back(Value::str(t.substr(i, j - i)));
        i = j + d.size();
      }
      return Value::list(std::move(parts));
    });
  if (name == "splitlines")
    return fn([self, need](Interpreter&, CallArgs& a) {
      need(a, 0, 0);
      std::vector<Value> lines;
      const std::string& t = self.as_str();
      const Chars tc(t);
      auto is_break = [](char32_t c) {
        return (c >= '\n' && c <= '\r') || (c >= 0x1C && c <= 0x1E) || c == 0x85 || c == 0x2028 || c == 0x2029;
      };
      size_t i = 0;
      while (i < tc.size()) {
        size_t j = i;
        while (j < tc.size() && !is_break(tc.c[j])) ++j;
        lines.push_back(Value::str(t.substr(tc.at[i], tc.at[j] - tc.at[i])));
        i = j < tc.size() && tc.c[j] == '\r' && j + 1 < tc.size() && tc.c[j + 1] == '\n' ? j + 2 : j + 1;
      }
      return Value::list(std::move(lines));
    });
  if (name == "join")
    return fn([self, need](Interpreter& in, CallArgs& a) {
      need(a, 1, 1);
      std::string out;
      bool first = true;
      int64_t i = 0;
      for (const Value& x : in.iterate(a.args[0])) {
        if (!x.is(Type::Str)) fail(ErrorKind::TypeError, "sequence item {}: expected str instance, {} found", i, type_name(x));
        if (!first) out += self.as_str();
        out += x.as_str();
        first = false;
        ++i;
      }
      return Value::str(std::move(out));
    });
  if (name == "replace")
    return fn([self, need, str_arg](Interpreter&, CallArgs& a) {
      need(a, 2, 3);
      const std::string &from = str_arg(a.args[0], "arg 1"), &to = str_arg(a.args[1], "arg 2");
      int64_t count = a.args.size() > 2 ? a.args[2].as_int() : -1;
      const std::string& t = self.as_str();
      std::string out;
      size_t i = 0;
      int64_t done = 0;
      if (from.empty()) {  // between every character (not every UTF-8 byte)
        const Chars tc(t);
        for (size_t k = 0; k <= tc.size(); ++k) {
          if (count < 0 || done < count) out += to, ++done;
          if (k < tc.size()) out += t.substr(tc.at[k], tc.at[k + 1] - tc.at[k]);
        }
        return Value::str(std::move(out));
      }
      while (true) {
        size_t j = count >= 0 && done >= count ? std::string::npos : t.find(from, i);
        if (j == std::string::npos) break;
        out += t.substr(i, j - i) + to;
        i = j + from.size();
        ++done;
      }
      return Value::str(out + t.substr(i));
    });
  if (name == "startswith" || name == "endswith")
    return fn([self, need, start = name == "startswith", name](Interpreter&, CallArgs& a) {
      need(a, 1, 3);
      std::vector<Value> options = a.args[0].is(Type::Tuple) ? a.args[0].items() : std::vector<Value>{a.args[0]};
      const Window w = window(self.as_str(), a);
      if (!w.valid) return Value(false);
      const std::string t = self.as_str().substr(w.begin, w.end - w.begin);
      for (const Value& o : options) {
        if (!o.is(Type::Str))
          fail(ErrorKind::TypeError, "{} first arg must be str or a tuple of str, not {}", name, type_name(o));
        const std::string& x = o.as_str();
        if (x.size() <= t.size() && (start ? t.compare(0, x.size(), x) : t.compare(t.size() - x.size(), x.size(), x)) == 0)
          return Value(true);
      }
      return Value(false);
    });
  if (name == "find" || name == "rfind" || name == "index" || name == "count")
    return fn([self, need, str_arg, name](Interpreter&, CallArgs& a) {
      need(a, 1, 3);
      const std::string& x = str_arg(a.args[0]);
      const Window w = window(self.as_str(), a);
      const std::string t = w.valid ? self.as_str().substr(w.begin, w.end - w.begin) : std::string();
      if (name == "count") {
        if (!w.valid) return Value(int64_t(0));
        if (x.empty()) return Value(int64_t(char_count(t) + 1));
        int64_t c = 0;
        for (size_t i = t.find(x); i != std::string::npos; i = t.find(x, i + x.size())) ++c;
        return Value(c);
      }
      size_t i = !w.valid ? std::string::npos : name == "rfind" ? t.rfind(x) : t.find(x);
      if (i == std::string::npos) {
        if (name == "index") fail(ErrorKind::ValueError, "substring not found");
        return Value(int64_t(-1));
      }
      // (Positions count characters, as Python's, not UTF-8 bytes.)
      return Value(int64_t(w.first + char_count(t.substr(0, i))));
    });
  if (name == "format")
    return fn([self](Interpreter& in, CallArgs& a) { return format_method(in, self.as_str(), a); });
  if (name == "isdigit" || name == "isalpha" || name == "isspace" || name == "isalnum")
    return fn([self, need, name](Interpreter&, CallArgs& a) {
      need(a, 0, 0);
      const Chars t(self.as_str());
      auto ok = [&](char32_t c) {
        if (name == "isdigit") return char_is_digit(c);
        if (name == "isalpha") return char_is_alpha(c);
        if (name == "isspace") return char_is_space(c);
        return char_is_alpha(c) || char_is_decimal(c) || char_is_digit(c) || char_is_numeric(c);
      };
      return Value(t.size() > 0 && std::all_of(t.c.begin(), t.c.end(), ok));
    });
  if (name == "ljust" || name == "rjust" || name == "center" || name == "zfill")
    return fn([self, need, name](Interpreter&, CallArgs& a) {
      need(a, 1, name == "zfill" ? 1 : 2);
      Spec sp;
      sp.width = a.args[0].as_int();
      if (a.args.size() > 1) sp.fill = a.args[1].as_str();
      const std::string& t = self.as_str();
      if (name == "zfill") {
        bool sign = !t.empty() && (t[0] == '-' || t[0] == '+');
        sp.fill = "0";
        sp.align = '=';
        return Value::str(pad(sp, sign ? t.substr(0, 1) : "", sign ? t.substr(1) : t, '='));
      }
      if (name == "center") {  // CPython: left = pad / 2 + (pad & width & 1)
        int64_t len = int64_t(char_count(t)), width = sp.width, marg = width - len;
        if (marg <= 0) return self;
        int64_t left = marg / 2 + (marg & width & 1);
        return Value::str(repeated(sp.fill, size_t(left)) + t + repeated(sp.fill, size_t(marg - left)));
      }
      sp.align = name == "ljust" ? '<' : '>';
      return Value::str(pad(sp, "", t, '<'));
    });
  no_attribute(self, name);
}

}  // namespace thn
