#!/usr/bin/env python3
"""The thn command's user-facing behaviour beyond running programs.

- hints: the one-line `hint:` after a tab in the indentation, a tensor
  branch inside jit and a CUDA tensor where CUDA is unavailable (forced with
  THN_LIBCUDA pointing nowhere), and none after an ordinary error;
- colour: ANSI escapes on a terminal, none with NO_COLOR set or when piped;
- `thn graph`: DOT on stdout, an SVG through Graphviz, the DOT text when dot
  is missing (THN_DOT pointing nowhere), clear errors for an unknown
  function and a bad output name;
- `thn run --emit=ast`: the resolved AST before the run;
- `thn run --device cuda`: creation ops without a device make CUDA tensors
  (against the stand-in driver), and a clear usage error without a driver;
- kernel arguments over an older driver's or NVRTC's 4 KiB limit go
  through device memory (the stand-in driver emulating the kernels,
  reporting CUDA 11.8, or kernels seeing NVRTC 11.8's version macros);
- `thn kernels --arch`: an arch NVRTC does not know gets PTX for the
  newest one below it, an arch below every one a clear error; a driver
  refusing the kernels as too new is named with both CUDA versions;
- `thn fuzz`: usage errors, `--emit` is deterministic per seed, and with a
  kernel compiler that turns float additions into subtractions
  (miscompiling_cxx) it reports the mismatch, reduces the program and writes
  it out, exit 1;
- a runtime error in a compiled trace shows the interpreter's traceback.

Runs with a plain python3: no dependencies.
"""
import os
import re
import pty
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checks import run_checks  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
# The stand-in driver library (tests/cuda/fake_libcuda.cpp), from ctest.
FAKE_CUDA = os.environ.get("THN_FAKE_CUDA", "")
# A driver that does not load.
NO_DRIVER = {"THN_LIBCUDA": "/nonexistent/libcuda.so.1"}
ROOT = os.path.dirname(os.path.dirname(HERE))
ESC = "\x1b["


def run(thn, args, code=None, env=None, cwd=None):
    files = []
    if code is not None:
        fd, path = tempfile.mkstemp(suffix=".thn")
        os.write(fd, code.encode())
        os.close(fd)
        files.append(path)
        args = [a if a != "FILE" else path for a in args]
    e = dict(os.environ)
    e.pop("NO_COLOR", None)
    e.update(env or {})
    r = subprocess.run([thn] + args, capture_output=True, text=True, env=e, cwd=cwd or ROOT, timeout=300)
    for f in files:
        os.unlink(f)
    return r


