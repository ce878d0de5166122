#!/usr/bin/env python3
"""The in-place idioms table (issue 39): runs tests/idioms/idioms.thn with
--stats and checks each idiom's cached call against idioms.expected
(`NAME kernels bytes min_bytes writeback_copies`): a row whose kernels,
bytes or write-back copies grew fails, as does one whose min_bytes changed
(the accounting changed: look, then --write). A row that improved is
reported, to be written. `--write` rewrites idioms.expected and the table
of docs/idioms.md from this run. Plain python3.

Usage: run.py --thn build/thn [--write]
"""
import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
FIELDS = ["kernels", "bytes", "min_bytes", "writeback_copies"]


def reasons(source):
    """idiom name -> the `# why:` line just before its def."""
    out, why = {}, None
    for line in source.splitlines():
        if line.startswith("# why:"):
            why = line[len("# why:"):].strip()
        elif line.startswith("def "):
            if why:
                out[line[4:line.index("(")]] = why
            why = None
    return out


def table(rows, why):
    lines = ["| idiom | kernels | bytes | min_bytes | write-back copies | why above min_bytes |",
             "|---|---|---|---|---|---|"]
    for name, v in rows.items():
        reason = "" if v["bytes"] == v["min_bytes"] else why.get(name, "(no reason given)")
        lines.append(f"| `{name}` | {v['kernels']} | {v['bytes']} | {v['min_bytes']} | {v['writeback_copies']} | {reason} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--thn", required=True)
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args()
    env = dict(os.environ, THN_STDLIB=str(ROOT / "stdlib"))
    r = subprocess.run([str(Path(a.thn).resolve()), "run", "idioms.thn", "--stats"], cwd=HERE, capture_output=True,
                       text=True, env=env, timeout=600)
    if r.returncode != 0:
        print(r.stdout + r.stderr)
        return 1
    rows = {}
    for m in re.finditer(r"^stats: (\S+) (.*)$", r.stderr, re.M):
        kv = dict(x.split("=", 1) for x in m.group(2).split())
        rows[m.group(1)] = {f: int(kv[f]) for f in FIELDS}
    why = reasons((HERE / "idioms.thn").read_text())
    expected_path = HERE / "idioms.expected"
    if a.write:
        expected_path.write_text("".join(f"{n} " + " ".join(str(v[f]) for f in FIELDS) + "\n" for n, v in rows.items()))
        doc = ROOT / "docs" / "idioms.md"
        text = doc.read_text()
        start, end = "<!-- table: tests/idioms/run.py --write -->\n", "<!-- end of table -->\n"
        i, j = text.index(start) + len(start), text.index(end)
        doc.write_text(text[:i] + table(rows, why) + text[j:])
        print(f"idioms: wrote {expected_path.name} and docs/idioms.md ({len(rows)} idioms)")
        return 0
    expected = {}
    for line in expected_path.read_text().splitlines():
        name, *vals = line.split()
        expected[name] = dict(zip(FIELDS, map(int, vals)))
    failed, better = [], []
    for name, want in expected.items():
        got = rows.get(name)
        if got is None:
            failed.append(f"{name}: no stats line")
            continue
        for f in ["kernels", "bytes", "writeback_copies"]:
            if got[f] > want[f]:
                failed.append(f"{name}: {f} {got[f]} > {want[f]}")
            elif got[f] < want[f]:
                better.append(f"{name}: {f} {got[f]} < {want[f]}")
        if got["min_bytes"] != want["min_bytes"]:
            failed.append(f"{name}: min_bytes {got['min_bytes']} != {want['min_bytes']}")
        if got["bytes"] != got["min_bytes"] and name not in why:
            failed.append(f"{name}: bytes {got['bytes']} above min_bytes {got['min_bytes']} with no `# why:` line")
    for name in rows.keys() - expected.keys():
        failed.append(f"{name}: not in idioms.expected")
    doc = (ROOT / "docs" / "idioms.md").read_text()
    if table(rows, why) not in doc and not failed and not better:
        failed.append("docs/idioms.md's table is not this run's")
    for f in failed:
        print("FAIL", f)
    for b in better:
        print("BETTER (run with --write)", b)
    print(f"idioms: {len(rows)} idioms, {len(failed)} regressions, {len(better)} improvements")
    return 1 if failed or better else 0


if __name__ == "__main__":
    sys.exit(main())
