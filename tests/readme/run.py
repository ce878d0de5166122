#!/usr/bin/env python3
"""Runs every code block of README.md (or of the --readme file: docs/language.md).

Each fenced block is preceded by an HTML comment that says how it is tested:

  <!-- test: run [ARGS] -->      a thn program: `thn run example.thn ARGS` must
                                 exit 0; the `<!-- output -->` block after it,
                                 if any, is its exact stdout
  <!-- test: error -->           a thn program that must exit 1; the output
                                 block is its exact stderr
  <!-- test: repl -->            a REPL transcript: lines after `>>> ` and
                                 `... ` are fed to `thn repl` through a pipe,
                                 the other lines are its exact stdout
  <!-- test: excerpt FILE ARGS -->  the block's lines appear, in order and
                                 contiguous, in what `thn run FILE ARGS`
                                 prints (stdout then stderr); a line `...`
                                 (indented or not) skips any number of lines
  <!-- test: shell -->           `$ COMMAND` lines run by bash in a scratch
                                 folder that links to the repository's files
                                 (so what they write stays out of the tree;
                                 `build/thn` is the thn under test); the lines
                                 under one are its exact stdout
  <!-- test: ci -->              the Quick start commands: each script exists
                                 and is executable, and .ci/run runs
                                 scripts/test (CI itself runs them)
  <!-- test: build -->           the plain CMake build: each cmake command is
                                 one scripts/setup runs (so CI builds that
                                 way), ctest is what scripts/test runs, and
                                 a `build/thn FILE` names a file there is
  <!-- figure -->                a picture, not code

A block with no such comment fails the test. `took N ms` times and the
temporary file's folder are normalised. `--write` replaces the output
blocks of `run` and `error` programs by what they print now (read the
diff before committing it). Runs with a plain python3.
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DIRECTIVE = re.compile(r"^<!-- (test: [^>]*|output|figure) -->$")


def blocks(text):
    """(directive or None, info string, body, line number) per fenced block."""
    lines = text.split("\n")
    out, i, pending = [], 0, None
    while i < len(lines):
        line = lines[i]
        m = DIRECTIVE.match(line.strip())
        if m:
            pending = m.group(1)
        elif line.startswith("```"):
            info, start, body = line[3:].strip(), i + 1, []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            out.append((pending, info, "".join(b + "\n" for b in body), start))  # (an empty block: "")
            pending = None
        elif line.strip():
            pending = None if not line.startswith("<!--") else pending
        i += 1
    return out


def normalise(s):
    return re.sub(r"took [0-9.]+ ms", "took X ms", s)


def diff(want, got):
    return f"--- want\n{want}--- got\n{got}"


class Checker:
    def __init__(self, thn):
        self.thn = thn
        self.tmp = tempfile.mkdtemp(prefix="thn-readme-")
        self.printed = None  # what the last run or error program printed (its output block's text)

    def run_program(self, code, args, expect_rc):
        path = os.path.join(self.tmp, "example.thn")
        with open(path, "w") as f:
            f.write(code)
        r = subprocess.run([self.thn, "run", "example.thn"] + args, capture_output=True, text=True, cwd=self.tmp,
                           timeout=300, env=dict(os.environ, NO_COLOR="1"))
        problems = []
        if r.returncode != expect_rc:
            problems.append(f"exit status {r.returncode}, want {expect_rc}; stderr:\n{r.stderr}")
        return r, problems

    def check(self, directive, body, output):
        kind, _, rest = directive.partition(":")
        words = shlex.split(rest.strip())
        what = words[0] if words else ""
        args = words[1:]
        if directive == "figure":
            return []
        if what == "run":
            r, problems = self.run_program(body, args, 0)
            self.printed = r.stdout
            if output is not None and normalise(r.stdout) != normalise(output):
                problems.append("stdout differs:\n" + diff(output, r.stdout))
            return problems
        if what == "error":
            r, problems = self.run_program(body, args, 1)
            self.printed = r.stderr
            if output is None:
                problems.append("an error block needs the expected stderr after it")
            elif r.stderr != output:
                problems.append("stderr differs:\n" + diff(output, r.stderr))
            return problems
        if what == "repl":
            inputs, want = [], []
            for line in body.rstrip("\n").split("\n"):
                if line.startswith(">>> ") or line.startswith("... ") or line in (">>>", "..."):
                    inputs.append(line[4:])
                else:
                    want.append(line)
            r = subprocess.run([self.thn, "repl"], input="\n".join(inputs) + "\n", capture_output=True, text=True,
                               cwd=ROOT, timeout=300)
            want_text = "\n".join(want) + "\n"
            problems = []
            if normalise(r.stdout) != normalise(want_text):
                problems.append("REPL stdout differs:\n" + diff(want_text, r.stdout))
            if r.stderr:
                problems.append(f"REPL stderr:\n{r.stderr}")
            return problems
        if what == "excerpt":
            # (An empty kernel cache of its own: --stats' compiled=1 loaded=0 is then what it prints.)
            env = dict(os.environ, XDG_CACHE_HOME=tempfile.mkdtemp(dir=self.tmp))
            r = subprocess.run([self.thn, "run"] + args, capture_output=True, text=True, cwd=ROOT, timeout=300, env=env)
            problems = [] if r.returncode == 0 else [f"exit status {r.returncode}:\n{r.stderr}"]
            got = normalise(r.stdout + r.stderr).split("\n")
            want = normalise(body).rstrip("\n").split("\n")
            if not excerpt_matches(want, got):
                problems.append(f"`thn run {' '.join(args)}` does not print the excerpt:\n" +
                                diff("\n".join(want) + "\n", "\n".join(got)))
            return problems
        if what == "shell":
            problems = []
            scratch = tempfile.mkdtemp(dir=self.tmp)
            for name in os.listdir(ROOT):
                if name not in ("build", ".git"):
                    os.symlink(os.path.join(ROOT, name), os.path.join(scratch, name))
            for cmd, want in shell_commands(body):
                r = subprocess.run(cmd.replace("build/thn", shlex.quote(self.thn)), shell=True, capture_output=True,
                                   text=True, cwd=scratch, timeout=300, executable="/bin/bash")
                if r.returncode != 0:
                    problems.append(f"`{cmd}`: exit status {r.returncode}:\n{r.stderr}")
                elif normalise(r.stdout) != normalise(want):
                    problems.append(f"`{cmd}` stdout differs:\n" + diff(want, r.stdout))
            return problems
        if what == "ci":
            problems = []
            for line in body.strip().split("\n"):
                script = line.split()[0]
                if not os.access(os.path.join(ROOT, script), os.X_OK):
                    problems.append(f"{script} is not an executable script")
            if "scripts/test" not in open(os.path.join(ROOT, ".ci", "run")).read():
                problems.append(".ci/run does not run scripts/test")
            return problems
        if what == "build":
            problems = []
            setup = open(os.path.join(ROOT, "scripts", "setup")).read()
            setup = setup.replace('"$root"', ".").replace('"$build"', "build").replace('"${THN_BUILD_TYPE:-Release}"', "Release")
            setup = setup.replace('-j"$(nproc)"', "-j")
            setup_lines = {l.strip() for l in setup.split("\n")}
            for line in body.strip().split("\n"):
                words = line.split()
                if words[0] == "cmake" and line.strip() not in setup_lines:
                    problems.append(f"`{line}` is not a command scripts/setup runs")
                elif words[0] == "ctest" and "ctest" not in open(os.path.join(ROOT, "scripts", "test")).read():
                    problems.append("scripts/test does not run ctest")
                elif words[0] == "build/thn" and not os.path.isfile(os.path.join(ROOT, words[1])):
                    problems.append(f"`{line}`: there is no {words[1]}")
                elif words[0] not in ("cmake", "ctest", "build/thn"):
                    problems.append(f"`{line}`: not a build command")
            return problems
        return [f"unknown directive <!-- {directive} -->"]


def excerpt_matches(want, got):
    """Whether want (with `...` gap lines) matches a contiguous run of got."""
    def match_from(wi, gi):
        while wi < len(want):
            if want[wi].strip() == "...":
                return any(match_from(wi + 1, g) for g in range(gi, len(got) + 1))
            if gi >= len(got) or got[gi] != want[wi]:
                return False
            wi, gi = wi + 1, gi + 1
        return True
    return any(match_from(0, g) for g in range(len(got)))


def shell_commands(body):
    cmds = []
    for line in body.rstrip("\n").split("\n"):
        if line.startswith("$ "):
            cmds.append([line[2:], ""])
        elif cmds:
            cmds[-1][1] += line + "\n"
    return [(c, w) for c, w in cmds]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--thn", required=True)
    ap.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    ap.add_argument("--write", action="store_true", help="rewrite run/error output blocks with what they print")
    args = ap.parse_args()
    checker = Checker(os.path.abspath(args.thn))
    text = open(args.readme).read()
    found = blocks(text)
    rewrites = []  # (first line, line count, new text) of output blocks
    failed, ran = 0, 0
    i = 0
    while i < len(found):
        directive, info, body, line = found[i]
        output, output_at = None, None
        if i + 1 < len(found) and found[i + 1][0] == "output":
            output, output_at = found[i + 1][2], found[i + 1][3]
            i += 1
        i += 1
        if directive is None or directive == "output":
            problems = [f"a code block with no <!-- test: ... --> comment above it (or an output block with no "
                        f"program before it)"]
        else:
            checker.printed = None
            problems = checker.check(directive, body, output)
            ran += 1
            if args.write and problems and output is not None and checker.printed is not None:
                rewrites.append((output_at, output.count("\n"), checker.printed))
                continue
        if problems:
            failed += 1
            print(f"{os.path.basename(args.readme)}:{line}: FAILED ({directive or 'no directive'})")
            for p in problems:
                print("  " + p.replace("\n", "\n  "))
    if rewrites:
        lines = text.split("\n")
        for at, n, new in sorted(rewrites, reverse=True):
            lines[at:at + n] = (new[:-1] if new.endswith("\n") else new).split("\n")
        open(args.readme, "w").write("\n".join(lines))
        print(f"readme: rewrote {len(rewrites)} output blocks of {args.readme}")
    print(f"readme: {ran} blocks run, {failed} failed")
    shutil.rmtree(checker.tmp, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
