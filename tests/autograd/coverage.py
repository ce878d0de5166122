#!/usr/bin/env python3
"""Every op of runtime/ops.def is accounted for by autograd (stdlib/autograd.thn):
it has a rule (OP_backward), or is listed in NO_GRADIENT or NOT_YET, or is a
creation, random or introspection op (COMPOSITES, shorthands with a rule, are not ops); no op is in two places, and every name
listed is an op. A new op fails this test until its author says which.

    coverage.py [ROOT]
"""
import ast
import re
import sys
from pathlib import Path

root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2])
ops = {}
for line in (root / "runtime/ops.def").read_text().splitlines():
    m = re.match(r'THN_OP\((\w+), (\w+),', line) or re.match(r'THN_OP_NAMED\(\w+, "(\w+)", (\w+),', line)
    if m:
        ops[m[1]] = m[2]
source = (root / "stdlib/autograd.thn").read_text()
rules = set(re.findall(r"^def (\w+)_backward\(", source, re.M))
lists = {}
for name in ("NO_GRADIENT", "NOT_YET", "COMPOSITES"):
    m = re.search(rf"^{name} = (\[.*?\])", source, re.M | re.S)
    lists[name] = set(ast.literal_eval(m[1]))
problems = []
places = {}
for op, family in ops.items():
    where = [p for p, names in [("a rule", rules), ("NO_GRADIENT", lists["NO_GRADIENT"]), ("NOT_YET", lists["NOT_YET"])]
             if op in names]
    if family in ("Creation", "Random", "Attribute") and op not in rules:  # (x.T and x.mT have rules)
        where += ["its family"]
    if not where:
        problems.append(f"{op}: no rule in stdlib/autograd.thn and not in NO_GRADIENT or NOT_YET")
    elif len(where) > 1:
        problems.append(f"{op}: in {' and '.join(where)}")
    places[op] = where
# READS_RESULT names exactly the rules whose code reads `result`.
reads = {node.name[:-len("_backward")] for node in ast.parse(source).body
         if isinstance(node, ast.FunctionDef) and node.name.endswith("_backward")
         and "result" in {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}}
m = re.search(r"^READS_RESULT = (\[.*?\])", source, re.M | re.S)
listed = set(ast.literal_eval(m[1])) if m else set()
for n in sorted(reads - listed):
    problems.append(f"{n}_backward reads result but is not in READS_RESULT")
for n in sorted(listed - reads):
    problems.append(f"{n}: in READS_RESULT but its rule does not read result")
for name, names in [("rules", rules - {"getitem", "setitem"} - lists["COMPOSITES"]), ("NO_GRADIENT", lists["NO_GRADIENT"]), ("NOT_YET", lists["NOT_YET"])]:
    for n in sorted(names - set(ops)):
        problems.append(f"{n}: in {name} but not an op of runtime/ops.def")
for p in problems:
    print("autograd coverage:", p)
counted = {k: sum(1 for w in places.values() if k in w) for k in ("a rule", "NO_GRADIENT", "NOT_YET", "its family")}
print(f"autograd coverage: {len(ops)} ops: {counted['a rule']} with a rule, {counted['NO_GRADIENT']} without a gradient, "
      f"{counted['NOT_YET']} not yet, {counted['its family']} creation/random/introspection; "
      f"{'FAILED' if problems else 'ok'}")
sys.exit(1 if problems else 0)
