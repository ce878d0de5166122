// Tensor files: NumPy's .npy (format versions 1.0, 2.0 and 3.0) through
// save_npy / load_npy, and safetensors through the `safetensors` module's
// save_file / load_file, each as its specification lays the bytes out. A
// malformed file (a wrong magic string, a truncated header or buffer, a
// header length past the file, overlapping or out-of-range offsets, a
// dtype thn does not have) is a ValueError naming the file and the fault.
// A load reads the header, checks it against the file's size, then reads
// each tensor's bytes into the tensor; a save writes the header, then each
// tensor (a host copy of one at a time when it is not contiguous) into a
// temporary file that replaces the destination once it is all on disk.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <unordered_set>

#include "frontend/unicode.h"
#include "interp/interpreter.h"
#include "interp/objects.h"
#include "runtime/cuda.h"
#include "runtime/elementwise.h"
#include "runtime/views.h"

namespace thn {

namespace {

[[noreturn]] void bad_file(const std::string& fn, const std::string& path, const std::string& why) {
  fail(ErrorKind::ValueError, "{}: '{}' {}", fn, path, why);
}

// A file being read: its size known first, then only the bytes asked for
// (a header, a tensor's data, read straight into the tensor).
class FileIn {
 public:
  FileIn(const char* fn, const std::string& path) : fn_(fn), path_(path) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) fail(ErrorKind::FileNotFoundError, "[Errno 2] No such file or directory: '{}'", path);
    if (S_ISDIR(st.st_mode)) fail(ErrorKind::OSError, "[Errno 21] Is a directory: '{}'", path);
    if (!S_ISREG(st.st_mode)) bad_file(fn, path, "is not a regular file");
    in_.open(path, std::ios::binary);
    if (!in_) fail(ErrorKind::OSError, "[Errno 13] Permission denied: '{}'", path);
    size_ = uint64_t(st.st_size);
  }
  uint64_t size() const { return size_; }
  // n bytes at `offset`; the caller has checked the file holds them.
  void read(uint64_t offset, uint64_t n, void* out) {
    in_.seekg(std::streamoff(offset));
    in_.read(static_cast<char*>(out), std::streamsize(n));
    if (!in_ || uint64_t(in_.gcount()) != n) bad_file(fn_, path_, "could not be read to its end");
  }
  std::string bytes(uint64_t offset, uint64_t n) {
    std::string out(size_t(n), '\0');
    read(offset, n, out.data());
    return out;
  }

 private:
  const char* fn_;
  const std::string& path_;
  std::ifstream in_;
  uint64_t size_ = 0;
};

// A file being written. A regular file (or a new one) is written beside
// its destination (through a link, at the link's target, as NumPy writes
// through links), flushed to the disk, then renamed over it: a save that
// fails (a full disk, a kill) leaves the old file as it was, and the
// temporary is removed. A FIFO or a device is written in place.
class FileOut {
 public:
  explicit FileOut(const std::string& path) : path_(path) {
    struct stat st;
    bool exists = ::stat(path.c_str(), &st) == 0;
    if (exists && !S_ISREG(st.st_mode)) {
      fd_ = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
      if (fd_ < 0) failed();
      return;
    }
    target_ = path;
    if (exists) {
      std::error_code ec;
      std::filesystem::path real = std::filesystem::canonical(path, ec);
      if (!ec) target_ = real.string();
    }
    std::filesystem::path t(target_);
    std::string dir = t.has_parent_path() ? t.parent_path().string() : ".";
    for (int tries = 0; fd_ < 0; ++tries) {
      temp_ = fmt::format("{}/.{}.{}-{}.tmp", dir, t.filename().string(), ::getpid(), std::random_device{}());
      // (0666 less the umask, as a new file gets; a replaced file keeps its mode)
      fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ < 0 && (errno != EEXIST || tries > 100)) {
        temp_.clear();
        failed();
      }
    }
    if (exists) {
      if (::fchown(fd_, st.st_uid, st.st_gid) != 0) (void)::fchown(fd_, -1, st.st_gid);
      if (::fchmod(fd_, st.st_mode & 07777) != 0) failed();
    }
  }
  ~FileOut() {
    if (fd_ >= 0) ::close(fd_);
    if (!temp_.empty()) ::unlink(temp_.c_str());
  }
  void write(const void* data, size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n) {
      ssize_t k = ::write(fd_, p, n);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) failed();
      p += k, n -= size_t(k);
    }
  }
  void write(const std::string& s) { write(s.data(), s.size()); }
  // A tensor's elements, contiguous and little-endian, from the host.
  void write(const Tensor& t) {
    Tensor host = contiguous(t.device().type == DeviceType::CPU ? t : cuda::to_device(t, kCPU));
    write(host.raw_data(), size_t(host.numel() * itemsize(host.dtype())));
  }
  // Flushes the file and puts it in place.
  void close() {
    if (!temp_.empty() && ::fsync(fd_) != 0) failed();
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) failed();
    if (temp_.empty()) return;
    if (::rename(temp_.c_str(), target_.c_str()) != 0) failed();
    temp_.clear();
    std::filesystem::path t(target_);
    int dir = ::open(t.has_parent_path() ? t.parent_path().c_str() : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {  // (the rename itself on the disk)
      (void)::fsync(dir);
      ::close(dir);
    }
  }

 private:
  const std::string& path_;
  std::string target_, temp_;  // temp_: the file being written, until renamed
  int fd_ = -1;
  [[noreturn]] void failed() { fail(ErrorKind::OSError, "cannot write '{}': {}", path_, std::strerror(errno)); }
};

