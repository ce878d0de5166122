#include "cli/complete.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>

#include "interp/interpreter.h"
#include "jit/jit.h"
#include "runtime/op_registry.h"

namespace thn {

namespace {

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

const char* kKeywords[] = {"False", "None", "True", "and", "assert", "break", "continue", "def", "elif", "else",
                           "for", "from", "if", "import", "in", "is", "not", "or", "pass", "return", "while"};
const char* kCommands[] = {":emit", ":help", ":load", ":mode", ":quit", ":reset", ":time", ":trace"};
const char* kBuiltinModules[] = {"math", "time"};

// The value a dotted name (`x`, `nn.functional`) names in the session;
// attributes are followed through modules only, so completion runs no code.
std::optional<Value> lookup(Interpreter& in, std::string_view dotted) {
  std::optional<Value> v;
  size_t at = 0;
  while (true) {
    size_t dot = dotted.find('.', at);
    std::string part(dotted.substr(at, dot == std::string_view::npos ? std::string_view::npos : dot - at));
    if (!v) {
      auto& globals = in.main_module().globals;
      if (auto it = globals.find(part); it != globals.end()) v = it->second;
      else if (auto b = in.builtins().find(part); b != in.builtins().end()) v = b->second;
      else return std::nullopt;
    } else {
      if (!v->is(Type::Module)) return std::nullopt;
      auto& globals = v->obj<ModuleObj>().globals;
      auto it = globals.find(part);
      if (it == globals.end()) return std::nullopt;
      v = it->second;
    }
    if (dot == std::string_view::npos) return v;
    at = dot + 1;
  }
}

// The keyword parameters of what `callee` (a dotted name) calls.
std::vector<std::string> keyword_params(Interpreter& in, std::string_view callee) {
  std::vector<std::string> names;
  auto from_schema = [&](const OpDef* op) {
    if (!op) return;
    for (const Param& p : op->schema.params)
      if (p.name != "self") names.push_back(p.name);
  };
  size_t dot = callee.rfind('.');
  if (dot != std::string_view::npos) {
    std::optional<Value> obj = lookup(in, callee.substr(0, dot));
    std::string_view method = callee.substr(dot + 1);
    if (obj && obj->is(Type::Tensor)) {
      if (auto m = find_method(method)) from_schema(m->op);
      return names;
    }
  }
  std::optional<Value> fn = lookup(in, callee);
  if (!fn) return names;
  if (fn->is(Type::Function)) {
    for (const auto& p : fn->obj<FunctionObj>().def->params) names.push_back(p.name);
  } else if (fn->is(Type::Builtin)) {
    from_schema(find_function(fn->obj<BuiltinObj>().name));
  }
  return names;
}

// The callee of the innermost call still open at `end` ("" when none).
std::string_view open_callee(std::string_view line, size_t end) {
  int depth = 0;
  for (size_t i = end; i-- > 0;) {
    char c = line[i];
    if (c == ')' || c == ']' || c == '}') depth++;
    else if (c == '[' || c == '{') depth--;
    else if (c == '(' && depth-- == 0) {
      size_t s = i;
      while (s > 0 && (word_char(line[s - 1]) || line[s - 1] == '.')) s--;
      return line.substr(s, i - s);
    }
    if (depth < 0) return {};
  }
  return {};
}

std::vector<std::string> module_names(Interpreter& in) {
  std::vector<std::string> names(std::begin(kBuiltinModules), std::end(kBuiltinModules));
  for (const std::string& dir : in.options().module_path) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
      if (e.path().extension() == ".thn") names.push_back(e.path().stem().string());
  }
  return names;
}

std::vector<std::string> file_names(std::string_view prefix) {
  std::filesystem::path p{std::string(prefix)};
  std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  std::string lead = p.has_parent_path() ? p.parent_path().string() + "/" : "";
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (e.is_directory(ec)) names.push_back(lead + name + "/");
    else if (e.path().extension() == ".thn") names.push_back(lead + name);
  }
  return names;
}

}  // namespace

