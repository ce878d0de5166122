#!/usr/bin/env python3
"""Drives `thn repl` through a pipe and through a pseudo-terminal.

Pipe: tests/repl/session.in goes to stdin; stdout must equal
session.expected (no prompts when stdin is not a terminal; pass times
normalised) and stderr must report the session's errors in order, the
session going on after each. Commands: :trace, :emit kernels and :time
print what they promise (checked by their shape, not byte for byte).
Terminal: prompts `>>> ` and `... ` appear, a multi-line def and a call
work, an error leaves the session alive, Tab completes `x.su` to a list
holding x.sum and x.sub, Ctrl-C cancels typed input and a running loop
(the session lives on), the history is written to $HOME/.thn_history, and
Ctrl-D leaves with status 0.

Runs with a plain python3: no dependencies.
"""
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checks import run_checks  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def check_pipe(thn):
    with open(os.path.join(HERE, "session.in")) as f:
        r = subprocess.run([thn, "repl"], stdin=f, capture_output=True, text=True, cwd=ROOT, timeout=120)
    problems = []
    want = open(os.path.join(HERE, "session.expected")).read()
    got = re.sub(r"took [0-9.]+ ms", "took X ms", r.stdout)
    if got != want:
        problems.append(f"stdout differs:\n--- want\n{want}--- got\n{got}")
    if "\x1b" in r.stdout or ">>>" in r.stdout:
        problems.append("prompts or escape codes on a pipe")
    errors = ["ZeroDivisionError: division by zero", "unknown command ':nonsense'", "NameError: name 'x' is not defined",
              ":trace: hj has not been called yet", ":emit trace: no jit function ran in 'z + 1'",
              ":trace: 'z' is not a jit function (jit functions: hj)", "usage: :mode [interpret|jit]"]
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


def check_commands(thn):
    session = "def h(t):\n    return (t * 2).sin() + 1\n\nhj = jit(h)\nhj(ones(2))\n:trace hj\n" \
              ":emit kernels hj(ones(3))\n:time hj(ones(4)).sum()\n"
    r = subprocess.run([thn, "repl"], input=session, capture_output=True, text=True, cwd=ROOT, timeout=120)
    problems = []
    out = r.stdout
    passes = re.findall(r"# Constructed by (\w+)", out)
    want = ["prologue", "tracing", "lower_to_prims", "functionalize", "cse", "dce", "alias_analysis", "fusion",
            "buffer_plan"]
    if passes != want:
        problems.append(f":trace hj: traces constructed by {passes}, want {want}:\n{out}")
    if not re.search(r'# kernels of h\n+extern "C" void thn_fusion0\(', out):
        problems.append(f":emit kernels: no thn_fusion0 kernel of h:\n{out}")
    if not re.search(r"tensor\(7\.6372\)\ntime: \d+\.\d{3} ms\n", out):
        problems.append(f":time: want the value, then 'time: N.NNN ms':\n{out}")
    if r.stderr or r.returncode != 0:
        problems.append(f"exit status {r.returncode}, stderr:\n{r.stderr}")
    return problems


def check_terminal(thn):
    home = tempfile.mkdtemp(prefix="thn-repl-home-")
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(ROOT)
        os.environ["HOME"] = home
        os.environ["TERM"] = "xterm"
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
        steps = [("def f(a):\n", "... "), ("    return a + 1\n", "... "), ("\n", ">>> "),
                 ("f(1)\n", "2\r\n>>> "), ("1 / 0\n", "ZeroDivisionError"), ("f(41)\n", "42\r\n>>> "),
                 ("x = ones(3)\n", ">>> "),
                 ("x.su\t\t", "x.sum"),           # two Tabs: the list of candidates
                 ("\x03", "KeyboardInterrupt\r\n>>> "),  # Ctrl-C drops the typed input
                 ("while True:\n", "... "), ("    pass\n", "... "), ("\n", None),
                 ("\x03", "KeyboardInterrupt"),    # Ctrl-C stops the loop
                 ("print(f(2))\n", "3\r\n>>> ")]   # and the session goes on
        for keys, token in steps:
            before = len(out)
            # libedit prints the prompt before it puts the terminal in raw
            # mode: a key sent the instant the prompt shows may still be read
            # in cooked mode (where ^D is an end-of-line that the switch
            # drops, and Tab no completion). A person cannot type that fast.
            time.sleep(0.2)
            os.write(fd, keys.encode())
            if token is None:
                time.sleep(0.5)  # let the loop start
            else:
                read_until(token)
            if keys.startswith("x.su"):
                shown = out[before:].decode(errors="replace")
                if not ("x.sub" in shown and "x.sum" in shown):
                    problems.append(f"completion of x.su lacks x.sub:\n{shown}")
        time.sleep(0.2)
        os.write(fd, b"\x04")  # Ctrl-D
        end = time.time() + 60
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.time() > end:
                raise TimeoutError(f"Ctrl-D did not end the session; the terminal shows:\n"
                                   f"{out.decode(errors='replace')}")
            try:
                read_until("\x00", timeout=0.2)  # keep reading (never matches)
            except TimeoutError:
                pass
        if os.waitstatus_to_exitcode(status) != 0:
            problems.append(f"Ctrl-D: exit status {os.waitstatus_to_exitcode(status)}, want 0")
        history = os.path.join(home, ".thn_history")
        text = open(history).read() if os.path.exists(history) else ""
        for line in ["f(41)", "print(f(2))"]:
            if line not in text:
                problems.append(f"history {history} lacks {line!r}:\n{text}")
    except TimeoutError as e:
        problems.append(str(e))
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    shutil.rmtree(home, ignore_errors=True)
    return problems


if __name__ == "__main__":
    run_checks("repl through", [("a pipe", check_pipe), ("a pipe, :trace/:emit/:time", check_commands),
                ("a terminal", check_terminal)])
