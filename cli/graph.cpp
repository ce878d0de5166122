#include "cli/graph.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <unordered_map>

#include "backend/kernel_cache.h"
#include "cli/run.h"
#include "jit/jit.h"

namespace thn {

namespace {

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return out + "\"";
}

// DOT for a fused execution trace: inputs, one cluster per fusion region
// (its prims inside), library and view ops, write-backs into inputs (red,
// bold) and alias edges of views (blue, dotted).
class DotWriter {
 public:
  DotWriter(const Trace& t, std::string title) : t_(t), names_(value_names(t)), title_(std::move(title)) {}

  std::string write() {
    out_ = fmt::format("digraph {} {{\n", quote(title_));
    out_ += "  rankdir=TB;\n  node [fontname=\"monospace\", fontsize=10];\n  edge [color=\"#555555\"];\n";
    out_ += fmt::format("  label={}; labelloc=b; fontname=\"sans-serif\"; fontsize=11;\n",
                        quote("jit " + title_ + "'s execution trace. Blue ellipses: inputs. Boxes in a green cluster: "
                              "one fused kernel. Yellow boxes: library kernels (matmul, gathers, scans). Grey boxes: "
                              "number and shape arithmetic.\nDashed boxes: views, their blue dotted edge to what they "
                              "alias. Red: a write into an input's memory (the bold edge) and that input after the "
                              "call. Labels leave out arguments at their defaults."));
    for (const Value& in : t_.inputs) input(in, "");
    for (const auto& [proxy, v] : t_.captured) input(proxy, " (captured)");
    int k = 0;
    for (const BoundSymbol& b : t_.body) symbol(b, k++);
    std::vector<Value> outs;
    collect_proxies(t_.output, outs);
    if (!outs.empty()) out_ += "  ret [label=\"return\", shape=box, style=bold];\n";
    for (const Value& v : outs) edge(producer(v), "ret", "");
    return out_ + "}\n";
  }

 private:
  std::string name(const Value& v) {
    auto it = names_.find(&v.symbolic());
    return it == names_.end() ? "?" : it->second;
  }

  std::string type(const Value& v) {
    if (!v.is(Type::Tensor)) return type_name(number_proxy(v).value);
    const TensorProxy& p = tensor_proxy(v);
    std::string sizes;
    for (const Value& s : p.sizes) sizes += (sizes.empty() ? "" : ", ") + (s.is_proxy() ? name(s) : to_repr(s));
    return fmt::format("{}[{}]", dtype_short(p.dtype()), sizes);
  }

  std::string render(const Value& v) {
    if (v.is_proxy()) return name(v);
    if (v.is_sequence()) {
      std::string items;
      for (const Value& x : v.items()) items += (items.empty() ? "" : ", ") + render(x);
      if (v.is(Type::List)) return "[" + items + "]";
      return "(" + items + (v.items().size() == 1 ? ",)" : ")");
    }
    return to_repr(v);
  }

  std::string producer(const Value& v) {
    auto it = producer_.find(&v.symbolic());
    return it == producer_.end() ? "" : it->second;
  }

  void edge(const std::string& from, const std::string& to, const std::string& attrs) {
    if (from.empty() || !edges_.insert(from + "->" + to + attrs).second) return;
    out_ += fmt::format("  {} -> {}{};\n", from, to, attrs.empty() ? "" : " [" + attrs + "]");
  }

  void input(const Value& v, const char* note) {
    std::string id = fmt::format("in_{}", inputs_++);
    producer_[&v.symbolic()] = id;
    out_ += fmt::format("  {} [label={}, shape=ellipse, style=filled, fillcolor=\"#dbe9f6\"];\n", id,
                        quote(name(v) + note + "\n" + type(v)));
  }

  // Edges from the producers of b's proxy arguments into node `id`.
  void reads(const BoundSymbol& b, const std::string& id, size_t skip_arg = SIZE_MAX) {
    for (size_t i = 0; i < b.args.size(); ++i) {
      if (i == skip_arg) continue;
      std::vector<Value> used;
      collect_proxies(b.args[i], used);
      for (const Value& v : used) edge(producer(v), id, "");
    }
  }

