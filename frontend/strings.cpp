#include "frontend/strings.h"

#include <cstring>

#include "frontend/unicode.h"

namespace thn {

namespace {

template <class... A>
[[noreturn]] void error(const Loc& l, fmt::format_string<A...> f, A&&... a) {
  fail_at(l, ErrorKind::SyntaxError, f, std::forward<A>(a)...);
}

// Where offset `i` of a body that starts at `start` is (bodies of
// triple-quoted strings span lines).
Loc loc_at(const Loc& start, std::string_view body, size_t i) {
  Loc l = start;
  for (size_t k = 0; k < i && k < body.size(); ++k) {
    if (body[k] == '\n') {
      ++l.line;
      l.col = 0;
    } else {
      ++l.col;
    }
  }
  return l;
}

// Splits an f-string body (or a format spec inside one, when `in_spec`) from
// offset `i`; stops at the end, or at the `}` that closes the spec.
class FSplitter {
 public:
  explicit FSplitter(const StringToken& t) : t_(t), s_(t.body) {}

  std::vector<FSegment> run(size_t& i, bool in_spec, int depth) {
    std::vector<FSegment> out;
    std::string text;  // raw literal text so far
    auto flush = [&] {
      if (text.empty()) return;
      FSegment seg;
      seg.literal = t_.raw ? text : decode_escapes(loc_at(t_.body_loc, s_, i), text);
      out.push_back(std::move(seg));
      text.clear();
    };
    while (i < s_.size()) {
      char c = s_[i];
      if (c == '\\' && !t_.raw && i + 1 < s_.size()) {  // an escape is literal text, {{ or not
        text += s_.substr(i, 2);
        i += 2;
        continue;
      }
      if (c == '{') {
        if (!in_spec && i + 1 < s_.size() && s_[i + 1] == '{') {
          text += '{';
          i += 2;
          continue;
        }
        flush();
        if (depth >= 2) error(loc_at(t_.body_loc, s_, i), "f-string: expressions nested too deeply");
        out.push_back(field(i, depth));
        continue;
      }
      if (c == '}') {
        if (in_spec) break;
        if (i + 1 < s_.size() && s_[i + 1] == '}') {
          text += '}';
          i += 2;
          continue;
        }
        error(loc_at(t_.body_loc, s_, i), "f-string: single '}}' is not allowed");
      }
      text += c;
      ++i;
    }
    flush();
    return out;
  }

 private:
  const StringToken& t_;
  std::string_view s_;

  // A field starting at the `{` at i; leaves i after its `}`.
  FSegment field(size_t& i, int depth) {
    Loc open = loc_at(t_.body_loc, s_, i);
    size_t start = ++i;
    std::vector<char> brackets;
    char quote = 0;
    size_t end = std::string_view::npos;  // where the expression ends
    for (; i < s_.size(); ++i) {
      char c = s_[i];
      if (quote) {
        if (c == quote) quote = 0;
        continue;
      }
      if (c == '\'' || c == '"') quote = c;
      else if (c == '(' || c == '[' || c == '{') brackets.push_back(c);
      else if ((c == ')' || c == ']' || c == '}') && !brackets.empty()) brackets.pop_back();
      else if (c == '#') error(loc_at(t_.body_loc, s_, i), "f-string expression part cannot include '#'");
      else if (brackets.empty()) {
        char next = i + 1 < s_.size() ? s_[i + 1] : 0;
        bool comparison = std::strchr("=!<>", c) && next == '=';
        if (comparison) {
          ++i;
          continue;
        }
        if (c == '}' || c == ':' || c == '!' || c == '=') {
          end = i;
          break;
        }
      }
    }
    if (end == std::string_view::npos) error(open, "f-string: expecting '}}'");
    FSegment seg;
    seg.field = true;
    seg.expr = std::string(s_.substr(start, end - start));
    seg.expr_loc = loc_at(t_.body_loc, s_, start);
    if (seg.expr.find_first_not_of(" \t\n\r\f") == std::string::npos)
      error(open, "f-string: empty expression not allowed");
    if (s_[i] == '=') {  // f"{x=}": the text, then the value's repr unless a spec or conversion is given
      seg.debug_text = std::string(s_.substr(start, i + 1 - start));
      ++i;
      while (i < s_.size() && s_[i] == ' ') seg.debug_text += s_[i++];
    }
    if (i < s_.size() && s_[i] == '!') {
      if (i + 1 >= s_.size() || !std::strchr("sra", s_[i + 1]) || s_[i + 1] == 0)
        error(loc_at(t_.body_loc, s_, i), "f-string: invalid conversion character: expected 's', 'r', or 'a'");
      seg.conversion = s_[i + 1];
      i += 2;
    }
    if (i < s_.size() && s_[i] == ':') {
      ++i;
      seg.has_spec = true;
      seg.spec = run(i, true, depth + 1);
    }
    if (i >= s_.size() || s_[i] != '}') error(open, "f-string: expecting '}}'");
    ++i;
    if (!seg.debug_text.empty() && !seg.conversion && !seg.has_spec) seg.conversion = 'r';
    return seg;
  }
};

}  // namespace

StringToken split_string_token(const Loc& loc, std::string_view text) {
  StringToken t;
  size_t p = 0;
  bool bytes = false, u = false;
  while (p < text.size() && text[p] != '\'' && text[p] != '"') {
    char c = char(text[p] | 0x20);
    t.raw |= c == 'r';
    t.f |= c == 'f';
    bytes |= c == 'b';
    u |= c == 'u';
    ++p;
  }
  if (bytes) error(loc, "bytes literals are not supported in thn");
  if (u && p > 1) error(loc, "invalid syntax");
  std::string_view body = text.substr(p);
  size_t q = body.size() >= 6 && body.substr(0, 3) == std::string(3, body[0]) ? 3 : 1;
  t.body = body.substr(q, body.size() - 2 * q);
  t.body_loc = Loc{loc.source, loc.line, loc.col + int(p + q)};
  return t;
}

std::string decode_escapes(const Loc& l, std::string_view body) {
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    char ch = body[i];
    if (ch != '\\' || i + 1 == body.size()) {
      out += ch;
      continue;
    }
    char e = body[++i];
    auto hex = [&](size_t n) {
      std::string digits(body.substr(i + 1, std::min(n, body.size() - i - 1)));
      if (digits.size() < n || digits.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
        error(l, "(unicode error) truncated \\{} escape", e);
      uint32_t v = uint32_t(std::stoul(digits, nullptr, 16));
      if (v > 0x10FFFF) error(l, "(unicode error) illegal Unicode character");
      i += n;
      return v;
    };
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {  // \7, \12, \101
        uint32_t v = uint32_t(e - '0');
        for (int k = 0; k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7'; ++k)
          v = v * 8 + uint32_t(body[++i] - '0');
        append_char(out, v);
        break;
      }
      case 'N': error(l, "\\N{{...}} escapes (characters by name) are not supported in thn; use \\u or \\U"); break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'v': out += '\v'; break;
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case '\n': break;  // line continuation inside the string
      case 'x': append_char(out, hex(2)); break;
      case 'u': append_char(out, hex(4)); break;
      case 'U': append_char(out, hex(8)); break;
      default: out += '\\'; out += e;
    }
  }
  return out;
}

std::vector<FSegment> split_fstring(const StringToken& t) {
  size_t i = 0;
  return FSplitter(t).run(i, false, 0);
}

}  // namespace thn