// A path argument (a str without NUL bytes, as Python's open() takes).
const std::string& path_arg(const char* fn, const char* what, const Value& v) {
  if (!v.is(Type::Str)) fail(ErrorKind::TypeError, "{}(): {} must be a str, not {}", fn, what, type_name(v));
  if (v.as_str().find('\0') != std::string::npos) fail(ErrorKind::ValueError, "embedded null byte");  // (as open() says it)
  return v.as_str();
}

// A tensor of `sizes` whose elements are the file's bytes at `offset`
// (byte-swapped from big-endian when `swap`); a bool byte that is not 0
// reads as True (1), as NumPy takes it.
Tensor read_tensor(FileIn& f, uint64_t offset, const Dims& sizes, DType dtype, bool swap) {
  Tensor t = empty(sizes, dtype);
  size_t n = size_t(t.numel() * itemsize(dtype)), w = size_t(itemsize(dtype));
  auto* out = static_cast<char*>(t.raw_data());
  if (n) f.read(offset, n, out);
  if (swap && w > 1)
    for (size_t i = 0; i < n; i += w) std::reverse(out + i, out + i + w);
  if (dtype == DType::Bool)
    for (size_t i = 0; i < n; ++i) out[i] = out[i] != 0;
  return t;
}

// numel of sizes from a file, refusing overflow.
int64_t checked_numel(const std::string& fn, const std::string& path, const Dims& sizes, int64_t item) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    if (s < 0) bad_file(fn, path, "has a negative size in its shape");
    if (s && n > INT64_MAX / item / s) bad_file(fn, path, "has a shape too large to hold");
    n *= s;
  }
  return n;
}

// ---- .npy ----

struct NpyType {
  DType dtype;
  const char* descr;  // little-endian (or byte-order free) spelling
};
constexpr NpyType kNpyTypes[] = {{DType::Bool, "|b1"}, {DType::Int32, "<i4"}, {DType::Int64, "<i8"},
                                 {DType::Float16, "<f2"}, {DType::Float32, "<f4"}, {DType::Float64, "<f8"}};

// The header's dict: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
struct NpyHeader {
  std::string descr;
  bool fortran = false;
  Dims shape;
};