def on_terminal(thn, args, env):
    """stderr and stdout of thn run on a pseudo-terminal (merged)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(ROOT)
        os.environ.pop("NO_COLOR", None)
        os.environ.update(env)
        os.execv(thn, [thn] + args)
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    return out.decode(errors="replace")


TAB = "if True:\n\tx = 1\n"
BRANCH = "def f(x):\n    if x.sum() > 0:\n        return x\n    return -x\n\njit(f)(ones(2))\n"
CUDA = "x = ones(2, device=\"cuda\")\n"
ORDINARY = "x = ones(2) + ones(3)\n"


def check_hints(thn):
    problems = []
    for name, code, env, want in [("tab", TAB, {}, "hint: thn indents with spaces only"),
                                  ("jit branch", BRANCH, {}, "hint: inside jit, choose between tensors with where"),
                                  ("cuda", CUDA, NO_DRIVER, "hint: run on the CPU"),
                                  ("ordinary", ORDINARY, {}, None)]:
        r = run(thn, ["run", "FILE"], code, env)
        if r.returncode != 1:
            problems.append(f"{name}: exit status {r.returncode}, want 1:\n{r.stderr}")
        lines = r.stderr.rstrip("\n").split("\n")
        if want is None and any(l.startswith("hint:") for l in lines):
            problems.append(f"{name}: a hint where none is due:\n{r.stderr}")
        if want is not None and not lines[-1].startswith(want):
            problems.append(f"{name}: the last line of stderr is not {want!r}...:\n{r.stderr}")
    return problems


def check_colour(thn):
    problems = []
    fd, path = tempfile.mkstemp(suffix=".thn")
    os.write(fd, ORDINARY.encode())
    os.close(fd)
    tty = on_terminal(thn, ["run", path], {})
    if ESC + "1;31m" not in tty or "RuntimeError" not in tty:
        problems.append(f"no colour on a terminal:\n{tty!r}")
    plain = on_terminal(thn, ["run", path], {"NO_COLOR": "1"})
    if ESC in plain or "RuntimeError" not in plain:
        problems.append(f"NO_COLOR=1: escapes or no error:\n{plain!r}")
    piped = run(thn, ["run", path])
    if ESC in piped.stderr or "RuntimeError" not in piped.stderr:
        problems.append(f"piped: escapes or no error:\n{piped.stderr!r}")
    os.unlink(path)
    return problems


def check_graph(thn):
    problems = []
    script = "docs/readme/adam_step.thn"
    r = run(thn, ["graph", script, "--fn", "step"])
    want = open(os.path.join(ROOT, "docs/readme/adam_step.dot")).read()
    if r.returncode != 0 or r.stdout != want:
        problems.append(f"DOT on stdout differs from docs/readme/adam_step.dot (exit {r.returncode}):\n{r.stdout}"
                        f"{r.stderr}")
    if "tensor([" not in r.stderr:
        problems.append(f"the script's own output should go to stderr when DOT goes to stdout:\n{r.stderr}")
    for needle in ["subgraph cluster_0", "label=\"writes\"", "params_0 (updated in place)", "Blue ellipses: inputs",
                   "Yellow boxes: library kernels", "Dashed boxes: views", "add(t9, 1e-08)\""]:
        if needle not in want:
            problems.append(f"docs/readme/adam_step.dot lacks {needle!r}")
    # A result written into a dying intermediate's buffer (out=(t0,) after the
    # matmul) is no write into an input: nothing red.
    reuse = "def f(x, w):\n    return (x @ w).sin() + 1\n\njit(f)(ones(2, 2), ones(2, 2))\n"
    r = run(thn, ["graph", "FILE", "--fn", "f"], reuse)
    if r.returncode != 0 or "#c0392b" in r.stdout or "updated in place" in r.stdout:
        problems.append(f"a buffer reused from an intermediate is drawn as a write into an input:\n{r.stdout}")
    # A write into an input through a view of it is one.
    view = "def f(x):\n    v = x[0:2]\n    v.add_(1.0)\n    return v * 2.0\n\njit(f)(ones(4))\n"
    r = run(thn, ["graph", "FILE", "--fn", "f"], view)
    if r.returncode != 0 or "x (updated in place)" not in r.stdout:
        problems.append(f"a write into an input through a view is not drawn:\n{r.stdout}")
    alias = "def f(x):\n    return x.t(), x.view(-1)\n\njit(f)(ones(2, 3))\n"
    r = run(thn, ["graph", "FILE", "--fn", "f"], alias)
    if r.stdout.count("label=\"alias\"") != 2:
        problems.append(f"two views of x should draw two alias edges:\n{r.stdout}")
    with tempfile.TemporaryDirectory() as tmp:
        svg = os.path.join(tmp, "g.svg")
        r = run(thn, ["graph", script, "--fn", "step", "-o", svg])
        if r.returncode != 0 or not os.path.exists(svg) or "<svg" not in open(svg).read():
            problems.append(f"-o g.svg did not render an SVG (exit {r.returncode}):\n{r.stderr}")
        if f"thn graph: wrote step's execution trace to {svg}" not in r.stderr:
            problems.append(f"-o g.svg: the command does not say where it wrote the picture:\n{r.stderr}")
        png = os.path.join(tmp, "g.png")
        r = run(thn, ["graph", script, "--fn", "step", "-o", png], env={"THN_DOT": "/nonexistent/dot"})
        dot = os.path.join(tmp, "g.dot")
        if r.returncode != 0 or os.path.exists(png) or not os.path.exists(dot) or open(dot).read() != want:
            problems.append(f"without dot, -o g.png should write the DOT text to g.dot (exit {r.returncode}):\n{r.stderr}")
        if "Graphviz's dot is not installed" not in r.stderr:
            problems.append(f"without dot, no message saying so:\n{r.stderr}")
    r = run(thn, ["graph", script, "--fn", "nope"])
    if r.returncode != 1 or "calls no jit function named 'nope' (it has: step)" not in r.stderr:
        problems.append(f"unknown function: exit {r.returncode}:\n{r.stderr}")
    r = run(thn, ["graph", script, "--fn", "step", "-o", "out.jpeg"])
    if r.returncode != 2 or "usage: thn graph" not in r.stderr:
        problems.append(f"bad output name: exit {r.returncode}:\n{r.stderr}")
    return problems


def check_trace_sources(thn):
    """Each bound symbol of the first and the execution trace comes under the
    source line that made it; a stdlib function inlined is named; the
    prologue guards none of the stdlib's own names; an unchanged pass is
    printed as "(unchanged)"."""
    code = ("import nn\n\n\ndef f(x):\n    h = x * 2\n    return nn.softmax(h, -1)\n\n\n"
            "j = jit(f)\nj(ones(2, 3))\nprint(last_prologue(j))\nprint(last_traces(j)[0])\nprint(last_execution_trace(j))\n")
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "src.thn"), "w") as f:
            f.write(code)
        r = subprocess.run([thn, "run", "src.thn", "--print-traces"], capture_output=True, text=True, cwd=d, timeout=120)
    problems = []
    prologue, first, execution = (r.stdout.split("# Constructed by ")[i] for i in (1, 2, 3))
    if "_opmath" in prologue or "_FLOATS" in prologue or "check_name(nn)" not in prologue:
        problems.append(f"the prologue: want check_name(nn) and no stdlib internals:\n{prologue}")
    for name, text in [("first", first), ("execution", execution)]:
        lines = text.split("\n")
        i = next((k for k, l in enumerate(lines) if l == "  # src.thn:5: h = x * 2"), None)
        j = next((k for k, l in enumerate(lines) if l == "  # src.thn:6: return nn.softmax(h, -1)"), None)
        if i is None or j is None or not i < j:
            problems.append(f"{name} trace: want the comments of lines 5 and 6 in order:\n{text}")
            continue
        if not re.match(r"  # nn\.softmax \(stdlib/nn\.thn:\d+\)$", lines[j + 1]):
            problems.append(f"{name} trace: line 6's ops are not named as nn.softmax's:\n{text}")
        # (In the execution trace one fusion comes of both lines: its comments say both.)
        if not re.match(r"  t\d+ = ", lines[i + 1]) and not (name == "execution" and j == i + 1):
            problems.append(f"{name} trace: no op under line 5's comment:\n{text}")
    if not re.search(r"^# Constructed by \w+ \(took [\d.]+ ms\) \(unchanged\)$", r.stderr, re.M):
        problems.append(f"--print-traces: no pass printed as (unchanged):\n{r.stderr}")
    return problems


def check_progress(thn):
    """difftest, kernels and bench draw a progress line on a terminal (and
    clear it), none through a pipe."""
    problems = []
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "p.thn")
        with open(script, "w") as f:
            f.write("def f(x):\n    return x * 3 + 2\n\nprint(jit(f)(ones(2)))\n")
        env = {"XDG_CACHE_HOME": d}
        for args, want in [(["difftest", script, script], "] 1/2 files, 0 differ"),
                           (["kernels", script, "--target", "cpu"], "compiling 1 kernel of f (trace 1) for cpu"),
                           (["bench", os.path.join(HERE, "bench_small.thn")], "] 1/2 workloads done  running sum of a matrix")]:
            shown = on_terminal(thn, args, env)
            if want not in shown or "\r\x1b[K" not in shown:
                problems.append(f"thn {args[0]} on a terminal: no progress line {want!r}:\n{shown!r}")
            r = run(thn, args, env=env)
            if "\x1b[K" in r.stdout + r.stderr:
                problems.append(f"thn {args[0]} through a pipe draws a progress line")
    return problems


def check_difftest_errors(thn):
    """difftest counts the files that end in the same error both ways (an
    expected error agrees; a broken file should not look like a pass)."""
    with tempfile.TemporaryDirectory() as d:
        good, bad = os.path.join(d, "good.thn"), os.path.join(d, "bad.thn")
        with open(good, "w") as f:
            f.write("print(jit(lambda x: x + 1)(ones(2)))\n")
        with open(bad, "w") as f:
            f.write("print(1 +)\n")
        r = run(thn, ["difftest", good, bad], env={"XDG_CACHE_HOME": d})
        want = "difftest: 2 files, 0 differ (1 end in the same error both ways)"
        if r.returncode != 0 or want not in r.stdout:
            return [f"thn difftest good bad: exit {r.returncode}, want {want!r}:\n{r.stdout}{r.stderr}"]
    return []


def check_emit_ast(thn):
    r = run(thn, ["run", "FILE", "--emit=ast"], "def f(a, b=2):\n    return a * b\n\nprint(f(3))\n")
    want = ("Module {}\n"
            "  FunctionDef f(a, b) locals=[a, b]  @1:1\n"
            "    default b:\n"
            "      Constant 2  @1:12\n"
            "    Return  @2:5\n"
            "      Binary *  @2:14\n"
            "        Name a (local 0)  @2:12\n"
            "        Name b (local 1)  @2:16\n"
            "  Expr  @4:1\n"
            "    Call  @4:1\n"
            "      Name print (global)  @4:1\n"
            "      Call  @4:7\n"
            "        Name f (global)  @4:7\n"
            "        Constant 3  @4:9\n"
            "6\n")
    lines = r.stdout.split("\n", 1)
    got = "Module {}\n" + (lines[1] if len(lines) > 1 else "")
    if r.returncode != 0 or got != want:
        return [f"--emit=ast (exit {r.returncode}):\n--- want\n{want}--- got\n{r.stdout}{r.stderr}"]
    # A syntax error: the located message with its source line, exit 1,
    # nothing on stdout (the error's location outlives the parsed text).
    r = run(thn, ["run", "FILE", "--emit=ast"], "x = 1\ny = (2 +\nprint(x)\n")
    if r.returncode != 1 or r.stdout or "SyntaxError" not in r.stderr or "y = (2 +" not in r.stderr:
        return [f"--emit=ast of a syntax error (exit {r.returncode}):\n{r.stdout}{r.stderr}"]
    return []


def check_fuzz(thn):
    errors = []
    # --device cuda where no driver loads: says why, runs nothing.
    for args, text in [(["--count", "0"], "--count must be at least 1"), (["--bogus"], "unknown option or extra argument: --bogus"),
                       (["--device", "cuda"], "--device cuda: CUDA is not available: no NVIDIA driver"),
                       (["--device", "tpu"], "--device takes cpu or cuda"),
                       (["--seed", "x"], "needs a non-negative integer"),
                       (["-j", "100000"], "-j takes at most 256 workers")]:
        r = run(thn, ["fuzz"] + args, env=NO_DRIVER)
        if r.returncode != 2 or text not in r.stderr:
            errors.append(f"thn fuzz {' '.join(args)}: exit {r.returncode}, stderr {r.stderr!r}")
    a, b, c = (run(thn, ["fuzz", "--seed", seed, "--count", "3", "--emit"]) for seed in ("7", "7", "8"))
    if a.returncode != 0 or a.stdout != b.stdout or a.stdout == c.stdout or a.stdout.count("g = jit(") != 3:
        errors.append(f"thn fuzz --emit: not 3 programs, or not the same per seed:\n{a.stdout[:400]}{a.stderr}")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "found")
        env = {"XDG_CACHE_HOME": tmp, "THN_CXX": os.path.join(HERE, "miscompiling_cxx")}
        # Program 3 of seed 1 adds float tensors inside its jit function (a
        # change to the generator may move such a program: pick another).
        r = run(thn, ["fuzz", "--seed", "1", "--start", "3", "--count", "1", "--out", out], env=env)
        reduced = os.path.join(out, "fuzz-1-3.min.thn")
        if r.returncode != 1 or "program 3: output" not in r.stdout or not os.path.exists(reduced):
            errors.append(f"thn fuzz with a miscompiling compiler (exit {r.returncode}):\n{r.stdout}{r.stderr}")
        else:
            with open(os.path.join(out, "fuzz-1-3.thn")) as f:
                original = f.read().count("\n")
            with open(reduced) as f:
                small = f.read().count("\n")
            if not small < original:
                errors.append(f"thn fuzz did not reduce program 3 ({original} -> {small} lines)")
    return errors


def check_device(thn):
    """thn run --device: where creation ops without a device make tensors."""
    errors = []
    if not FAKE_CUDA:
        print("cli --device: skipped (THN_FAKE_CUDA, the stand-in driver, not given)")
        return []
    fake = FAKE_CUDA
    code = "print(randn(2).device, zeros_like(randn(2, device='cpu')).device, tensor([1]).device, arange(2).device)\n"
    for args, env, want in [([], {"THN_LIBCUDA": fake}, "cpu cpu cpu cpu\n"),
                            (["--device", "cpu"], {"THN_LIBCUDA": fake}, "cpu cpu cpu cpu\n"),
                            (["--device", "cuda"], {"THN_LIBCUDA": fake}, "cuda:0 cpu cuda:0 cuda:0\n")]:
        r = run(thn, ["run", "FILE"] + args, code=code, env=env)
        if r.returncode != 0 or r.stdout != want:
            errors.append(f"thn run {' '.join(args)}: exit {r.returncode}, stdout {r.stdout!r}, want {want!r}; {r.stderr}")
    for args, env, text in [(["--device", "cuda"], NO_DRIVER,
                             "thn run: --device cuda: CUDA is not available: no NVIDIA driver"),
                            (["--device", "tpu"], {}, "--device takes cpu or cuda, not 'tpu'")]:
        r = run(thn, ["run", "FILE"] + args, code="print(1)\n", env=env)
        if r.returncode != 2 or text not in r.stderr or r.stdout:
            errors.append(f"thn run {' '.join(args)}: exit {r.returncode}, stdout {r.stdout!r}, stderr {r.stderr!r}")
    return errors


ADAM_8 = """import optim
manual_seed(0)
ps, gs = [randn(5) for _ in range(8)], [randn(5) for _ in range(8)]
ms, vs = [zeros(5) for _ in range(8)], [zeros(5) for _ in range(8)]
cuda = [[t.to("cuda") for t in ts] for ts in (ps, gs, ms, vs)]
def step(p, g, m, v):
    optim.adam_step(p, g, m, v, 1, lr=1e-2)
