#!/usr/bin/env python3
"""Runs the thn language corpus (tests/lang/**/*.thn).

Each test states what `thn run FILE` must do in comments:

  print(x)   # expect: TEXT      one per line of stdout, matched in file order
  # expect: TEXT                 (the comment may also sit on its own line)
  y = f(x)   # expect-error: Kind: message

`# expect-error:` (at most one per file) sits on the line that raises; for an
error raised inside a called function, on the innermost frame's line in the
test file (for one raised in an imported module, thn's traceback shows it). The run must then exit with code 1, and stderr must hold
`FILE:LINE:` for that line and a line where `Kind:` is followed by `message`
(message may be a fragment of the full one; when it is empty, `Kind` alone
is enough). Without it the run must exit with code 0. Lines printed before
the error are still matched; trailing spaces are ignored.

A file whose first line starts with `# helper:` is a module that tests import,
not a test. `skip.txt` lists tests this implementation does not pass yet, one
`PATH REASON` per line (PATH relative to tests/lang); each skip is printed.

Runs with a plain python3: no dependencies.
"""
import argparse
import concurrent.futures
import difflib
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

LANG_DIR = Path(__file__).resolve().parent
EXPECT_RE = re.compile(r"#\s*expect:(?: (.*))?$")
EXPECT_ERROR_RE = re.compile(r"#\s*expect-error:(?: (.*))?$")
HELPER_MARK = "# helper:"


@dataclass
class ExpectedLine:
    text: str
    line: int  # source line of the `# expect:` comment


@dataclass
class ExpectedError:
    kind: str
    message: str
    line: int


@dataclass
class Expectations:
    lines: list = field(default_factory=list)  # [ExpectedLine]
    error: Optional[ExpectedError] = None
    problems: list = field(default_factory=list)  # malformed comments


@dataclass
class RunResult:
    returncode: Optional[int]  # None: timed out
    stdout: str
    stderr: str


def parse_expectations(source):
    """Reads the `# expect:` / `# expect-error:` comments of a test's source."""
    expected = Expectations()
    for number, text in enumerate(source.splitlines(), start=1):
        error = EXPECT_ERROR_RE.search(text)
        if error:
            kind, sep, message = (error.group(1) or "").partition(":")
            if not sep or not kind.strip().isidentifier():
                expected.problems.append(f"line {number}: `# expect-error:` needs `Kind: message`")
            elif expected.error:
                expected.problems.append(f"line {number}: a second `# expect-error:` (one per file)")
            else:
                expected.error = ExpectedError(kind.strip(), message.strip(), number)
            continue
        output = EXPECT_RE.search(text)
        if output:
            expected.lines.append(ExpectedLine((output.group(1) or "").rstrip(), number))
    return expected