  std::string label(const BoundSymbol& b) {
    std::vector<Value> defined;
    collect_proxies(b.out, defined);
    std::string lhs;
    for (const Value& v : defined) lhs += (lhs.empty() ? "" : ", ") + name(v);
    std::string sym = b.sym.name();
    if (size_t dot = sym.find('.'); dot != std::string::npos) sym = sym.substr(dot + 1);
    std::string args;
    if (!is_fusion(b)) {
      args = shown_args(b, [&](const Value& a) { return render(a); });
      if (args.size() > 40) args = args.substr(0, 37) + "...";
      args = "(" + args + ")";
    }
    return (lhs.empty() ? "" : lhs + " = ") + sym + args;
  }

  void defines(const BoundSymbol& b, const std::string& id) {
    std::vector<Value> defined;
    collect_proxies(b.out, defined);
    for (const Value& v : defined) producer_[&v.symbolic()] = id;
  }

  // A write into an input's memory (the input, or a view of it): drawn to a
  // node of its own for the input below the computation (its memory after
  // the call), not back up to it. (A result written into the buffer of an
  // intermediate that dies there is the buffer plan's business, not drawn:
  // red means an input's memory.)
  void writes_into(const std::string& from, const Value& written) {
    const Symbolic* owner = memory_owner(t_, written);
    const Value* input = nullptr;
    for (const Value& in : t_.inputs)
      if (in.is_proxy() && &in.symbolic() == owner) input = &in;
    for (const auto& [proxy, v] : t_.captured)
      if (&proxy.symbolic() == owner) input = &proxy;
    if (!input) return;
    const Value& target = *input;
    auto [it, fresh] = written_.try_emplace(&target.symbolic(), fmt::format("written_{}", written_.size()));
    if (fresh)
      out_ += fmt::format("  {} [label={}, shape=ellipse, style=filled, fillcolor=\"#fadbd8\"];\n", it->second,
                          quote(name(target) + " (updated in place)\n" + type(target)));
    edge(from, it->second, "color=\"#c0392b\", style=bold, penwidth=2, label=\"writes\", fontcolor=\"#c0392b\"");
  }

  void symbol(const BoundSymbol& b, int k) {
    std::string id = fmt::format("op_{}", k);
    if (is_fusion(b)) {
      out_ += fmt::format("  subgraph cluster_{} {{\n    label=\"fusion {}: one kernel\"; style=\"rounded,filled\"; "
                          "fillcolor=\"#eef7ee\"; color=\"#5b9a5b\";\n",
                          k, k);
      int j = 0;
      std::vector<std::string> members;
      for (const BoundSymbol& sub : b.subsymbols) {
        std::string sid = fmt::format("{}_{}", id, j++);
        out_ += fmt::format("    {} [label={}, shape=box, style=\"rounded,filled\", fillcolor=white];\n", sid,
                            quote(label(sub)));
        members.push_back(sid);
      }
      out_ += "  }\n";
      for (size_t i = 0; i < b.subsymbols.size(); ++i) {
        reads(b.subsymbols[i], members[i]);
        defines(b.subsymbols[i], members[i]);
      }
      std::vector<Value> outs;
      collect_proxies(b.out, outs);
      std::vector<Value> into;
      if (b.into.is_sequence()) into = b.into.items();
      for (size_t i = 0; i < outs.size() && i < into.size(); ++i)
        if (into[i].is_proxy()) writes_into(producer(outs[i]), into[i]);
      for (const Value& v : outs)
        if (producer(v).empty()) producer_[&v.symbolic()] = members.empty() ? id : members.back();
      return;
    }
    if (is_write_back(b)) {
      out_ += fmt::format("  {} [label={}, shape=box, style=filled, fillcolor=\"#fadbd8\"];\n", id, quote(label(b)));
      size_t target_arg = b.sym.op ? 0 : 1;
      reads(b, id, target_arg);
      writes_into(id, write_back_target(b));
      return;
    }
    if (b.sym.is_view()) {
      out_ += fmt::format("  {} [label={}, shape=box, style=dashed];\n", id, quote(label(b) + " (view)"));
      reads(b, id, 0);
      if (!b.args.empty() && b.args[0].is_proxy())
        edge(producer(b.args[0]), id, "color=\"#2e86c1\", style=dotted, penwidth=2, label=\"alias\", fontcolor=\"#2e86c1\"");
      defines(b, id);
      return;
    }
    // A tensor op left to its library kernel (matmul, gathers, ...); number
    // arithmetic and shape reads are grey.
    const bool library = is_library(b.sym);
    out_ += fmt::format("  {} [label={}, shape=box, style=filled, fillcolor=\"{}\"];\n", id, quote(label(b)),
                        library ? "#fff2cc" : "#f2f2f2");
    reads(b, id);
    if (b.into.is_proxy()) writes_into(id, b.into);
    defines(b, id);
  }