NpyHeader parse_npy_header(const std::string& fn, const std::string& path, std::string_view h) {
  // A Python dict literal, as NumPy writes it and reads it back (ast.literal_eval).
  size_t i = 0;
  auto bad = [&](const std::string& what) { bad_file(fn, path, "has a malformed header: " + what); };
  auto ws = [&] {
    while (i < h.size() && (h[i] == ' ' || h[i] == '\t' || h[i] == '\n' || h[i] == '\r')) ++i;
  };
  auto at = [&](char c) {
    ws();
    return i < h.size() && h[i] == c;
  };
  auto expect = [&](char c) {
    if (!at(c)) bad(fmt::format("expected '{}'", c));
    ++i;
  };
  auto string = [&](const char* what) {
    ws();
    if (i >= h.size() || (h[i] != '\'' && h[i] != '"')) bad(fmt::format("{} is not a string", what));
    char q = h[i++];
    size_t end = h.find(q, i);
    if (end == std::string_view::npos) bad("unterminated string");
    std::string s(h.substr(i, end - i));
    i = end + 1;
    return s;
  };
  NpyHeader out;
  bool seen[3] = {false, false, false};
  expect('{');
  while (!at('}')) {
    std::string key = string("a key");
    expect(':');
    ws();
    if (key == "descr") {
      if (i < h.size() && h[i] == '[') bad_file(fn, path, "holds a structured (record) dtype, which is not one of thn's dtypes");
      out.descr = string("descr");
      seen[0] = true;
    } else if (key == "fortran_order") {
      if (h.substr(i, 4) == "True") out.fortran = true, i += 4;
      else if (h.substr(i, 5) == "False") i += 5;
      else bad("fortran_order is not True or False");
      if (i < h.size() && (std::isalnum(static_cast<unsigned char>(h[i])) || h[i] == '_'))
        bad("fortran_order is not True or False");
      seen[1] = true;
    } else if (key == "shape") {
      expect('(');
      bool trailing_comma = false;
      while (!at(')')) {
        size_t start = i;
        int64_t v = 0;
        while (i < h.size() && std::isdigit(static_cast<unsigned char>(h[i]))) {
          if (v > (INT64_MAX - 9) / 10) bad("a size does not fit in 64 bits");
          v = v * 10 + (h[i++] - '0');
        }
        if (i == start) bad("a size is not a non-negative integer");
        out.shape.push_back(v);
        if (out.shape.size() > 64) bad("more than 64 dimensions");
        trailing_comma = at(',');
        if (trailing_comma) ++i;
        else if (!at(')')) bad("expected ',' or ')' in the shape");
      }
      ++i;
      if (out.shape.size() == 1 && !trailing_comma) bad("the shape is not a tuple");
      seen[2] = true;
    } else {
      bad(fmt::format("unknown key {}", repr_string(key)));
    }
    if (at(',')) ++i;
    else if (!at('}')) bad("expected ',' or '}'");
  }
  ++i;
  ws();
  if (i != h.size()) bad("text after the dict");
  if (!seen[0] || !seen[1] || !seen[2]) bad("it needs the keys 'descr', 'fortran_order' and 'shape'");
  return out;
}

