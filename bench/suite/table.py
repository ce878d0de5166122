"""Runs suite.thn twice (empty kernel cache, then the cache the first run
left) and torch_suite.py, and prints the markdown table of bench/README.md;
where thn sees a GPU, the same with --device cuda (PyTorch eager CUDA and
torch.compile where the installed PyTorch has them) as a second table with
the share of the HBM peak the jit step reaches; writes suite.png with
gnuplot when asked."""
import argparse
import os
import platform
import re
import subprocess
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
parser = argparse.ArgumentParser()
parser.add_argument("--thn", required=True)
parser.add_argument("--plot", type=int, default=1)
parser.add_argument("--python", default="/usr/bin/python3",
                    help="the Python whose PyTorch is the baseline (default Debian's, with python3-torch)")
parser.add_argument("--cuda-only", action="store_true",
                    help="only the CUDA table (on a lent GPU machine: the CPU table is this machine's)")
parser.add_argument("--no-torch-compile", action="store_true", help="no torch.compile column (it compiles for minutes)")
args = parser.parse_args()

titles = {}
with open(os.path.join(here, "suite.thn")) as f:
    for name, title in re.findall(r'\("(\w+)", "([^"]+)"', f.read()):
        titles[name] = title


def run_thn(cache, device="cpu"):
    # (THN_COMPILE=sync: the compiled kernels are timed, and a cold first call includes their compile)
    env = dict(os.environ, XDG_CACHE_HOME=cache, THN_STDLIB=os.path.join(here, "..", "..", "stdlib"), THN_COMPILE="sync")
    p = subprocess.run([args.thn, "run", os.path.join(here, "suite.thn"), "--stats", "--time-passes", "--device", device],
                       capture_output=True, text=True, env=env, check=True)
    rows = {}
    for m in re.finditer(r"^bench (\w+) interp (\S+) jit (\S+) first (\S+)$", p.stdout, re.M):
        rows[m[1]] = {"interp": float(m[2]), "jit": float(m[3]), "first": float(m[4])}
    for m in re.finditer(r"^stats: (\w+) .* kernels=(\d+) bytes=(\d+) min_bytes=(\d+)", p.stderr, re.M):
        rows[m[1]].update(kernels=int(m[2]), bytes=int(m[3]), min_bytes=int(m[4]))
    for m in re.finditer(r"^time-passes: (\w+): (.*)$", p.stderr, re.M):
        rows[m[1]]["trace_ms"] = sum(float(x) for x in re.findall(r" ([\d.]+) ms;", m[2]))
    return rows


def run_torch(*extra):
    """PyTorch's medians per workload; {} when PyTorch (or its CUDA, or torch.compile) is missing."""
    try:
        p = subprocess.run([args.python, os.path.join(here, "torch_suite.py"), *extra], capture_output=True,
                           text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return {}
    return {m[1]: float(m[2]) for m in re.finditer(r"^bench (\w+) torch (\S+)$", p.stdout, re.M)}


# The GPU thn sees (`thn --version`): its name and HBM peak, or None.
version = subprocess.run([args.thn, "--version"], capture_output=True, text=True).stdout
gpu = re.search(r"^GPU: (.+?) \(.*peak ([\d.]+) GB/s", version, re.M)

cold, warm, torch = {}, {}, {}
if not args.cuda_only:
    with tempfile.TemporaryDirectory() as cache:
        cold = run_thn(cache)
        warm = run_thn(cache)
    torch = run_torch()
elif not gpu:
    raise SystemExit("table.py --cuda-only: thn sees no GPU (`thn --version`)")
if gpu:
    with tempfile.TemporaryDirectory() as cache:
        cuda_cold = run_thn(cache, "cuda")
        cuda_warm = run_thn(cache, "cuda")
    torch_cuda = run_torch("--device", "cuda")
    torch_compiled = {} if args.no_torch_compile else run_torch("--device", "cuda", "--compile")


def cell(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


print(f"Machine: {platform.node() or 'unknown'}, {os.cpu_count()} CPUs, {platform.processor() or platform.machine()}; "
      "times are medians of 10 calls in ms (warm run).\n")
if warm:
    print("| workload | interpreter | jit CPU | PyTorch eager CPU | jit vs interp | jit vs PyTorch | kernels | "
          "bytes / min_bytes | trace + passes (ms) | first call cold / warm (ms) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
data = []
for name, w in warm.items():
    t = torch.get(name)
    ratio_i = w["interp"] / w["jit"]
    ratio_t = None if t is None else t / w["jit"]
    print(f"| {titles.get(name, name)} | {cell(w['interp'])} | {cell(w['jit'])} | {cell(t)} | {ratio_i:.1f}x | "
          f"{'-' if ratio_t is None else f'{ratio_t:.1f}x'} | {w['kernels']} | {w['bytes'] / w['min_bytes']:.2f} | "
          f"{w['trace_ms']:.1f} | {cold[name]['first']:.0f} / {w['first']:.0f} |")
    data.append((name, w["interp"], w["jit"], t if t is not None else 0))

if gpu:
    peak = float(gpu[2])
    print(f"\nGPU: {gpu[1]} (HBM peak {peak:.0f} GB/s from the device attributes); PyTorch columns need a CUDA build "
          "of PyTorch (Debian's has none), torch.compile PyTorch 2.\n")
    print("| workload | thn eager CUDA | thn jit CUDA | PyTorch eager CUDA | torch.compile | jit vs PyTorch | kernels | "
          "bytes / min_bytes | % of HBM peak | first call cold / warm (ms) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, w in cuda_warm.items():
        t, c = torch_cuda.get(name), torch_compiled.get(name)
        hbm = 100 * w["bytes"] / (w["jit"] / 1000) / (peak * 1e9)
        ratio = "-" if t is None else f"{t / w['jit']:.1f}x"
        print(f"| {titles.get(name, name)} | {cell(w['interp'])} | {cell(w['jit'])} | {cell(t)} | {cell(c)} | {ratio} | "
              f"{w['kernels']} | {w['bytes'] / w['min_bytes']:.2f} | {hbm:.0f}% | "
              f"{cuda_cold[name]['first']:.0f} / {w['first']:.0f} |")

if args.plot and data:
    dat = os.path.join(here, "suite.dat")
    with open(dat, "w") as f:
        for name, i, j, t in data:
            f.write(f"{name} {i} {j} {t}\n")
    script = f"""
set terminal pngcairo size 900,420 font ",10" noenhanced
set output "{os.path.join(here, 'suite.png')}"
set title "thn: interpreter vs jit (CPU) vs PyTorch eager CPU, ms per call (log scale, lower is better)"
set style data histograms
set style histogram cluster gap 1
set style fill solid 0.8 border -1
set logscale y
set yrange [0.05:*]
set ylabel "ms"
set key top right
set xtics rotate by -20
plot "{dat}" using 2:xtic(1) title "interpreter", "" using 3 title "jit CPU", "" using 4 title "PyTorch eager CPU"
"""
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    os.remove(dat)