jit(step)(cuda[0], cuda[1], cuda[2], cuda[3])
step(ps, gs, ms, vs)
print(all([bool(((a.to("cpu") - b).abs() <= 1e-6).all()) for a, b in zip(cuda[0] + cuda[2] + cuda[3], ps + ms + vs)]))
"""


def check_kernel_arguments(thn):
    """Kernel arguments over the driver's limit (4 KiB before CUDA 12.1: an
    Adam step over 8 parameters) go through device memory: under the
    stand-in driver reporting CUDA 11.8 (which then refuses parameters over
    4 KiB, as such a driver does) the step launches as many kernels as under
    12.4 (an eager fallback would launch many more) and is right; so it does
    where NVRTC 11.8 left out the kernels' by-value entry (emulated: the
    version macros the kernels see)."""
    version = run(thn, ["--version"]).stdout
    if "compiled by NVRTC" not in version or not FAKE_CUDA:
        print("cli kernel arguments: skipped (no CUDA backend in this build, or THN_FAKE_CUDA not given)")
        return []
    fake = FAKE_CUDA
    errors, kernels = [], []
    with tempfile.TemporaryDirectory() as cache:
        for driver, nvrtc in (("12040", ""), ("11080", ""), ("12040", "11.8")):
            env = {"THN_LIBCUDA": fake, "LD_PRELOAD": fake, "XDG_CACHE_HOME": cache,
                   "THN_FAKE_CUDA_DRIVER_VERSION": driver}
            if nvrtc:
                env["THN_FAKE_CUDA_NVRTC_VERSION"] = nvrtc
            r = run(thn, ["run", "FILE", "--stats"], code=ADAM_8, env=env)
            k = [line.split("kernels=")[1].split()[0] for line in r.stderr.splitlines() if line.startswith("stats: step")]
            if r.returncode != 0 or r.stdout != "True\n" or not k:
                errors.append(f"driver {driver}: exit {r.returncode}, stdout {r.stdout!r}, stderr {r.stderr[-600:]}")
            kernels += k
    if not errors and len(set(kernels)) != 1:
        errors.append(f"kernels launched under CUDA 12.4, a CUDA 11.8 driver and NVRTC 11.8 differ: {kernels}")
    return errors


def check_arch(thn):
    """PTX for an arch NVRTC does not know; a clear error below its oldest; a
    driver older than NVRTC says so when it refuses the kernels."""
    version = run(thn, ["--version"]).stdout
    if "compiled by NVRTC" not in version or not FAKE_CUDA:
        print("cli --arch: skipped (no CUDA backend in this build, or THN_FAKE_CUDA not given)")
        return []
    errors = []
    quickstart = os.path.join(ROOT, "examples", "quickstart.thn")
    r = run(thn, ["kernels", quickstart, "--target", "cuda", "--arch", "sm_999"])
    if r.returncode != 0 or "compiled for compute_" not in r.stdout + r.stderr:
        errors.append(f"--arch sm_999: exit {r.returncode}, want PTX for an older arch: {r.stdout[-300:]} {r.stderr[-300:]}")
    r = run(thn, ["kernels", quickstart, "--target", "cuda", "--arch", "sm_10"])  # (a usage error, before the script runs)
    if r.returncode != 2 or "cannot compile for sm_10: it supports sm_" not in r.stderr or r.stdout:
        errors.append(f"--arch sm_10: exit {r.returncode}, stderr {r.stderr[-300:]}")
    with tempfile.TemporaryDirectory() as cache:
        env = {"THN_LIBCUDA": FAKE_CUDA, "LD_PRELOAD": FAKE_CUDA, "XDG_CACHE_HOME": cache,
               "THN_FAKE_CUDA_DRIVER_VERSION": "11080", "THN_FAKE_CUDA_REFUSE_IMAGES": "1"}
        r = run(thn, ["run", "FILE"], code='x = ones(2, device="cuda")\nprint(x + 1)\n', env=env)
        if r.returncode != 1 or "the driver supports CUDA 11.8, older than the NVRTC" not in r.stderr:
            errors.append(f"a refusing driver: exit {r.returncode}, stderr {r.stderr[-500:]}")
    return errors


TRACEBACK = """def h(x, i):
    return x.index_select(0, i) * 2