Completion complete(Interpreter& in, std::string_view line) {
  Completion c;
  std::vector<std::string> pool;
  size_t lead = line.find_first_not_of(" \t");
  std::string_view stripped = lead == std::string_view::npos ? std::string_view{} : line.substr(lead);

  if (stripped.starts_with(":")) {
    size_t space = stripped.find(' ');
    if (space == std::string_view::npos) {
      c.start = lead;
      pool.assign(std::begin(kCommands), std::end(kCommands));
    } else {
      std::string_view cmd = stripped.substr(0, space);
      c.start = line.find_last_of(" \t") + 1;
      if (cmd == ":load") pool = file_names(line.substr(c.start));
      else if (cmd == ":emit" && line.substr(lead + space).find_first_not_of(' ') == std::string_view::npos)
        pool = {"ast", "kernels", "trace"};
      else if (cmd == ":mode") pool = {"interpret", "jit"};
      else if (cmd == ":trace")
        for (const auto& [name, v] : in.main_module().globals)
          if (jit_view(v)) pool.push_back(name);
    }
  } else {
    c.start = line.size();
    while (c.start > 0 && (word_char(line[c.start - 1]) || line[c.start - 1] == '.')) c.start--;
    std::string_view word = line.substr(c.start);
    std::string_view before = line.substr(0, c.start);
    while (!before.empty() && (before.back() == ' ' || before.back() == ',')) before.remove_suffix(1);
    size_t dot = word.rfind('.');
    size_t kw = before.find_last_of(" \t");
    std::string_view last_word = before.substr(kw == std::string_view::npos ? 0 : kw + 1);
    std::string_view from_module;  // `from MODULE import ...`: MODULE's members complete
    if (size_t f = line.find_first_not_of(" \t"); f != std::string_view::npos && line.substr(f).starts_with("from ")) {
      std::string_view rest = line.substr(f + 5);
      rest.remove_prefix(std::min(rest.size(), rest.find_first_not_of(' ')));
      size_t end = rest.find(' ');
      if (end != std::string_view::npos && rest.substr(end).find(" import ") == 0) from_module = rest.substr(0, end);
    }
    if (!from_module.empty()) {
      // A module bound in the session, or a built-in one: no module's code runs to complete.
      std::optional<Value> m = lookup(in, from_module);
      if (!m || !m->is(Type::Module)) {
        m.reset();
        for (const char* b : kBuiltinModules)
          if (from_module == b) m = make_builtin_module(in, b);
      }
      if (m && m->is(Type::Module)) pool = attribute_names(*m);
    } else if (last_word == "import" || last_word == "from") {
      pool = module_names(in);
    } else if (dot != std::string_view::npos) {
      std::optional<Value> obj = dot == 0 ? std::nullopt : lookup(in, word.substr(0, dot));
      if (obj)
        for (std::string& a : attribute_names(*obj)) pool.push_back(std::string(word.substr(0, dot + 1)) + a);
    } else {
      if (std::string_view callee = open_callee(line, c.start); !callee.empty())
        for (const std::string& p : keyword_params(in, callee)) pool.push_back(p + "=");
      pool.insert(pool.end(), std::begin(kKeywords), std::end(kKeywords));
      for (const auto& [name, v] : in.main_module().globals)
        if (!name.starts_with("__")) pool.push_back(name);
      for (const auto& [name, v] : in.builtins()) pool.push_back(name);
    }
  }
  std::string_view word = line.substr(c.start);
  // Private names (`_opmath`, `__init__`) only once a `_` is typed, as IPython.
  auto last_part = [](std::string_view s) { return s.substr(s.rfind('.') == std::string_view::npos ? 0 : s.rfind('.') + 1); };
  const bool privates = last_part(word).starts_with("_");
  for (std::string& p : pool)
    if (std::string_view(p).starts_with(word) && (privates || !last_part(p).starts_with("_")))
      c.candidates.push_back(std::move(p));
  std::sort(c.candidates.begin(), c.candidates.end());
  c.candidates.erase(std::unique(c.candidates.begin(), c.candidates.end()), c.candidates.end());
  return c;
}

}  // namespace thn
