"""Checks that a .thn file stays inside the thn language (docs/language.md).

CPython accepts far more than thn, so a script that runs under the oracle may
still use a construct or a name that `thn run` rejects. check_file() parses
the file with Python's ast and reports, with line numbers:
- syntax outside the subset (global, generators, sets, with ... as,
  chained comparisons, ...);
- global names that are neither bound in the file nor thn builtins, ops
  (docs/ops.md, generated from runtime/ops.def) or jit introspection;
- attributes that are neither tensor methods (docs/ops.md), names of the
  math / time modules, functions or classes of a stdlib module, methods of
  str, list and dict, special names, nor attributes the file sets
  (`self.w = ...`) or methods its classes define.
"""
import ast
import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parents[2]
STDLIB = REPO / "stdlib"

_BUILTINS = set("""print len range min max abs sum int float bool str list
tuple isinstance zip enumerate round True False None jit last_traces
last_prologue last_execution_trace cache_hits cache_misses float32 float64
float16 bfloat16 int32 int64 dict type repr format divmod reversed map filter
hash id callable getattr setattr hasattr delattr dir help super staticmethod
object sorted any all iter next no_grad enable_grad save_npy load_npy Tensor
BaseException Exception KeyboardInterrupt ArithmeticError LookupError
RuntimeError ZeroDivisionError OverflowError IndexError KeyError ValueError
TypeError NameError UnboundLocalError AttributeError AssertionError
NotImplementedError RecursionError ImportError ModuleNotFoundError SyntaxError
MemoryError OSError FileNotFoundError __file__ __name__""".split())
_VALUE_METHODS = set("""append extend insert pop reverse copy count index keys values items get
update setdefault clear upper lower strip lstrip rstrip split splitlines join replace startswith
endswith find rfind format isdigit isalpha isspace isalnum ljust rjust center zfill
grad requires_grad requires_grad_ is_leaf grad_fn backward""".split())  # (the last line: autograd's)
_MODULE_ATTRS = {
    "math": set("sqrt exp log sin cos tanh floor ceil pi e inf nan isnan isinf".split()),
    "time": {"perf_counter"},
}
_ALLOWED_NODES = (
    ast.Module, ast.FunctionDef, ast.Return, ast.Assign, ast.AugAssign, ast.For,
    ast.While, ast.If, ast.Expr, ast.Pass, ast.Break, ast.Continue, ast.Import,
    ast.ImportFrom, ast.alias, ast.Assert, ast.BoolOp, ast.BinOp, ast.UnaryOp,
    ast.IfExp, ast.Compare, ast.Call, ast.keyword, ast.Constant, ast.Attribute,
    ast.Subscript, ast.Slice, ast.Name, ast.List, ast.Tuple, ast.ListComp,
    ast.comprehension, ast.arguments, ast.arg, ast.expr_context, ast.boolop,
    ast.operator, ast.unaryop, ast.cmpop,
    # language v2
    ast.ClassDef, ast.Raise, ast.Try, ast.ExceptHandler, ast.JoinedStr, ast.FormattedValue,
    ast.Starred, ast.Dict, ast.DictComp, ast.Lambda, ast.Delete, ast.With, ast.withitem,
)


def _ops_names():
    text = (REPO / "docs" / "ops.md").read_text()
    functions = set(re.findall(r"`([A-Za-z_0-9]+)\(\.\.\.\)`", text))
    methods = set(re.findall(r"`x\.([A-Za-z_0-9]+)", text))
    return functions, methods


def _stdlib_functions():
    names = set()
    for path in STDLIB.glob("*.thn"):
        tree = ast.parse(path.read_text())
        names |= {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        for c in tree.body:  # (and the methods of its classes: optim.Adam's step)
            if isinstance(c, ast.ClassDef):
                names |= {n.name for n in c.body if isinstance(n, ast.FunctionDef)}
    return names


def _bound_names(tree):
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
    return bound


def _syntax_problem(node):
    if not isinstance(node, _ALLOWED_NODES):
        return type(node).__name__ + " is not in the thn language"
    if isinstance(node, ast.Constant) and not isinstance(
            node.value, (bool, int, float, str, type(None), type(...))):
        return "constant " + repr(node.value) + " is not a thn literal"
    if isinstance(node, ast.arguments) and node.posonlyargs:
        return "positional-only parameters are not in thn"
    if isinstance(node, ast.withitem) and node.optional_vars is not None:
        return "with ... as is not in thn"
    if isinstance(node, ast.Compare) and len(node.ops) > 1:
        return "chained comparison (thn compares left to right, pairwise)"
    return None


def _walk_with_lines(node, line=0):
    """ast.walk, with each node's line (its parent's when it has none)."""
    line = getattr(node, "lineno", line)
    yield node, line
    for child in ast.iter_child_nodes(node):
        yield from _walk_with_lines(child, line)


def check_file(path):
    path = pathlib.Path(path)
    tree = ast.parse(path.read_text(), str(path))
    functions, methods = _ops_names()
    known = _BUILTINS | functions | _bound_names(tree) | set(_MODULE_ATTRS)
    attrs = methods | _stdlib_functions() | set().union(*_MODULE_ATTRS.values()) | _VALUE_METHODS
    for node in ast.walk(tree):  # what the file's objects hold: attributes it sets, methods it defines
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            attrs.add(node.attr)
        elif isinstance(node, ast.ClassDef):  # methods and class attributes
            attrs |= {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
            attrs |= {t.id for n in node.body if isinstance(n, ast.Assign) for t in n.targets
                      if isinstance(t, ast.Name)}
    problems = []
    for node, line in _walk_with_lines(tree):
        problem = _syntax_problem(node)
        if problem is None and isinstance(node, ast.Name) and node.id not in known:
            problem = "unknown name " + node.id
        if problem is None and isinstance(node, ast.Attribute):
            base = node.value.id if isinstance(node.value, ast.Name) else None
            allowed = _MODULE_ATTRS.get(base, attrs)
            if node.attr not in allowed and not (node.attr.startswith("__") and node.attr.endswith("__")):
                problem = "unknown attribute ." + node.attr
        if problem is not None:
            problems.append(f"{path}:{line}: {problem}")
    return problems


if __name__ == "__main__":  # every stdlib module (CI: the stdlib_subset test)
    import sys
    found = [p for f in sorted(STDLIB.glob("*.thn")) for p in check_file(f)]
    print("\n".join(found) if found else f"{len(list(STDLIB.glob('*.thn')))} stdlib files inside the thn language")
    sys.exit(1 if found else 0)