def f(x, i):
    return h(x, i) + 1
g = jit(f)
print(g(randn(4), tensor([1, 2])).shape)
print(g(randn(4), tensor([1, 9])).shape)
"""


def check_traceback(thn):
    """An error raised while a compiled trace runs (a cache hit: the index is
    only checked then) shows the same traceback as the interpreter: every
    Python frame between the call and the op, not just the call site."""
    problems, stderrs = [], []
    for code in (TRACEBACK, TRACEBACK.replace("g = jit(f)", "g = f")):
        r = run(thn, ["run", "FILE"], code)
        if r.returncode != 1 or r.stdout != "torch.Size([2])\n":
            problems.append(f"exit {r.returncode}, stdout {r.stdout!r}, want 1 and one line:\n{r.stderr}")
        frames = [l.strip() for l in r.stderr.splitlines() if l.lstrip().startswith("File ")]
        stderrs.append(frames)
    want = ["line 7, in <module>", "line 4, in f", "line 2, in h"]
    for name, frames in zip(("jit", "eager"), stderrs):
        if [f.split(", ", 1)[-1] for f in frames] != want:
            problems.append(f"{name}: traceback frames {frames}, want {want}")
    return problems


def check_cache_dir(thn):
    """The kernel cache follows XDG: a relative XDG_CACHE_HOME is ignored
    (HOME's .cache then), so no relative path from the environment is used."""
    problems = []
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as cwd:
        code = "def f(x):\n    return x * 2 + 1\nprint(jit(f)(ones(2)))\n"
        r = run(thn, ["run", "FILE"], code, env={"XDG_CACHE_HOME": "relative-cache", "HOME": home}, cwd=cwd)
        kernels = os.path.join(home, ".cache", "thn", "kernels")
        if r.returncode != 0 or r.stdout != "tensor([3., 3.])\n":
            problems.append(f"exit {r.returncode}, stdout {r.stdout!r}:\n{r.stderr}")
        if os.path.exists(os.path.join(cwd, "relative-cache")):
            problems.append("a relative XDG_CACHE_HOME was used")
        if not os.path.isdir(kernels) or not os.listdir(kernels):
            problems.append(f"no kernels in {kernels}")
    return problems


def check_cache_owner(thn):
    """A cache directory others may write into, or another user's (faked by
    THN_TEST_CACHE_FOREIGN=1: a test cannot make one), is not used: thn says
    so, compiles into a private temporary directory, removed at exit, and
    loads nothing from the refused one."""
    problems = []
    code = "def f(x):\n    return x * 5 - 1\nprint(jit(f)(ones(2)))\n"
    for mode, extra, why in [(0o777, {}, "others may write into it"),
                             (0o700, {"THN_TEST_CACHE_FOREIGN": "1"}, "another user's")]:
        with tempfile.TemporaryDirectory() as cache:
            kernels = os.path.join(cache, "thn", "kernels")
            os.makedirs(kernels)
            os.chmod(kernels, mode)
            before = set(os.listdir(tempfile.gettempdir()))
            r = run(thn, ["run", "FILE"], code, env={"XDG_CACHE_HOME": cache, **extra})
            left = {n for n in set(os.listdir(tempfile.gettempdir())) - before if n.startswith("thn-kernels-")}
            if r.returncode != 0 or r.stdout != "tensor([4., 4.])\n":
                problems.append(f"mode {mode:o}: exit {r.returncode}, stdout {r.stdout!r}:\n{r.stderr}")
            if f"not using the kernel cache directory {kernels}" not in r.stderr or why not in r.stderr:
                problems.append(f"mode {mode:o}: no message saying why the cache is not used:\n{r.stderr}")
            if os.listdir(kernels):
                problems.append(f"mode {mode:o}: files written into the refused cache: {os.listdir(kernels)}")
            if left:
                problems.append(f"mode {mode:o}: private directories left behind: {left}")
    return problems


THREADS = """manual_seed(3)
a = randn(4, 512)
b = randn(512, 4096)
c = randn(300, 200)
d = randn(200, 100)
e = randn(6, 64, 96)
f = randn(96, 80)
def g(c, d, e, f):
    return c @ d, e @ f, c.t().t() @ d
for t in [a @ b, a @ b[:, :300]] + list(g(c, d, e, f)) + list(jit(g)(c, d, e, f)):
    print(t.sum().item(), t[0, :3].tolist())
"""


def check_matmul_threads(thn):
    """A matmul's result does not depend on the thread count: the pieces a
    product is cut into (runtime/linalg.cpp) depend on its shape alone, as
    OpenBLAS rounds a block as it rounds a matrix of that shape."""
    outs = {t: run(thn, ["run", "FILE"], THREADS, env={"OMP_NUM_THREADS": t}) for t in ("1", "2", "3", "16")}
    problems = [f"OMP_NUM_THREADS={t}: exit {r.returncode}:\n{r.stderr}" for t, r in outs.items() if r.returncode != 0]
    if not problems and len({r.stdout for r in outs.values()}) != 1:
        problems.append("results differ with the thread count:\n" +
                        "\n".join(f"{t}: {r.stdout}" for t, r in outs.items()))
    return problems


def check_usage_errors(thn):
    """A directory as the script, a device thn does not have and a malformed
    --arch are usage errors (exit 2) that say what is wrong."""
    problems = []
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "p.thn")
        with open(script, "w") as f:
            f.write("print(1)\n")
        cases = [(["run", d], "Is a directory"), (["run", script, "--device", "tpu"], "--device takes cpu or cuda, not 'tpu'"),
                 (["run", script, "--device"], "--device takes cpu or cuda")]
        if FAKE_CUDA:
            cases.append((["kernels", script, "--target", "cuda", "--arch", "sm_80x"],
                          "--arch expects sm_NN (sm_80, sm_90, ...), not 'sm_80x'"))
        for args, want in cases:
            r = subprocess.run([thn] + args, capture_output=True, text=True, timeout=60)
            if r.returncode != 2 or want not in r.stderr:
                problems.append(f"thn {' '.join(args)}: exit {r.returncode}, stderr {r.stderr!r} (want exit 2 and {want!r})")
    return problems


