#include "frontend/unicode.h"

#include <algorithm>

namespace thn {

namespace {

enum Flag : uint8_t {
  kAlpha = 1,
  kDecimal = 2,
  kDigit = 4,
  kNumeric = 8,
  kSpace = 16,
  kPrintable = 32,
  kCased = 64,      // (lower()'s final-sigma rule)
  kIgnorable = 128  // case-ignorable
};
struct FlagRun {
  uint32_t first;
  uint8_t flags;
};
struct CaseRun {
  uint32_t first, last, stride;
  int32_t upper, lower;  // deltas
};
struct SpecialCase {
  uint32_t c;
  const char* upper;
  const char* lower;
};

#include "frontend/unicode_data.inc"

uint8_t flags_of(char32_t c) {
  const auto* run = std::upper_bound(std::begin(kFlagRuns), std::end(kFlagRuns), uint32_t(c),
                                     [](uint32_t x, const FlagRun& r) { return x < r.first; });
  return run == std::begin(kFlagRuns) ? 0 : run[-1].flags;
}

// The simple case mapping's run holding c, if any. (Alternating mappings
// interleave two runs, so c lies in the last run starting at or before it,
// or in the one before that.)
const CaseRun* case_run(char32_t c) {
  const auto* run = std::upper_bound(std::begin(kCaseRuns), std::end(kCaseRuns), uint32_t(c),
                                     [](uint32_t x, const CaseRun& r) { return x < r.first; });
  for (int back = 1; back <= 2 && run - back >= std::begin(kCaseRuns); ++back) {
    const CaseRun& r = run[-back];
    if (c <= r.last && (c - r.first) % r.stride == 0) return &r;
  }
  return nullptr;
}

const SpecialCase* special(char32_t c) {
  const auto* s = std::lower_bound(std::begin(kSpecial), std::end(kSpecial), uint32_t(c),
                                   [](const SpecialCase& r, uint32_t x) { return r.c < x; });
  return s != std::end(kSpecial) && s->c == c ? s : nullptr;
}

std::string convert(std::string_view s, bool upper) {
  std::string out;
  out.reserve(s.size());
  if (is_ascii(s)) {
    for (char ch : s) out += upper ? (ch >= 'a' && ch <= 'z' ? char(ch - 32) : ch) : (ch >= 'A' && ch <= 'Z' ? char(ch + 32) : ch);
    return out;
  }
  std::vector<char32_t> cs;
  for (size_t i = 0; i < s.size();) cs.push_back(next_char(s, i));
  for (size_t k = 0; k < cs.size(); ++k) {
    const char32_t c = cs[k];
    if (!upper && c == 0x3A3) {  // final sigma: after a cased letter, and not before one
      auto cased_at = [&](size_t from, int dir) {
        for (size_t j = from; j < cs.size(); j += size_t(dir)) {
          const uint8_t f = flags_of(cs[j]);
          if (!(f & kIgnorable)) return (f & kCased) != 0;
        }
        return false;
      };
      const bool final = k > 0 && cased_at(k - 1, -1) && !cased_at(k + 1, 1);
      append_char(out, final ? 0x3C2 : 0x3C3);
      continue;
    }
    if (const SpecialCase* sp = special(c)) {
      out += upper ? sp->upper : sp->lower;
      continue;
    }
    const CaseRun* r = case_run(c);
    append_char(out, r ? char32_t(int64_t(c) + (upper ? r->upper : r->lower)) : c);
  }
  return out;
}

}  // namespace

size_t invalid_utf8(std::string_view s, const char** why) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size(), i = 0;
  while (i < n) {
    unsigned char c = p[i];
    size_t len = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    // The second byte's range narrows after E0, ED, F0 and F4.
    unsigned char lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80, hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
    const char* bad = len == 0 ? "invalid start byte" : nullptr;
    for (size_t k = 1; !bad && k < len; ++k) {
      if (i + k >= n) bad = "unexpected end of data";
      else if (p[i + k] < (k == 1 ? lo : 0x80) || p[i + k] > (k == 1 ? hi : 0xBF)) bad = "invalid continuation byte";
    }
    if (bad) {
      *why = bad;
      return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

std::vector<size_t> char_offsets(std::string_view s) {
  std::vector<size_t> at;
  for (size_t i = 0; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) at.push_back(i);
  at.push_back(s.size());
  return at;
}

size_t char_count(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool is_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

char32_t next_char(std::string_view s, size_t& i) {
  const auto b = static_cast<unsigned char>(s[i++]);
  int more = b >= 0xF0 ? 3 : b >= 0xE0 ? 2 : b >= 0xC0 ? 1 : 0;
  char32_t c = more == 3 ? b & 0x07 : more == 2 ? b & 0x0F : more == 1 ? b & 0x1F : b;
  for (; more > 0 && i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80; --more)
    c = (c << 6) | (static_cast<unsigned char>(s[i++]) & 0x3F);
  return c;
}

void append_char(std::string& out, char32_t c) {
  if (c < 0x80) out += char(c);
  else if (c < 0x800) out += {char(0xC0 | (c >> 6)), char(0x80 | (c & 0x3F))};
  else if (c < 0x10000) out += {char(0xE0 | (c >> 12)), char(0x80 | ((c >> 6) & 0x3F)), char(0x80 | (c & 0x3F))};
  else
    out += {char(0xF0 | (c >> 18)), char(0x80 | ((c >> 12) & 0x3F)), char(0x80 | ((c >> 6) & 0x3F)),
            char(0x80 | (c & 0x3F))};
}

bool char_is_alpha(char32_t c) { return flags_of(c) & kAlpha; }
bool char_is_decimal(char32_t c) { return flags_of(c) & kDecimal; }
bool char_is_digit(char32_t c) { return flags_of(c) & kDigit; }
bool char_is_numeric(char32_t c) { return flags_of(c) & kNumeric; }
bool char_is_space(char32_t c) { return flags_of(c) & kSpace; }
bool char_is_printable(char32_t c) { return flags_of(c) & kPrintable; }

std::string to_upper(std::string_view s) { return convert(s, true); }
std::string to_lower(std::string_view s) { return convert(s, false); }

}  // namespace thn
