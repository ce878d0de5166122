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
              "SyntaxError", "w = (1 +", ":trace: 'z' is not a jit function (jit functions: hj)", "usage: :mode [interpret|jit]"]
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
    want = ["prologue", "tracing", "lower_to_prims", "functionalize", "cse", "view_adds", "dce", "alias_analysis", "fusion",
            "rematerialize", "buffer_plan"]
    if passes != want:
        problems.append(f":trace hj: traces constructed by {passes}, want {want}:\n{out}")
    if not re.search(r'# kernels of h\n+extern "C" void thn_fusion0\(', out):
        problems.append(f":emit kernels: no thn_fusion0 kernel of h:\n{out}")
    if not re.search(r"tensor\(7\.6372\)\ntime: \d+\.\d{3} ms\n", out):
        problems.append(f":time: want the value, then 'time: N.NNN ms':\n{out}")
    if r.stderr or r.returncode != 0:
        problems.append(f"exit status {r.returncode}, stderr:\n{r.stderr}")
    return problems


class Terminal:
    """thn repl on a pseudo-terminal, HOME a fresh folder."""

    def __init__(self, thn):
        self.home = tempfile.mkdtemp(prefix="thn-repl-home-")
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.chdir(ROOT)
            os.environ["HOME"] = self.home
            os.environ["TERM"] = "xterm"
            os.execv(thn, [thn, "repl"])
        self.out = b""

    def text(self, since=0):
        return self.out[since:].decode(errors="replace")

    def read_until(self, token, timeout=60, since=0):
        end = time.time() + timeout
        while token.encode() not in self.out[since:]:
            if time.time() > end:
                raise TimeoutError(f"waited for {token!r}; the terminal shows:\n{self.text()}")
            ready, _, _ = select.select([self.fd], [], [], 0.5)
            if ready:
                try:
                    self.out += os.read(self.fd, 4096)
                except OSError:
                    break

    def send(self, keys, token):
        """Types keys and waits for token (None: half a second)."""
        # libedit prints the prompt before it puts the terminal in raw mode:
        # a key sent the instant the prompt shows may still be read in
        # cooked mode (where ^D is an end-of-line that the switch drops, and
        # Tab no completion). A person cannot type that fast.
        time.sleep(0.2)
        since = len(self.out)
        os.write(self.fd, keys.encode())
        if token is None:
            time.sleep(0.5)
        else:
            self.read_until(token, since=since)

    def wait(self, timeout=60):
        """The exit status once the REPL ends."""
        end = time.time() + timeout
        while True:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
            if time.time() > end:
                raise TimeoutError(f"the session did not end; the terminal shows:\n{self.text()}")
            try:
                self.read_until("\x00", timeout=0.2)  # keep reading (never matches)
            except TimeoutError:
                pass

    def close(self):
        try:
            os.kill(self.pid, 9)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        shutil.rmtree(self.home, ignore_errors=True)


def check_terminal(thn):
    t = Terminal(thn)
    problems = []
    try:
        t.read_until(">>> ")
        steps = [("def f(a):\n", "... "), ("    return a + 1\n", "... "), ("\n", ">>> "),
                 ("f(1)\n", "2\r\n>>> "), ("1 / 0\n", "ZeroDivisionError"), ("f(41)\n", "42\r\n>>> "),
                 ("x = ones(3)\n", ">>> "),
                 ("x.su\t\t", "x.sum"),           # two Tabs: the list of candidates
                 ("\x03", "KeyboardInterrupt\r\n>>> "),  # Ctrl-C drops the typed input
                 ("while True:\n", "... "), ("    pass\n", "... "), ("\n", None),
                 ("\x03", "KeyboardInterrupt"),    # Ctrl-C stops the loop
                 ("print(f(2))\n", "3\r\n>>> ")]   # and the session goes on
        for keys, token in steps:
            before = len(t.out)
            t.send(keys, token)
            if keys.startswith("x.su"):
                shown = t.text(before)
                if not ("x.sub" in shown and "x.sum" in shown):
                    problems.append(f"completion of x.su lacks x.sub:\n{shown}")
        time.sleep(0.2)
        os.write(t.fd, b"\x04")  # Ctrl-D
        status = t.wait()
        if status != 0:
            problems.append(f"Ctrl-D: exit status {status}, want 0")
        history = os.path.join(t.home, ".thn_history")
        text = open(history).read() if os.path.exists(history) else ""
        for line in ["f(41)", "print(f(2))"]:
            if line not in text:
                problems.append(f"history {history} lacks {line!r}:\n{text}")
    except TimeoutError as e:
        problems.append(str(e))
    t.close()
    return problems