def check_output_errors(thn):
    """Output that cannot be written (stdout on /dev/full) fails the run with
    a message, as Python's does."""
    if not os.path.exists("/dev/full"):
        print("cli output errors: skipped (no /dev/full)")
        return []
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "p.thn")
        with open(script, "w") as f:
            f.write("for i in range(3):\n    print(i)\n")
        with open("/dev/full", "w") as full:
            r = subprocess.run([thn, "run", script], stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    if r.returncode != 1 or "thn: cannot write the output" not in r.stderr:
        return [f"stdout on /dev/full: exit {r.returncode}, stderr {r.stderr!r}"]
    return []


def check_escaped_source(thn):
    """Control characters in source (a terminal escape sequence, a NUL) are
    echoed escaped in errors, never raw to the terminal."""
    problems = []
    for code, want in [('x = "\x1b[31mred" + 1\n', 'x = "\\x1b[31mred" + 1'), ("y = 1 +\x00 2\n", "y = 1 +\\x00 2")]:
        r = run(thn, ["run", "FILE"], code)
        if r.returncode != 1 or want not in r.stderr or "\x1b" in r.stderr or "\x00" in r.stderr:
            problems.append(f"{code!r}: exit {r.returncode}, stderr {r.stderr!r}")
    return problems


def check_compile_timeout(thn):
    """A kernel compiler that never returns is stopped after
    THN_COMPILE_TIMEOUT seconds with a clear error, and leaves no files."""
    with tempfile.TemporaryDirectory() as cache:
        env = {"XDG_CACHE_HOME": cache, "THN_CXX": os.path.join(HERE, "hanging_cxx"), "THN_COMPILE_TIMEOUT": "1"}
        start = time.monotonic()
        try:
            r = run(thn, ["run", "FILE"], "def f(x):\n    return x * 7\nprint(jit(f)(ones(2)))\n", env=env)
        except subprocess.TimeoutExpired:
            return ["thn hung on a compiler that never returns"]
        took = time.monotonic() - start
        kernels = os.path.join(cache, "thn", "kernels")
        left = [n for n in os.listdir(kernels) if n.endswith((".cpp", ".log", ".so"))]
    problems = []
    if r.returncode != 1 or "compiling kernels took more than 1 s" not in r.stderr or "THN_COMPILE_TIMEOUT" not in r.stderr:
        problems.append(f"exit {r.returncode}, stderr {r.stderr!r}")
    if took > 30:
        problems.append(f"the timeout of 1 s took {took:.0f} s")
    if left:
        problems.append(f"files left behind: {left}")
    return problems


def check_cache_damage(thn):
    """No damage to the cache or its compiler is an internal error: a
    directory and a symlink loop where entries should be are rebuilt over,
    an unreadable cache directory is not used, a compiler that writes no
    output or a module without the kernels' functions is a clear error."""
    problems = []
    code = "def f(x):\n    return x * 9 - 2\nprint(jit(f)(ones(2)))\n"
    good = "tensor([7., 7.])\n"
    with tempfile.TemporaryDirectory() as cache:
        env = {"XDG_CACHE_HOME": cache}
        run(thn, ["run", "FILE"], code, env=env)
        kernels = os.path.join(cache, "thn", "kernels")
        for name in os.listdir(kernels):
            path = os.path.join(kernels, name)
            if name.endswith(".so"):
                os.unlink(path)
                os.mkdir(path)
            elif name.endswith(".sum"):
                os.unlink(path)
                os.symlink(path, path)  # a loop
        r = run(thn, ["run", "FILE"], code, env=env)
        if r.returncode != 0 or r.stdout != good:
            problems.append(f"a directory and a symlink loop as entries: exit {r.returncode}, stdout {r.stdout!r}:\n{r.stderr}")
        os.chmod(kernels, 0)
        try:
            r = run(thn, ["run", "FILE"], code, env=env)
        finally:
            os.chmod(kernels, 0o700)
        if r.returncode != 0 or r.stdout != good:  # (as root the directory is still usable)
            problems.append(f"a cache directory of mode 000: exit {r.returncode}, stdout {r.stdout!r}:\n{r.stderr}")
    for cxx, want in [("silent_cxx", "exited with 0 but wrote no"), ("empty_module_cxx", "lack the function")]:
        with tempfile.TemporaryDirectory() as cache:
            r = run(thn, ["run", "FILE"], code, env={"XDG_CACHE_HOME": cache, "THN_CXX": os.path.join(HERE, cxx)})
            if r.returncode != 1 or want not in r.stderr or "internal error" in r.stderr:
                problems.append(f"THN_CXX={cxx}: exit {r.returncode}, stderr {r.stderr!r} (want {want!r})")
    return problems


def check_interrupt(thn):
    """Ctrl-C (SIGINT) while a script runs is Python's KeyboardInterrupt, with
    a traceback and exit status 130, in a loop and while a kernel compiler
    runs (it is stopped)."""
    problems = []
    loop = "def spin():\n    n = 0\n    while True:\n        n += 1\n\nprint('started', flush=True)\nspin()\n"
    compile_ = "print('started', flush=True)\ndef f(x):\n    return x * 11\nprint(jit(f)(ones(2)))\n"
    with tempfile.TemporaryDirectory() as d:
        for name, code, env in [("a loop", loop, {}),
                                ("a compile", compile_, {"THN_CXX": os.path.join(HERE, "hanging_cxx")})]:
            script = os.path.join(d, "p.thn")
            with open(script, "w") as f:
                f.write(code)
            p = subprocess.Popen([thn, "run", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env=dict(os.environ, XDG_CACHE_HOME=d, **env))
            p.stdout.readline()  # 'started'
            time.sleep(0.5)
            p.send_signal(signal.SIGINT)
            try:
                out, err = p.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                problems.append(f"{name}: still running 30 s after SIGINT")
                continue
            if p.returncode != 130 or "KeyboardInterrupt" not in err or "Traceback" not in err:
                problems.append(f"{name}: exit {p.returncode}, stderr {err!r}")
    return problems


def check_hostile_cache(thn):
    """Cache entries replaced by a FIFO (.so) and a symlink to /dev/zero
    (.sum) are misses that the rebuild replaces: no hang, no endless read;
    an entry others may write is not loaded (rebuilt)."""
    problems = []
    code = "def f(x):\n    return x * 3 - 1\nprint(jit(f)(ones(2)))\n"
    with tempfile.TemporaryDirectory() as cache:
        env = {"XDG_CACHE_HOME": cache}
        first = run(thn, ["run", "FILE"], code, env=env)
        kernels = os.path.join(cache, "thn", "kernels")
        planted = 0
        for name in os.listdir(kernels):
            path = os.path.join(kernels, name)
            if name.endswith(".so"):
                os.unlink(path)
                os.mkfifo(path)
                planted += 1
            elif name.endswith(".sum"):
                os.unlink(path)
                os.symlink("/dev/zero", path)
        try:
            again = run(thn, ["run", "FILE"], code, env=env)
        except subprocess.TimeoutExpired:
            return ["thn hung on a FIFO or /dev/zero in the kernel cache"]
        for r in (first, again):
            if r.returncode != 0 or r.stdout != "tensor([2., 2.])\n":
                problems.append(f"exit {r.returncode}, stdout {r.stdout!r}:\n{r.stderr}")
        if not planted:
            problems.append("no kernel entry to replace")
    # An entry with a good checksum that others may write (mode o+w) is not
    # loaded: rebuilt, and the rebuilt one is loaded on the next run.
    with tempfile.TemporaryDirectory() as cache:
        env = {"XDG_CACHE_HOME": cache, "THN_COMPILE": "sync"}
        counts = lambda r: re.findall(r"compiled=\d+ loaded=\d+", r.stderr)
        first = run(thn, ["run", "FILE", "--stats"], code, env=env)
        kernels = os.path.join(cache, "thn", "kernels")
        sos = [os.path.join(kernels, n) for n in os.listdir(kernels) if n.endswith(".so")]
        for so in sos:
            os.chmod(so, 0o777)
        again = run(thn, ["run", "FILE", "--stats"], code, env=env)
        third = run(thn, ["run", "FILE", "--stats"], code, env=env)
        if not sos or counts(first) != ["compiled=1 loaded=0"] or counts(again) != ["compiled=1 loaded=0"] or \
                counts(third) != ["compiled=0 loaded=1"] or any(os.stat(so).st_mode & 0o022 for so in sos):
            problems.append(f"a writable-by-others entry: {sos}, {counts(first)} {counts(again)} {counts(third)}\n{again.stderr}")
    return problems


def check_swapped_cache(thn):
    """An entry copied over another key's (.so and .sum) is not loaded for
    that key: its checksum covers the key, so the kernel is rebuilt."""
    problems = []
    double = "def f(x):\n    return x * 2\nprint(jit(f)(ones(2)))\n"
    negate = "def f(x):\n    return -x\nprint(jit(f)(ones(2)))\n"
    with tempfile.TemporaryDirectory() as cache:
        kernels = os.path.join(cache, "thn", "kernels")
        env = {"XDG_CACHE_HOME": cache}
        run(thn, ["run", "FILE"], double, env=env)
        first = {n for n in os.listdir(kernels) if n.endswith(".so")}
        run(thn, ["run", "FILE"], negate, env=env)
        second = {n for n in os.listdir(kernels) if n.endswith(".so")} - first
        if len(first) != 1 or len(second) != 1:
            return [f"expected one kernel entry per program: {first} {second}"]
        a, b = first.pop()[:-3], second.pop()[:-3]
        for ext in (".so", ".sum"):
            shutil.copyfile(os.path.join(kernels, a + ext), os.path.join(kernels, b + ext))
        r = run(thn, ["run", "FILE"], negate, env=env)
        if r.returncode != 0 or r.stdout != "tensor([-1., -1.])\n":
            problems.append(f"the swapped entry was used: exit {r.returncode}, stdout {r.stdout!r}:\n{r.stderr}")
    return problems


SUGGEST = [
    ("name", "def f(length):\n    return lenght + 1\n\nf(2)\n", "NameError: name 'lenght' is not defined. Did you mean: 'length'?"),
    ("global", "total = 3\nprint(totl)\n", "name 'totl' is not defined. Did you mean: 'total'?"),
    ("import", "print(math.pi)\n", "name 'math' is not defined. Did you forget to import 'math'?"),
    ("self", "class A:\n    def __init__(self):\n        self.n = 2\n    def get(self):\n        return n\n\nA().get()\n",
     "name 'n' is not defined. Did you mean: 'self.n'?"),
    ("method", "ones(2).sume()\n", "AttributeError: 'Tensor' object has no attribute 'sume'. Did you mean: 'sum'?"),
    ("module member", "import nn\nnn.softmx(ones(2), 0)\n", "module 'nn' has no attribute 'softmx'. Did you mean: 'softmax'?"),
    ("attribute", "class P:\n    def __init__(self):\n        self.weight = 1\n\nprint(P().wieght)\n",
     "'P' object has no attribute 'wieght'. Did you mean: 'weight'?"),
    ("list method", "[1].apend(2)\n", "'list' object has no attribute 'apend'. Did you mean: 'append'?"),
    ("op keyword", "ones(2).sum(dimm=0)\n", "sum() got an unexpected keyword argument 'dimm'. Did you mean 'dim'?"),
    ("function keyword", "def f(alpha=1):\n    return alpha\n\nf(alpah=2)\n",
     "f() got an unexpected keyword argument 'alpah'. Did you mean 'alpha'?"),
    ("far off", "print(qqqqqq)\n", "NameError: name 'qqqqqq' is not defined\n"),
    ("local first", "abcdeF = 1\ndef f():\n    abcdeg = 1\n    return abcdef\n\nf()\n", "Did you mean: 'abcdeg'?"),
    ("long name", "a" * 30 + "bcdefghijklmnopqrstu = 1\nprint(" + "a" * 30 + "bcdefghijklmnopqrstv)\n",
     "Did you mean: '" + "a" * 30 + "bcdefghijklmnopqrstu'?"),
]


def check_did_you_mean(thn):
    """CPython 3.12's suggestions for names, attributes, methods, module
    members and keyword arguments (in the report, not in the message an
    `except` sees); PyTorch's NumPy aliases; the torch hint; and the CLI's."""
    problems = []
    for name, code, want in SUGGEST:
        r = run(thn, ["run", "FILE"], code, {"NO_COLOR": "1"})
        if r.returncode != 1 or want not in r.stderr:
            problems.append(f"{name}: exit {r.returncode}, want 1 and {want!r} in:\n{r.stderr}")
    r = run(thn, ["run", "FILE"], "try:\n    ones(2).sume()\nexcept AttributeError as e:\n    print(e)\n")
    if r.stdout != "'Tensor' object has no attribute 'sume'\n":
        problems.append(f"str(e) of an AttributeError: {r.stdout!r}, want the message alone")
    r = run(thn, ["run", "FILE"], "x = tensor([[1.0, 2.0], [3.0, 4.0]])\nprint(x.sum(axis=0, keepdims=True), x.amax(axis=1))\n")
    if r.stdout != "tensor([[4., 6.]]) tensor([2., 4.])\n":
        problems.append(f"axis=/keepdims=: {r.stdout!r} {r.stderr}")
    for code in ["import torch\n", "x = torch.zeros(3)\n"]:
        r = run(thn, ["run", "FILE"], code, {"NO_COLOR": "1"})
        if not r.stderr.rstrip().split("\n")[-1].startswith("hint: thn's names are PyTorch's without the prefix"):
            problems.append(f"{code.strip()}: no torch hint:\n{r.stderr}")
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "p.thn")
        with open(script, "w") as f:
            f.write("print(1)\n")
        for args, want in [(["rnu", script], "thn: unknown command 'rnu'. Did you mean 'run'?"),
                           (["bnech"], "Did you mean 'bench'?"),
                           (["run", script, "--stat"], "unknown option or extra argument: --stat. Did you mean '--stats'?"),
                           (["fuzz", "--sed", "3"], "--sed. Did you mean '--seed'?"),
                           (["run", script, "--emit=trce"], "Did you mean '--emit=trace'?")]:
            r = subprocess.run([thn] + args, capture_output=True, text=True, timeout=60)
            if r.returncode != 2 or want not in r.stderr:
                problems.append(f"thn {' '.join(args)}: exit {r.returncode}, want 2 and {want!r} in:\n{r.stderr}")
    return problems


def check_file_and_exit(thn):
    """`thn FILE.thn [options]` runs the file as `thn run` does; exit()
    and SystemExit give the status, a message status 1, and `except
    Exception` does not catch them."""
    problems = []
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "p.thn")
        with open(script, "w") as f:
            f.write("print(jit(lambda x: x + 1)(ones(2)))\n")
        r = subprocess.run([thn, script, "--stats"], capture_output=True, text=True, timeout=60)
        if r.returncode != 0 or r.stdout != "tensor([2., 2.])\n" or "stats: " not in r.stderr:
            problems.append(f"thn FILE --stats: exit {r.returncode}, {r.stdout!r}, {r.stderr!r}")
    for code, status, err in [("print(1)\nexit(3)\nprint(2)\n", 3, ""), ("exit()\n", 0, ""),
                              ("quit('bye')\n", 1, "bye\n"), ("raise SystemExit(4)\n", 4, ""),
                              ("raise SystemExit(None)\n", 0, ""), ("exit('42')\n", 1, "42\n"), ("exit('')\n", 1, "\n"),
                              ("exit(True)\n", 1, ""), ("exit(code=3)\n", 3, ""), ("exit(-1)\n", 255, ""),
                              ("try:\n    exit(6)\nexcept Exception:\n    print('caught')\n", 6, ""),
                              ("try:\n    exit(7)\nexcept SystemExit:\n    print('caught')\n", 0, "")]:
        r = run(thn, ["FILE"], code)
        if r.returncode != status or r.stderr != err or "2" in r.stdout:
            problems.append(f"{code!r}: exit {r.returncode}, stdout {r.stdout!r}, stderr {r.stderr!r}; want {status}, {err!r}")
    return problems


