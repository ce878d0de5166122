#!/usr/bin/env bash
# The one prepared run for a lent GPU machine (issue 38), after
# ../shared/gpu/bundle here:  bash .gpu/env.sh bash bench/gpu/check.sh
# Writes under $OUT (the device tool's folder; /tmp/thn-gpu-out elsewhere):
#   version.txt     the GPU and what thn sees of it
#   bench_gpu.md    bench/gpu/run.py: issue 38's table against PyTorch eager and torch.compile
#   cuda_gpu.txt    tests/cuda_emulated on the real GPU
#   suite_cuda.md   bench/suite's small sizes on CUDA against PyTorch eager CUDA
#   ncu.txt         Nsight Compute's time, DRAM share, registers and occupancy per reduction kernel
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
step 200 bench_gpu.md python3 bench/gpu/run.py --thn build/thn --python "$py"
step 100 cuda_gpu.txt python3 tests/lang/run.py --thn build/thn --require-gpu --name cuda_gpu tests/cuda_emulated
step 100 suite_cuda.md python3 bench/suite/table.py --thn build/thn --plot 0 --cuda-only --no-torch-compile --python "$py"
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
THN
if command -v ncu >/dev/null; then
  step 60 ncu.txt ncu --clock-control none --csv --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size \
    build/thn run "$XDG_CACHE_HOME/reductions.thn"
else
  echo "ncu is not installed: no per-kernel figures" | tee "$out/ncu.txt"
fi
