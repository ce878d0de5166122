#!/usr/bin/env bash
# The one prepared run for a lent GPU machine (issue 38), after
# ../shared/gpu/bundle here:  bash .gpu/env.sh bash bench/gpu/check.sh
# Writes under $OUT (the device tool's folder; /tmp/thn-gpu-out elsewhere):
#   version.txt     the GPU and what thn sees of it
#   bench_gpu.md    bench/gpu/run.py: issue 38's table against PyTorch eager and torch.compile
#   cuda_gpu.txt    tests/cuda_emulated on the real GPU
#   suite_cuda.md   bench/suite's small sizes on CUDA against PyTorch eager CUDA
#   ncu.txt         Nsight Compute's time, DRAM share, registers and occupancy per reduction kernel
#                   (issue 38's sizes, then bench/suite's small ones)
#   overhead.txt    per-call wall time at the suite's small sizes, synchronised each call and
#                   back to back, thn jit against PyTorch eager: host work against GPU work
#   softmax_modes.txt  Nsight Compute's time of softmax 16384 x 8192 in mode 2 (row cache) and mode 5 (online)
#   ncu_detail.txt  stall reasons and occupancy of softmax and the column amax
# (In order of need: a run cut short by the device's time still returns the first files.)
# Each step has its own time limit, so one that hangs cannot eat the others' time.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/thn-gpu-out}
py=${PYTHON:-python3}
mkdir -p "$out"
export XDG_CACHE_HOME=$(mktemp -d)
step() {  # step SECONDS FILE COMMAND...
  local limit=$1 file=$2; shift 2
  echo "== $* (limit ${limit}s)" | tee "$out/$file"
  local t0=$SECONDS
  timeout -k 5 "$limit" "$@" 2>&1 | tee -a "$out/$file"
  echo "== exit ${PIPESTATUS[0]} after $((SECONDS - t0))s" | tee -a "$out/$file"
}
step 20 version.txt bash -c 'nvidia-smi -L; build/thn --version'
step 125 cuda_gpu.txt python3 tests/lang/run.py --thn build/thn --require-gpu --name cuda_gpu tests/cuda_emulated
step 180 bench_gpu.md python3 bench/gpu/run.py --thn build/thn --python "$py"
step 80 suite_cuda.md python3 bench/suite/table.py --thn build/thn --plot 0 --cuda-only --no-torch-compile --python "$py"
cat > "$XDG_CACHE_HOME/reductions.thn" <<'THN'
import nn
x = randn(16384, 8192, device="cuda")
w = randn(8192, device="cuda")
b = randn(8192, device="cuda")
s = randn(16384, 16384, device="cuda")
def softmax(x):
    return nn.softmax(x, -1)
def layer_norm(x, w, b):
    return nn.layer_norm(x, (8192,), w, b)
def sum_rows(s):
    return s.sum(-1)
def amax_cols(s):
    return s.amax(0)
def sum_all(s):
    return s.sum()
jit(softmax)(x)
jit(layer_norm)(x, w, b)
jit(sum_rows)(s)
jit(amax_cols)(s)
jit(sum_all)(s)
xs = randn(4096, 1024, device="cuda")
ss = randn(4096, 4096, device="cuda")
jit(softmax)(xs)
jit(amax_cols)(ss)
jit(sum_rows)(ss)
THN
cat > "$XDG_CACHE_HOME/overhead.thn" <<'THN'
import cuda
import nn
import time
def softmax(x):
    return nn.softmax(x, -1)
def amax_cols(x):
    return x.amax(0)
def sum_rows(x):
    return x.sum(-1)
def add(x):
    return x + 1.0
for name, f, x in [("softmax 4096x1024", softmax, randn(4096, 1024, device="cuda")),
                   ("amax cols 4096x4096", amax_cols, randn(4096, 4096, device="cuda")),
                   ("sum rows 4096x4096", sum_rows, randn(4096, 4096, device="cuda")),
                   ("add 1 float", add, randn(1, device="cuda"))]:
    g = jit(f)
    g(x)
    cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(200):
        g(x)
        cuda.synchronize()
    t1 = time.perf_counter()
    for i in range(200):
        g(x)
    cuda.synchronize()
    t2 = time.perf_counter()
    print(f"thn   {name}: {(t1 - t0) / 200 * 1e6:.1f} us synchronised, {(t2 - t1) / 200 * 1e6:.1f} us back to back")
THN
cat > "$XDG_CACHE_HOME/overhead.py" <<'PY'
import time, torch
fs = [("softmax 4096x1024", lambda x: torch.softmax(x, -1), (4096, 1024)),
      ("amax cols 4096x4096", lambda x: x.amax(0), (4096, 4096)),
      ("sum rows 4096x4096", lambda x: x.sum(-1), (4096, 4096)),
      ("add 1 float", lambda x: x + 1.0, (1,))]
for name, f, shape in fs:
    x = torch.randn(*shape, device="cuda")
    f(x); torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(200):
        f(x); torch.cuda.synchronize()
    t1 = time.perf_counter()
    for i in range(200):
        f(x)
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    print(f"torch {name}: {(t1 - t0) / 200 * 1e6:.1f} us synchronised, {(t2 - t1) / 200 * 1e6:.1f} us back to back")
PY
if command -v ncu >/dev/null; then
  step 60 ncu.txt ncu --clock-control none --csv --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size \
    build/thn run "$XDG_CACHE_HOME/reductions.thn"
else
  echo "ncu is not installed: no per-kernel figures" | tee "$out/ncu.txt"
fi
# Softmax at 16384 x 8192 both ways: the row kept in registers (mode 2,
# the default where it fits) and the max and sum in one sweep (mode 5).
cat > "$XDG_CACHE_HOME/online.thn" <<'THN'
import nn
x = randn(16384, 8192, device="cuda")
def softmax(x):
    return nn.softmax(x, -1)
jit(softmax)(x)
jit(softmax)(x)
THN
if command -v ncu >/dev/null; then
  step 40 softmax_modes.txt bash -c "ncu --clock-control none --csv --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread build/thn run $XDG_CACHE_HOME/online.thn; THN_CUDA_ONLINE_ROWS=1 ncu --clock-control none --csv --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread build/thn run $XDG_CACHE_HOME/online.thn"
fi
step 30 overhead.txt bash -c "build/thn run $XDG_CACHE_HOME/overhead.thn; $py $XDG_CACHE_HOME/overhead.py"
# Where the time goes in the kernels still short of the copy (softmax, the
# column amax at both sizes): stall reasons and occupancy.
if command -v ncu >/dev/null; then
  cat > "$XDG_CACHE_HOME/detail.thn" <<'THN'
import nn
x = randn(16384, 8192, device="cuda")
s = randn(16384, 16384, device="cuda")
ss = randn(4096, 4096, device="cuda")
def softmax(x):
    return nn.softmax(x, -1)
def amax_cols(s):
    return s.amax(0)
jit(softmax)(x)
jit(amax_cols)(s)
jit(amax_cols)(ss)
THN
  step 60 ncu_detail.txt ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section Occupancy \
    --section LaunchStats build/thn run "$XDG_CACHE_HOME/detail.thn"
fi
