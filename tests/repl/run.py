#!/usr/bin/env python3
"""Drives `thn repl` through a pipe and through a pseudo-terminal.

Pipe: tests/repl/session.in goes to stdin; stdout must equal
session.expected (no prompts when stdin is not a terminal) and stderr must
report the session's errors in order, the session going on after each.
Terminal: prompts `>>> ` and `... ` appear, a multi-line def and a call
work, an error leaves the session alive, Ctrl-D leaves with status 0.

Runs with a plain python3: no dependencies.
"""
import argparse
import os
import pty
import select
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def check_pipe(thn):
    with open(os.path.join(HERE, "session.in")) as f:
        r = subprocess.run([thn, "repl"], stdin=f, capture_output=True, text=True, cwd=ROOT, timeout=120)
    problems = []
    want = open(os.path.join(HERE, "session.expected")).read()
    if r.stdout != want:
        problems.append(f"stdout differs:\n--- want\n{want}--- got\n{r.stdout}")
    if "\x1b" in r.stdout or ">>>" in r.stdout:
        problems.append("prompts or escape codes on a pipe")
    errors = ["ZeroDivisionError: division by zero", "unknown command ':nonsense'", "NameError: name 'x' is not defined"]
    at = 0
    for e in errors:
        i = r.stderr.find(e, at)
        if i < 0:
            problems.append(f"stderr lacks (in order) {e!r}:\n{r.stderr}")
        else:
            at = i + len(e)
    if r.returncode != 0:
        problems.append(f"exit status {r.returncode}, want 0")
    return problems


def check_terminal(thn):
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(ROOT)
        os.execv(thn, [thn, "repl"])
    out = b""

    def read_until(token, timeout=60):
        nonlocal out
        end = time.time() + timeout
        while token.encode() not in out:
            if time.time() > end:
                raise TimeoutError(f"waited for {token!r}; the terminal shows:\n{out.decode(errors='replace')}")
            ready, _, _ = select.select([fd], [], [], 0.5)
            if ready:
                try:
                    out += os.read(fd, 4096)
                except OSError:
                    break

    problems = []
    try:
        read_until(">>> ")
        for line, token in [("def f(a):", "... "), ("    return a + 1", "... "), ("", ">>> "),
                            ("f(1)", "2\r\n>>> "), ("1 / 0", "ZeroDivisionError"), ("f(41)", "42\r\n>>> ")]:
            os.write(fd, (line + "\n").encode())
            read_until(token)
        os.write(fd, b"\x04")  # Ctrl-D
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            problems.append(f"Ctrl-D: exit status {os.waitstatus_to_exitcode(status)}, want 0")
    except TimeoutError as e:
        problems.append(str(e))
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--thn", required=True)
    args = ap.parse_args()
    thn = os.path.abspath(args.thn)
    failed = False
    for name, check in [("pipe", check_pipe), ("terminal", check_terminal)]:
        problems = check(thn)
        print(f"repl through a {name}: {'ok' if not problems else 'FAILED'}")
        for p in problems:
            print("  " + p.replace("\n", "\n  "))
        failed |= bool(problems)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
