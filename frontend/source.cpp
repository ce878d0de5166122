#include "frontend/source.h"

#include <fstream>
#include <sstream>

namespace thn {

Source::Source(std::string p, std::string t) : path(std::move(p)), text(std::move(t)) {
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '\n') {
      std::string l = text.substr(start, i - start);
      if (!l.empty() && l.back() == '\r') l.pop_back();
      lines.push_back(std::move(l));
      start = i + 1;
    }
  }
}

std::shared_ptr<const Source> Source::load(const std::string& path, std::string library) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ErrorKind::ModuleNotFoundError, "can't open file '{}': No such file or directory", path);
  std::stringstream ss;
  ss << in.rdbuf();
  auto s = std::make_shared<Source>(path, ss.str());
  s->library = std::move(library);
  return s;
}

std::string_view Source::line(int n) const {
  if (n < 1 || size_t(n) > lines.size()) return {};
  return lines[size_t(n) - 1];
}

namespace {

// (Tabs and line breaks stay: a message may have several lines.)
bool is_control(unsigned char c) { return (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f; }

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (is_control(c)) out += fmt::format("\\x{:02x}", c);
    else out += char(c);
  }
  return out;
}

std::string format_located(const Loc& loc, std::string_view kind, const std::string& message, bool colour) {
  // clang's palette: the location bold, the error bold red, the caret bold green.
  auto paint = [colour](const char* sgr, const std::string& s) {
    return colour ? fmt::format("\x1b[{}m{}\x1b[0m", sgr, s) : s;
  };
  std::string what =
      paint("1;31", message.empty() ? std::string(kind) : fmt::format("{}: {}", kind, printable(message)));
  if (!loc.source) return what;
  std::string out = paint("1", fmt::format("{}:{}:{}:", loc.source->path, loc.line, loc.col + 1)) + " " + what;
  std::string_view text = loc.source->line(loc.line);
  if (!text.empty()) {
    // Keep the caret under the column: tabs stay tabs, an escaped character
    // is four columns, everything else one.
    std::string pad;
    for (int i = 0; i < loc.col && size_t(i) < text.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(text[size_t(i)]);
      pad += c == '\t' ? "\t" : is_control(c) ? "    " : " ";
    }
    out += fmt::format("\n    {}\n    {}{}", printable(text), pad, paint("1;32", "^"));
  }
  return out;
}

}  // namespace thn