def is_helper(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.readline().startswith(HELPER_MARK)


def discover(root=LANG_DIR):
    return sorted(p for p in Path(root).rglob("*.thn") if not is_helper(p))


def display_name(path):
    path = Path(path).resolve()
    try:
        return str(path.relative_to(LANG_DIR))
    except ValueError:
        return str(path)


def read_skip_list(skip_file):
    """Returns {resolved path: reason} from a `PATH REASON` per line file."""
    skips = {}
    if not skip_file or not Path(skip_file).exists():
        return skips
    for number, text in enumerate(Path(skip_file).read_text().splitlines(), start=1):
        text = text.strip()
        if not text or text.startswith("#"):
            continue
        name, _, reason = text.partition(" ")
        path = (LANG_DIR / name).resolve()
        if not path.exists():
            raise SystemExit(f"{skip_file}:{number}: no such test: {name}")
        skips[path] = reason.strip() or "(no reason given)"
    return skips


def run_program(command, path, timeout):
    # Each program runs in an empty folder of its own: files it writes
    # (save_npy, save_file) stay out of the tree and out of other runs' way.
    try:
        with tempfile.TemporaryDirectory(prefix="thn-lang-") as cwd:
            thn = os.path.abspath(command[0]) if os.sep in command[0] else command[0]
            proc = subprocess.run([thn, "run", str(Path(path).resolve())] + command[1:],
                                  capture_output=True, timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired as e:
        return RunResult(None, (e.stdout or b"").decode(errors="replace"),
                         (e.stderr or b"").decode(errors="replace"))
    return RunResult(proc.returncode, proc.stdout.decode(errors="replace"),
                     proc.stderr.decode(errors="replace"))


def stderr_has_error(stderr, kind, message):
    """True when some line holds `kind:` followed by `message` (just `kind` when it is empty).

    Lines holding `expect-error:` are the test's own source, echoed with the
    caret: they do not count.
    """
    head = re.compile(r"(?<![\w.])" + re.escape(kind) + (r":" if message else r"\b"))
    for text in stderr.splitlines():
        if EXPECT_ERROR_RE.search(text):
            continue
        for m in head.finditer(text):
            if message in text[m.end():]:
                return True
    return False


def stderr_has_location(stderr, path, line):
    """True when stderr names `FILE:LINE:`, FILE as given or any path ending in it.

    An error raised in another file (a function of an imported module) is
    located there; then the traceback's last entry for the test file,
    `File "FILE", line LINE`, stands for its location.
    """
    name = Path(path).name
    if re.search(r"(?:^|[\\/\s\"'(])" + re.escape(name) + f":{line}:", stderr, re.M):
        return True
    locations = re.findall(r"^(\S+?):\d+:(?:\d+:)? [A-Za-z_]\w*:", stderr, re.M)
    frames = re.findall(r'File "(?:[^"]*[\\/])?' + re.escape(name) + r'", line (\d+)', stderr)
    elsewhere = any(Path(location).name != name for location in locations)
    return elsewhere and bool(frames) and frames[-1] == str(line)


def indent(text, prefix="    | "):
    return "".join(prefix + line + "\n" for line in text.rstrip("\n").splitlines()) or prefix + "(empty)\n"


def compare(path, expected, result):
    """Returns a report of every difference (empty when the test passes)."""
    report = [f"  {p}\n" for p in expected.problems]
    if result.returncode is None:
        report.append("  timed out\n")
    actual = [line.rstrip() for line in result.stdout.splitlines()]
    wanted = [e.text for e in expected.lines]
    if actual != wanted:
        first = next((i for i, (a, w) in enumerate(zip(actual, wanted)) if a != w),
                     min(len(actual), len(wanted)))
        where = (f"expectation on line {expected.lines[first].line}" if first < len(wanted)
                 else "after the last expectation")
        report.append(f"  stdout differs from output line {first + 1} ({where}):\n")
        diff = difflib.unified_diff(wanted, actual, "expected", "actual", lineterm="", n=2)
        report.extend(f"    {line}\n" for line in diff)
    if result.returncode is not None:
        report.extend(compare_exit(path, expected.error, result))
    return "".join(report)


def compare_exit(path, error, result):
    report = []
    status = (f"killed by signal {-result.returncode}" if result.returncode < 0
              else f"exit code {result.returncode}")
    if error is None:
        if result.returncode != 0:
            report.append(f"  {status}, expected exit code 0; stderr:\n")
            report.append(indent(result.stderr))
        return report
    want = f"{error.kind}: {error.message}".rstrip()
    if result.returncode != 1:
        report.append(f"  {status}, expected exit code 1 ({want} on line {error.line})\n")
    if not stderr_has_error(result.stderr, error.kind, error.message):
        report.append(f"  stderr lacks `{want}`\n")
    if not stderr_has_location(result.stderr, path, error.line):
        report.append(f"  stderr lacks the location `{Path(path).name}:{error.line}:`\n")
    if report:
        report.append("  stderr:\n")
        report.append(indent(result.stderr))
    return report


def check_file(command, path, timeout):
    source = Path(path).read_text(encoding="utf-8", errors="replace")
    return compare(path, parse_expectations(source), run_program(command, path, timeout))


def run_corpus(command, files, skips, jobs, timeout, out=sys.stdout, name="lang corpus"):
    """Checks every file; prints a report per failing file and a summary. Returns the failure count."""
    to_run = [f for f in files if Path(f).resolve() not in skips]
    for f in files:
        if Path(f).resolve() in skips:
            print(f"SKIP {display_name(f)}: {skips[Path(f).resolve()]}", file=out)
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        reports = pool.map(lambda f: check_file(command, f, timeout), to_run)
        for path, report in zip(to_run, reports):
            if report:
                failed += 1
                print(f"FAIL {display_name(path)}\n{report}", end="", file=out)
    skipped = len(files) - len(to_run)
    print(f"{name}: {len(to_run) - failed} passed, {failed} failed, {skipped} skipped"
          f" (of {len(files)})", file=out)
    return failed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--thn", required=True, help="the thn executable")
    parser.add_argument("--thn-arg", action="append", default=[], metavar="ARG",
                        help="extra argument after `thn run FILE` (e.g. --interpret); repeatable")
    parser.add_argument("--name", default="lang corpus", help="the corpus's name in the summary")
    parser.add_argument("--skip", default=str(LANG_DIR / "skip.txt"),
                        help="skip list (default: tests/lang/skip.txt)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=120, help="seconds per test")
    parser.add_argument("--require-gpu", action="store_true",
                        help="run only where `thn --version` sees a GPU; else say why and exit 77 (skipped)")
    parser.add_argument("files", nargs="*", help="tests or folders of tests to run (default: all of tests/lang)")
    args = parser.parse_args(argv)
    if not os.access(args.thn, os.X_OK) or os.path.isdir(args.thn):
        parser.error(f"--thn {args.thn}: not an executable file")
    if args.require_gpu:
        version = subprocess.run([args.thn, "--version"], capture_output=True, text=True).stdout
        gpu = re.search(r"^GPU: (.*)$", version, re.M)
        if not gpu or gpu[1].startswith("none"):
            why = gpu[1][len("none"):].strip()[1:-1] if gpu else "thn --version names none"
            print(f"{args.name}: skipped: no GPU ({why})")
            return 77  # ctest's SKIP_RETURN_CODE: listed as not run
    files = [f for p in map(Path, args.files) for f in (discover(p) if p.is_dir() else [p])] or discover()
    command = [args.thn] + args.thn_arg
    failed = run_corpus(command, files, read_skip_list(args.skip), args.jobs, args.timeout, name=args.name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