Value load_npy(Interpreter&, CallArgs& a) {
  method_arity("load_npy", a, 1, 1);
  const std::string& path = path_arg("load_npy", "path", a.args[0]);
  FileIn f("load_npy", path);
  static const char magic[] = "\x93NUMPY";
  const std::string head = f.bytes(0, std::min<uint64_t>(f.size(), 12));
  if (head.compare(0, std::min<size_t>(head.size(), 6), magic, std::min<size_t>(head.size(), 6)) != 0 || head.empty())
    bad_file("load_npy", path, "is not a .npy file (it does not start with the magic string \\x93NUMPY)");
  if (head.size() < 10) bad_file("load_npy", path, "is truncated in its header");
  int major = static_cast<unsigned char>(head[6]), minor = static_cast<unsigned char>(head[7]);
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    bad_file("load_npy", path, fmt::format("has format version {}.{}, which thn does not read (1.0, 2.0, 3.0)", major, minor));
  uint64_t header_len = 0, start = major == 1 ? 10 : 12;
  if (head.size() < start) bad_file("load_npy", path, "is truncated in its header");
  for (uint64_t k = start; k-- > 8;) header_len = header_len << 8 | static_cast<unsigned char>(head[size_t(k)]);
  if (header_len > f.size() - start)
    bad_file("load_npy", path, fmt::format("is truncated: its header is {} bytes, the file has {} after the magic", header_len, f.size() - start));
  NpyHeader h = parse_npy_header("load_npy", path, f.bytes(start, header_len));
  const NpyType* type = nullptr;
  bool swap = false;
  for (const NpyType& t : kNpyTypes) {
    std::string_view d = t.descr;  // '<f4' also as '=f4' and '>f4' (swapped); '|b1' also as '<b1', '>b1', '=b1'
    for (char order : {'<', '=', '>', '|'})
      if (h.descr == order + std::string(d.substr(1)) && (d[0] == '|' || order != '|'))
        type = &t, swap = order == '>' && d[0] == '<';
  }
  if (!type) bad_file("load_npy", path, fmt::format("holds dtype {}, which is not one of thn's dtypes", repr_string(h.descr)));
  int64_t numel = checked_numel("load_npy", path, h.shape, itemsize(type->dtype));
  uint64_t data = start + header_len, need = uint64_t(numel * itemsize(type->dtype));
  if (f.size() - data < need)
    bad_file("load_npy", path, fmt::format("is truncated: its shape needs {} bytes of data, the file has {}", need, f.size() - data));
  if (!h.fortran) return Value::tensor(read_tensor(f, data, h.shape, type->dtype, swap));
  // Column-major: the reversed shape in row-major order, transposed back.
  Dims reversed(h.shape.rbegin(), h.shape.rend());
  Tensor t = read_tensor(f, data, reversed, type->dtype, swap);
  Dims perm;
  for (int64_t d = int64_t(reversed.size()) - 1; d >= 0; --d) perm.push_back(d);
  return Value::tensor(contiguous(permute(t, perm)));
}

Value save_npy(Interpreter&, CallArgs& a) {
  method_arity("save_npy", a, 2, 2);
  if (!a.args[0].is(Type::Tensor)) fail(ErrorKind::TypeError, "save_npy(): argument 1 must be a Tensor, not {}", type_name(a.args[0]));
  const Tensor& t = a.args[0].as_tensor();
  const std::string& path = path_arg("save_npy", "path", a.args[1]);
  const NpyType* type = nullptr;
  for (const NpyType& n : kNpyTypes)
    if (n.dtype == t.dtype()) type = &n;
  if (!type) fail(ErrorKind::TypeError, "save_npy(): NumPy has no {} dtype; convert the tensor first (t.float())", dtype_name(t.dtype()));
  std::string shape;
  for (int64_t s : t.sizes()) shape += fmt::format("{}, ", s);
  if (t.dim() > 1) shape.erase(shape.size() - 2);
  else if (t.dim() == 1) shape.pop_back();
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", type->descr, shape);
  // Padded with spaces and ended by '\n' so the data starts 64-byte aligned.
  bool v2 = dict.size() + 11 > 65535;
  size_t prefix = v2 ? 12 : 10, total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  dict += std::string(total - prefix - dict.size() - 1, ' ') + "\n";
  std::string head("\x93NUMPY", 6);
  head += char(v2 ? 2 : 1);
  head += char(0);
  for (size_t k = 0; k < (v2 ? 4u : 2u); ++k) head += char((dict.size() >> (8 * k)) & 0xff);
  FileOut out(path);
  out.write(head + dict);
  out.write(t);
  out.close();
  return Value();
}

// ---- JSON (what a safetensors header holds) ----

struct Json {
  struct Field;  // (a pair would need Json complete here: clang 14 with libstdc++ rejects it)
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool b = false;
  int64_t i = 0;
  bool integral = true;
  std::string s;
  std::vector<Json> items;
  std::vector<Field> fields;
};
struct Json::Field {
  std::string first;
  Json second;
};

class JsonParser {
 public:
  // `base`: where the text starts in the file (for messages).
  JsonParser(std::string_view text, const std::string& path, size_t base) : t_(text), path_(path), base_(base) {}
  Json document() {
    const char* why = nullptr;
    if (size_t at = invalid_utf8(t_, &why); at != std::string_view::npos) {
      i_ = at;
      bad(fmt::format("it is not UTF-8 ({})", why));
    }
    Json v = value(0);
    ws();
    if (i_ != t_.size()) bad("text after the header's object");
    return v;
  }

