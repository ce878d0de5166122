#include "cli/output_compare.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <vector>

namespace thn {

namespace {

constexpr double kHalfTolerance = 1e-2;
constexpr std::string_view kEndOfOutput = "<end of output>";

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    lines.push_back(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  return lines;
}

int paren_balance(std::string_view s) {
  int depth = 0;
  for (char c : s) depth += c == '(' ? 1 : c == ')' ? -1 : 0;
  return depth;
}

// Per line: does its printed block mention a half-precision dtype? A block is
// one line, or a tensor(...) print that spans several: PyTorch puts the dtype
// only after the last row, and indents the rows after the first.
std::vector<bool> half_precision_lines(const std::vector<std::string_view>& lines) {
  std::vector<bool> half(lines.size(), false);
  for (size_t start = 0; start < lines.size();) {
    size_t tensor = lines[start].find("tensor(");
    int depth = tensor == std::string_view::npos ? 0 : paren_balance(lines[start].substr(tensor));
    size_t end = start + 1;
    for (; depth > 0 && end < lines.size() && lines[end].starts_with(' '); ++end) depth += paren_balance(lines[end]);
    bool mentions = false;
    for (size_t i = start; i < end; ++i) mentions = mentions || lines[i].find("float16") != std::string_view::npos;
    for (size_t i = start; i < end; ++i) half[i] = mentions;
    start = end;
  }
  return half;
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)); }

size_t digits_from(std::string_view s, size_t i) {
  while (i < s.size() && is_digit(s[i])) ++i;
  return i;
}

// End of the unsigned number (digits[.digits][e[+-]digits], nan, inf) that
// starts at s[i], or i when none does.
size_t number_body_end(std::string_view s, size_t i) {
  size_t end = i;
  if (s.substr(i).starts_with("nan") || s.substr(i).starts_with("inf")) {
    end = i + 3;
  } else if (i < s.size() && is_digit(s[i])) {
    end = digits_from(s, i);
    if (end < s.size() && s[end] == '.') end = digits_from(s, end + 1);
    if (end < s.size() && (s[end] == 'e' || s[end] == 'E')) {
      size_t exp = end + 1;
      if (exp < s.size() && (s[exp] == '+' || s[exp] == '-')) ++exp;
      if (exp < s.size() && is_digit(s[exp])) end = digits_from(s, exp);
    }
  }
  // Part of a word (`float16`, `t0`, `info`): text, not a number.
  return end < s.size() && is_word_char(s[end]) ? i : end;
}

// End of the number that starts at s[i], sign included, or i when none does.
size_t number_end(std::string_view s, size_t i) {
  if (i > 0 && (is_word_char(s[i - 1]) || s[i - 1] == '.')) return i;
  bool sign = (s[i] == '-' || s[i] == '+') && !(i > 0 && (s[i - 1] == ')' || s[i - 1] == ']'));
  size_t body = i + (sign ? 1 : 0);
  size_t end = number_body_end(s, body);
  return end == body ? i : end;
}

struct Token {
  bool number = false;
  std::string_view text;
};

std::vector<Token> tokenize(std::string_view s) {
  std::vector<Token> tokens;
  size_t text_start = 0;
  for (size_t i = 0; i < s.size();) {
    size_t end = number_end(s, i);
    if (end == i) {
      ++i;
      continue;
    }
    if (text_start < i) tokens.push_back({false, s.substr(text_start, i - text_start)});
    tokens.push_back({true, s.substr(i, end - i)});
    i = text_start = end;
  }
  if (text_start < s.size()) tokens.push_back({false, s.substr(text_start)});
  return tokens;
}

std::optional<double> parse_number(std::string_view s) {
  if (s.starts_with('+')) s.remove_prefix(1);
  double value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

bool is_integer(std::string_view s) { return s.find_first_of(".eEni") == std::string_view::npos; }

// Integers (sizes, indices, counts) must be equal; floats close.
bool numbers_match(std::string_view reference, std::string_view actual, double tol) {
  if (reference == actual) return true;
  if (is_integer(reference) || is_integer(actual)) return false;
  auto a = parse_number(reference), b = parse_number(actual);
  if (!a || !b) return false;
  if (std::isnan(*a) || std::isnan(*b)) return std::isnan(*a) && std::isnan(*b);
  if (std::isinf(*a) || std::isinf(*b)) return *a == *b;
  return std::fabs(*a - *b) <= tol + tol * std::fabs(*a);
}

// Tensor prints pad numbers to a common width, which depends on the values
// (`-0.0000` vs `0.0000`), so spaces next to a number don't count.
std::string_view unpadded(const std::vector<Token>& tokens, size_t i) {
  std::string_view text = tokens[i].text;
  if (i > 0) text.remove_prefix(std::min(text.find_first_not_of(' '), text.size()));
  if (i + 1 < tokens.size()) text = text.substr(0, text.find_last_not_of(' ') + 1);
  return text;
}

bool lines_match(std::string_view reference, std::string_view actual, double tol) {
  if (reference == actual) return true;
  std::vector<Token> a = tokenize(reference), b = tokenize(actual);
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].number != b[i].number) return false;
    bool same = a[i].number ? numbers_match(a[i].text, b[i].text, tol) : unpadded(a, i) == unpadded(b, i);
    if (!same) return false;
  }
  return true;
}

}  // namespace

std::optional<OutputDifference> first_difference(std::string_view reference, std::string_view actual,
                                                 double tolerance) {
  std::vector<std::string_view> a = split_lines(reference), b = split_lines(actual);
  std::vector<bool> half_a = half_precision_lines(a), half_b = half_precision_lines(b);
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    if (i < a.size() && i < b.size() && lines_match(a[i], b[i], half_a[i] || half_b[i] ? std::max(kHalfTolerance, tolerance) : tolerance))
      continue;
    return OutputDifference{i + 1, std::string(i < a.size() ? a[i] : kEndOfOutput),
                            std::string(i < b.size() ? b[i] : kEndOfOutput)};
  }
  return std::nullopt;
}

}  // namespace thn
