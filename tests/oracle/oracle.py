#!/usr/bin/env python3
"""Checks or writes the tests/lang expectations from CPython + PyTorch.

    oracle.py [--write] [FILES...]     (default: all of tests/lang)

Each file runs under cpython_thn.py (/usr/bin/python3 with torch and thn's
prelude). Check mode compares the run with the file's `# expect:` /
`# expect-error:` comments exactly as tests/lang/run.py compares a thn run.
`--write` rewrites the comments from the run: when the file already has one
`# expect:` per printed line they keep their places and get the new text;
otherwise each printed line gets a comment at the statement of the script's
outermost frame that printed it (the print call itself, or the call of the
function that printed; the enclosing statement when that is needed to keep
the comments in output order): an end-of-line comment when it printed one
line, own-line comments after it when it printed several. An `# expect-error:` whose kind and
message fragment still match is kept as written; otherwise it gets the full
first line of the message. Files listed in tests/oracle/skip.txt
(`PATH REASON`, PATH relative to tests/lang) are not run.
"""
import argparse
import ast
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ORACLE_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(ORACLE_DIR.parent / "lang"))
import run as corpus  # noqa: E402  (tests/lang/run.py)

CPYTHON_THN = ORACLE_DIR / "cpython_thn.py"
EXPECT_COMMENT_RE = re.compile(r"\s*#\s*expect(?:-error)?:.*$")


def run_recorded(path):
    """Runs PATH under CPython; returns (stdout lines, record of cpython_thn.py)."""
    with tempfile.TemporaryDirectory() as tmp:
        record_path = Path(tmp) / "record.json"
        env = dict(os.environ, THN_ORACLE_RECORD=str(record_path))
        work = Path(tmp) / "cwd"  # the program's files land here, as tests/lang/run.py's do
        work.mkdir()
        proc = subprocess.run([str(CPYTHON_THN), "run", str(Path(path).resolve())], capture_output=True,
                              text=True, env=env, timeout=600, cwd=work)
        if not record_path.exists():
            raise RuntimeError(f"{path}: cpython_thn.py failed:\n{proc.stderr}")
        record = json.loads(record_path.read_text())
    return [line.rstrip() for line in proc.stdout.splitlines()], record


def statement_chains(source):
    """Maps each line to the statements that contain it, innermost first."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    chains = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            for line in range(node.lineno, node.end_lineno + 1):
                chains.setdefault(line, []).append(node)
    for chain in chains.values():
        chain.sort(key=lambda n: n.end_lineno - n.lineno)
    return chains


def placements(record, chains):
    """Yields, per printed line, (source line, indentation, end-of-line allowed)."""
    previous = 0
    for stack, newlines in record["prints"]:
        candidates = [(node.end_lineno, node.col_offset, i == 0 and not hasattr(node, "body"))
                      for line in reversed(stack) for i, node in enumerate(chains.get(line, []))]
        chosen = next((c for c in candidates if c[0] >= previous), (previous, 0, False))
        previous = chosen[0]
        for _ in range(newlines):
            yield chosen


def error_text(old, new):
    """The `Kind: message` to write: the old one while it still matches."""
    if old and old.line == new["line"] and old.kind == new["kind"] and old.message in new["message"]:
        return f"{old.kind}: {old.message}".rstrip()
    return f"{new['kind']}: {new['message']}".rstrip()


def rewrite_in_place(lines, expected, outputs, error):
    for comment, text in zip(expected.lines, outputs):
        i = comment.line - 1
        lines[i] = re.sub(r"(#\s*expect:).*$", lambda m: (m.group(1) + " " + text).rstrip(), lines[i])
    if error:
        i = expected.error.line - 1
        lines[i] = re.sub(r"(#\s*expect-error:).*$", lambda m: m.group(1) + " " + error, lines[i])
    return lines


def rewrite_placed(lines, outputs, record, error):
    at_line = {}
    chains = statement_chains("\n".join(lines) + "\n")
    for text, (line, col, eol) in zip(outputs, placements(record, chains)):
        at_line.setdefault(line, []).append((text, col, eol))
    error_line = record["error"]["line"] if error else None
    out = []
    for number, text in enumerate(lines, start=1):
        stripped = EXPECT_COMMENT_RE.sub("", text)
        if not stripped.strip() and stripped != text:
            continue
        comments = [(" " * col + f"# expect: {t}").rstrip() for t, col, _ in at_line.get(number, [])]
        single_eol = len(comments) == 1 and at_line[number][0][2]
        if number == error_line:
            out.extend(comments)
            comments = []
            stripped += f"  # expect-error: {error}"
        elif single_eol:
            stripped += "  " + comments.pop().lstrip()
        out.append(stripped)
        out.extend(comments)
    return out


def write_file(path):
    """Rewrites PATH's expectations from CPython; returns a line to report, or None."""
    source = Path(path).read_text()
    outputs, record = run_recorded(path)
    expected = corpus.parse_expectations(source)
    error = record["error"] and error_text(expected.error, record["error"])
    if record["error"] and record["error"]["line"] is None:
        return f"{path}: the error was not raised in this file ({error}); not written"
    lines = source.splitlines()
    same_error = (expected.error.line if expected.error else None) == (
        record["error"]["line"] if record["error"] else None)
    if len(expected.lines) == len(outputs) and same_error and not expected.problems:
        lines = rewrite_in_place(lines, expected, outputs, error)
    else:
        lines = rewrite_placed(lines, outputs, record, error)
    new = "\n".join(lines) + "\n"
    if new == source:
        return None
    Path(path).write_text(new)
    return f"wrote {corpus.display_name(path)}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="rewrite the expectations")
    parser.add_argument("--skip", default=str(ORACLE_DIR / "skip.txt"))
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("files", nargs="*")
    args = parser.parse_args(argv)
    files = [Path(f) for f in args.files] or corpus.discover()
    skips = corpus.read_skip_list(args.skip)
    if not args.write:
        failed = corpus.run_corpus([str(CPYTHON_THN)], files, skips, args.jobs, timeout=600)
        return 1 if failed else 0
    to_write = [f for f in files if Path(f).resolve() not in skips]
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for message in pool.map(write_file, to_write):
            if message:
                print(message)
    return 0


if __name__ == "__main__":
    sys.exit(main())