 private:
  std::string_view t_;
  const std::string& path_;
  size_t base_;
  size_t i_ = 0;
  [[noreturn]] void bad(const std::string& why) {
    bad_file("load_file", path_, fmt::format("has a malformed JSON header at byte {} of the file: {}", base_ + i_, why));
  }
  void ws() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\t' || t_[i_] == '\r')) ++i_;
  }
  bool digit() const { return i_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[i_])); }
  Json value(int depth) {
    if (depth > 64) bad("nested too deeply");
    ws();
    if (i_ >= t_.size()) bad("unexpected end");
    Json v;
    char c = t_[i_];
    if (c == '{') {
      v.kind = Json::Object;
      ++i_;
      ws();
      if (i_ < t_.size() && t_[i_] == '}') return ++i_, v;
      std::unordered_set<std::string> keys;
      while (true) {
        ws();
        if (i_ >= t_.size() || t_[i_] != '"') bad("expected a key");
        std::string key = string();
        ws();
        if (i_ >= t_.size() || t_[i_] != ':') bad("expected ':'");
        ++i_;
        if (!keys.insert(key).second) bad("key " + repr_string(key) + " appears twice");
        v.fields.push_back(Json::Field{std::move(key), value(depth + 1)});
        ws();
        if (i_ < t_.size() && t_[i_] == ',') { ++i_; continue; }
        if (i_ < t_.size() && t_[i_] == '}') return ++i_, v;
        bad("expected ',' or '}'");
      }
    }
    if (c == '[') {
      v.kind = Json::Array;
      ++i_;
      ws();
      if (i_ < t_.size() && t_[i_] == ']') return ++i_, v;
      while (true) {
        v.items.push_back(value(depth + 1));
        ws();
        if (i_ < t_.size() && t_[i_] == ',') { ++i_; continue; }
        if (i_ < t_.size() && t_[i_] == ']') return ++i_, v;
        bad("expected ',' or ']'");
      }
    }
    if (c == '"') {
      v.kind = Json::String;
      v.s = string();
      return v;
    }
    if (t_.substr(i_, 4) == "true" || t_.substr(i_, 5) == "false") {
      v.kind = Json::Bool;
      v.b = t_[i_] == 't';
      i_ += v.b ? 4 : 5;
      return v;
    }
    if (t_.substr(i_, 4) == "null") return i_ += 4, v;
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
      // JSON's number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
      v.kind = Json::Number;
      size_t start = i_;
      if (c == '-') ++i_;
      if (!digit()) bad("a malformed number");
      if (t_[i_] == '0') ++i_;
      else while (digit()) ++i_;
      if (i_ < t_.size() && t_[i_] == '.') {
        ++i_, v.integral = false;
        if (!digit()) bad("a malformed number");
        while (digit()) ++i_;
      }
      if (i_ < t_.size() && (t_[i_] == 'e' || t_[i_] == 'E')) {
        ++i_, v.integral = false;
        if (i_ < t_.size() && (t_[i_] == '+' || t_[i_] == '-')) ++i_;
        if (!digit()) bad("a malformed number");
        while (digit()) ++i_;
      }
      if (v.integral) {
        std::string text(t_.substr(start, i_ - start));
        errno = 0;
        v.i = std::strtoll(text.c_str(), nullptr, 10);
        if (errno == ERANGE) bad("a number does not fit in 64 bits");
      }
      return v;
    }
    bad("unexpected character");
  }
  uint32_t hex4() {
    if (i_ + 4 > t_.size()) bad("a truncated \\u escape");
    uint32_t cp = 0;
    for (int k = 0; k < 4; ++k) {
      char h = t_[i_++];
      int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
      if (d < 0) bad("a \\u escape that is not 4 hex digits");
      cp = cp << 4 | uint32_t(d);
    }
    return cp;
  }
  std::string string() {
    ++i_;  // the opening quote
    std::string out;
    while (true) {
      if (i_ >= t_.size()) bad("unterminated string");
      char c = t_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) bad("a control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= t_.size()) bad("unterminated string");
      char e = t_[i_++];
      switch (e) {
        case '"': case '\\': case '/': out += e; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xDC00 && cp <= 0xDFFF) bad("a lone surrogate in a \\u escape");
          if (cp >= 0xD800 && cp <= 0xDBFF) {  // a pair: \uD83D\uDE00
            if (t_.substr(i_, 2) != "\\u") bad("a lone surrogate in a \\u escape");
            i_ += 2;
            uint32_t low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) bad("a lone surrogate in a \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_char(out, char32_t(cp));
          break;
        }
        default: bad("an unknown escape");
      }
    }
  }
};

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += char(c);
    else if (c < 0x20) out += fmt::format("\\u{:04x}", c);
    else out += char(c);
  }
  return out + "\"";
}