def check_python_habits(thn):
    """exit(), `_`, help/dir/type and a jit function's repr, through a pipe."""
    session = ("1 + 1\n_ * 10\n_\ndef f(a, b=2):\n    \"\"\"Adds b.\"\"\"\n    return a + b\n\nj = jit(f)\nj\n"
               "j(ones(2))\nj(ones(3))\nj\nhelp(j)\nhelp(zeros)\ntype(3)\n'sum' in dir(ones(1))\nexit(5)\nprint('after')\n")
    r = subprocess.run([thn, "repl"], input=session, capture_output=True, text=True, cwd=ROOT, timeout=120)
    want = ("2\n20\n20\n<jit function f (0 traces)>\ntensor([3., 3.])\ntensor([3., 3., 3.])\n"
            "<jit function f (2 traces)>\nHelp on <jit function f (2 traces)>:\n\nf(a, b=2)\n    Adds b.\n"
            "Help on built-in function zeros:\n\nzeros(int... size, *, ScalarType? dtype=None, Device? device=None) -> Tensor\n"
            "<class 'int'>\nTrue\n")
    problems = []
    if r.stdout != want:
        problems.append(f"stdout differs:\n--- want\n{want}--- got\n{r.stdout}")
    if r.returncode != 5 or r.stderr:
        problems.append(f"exit(5): exit status {r.returncode}, want 5; stderr:\n{r.stderr}")
    return problems


def check_terminal_habits(thn):
    """Auto-indent, a pasted function with a blank line inside, a block
    recalled whole by Up, private names hidden from completion until `_` is
    typed, and quit()."""
    t = Terminal(thn)
    problems = []
    try:
        t.read_until(">>> ")
        # Auto-indent: the body's lines are typed without their indentation.
        t.send("def f(a):\n", "... ")
        t.send("if a > 0:\n", "... ")
        t.send("return a + 1\n", "... ")
        t.send("return -a\n", "... ")
        t.send("\n", ">>> ")
        t.send("f(1), f(-5)\n", "(2, 5)\r\n>>> ")
        # Bracketed paste: the blank line does not end the function.
        t.send("\x1b[200~def g(x):\n    y = x * 2\n\n    return y + 1\nprint(g(20))\x1b[201~", None)
        t.send("\n", "41\r\n>>> ")
        # A pasted fragment is as if typed; a pasted indented block after an
        # auto-indent keeps its own indentation.
        t.send("print(", None)
        t.send("\x1b[200~zeros(3)\x1b[201~", None)
        t.send(".sum() + 7)\n", "tensor(7.)\r\n>>> ")
        t.send("for i in range(2):\n", "... ")
        t.send("\x1b[200~    q = i * 10\n    print(q + 1000)\x1b[201~", None)
        t.send("\n", "1010\r\n")
        # A block is one history entry.
        t.send("for i in range(2):\n", "... ")
        t.send("print(i + 100)\n", "... ")
        t.send("\n", "101\r\n>>> ")
        before = len(t.out)
        t.send("\x1b[A", None)  # Up
        t.send("\n", "101\r\n>>> ")
        if t.text(before).count("100") != 2:  # (the recalled code shows, then its output)
            problems.append(f"Up did not recall the whole for block:\n{t.text(before)}")
        t.send("import nn\n", ">>> ")
        before = len(t.out)
        t.send("nn.so\t\t", "nn.softmax")
        t.send("\x03", "KeyboardInterrupt\r\n>>> ")
        before = len(t.out)
        t.send("nn.\t\t", None)
        t.send("\x03", "KeyboardInterrupt\r\n>>> ")
        if "nn._" in t.text(before) or "nn.softmax" not in t.text(before):
            problems.append(f"nn.<Tab>: want nn.softmax and no private name:\n{t.text(before)}")
        before = len(t.out)
        t.send("nn._F\t", "LOATS")  # (nn._FLOATS, the completed tail after a cursor move)
        t.send("\x03", "KeyboardInterrupt\r\n>>> ")
        t.send("quit()\n", None)
        status = t.wait()
        if status != 0:
            problems.append(f"quit(): exit status {status}, want 0")
        history = os.path.join(t.home, ".thn_history")
        text = open(history).read() if os.path.exists(history) else ""
        if "for\\040i\\040in\\040range(2):\\012" not in text and "for i in range(2):\n" not in text:
            problems.append(f"history lacks the for block as one entry:\n{text}")
    except TimeoutError as e:
        problems.append(str(e))
    t.close()
    return problems


if __name__ == "__main__":
    run_checks("repl through", [("a pipe", check_pipe), ("a pipe, :trace/:emit/:time", check_commands),
                ("a terminal", check_terminal), ("a pipe, Python's habits", check_python_habits),
                ("a terminal, IPython's habits", check_terminal_habits)])