def check_cache_command(thn):
    """--stats says compiled=1 loaded=0 in a first process and compiled=0
    loaded=1 in a second; `thn cache` counts the entry; --clear removes it."""
    problems = []
    with tempfile.TemporaryDirectory() as d:
        env = {"XDG_CACHE_HOME": d}
        code = "def f(x):\n    return x * 13 + 1\nprint(jit(f)(ones(2)))\n"
        for want in ["compiled=1 loaded=0 compiling=0", "compiled=0 loaded=1 compiling=0"]:
            r = run(thn, ["run", "FILE", "--stats"], code, env)
            if not re.search(r"^stats: f .* " + want + "$", r.stderr, re.M):
                problems.append(f"--stats: want {want!r}:\n{r.stderr}")
        for args, want in [(["cache"], "1 entries (1 host kernel modules, 0 CUDA images)"),
                           (["cache", "--info"], "1 entries"), (["cache", "--clear"], "removed 1 entries"),
                           (["cache"], "0 entries")]:
            r = run(thn, args, env=env)
            if r.returncode != 0 or want not in r.stdout or os.path.join(d, "thn", "kernels") not in r.stdout:
                problems.append(f"thn {' '.join(args)}: exit {r.returncode}, want {want!r} and the folder in:\n{r.stdout}{r.stderr}")
        r = run(thn, ["cache", "--purge"], env=env)
        if r.returncode != 2:
            problems.append(f"thn cache --purge: exit {r.returncode}, want 2")
    return problems