// ---- safetensors ----

struct SafeType {
  DType dtype;
  const char* name;
};
constexpr SafeType kSafeTypes[] = {{DType::Bool, "BOOL"}, {DType::Int32, "I32"}, {DType::Int64, "I64"},
                                   {DType::Float16, "F16"}, {DType::BFloat16, "BF16"}, {DType::Float32, "F32"},
                                   {DType::Float64, "F64"}};
constexpr uint64_t kMaxHeader = 100'000'000;  // the reference implementation's limit

Value save_file(Interpreter&, CallArgs& a) {
  Value metadata;
  for (auto& [k, v] : a.kwargs) {
    if (k != "metadata") fail(ErrorKind::TypeError, "save_file() got an unexpected keyword argument '{}'", k);
    metadata = v;
  }
  if (a.args.size() < 2 || a.args.size() > 3)
    fail(ErrorKind::TypeError, "save_file() takes 2 or 3 arguments (tensors, filename, metadata=None), got {}", a.args.size());
  if (a.args.size() == 3) metadata = a.args[2];
  if (!a.args[0].is(Type::Dict)) fail(ErrorKind::TypeError, "save_file(): tensors must be a dict of str to Tensor, not {}", type_name(a.args[0]));
  const std::string& path = path_arg("save_file", "filename", a.args[1]);
  // Largest items first, then by name: every tensor starts aligned to its item size.
  std::vector<std::pair<std::string, Tensor>> tensors;
  a.args[0].obj<DictObj>().each([&](const Value& k, const Value& v) {
    if (!k.is(Type::Str)) fail(ErrorKind::TypeError, "save_file(): tensor names must be str, not {}", type_name(k));
    if (!v.is(Type::Tensor)) fail(ErrorKind::TypeError, "save_file(): {} is a {}, not a Tensor", repr_string(k.as_str()), type_name(v));
    if (k.as_str() == "__metadata__") fail(ErrorKind::ValueError, "save_file(): '__metadata__' is not a tensor name");
    tensors.emplace_back(k.as_str(), v.as_tensor());
  });
  std::sort(tensors.begin(), tensors.end(), [](const auto& x, const auto& y) {
    int64_t a = itemsize(x.second.dtype()), b = itemsize(y.second.dtype());
    return a != b ? a > b : x.first < y.first;
  });
  std::map<std::string, std::string> entries;  // by name: the header sorts them
  uint64_t end = 0;
  for (auto& [name, t] : tensors) {
    const char* dtype = nullptr;
    for (const SafeType& s : kSafeTypes)
      if (s.dtype == t.dtype()) dtype = s.name;
    std::string shape;
    for (int64_t s : t.sizes()) shape += (shape.empty() ? "" : ",") + std::to_string(s);
    uint64_t begin = end;
    end += uint64_t(t.numel() * itemsize(t.dtype()));
    entries[name] = fmt::format("{{\"dtype\":\"{}\",\"shape\":[{}],\"data_offsets\":[{},{}]}}", dtype, shape, begin, end);
  }
  std::string header = "{";
  if (!metadata.is_none()) {
    if (!metadata.is(Type::Dict)) fail(ErrorKind::TypeError, "save_file(): metadata must be a dict of str to str");
    std::map<std::string, std::string> meta;
    metadata.obj<DictObj>().each([&](const Value& k, const Value& v) {
      if (!k.is(Type::Str) || !v.is(Type::Str)) fail(ErrorKind::TypeError, "save_file(): metadata must be a dict of str to str");
      meta[k.as_str()] = v.as_str();
    });
    header += "\"__metadata__\":{";
    bool first = true;
    for (auto& [k, v] : meta) header += (first ? "" : ",") + json_string(k) + ":" + json_string(v), first = false;
    header += "}";
  }
  for (auto& [name, e] : entries) header += (header.size() > 1 ? "," : "") + json_string(name) + ":" + e;
  header += "}";
  header += std::string((8 - (8 + header.size()) % 8) % 8, ' ');  // the buffer starts 8-byte aligned
  std::string length;
  for (int k = 0; k < 8; ++k) length += char((uint64_t(header.size()) >> (8 * k)) & 0xff);
  FileOut out(path);
  out.write(length + header);
  for (auto& [name, t] : tensors) out.write(t);  // one tensor's host copy at a time
  out.close();
  return Value();
}