  const Trace& t_;
  std::unordered_map<const Symbolic*, std::string> names_;
  std::string title_;
  std::unordered_map<const Symbolic*, std::string> producer_;
  std::set<std::string> edges_;
  std::unordered_map<const Symbolic*, std::string> written_;
  std::string out_;
  int inputs_ = 0;
};

}  // namespace

std::string trace_dot(const Trace& t, const std::string& title) { return DotWriter(t, title).write(); }

namespace {

bool write_file(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  return std::fclose(f) == 0 && ok;
}

// Writes the DOT text to `out`: as it is for .dot, else rendered by
// Graphviz's dot ($THN_DOT, else the first on PATH) from a temporary file;
// without dot, the text goes beside `out` as .dot.
int write_graph(const std::string& dot, const std::string& out) {
  std::filesystem::path target(out);
  auto save = [&](const std::filesystem::path& p) {
    if (write_file(p, dot)) return true;
    std::fprintf(stderr, "thn graph: cannot write %s\n", p.c_str());
    return false;
  };
  if (target.extension() == ".dot") return save(target) ? 0 : 1;
  std::string input = (std::filesystem::temp_directory_path() / "thn-graph-XXXXXX").string();
  int fd = mkstemp(input.data());
  if (fd < 0) {
    std::fprintf(stderr, "thn graph: cannot make a temporary file in %s\n", input.c_str());
    return 1;
  }
  close(fd);
  const char* env = std::getenv("THN_DOT");
  std::string exe = env ? env : "dot", log = input + ".log", why;
  int rc = save(input) ? spawn({exe, "-T" + target.extension().string().substr(1), "-o", out, input}, log) : -2;
  if (rc > 0) {
    std::ifstream in(log);
    why.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::error_code ec;
  std::filesystem::remove(input, ec);
  std::filesystem::remove(log, ec);
  if (rc == -2) return 1;
  if (rc < 0) {
    std::filesystem::path dot_path = target.replace_extension(".dot");
    if (!save(dot_path)) return 1;
    std::fprintf(stderr, "thn graph: Graphviz's dot is not installed (apt install graphviz): wrote the DOT text to %s\n",
                 dot_path.c_str());
    return 0;
  }
  if (rc > 0) {
    std::fprintf(stderr, "thn graph: %s failed (status %d):\n%s", exe.c_str(), rc, why.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

const char* kGraphUsage = "usage: thn graph FILE --fn NAME [-o OUT.svg|OUT.png|OUT.dot]\n";

int graph_command(int argc, char** argv) {
  RunOptions run;
  std::string fn, out;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--fn" || arg == "-o") && i + 1 < argc) {
      (arg == "--fn" ? fn : out) = argv[++i];
    } else if (arg.starts_with("-") || !run.file.empty()) {
      unknown_argument("thn graph", arg, {"--fn"}, kGraphUsage);
      return 2;
    } else {
      run.file = arg;
    }
  }
  std::string ext = std::filesystem::path(out).extension().string();
  if (run.file.empty() || fn.empty() || (!out.empty() && ext != ".svg" && ext != ".png" && ext != ".dot")) {
    std::fprintf(stderr, "%s", kGraphUsage);
    return 2;
  }
  if (!script_exists(run.file)) return 2;
  if (out.empty()) run.out = stderr;  // stdout carries the DOT text
  run.jit.keep_alive = true;          // jit(step)(...) made for one call is still there after the run
  return on_big_stack([&] {
    return run_script(run, [&](const JitRegistry& jits) {
      std::vector<std::string> names;
      std::optional<JitView> found;
      for (const JitView& j : jit_functions(jits)) {
        names.push_back(j.name);
        if (j.name == fn && j.computation) found = j;
      }
      if (!found) {
        std::string have = names.empty() ? "it makes none" : fmt::format("it has: {}", fmt::join(names, ", "));
        std::fprintf(stderr, "thn graph: %s calls no jit function named '%s' (%s)\n", run.file.c_str(), fn.c_str(),
                     have.c_str());
        return 1;
      }
      std::string dot = trace_dot(*found->computation, fn);
      if (out.empty()) {
        std::fputs(dot.c_str(), stdout);
        return 0;
      }
      const int rc = write_graph(dot, out);
      if (rc == 0 && std::filesystem::exists(out))
        std::fprintf(stderr, "thn graph: wrote %s's execution trace to %s\n", fn.c_str(), out.c_str());
      return rc;
    });
  });
}

}  // namespace thn