def check_bench(thn):
    """`thn bench FILE` prints a labelled table of the file's workloads, with
    each one's stats; the suite itself is documented in --help."""
    r = run(thn, ["bench", os.path.join(HERE, "bench_small.thn")])
    problems = []
    if r.returncode != 0:
        return [f"thn bench: exit {r.returncode}:\n{r.stdout}{r.stderr}"]
    lines = r.stdout.splitlines()
    head = next((i for i, l in enumerate(lines) if l.startswith("workload")), None)
    if head is None or "interpreter" not in lines[head] or "min_bytes" not in lines[head]:
        return [f"thn bench: no table header:\n{r.stdout}"]
    if "a line of its own" not in r.stdout:
        problems.append(f"thn bench: the file's other output did not pass through:\n{r.stdout}")
    rows = lines[head + 1:]
    want = [("scale a vector", "1", "8.0 kB", "8.0 kB"), ("sum of a matrix", "1", "4.0 MB", "4.0 MB")]
    if len(rows) != len(want):
        return problems + [f"thn bench: want {len(want)} rows:\n{r.stdout}"]
    for row, (title, kernels, moved, least) in zip(rows, want):
        m = re.match(r"^(.+?)\s+([\d.]+) ms\s+([\d.]+) ms\s+([\d.]+)x\s+([\d.]+) ms\s+(\d+)\s+(.+?)\s{2,}(.+)$", row)
        if not m or m[1] != title or m[6] != kernels or m[7].strip() != moved or m[8].strip() != least:
            problems.append(f"thn bench: row {row!r}, want {title!r} with {kernels} kernel, {moved} / {least}")
    bad = 'print("bench foo interp abc jit 1 first 2")\nprint("after")\nprint("bench foo interp 1 jit 1 first x", end="")\n'
    r = run(thn, ["bench", "FILE"], bad)
    if r.returncode != 0 or "after" not in r.stdout or "bench foo interp 1 jit 1 first x" not in r.stdout:
        problems.append(f"thn bench: lines that are not benchmark lines should pass through:\n{r.stdout}{r.stderr}")
    r = run(thn, ["bench", "--help"])
    if r.returncode != 0 or "bench/suite/suite.thn" not in r.stdout:
        problems.append(f"thn bench --help: {r.stdout}")
    return problems