Value load_file(Interpreter&, CallArgs& a) {
  Value device = Value::str("cpu");
  for (auto& [k, v] : a.kwargs) {
    if (k != "device") fail(ErrorKind::TypeError, "load_file() got an unexpected keyword argument '{}'", k);
    device = v;
  }
  if (a.args.empty() || a.args.size() > 2) fail(ErrorKind::TypeError, "load_file() takes 1 or 2 arguments (filename, device='cpu')");
  if (a.args.size() == 2) device = a.args[1];
  const std::string& path = path_arg("load_file", "filename", a.args[0]);
  // (safetensors.torch takes a device as torch.device, a str or a CUDA ordinal)
  if (!device.is(Type::Device) && !device.is(Type::Int) && !device.is(Type::Str))
    fail(ErrorKind::TypeError, "load_file(): device must be a str, an int or a device, not {}", type_name(device));
  Device dev = device.is(Type::Device) ? device.as_device()
               : parse_device(device.is(Type::Int) ? fmt::format("cuda:{}", device.as_int()) : device.as_str());
  FileIn f("load_file", path);
  if (f.size() < 8) bad_file("load_file", path, "is truncated: it has no 8-byte header length");
  const std::string length = f.bytes(0, 8);
  uint64_t n = 0;
  for (int k = 7; k >= 0; --k) n = n << 8 | static_cast<unsigned char>(length[size_t(k)]);
  if (n > kMaxHeader) bad_file("load_file", path, fmt::format("has a header length of {} bytes, over the limit of {}", n, kMaxHeader));
  if (n > f.size() - 8)
    bad_file("load_file", path, fmt::format("is truncated: its header is {} bytes, the file has {} after the length", n, f.size() - 8));
  const std::string text = f.bytes(8, n);
  if (text.empty() || text[0] != '{') bad_file("load_file", path, "has a header that is not a JSON object");
  Json header = JsonParser(text, path, 8).document();
  if (header.kind != Json::Object) bad_file("load_file", path, "has a header that is not a JSON object");
  uint64_t buffer = 8 + n, size = f.size() - buffer;
  struct Entry {
    std::string name;
    DType dtype;
    Dims shape;
    uint64_t begin, end;
  };
  std::vector<Entry> entries;
  for (const Json::Field& entry : header.fields) {
    const std::string& name = entry.first;  // (not a structured binding: clang 14 cannot capture one)
    const Json& info = entry.second;
    if (name == "__metadata__") {
      if (info.kind == Json::Null) continue;
      if (info.kind != Json::Object) bad_file("load_file", path, "has a __metadata__ that is not an object");
      for (auto& [k, v] : info.fields)
        if (v.kind != Json::String) bad_file("load_file", path, fmt::format("has a __metadata__ value for {} that is not a string", repr_string(k)));
      continue;
    }
    auto field = [&](const char* key) -> const Json& {
      for (auto& f : info.fields)
        if (f.first == key) return f.second;
      bad_file("load_file", path, fmt::format("has no {} for tensor {}", key, repr_string(name)));
    };
    if (info.kind != Json::Object) bad_file("load_file", path, fmt::format("describes tensor {} with something other than an object", repr_string(name)));
    const Json &dt = field("dtype"), &shape = field("shape"), &offsets = field("data_offsets");
    Entry e{name, DType::Float32, {}, 0, 0};
    const SafeType* st = nullptr;
    for (const SafeType& s : kSafeTypes)
      if (dt.kind == Json::String && dt.s == s.name) st = &s;
    if (dt.kind != Json::String) bad_file("load_file", path, fmt::format("has a dtype for tensor {} that is not a string", repr_string(name)));
    if (!st) bad_file("load_file", path, fmt::format("holds tensor {} of dtype {}, which is not one of thn's dtypes", repr_string(name), repr_string(dt.s)));
    e.dtype = st->dtype;
    if (shape.kind != Json::Array || shape.items.size() > 64) bad_file("load_file", path, fmt::format("has a malformed shape for tensor {}", repr_string(name)));
    for (const Json& s : shape.items) {
      if (s.kind != Json::Number || !s.integral || s.i < 0) bad_file("load_file", path, fmt::format("has a malformed shape for tensor {}", repr_string(name)));
      e.shape.push_back(s.i);
    }
    auto offset = [](const Json& o) { return o.kind == Json::Number && o.integral && o.i >= 0; };
    if (offsets.kind != Json::Array || offsets.items.size() != 2 || !offset(offsets.items[0]) ||
        !offset(offsets.items[1]) || offsets.items[1].i < offsets.items[0].i)
      bad_file("load_file", path, fmt::format("has malformed data_offsets for tensor {}", repr_string(name)));
    e.begin = uint64_t(offsets.items[0].i);
    e.end = uint64_t(offsets.items[1].i);
    if (e.end > size)
      bad_file("load_file", path, fmt::format("is truncated: tensor {} ends at byte {} of a {}-byte buffer", repr_string(name), e.end, size));
    int64_t numel = checked_numel("load_file", path, e.shape, itemsize(e.dtype));
    if (uint64_t(numel * itemsize(e.dtype)) != e.end - e.begin)
      bad_file("load_file", path, fmt::format("gives tensor {} {} bytes, its shape and dtype need {}", repr_string(name), e.end - e.begin, numel * itemsize(e.dtype)));
    entries.push_back(std::move(e));
  }
  // The buffer is covered exactly, without overlaps or holes (the format's rule).
  std::vector<const Entry*> order;
  for (const Entry& e : entries) order.push_back(&e);
  std::sort(order.begin(), order.end(), [](const Entry* x, const Entry* y) { return x->begin != y->begin ? x->begin < y->begin : x->end < y->end; });
  uint64_t at = 0;
  for (const Entry* e : order) {
    if (e->begin < at) bad_file("load_file", path, fmt::format("has overlapping data for tensor {}", repr_string(e->name)));
    if (e->begin > at) bad_file("load_file", path, fmt::format("has a hole in its buffer before tensor {}", repr_string(e->name)));
    at = e->end;
  }
  if (at != size) bad_file("load_file", path, fmt::format("has {} bytes after its last tensor", size - at));
  std::sort(entries.begin(), entries.end(), [](const Entry& x, const Entry& y) { return x.name < y.name; });
  Value out = make_dict();
  for (const Entry& e : entries) {
    Tensor t = read_tensor(f, buffer + e.begin, e.shape, e.dtype, false);
    if (dev.type != DeviceType::CPU) t = cuda::to_device(t, dev);
    out.obj<DictObj>().set(Value::str(e.name), Value::tensor(t));
  }
  return out;
}

}  // namespace

void install_file_builtins(Interpreter& in) {
  in.builtins()["save_npy"] = make_builtin("save_npy", save_npy);
  in.builtins()["load_npy"] = make_builtin("load_npy", load_npy);
}

Value safetensors_module() {
  auto m = std::make_shared<ModuleObj>();
  m->name = "safetensors";
  m->globals["save_file"] = make_builtin("save_file", save_file);
  m->globals["load_file"] = make_builtin("load_file", load_file);
  return Value(Type::Module, m);
}

}  // namespace thn