def check_background_compile(thn):
    """By default a new trace runs at once: its fusions run op by op while
    their kernels compile in the background, then on the kernels, with the
    same values (exact arithmetic, so bit for bit); compile_pending says
    when they are ready. A script that ends while a compiler runs (one that
    never returns) exits at once, stops the compiler and leaves no partial
    cache entry. On a terminal a progress line shows while kernels compile
    for over a second; nothing of it when stderr is a pipe."""
    problems = []
    background = {"THN_COMPILE": "background"}
    switch = ("import time\n"
              "def f(x):\n    return (x * 3.0 + 1.0) * 2.0 - x\n"
              "jf = jit(f)\nx = arange(10000.0) / 7\nfirst = jf(x)\nprint(compile_pending(jf))\n"
              "start = time.perf_counter()\n"
              "while compile_pending(jf) > 0 and time.perf_counter() - start < 120:\n    pass\n"
              "second = jf(x)\nprint(compile_pending(jf), bool((first == second).all()), bool((second == f(x)).all()))\n")
    with tempfile.TemporaryDirectory() as cache:
        r = run(thn, ["run", "FILE", "--stats"], switch, env={"XDG_CACHE_HOME": cache, **background})
        if r.returncode != 0 or r.stdout != "1\n0 True True\n" or not re.search(
                r"^stats: f calls=2 .*kernels=1 .*compiled=1 loaded=0 compiling=0$", r.stderr, re.M):
            problems.append(f"switching to the compiled kernel: exit {r.returncode}, stdout {r.stdout!r}, stderr {r.stderr!r}")
    # (eager calls for a second: the compiler has started when the script ends)
    code = ("import time\ndef f(x):\n    return x * 5 + 2\njf = jit(f)\nprint(jf(ones(2)))\nstart = time.perf_counter()\n"
            "while time.perf_counter() - start < 1.5:\n    jf(ones(2))\nprint('done')\n")
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as pids:
        env = {"XDG_CACHE_HOME": cache, "THN_CXX": os.path.join(HERE, "slow_cxx"), "SLOW_CXX_PIDS": pids, **background}
        start = time.monotonic()
        r = run(thn, ["run", "FILE", "--stats"], code, env=env)
        took = time.monotonic() - start
        if r.returncode != 0 or r.stdout != "tensor([7., 7.])\ndone\n" or "compiling=1" not in r.stderr or took > 30:
            problems.append(f"exit with a compile pending: exit {r.returncode} after {took:.0f} s, stdout {r.stdout!r}, "
                            f"stderr {r.stderr!r}")
        time.sleep(0.2)
        started = os.listdir(pids)
        alive = [p for p in started if os.path.exists(f"/proc/{p}")]
        kernels = os.path.join(cache, "thn", "kernels")
        left = [n for n in os.listdir(kernels) if not n.endswith((".lock", ".h"))] if os.path.isdir(kernels) else []
        if not started or alive or left:
            problems.append(f"compilers started {started}, still running {alive}, cache files left {left}")
    slow = ("def f(x):\n    return x * 5 + 3\njf = jit(f)\n"
            "while compile_pending(jf) > 0 or cache_misses(jf) == 0:\n    jf(ones(2))\nprint('ready')\n")
    with tempfile.TemporaryDirectory() as cache:
        env = {"XDG_CACHE_HOME": cache, "THN_CXX": os.path.join(HERE, "slow_cxx"), "SLOW_CXX_SECONDS": "2",
               **background}
        with tempfile.NamedTemporaryFile("w", suffix=".thn", delete=False) as f:
            f.write(slow)
        try:
            out = on_terminal(thn, ["run", f.name], env)
            piped = run(thn, ["run", f.name], env=env)
        finally:
            os.unlink(f.name)
        if "compiling 1 kernel: 0% (eager meanwhile)" not in out or not out.rstrip().endswith("ready"):
            problems.append(f"no progress line on a terminal: {out!r}")
        if piped.returncode != 0 or "compiling" in piped.stderr:
            problems.append(f"a progress line into a pipe: exit {piped.returncode}, stderr {piped.stderr!r}")
    return problems


def check_retrace_reasons(thn):
    """A training step with an optimizer compiles two traces (the first call
    finds no .grad and no optimizer state); --stats says why each was made:
    the check the previous trace failed, and the counters made symbolic."""
    code = ("import optim\nw = randn(4, 3).requires_grad_()\nopt = optim.Adam([w], lr=0.1)\n"
            "def step(w, opt, x):\n    opt.zero_grad()\n    loss = (x @ w).square().mean()\n"
            "    loss.backward()\n    opt.step()\n    return loss\n"
            "jstep = jit(step)\nfor i in range(4):\n    jstep(w, opt, ones(2, 4))\nprint(cache_misses(jstep))\n")
    r = run(thn, ["run", "FILE", "--stats"], code)
    problems = []
    if r.returncode != 0 or r.stdout != "2\n":
        return [f"exit {r.returncode}, stdout {r.stdout!r}, stderr {r.stderr!r}"]
    lines = [l for l in r.stderr.splitlines() if l.startswith("# step trace")]
    want = [r"^# step trace 2 \(call 2 at \S+:12\): check_none\(opt_state_0, None\) failed: now a dict of 4 entries; "
            r"symbolic since the function changes them: opt_state_0_step$"]
    if len(lines) != 1 or not all(re.search(w, l) for w, l in zip(want, lines)):
        problems.append(f"--stats' trace notes: {lines}")
    return problems


if __name__ == "__main__":
    run_checks("cli", [("cache directory", check_cache_dir), ("cache owner", check_cache_owner), ("usage errors", check_usage_errors), ("output errors", check_output_errors), ("escaped source", check_escaped_source), ("compile timeout", check_compile_timeout), ("cache damage", check_cache_damage), ("interrupt", check_interrupt), ("hostile cache entries", check_hostile_cache),
                       ("swapped cache entries", check_swapped_cache), ("hints", check_hints), ("colour", check_colour), ("graph", check_graph),
                ("--emit=ast", check_emit_ast), ("difftest errors", check_difftest_errors), ("fuzz", check_fuzz), ("--device", check_device),
                ("kernel arguments", check_kernel_arguments), ("--arch", check_arch),
                ("traceback", check_traceback), ("did you mean", check_did_you_mean),
                ("thn FILE and exit()", check_file_and_exit), ("thn cache and --stats compiled/loaded", check_cache_command),
                ("thn bench", check_bench), ("traces point at the source", check_trace_sources),
                ("progress lines", check_progress), ("matmul threads", check_matmul_threads),
                ("background compiles", check_background_compile), ("retrace reasons", check_retrace_reasons)])
