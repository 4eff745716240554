#!/usr/bin/env bash
# Eighth session, calls 1 and 3 (one GPU: nvidia-h100-x1, no H200 could be started): summing
# passes on several ranks. Two ranks share the one GPU (parallel.share_gpus; the two-GPU kinds
# were withheld), under MPS from section 2 on (call 1 ran without it: the two processes took the
# GPU in turns of milliseconds, 4-7 ms per step); process grid [1,2], since the cost model splits
# the benchmark along x, where the CUDA summing pass does not apply. That shows what a pass saves
# in host round trips (each sweep's residual read back and all-reduced with MPI) and exchanges,
# not what two GPUs gain. From the repository root on the GPU host after
# `source .gpu-host/env.sh`; gridsim is this build, gridsim-before a0b8dd8. Everything under $1:
# tests.log, timing.txt (name, binary, ranks, us per step, k, sums in passes, x copy).
# SKIP_TESTS=1 skips section 1.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
j=inputs/bench_jacobi2d.toml
h=inputs/bench_heat3d.toml

# 1. Bitwise: one rank, and two ranks split along y (staged and ipc), k = 2, 3, 5, 8, auto.
if [ -z "${SKIP_TESTS:-}" ]; then
    timeout 300 mpirun -np 2 gpu_backend_test --gtest_filter='GpuSummingPasses*' >"$out/tests.log" 2>&1
    echo "tests rc $?" >>"$out/summary.txt"
fi

one() {  # NAME BIN NP DECK [--set ...]
    local name=$1 bin=$2 np=$3 deck=$4
    shift 4
    mpirun -np "$np" "$bin" run "$deck" --quiet "$@" --report "$out/r.json" >"$out/run.log" 2>&1
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(sys.argv[2], sys.argv[3], sys.argv[4], "%.2f" % (1e6 * r["time_per_step_s"]), r["time_block"],
      r.get("sums_in_passes"), "%.3f" % r["bandwidth_ratio"])' \
        "$out/r.json" "$name" "$bin" "$np" >>"$out/timing.txt" 2>/dev/null ||
        echo "$name $bin $np FAILED $(tail -1 "$out/run.log")" >>"$out/timing.txt"
    rm -f "$out/r.json"
}
steps() { local s=$((20000000000 / ($1 * $2))); ((s < 400)) && s=400; ((s > 20000)) && s=20000; echo $s; }
share=(--set parallel.share_gpus=true --set parallel.backend='"cuda"' --set parallel.process_grid=[1,2])
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d
for rep in 1 2; do
    # 2. Two ranks on the one GPU (MPS), the residual every sweep.
    for n in 1024 2048 4096 8192; do
        g=(--set "grid.cells=[$n,$n]" --set time.steps=$(steps $n $n) --set time.norm_every=1 "${share[@]}" --set parallel.transport='"ipc"')
        for k in 1 2 3 4; do one "j$n-np2-k$k" gridsim 2 $j "${g[@]}" --set parallel.time_block=$k; done
        one "j$n-np2-auto" gridsim 2 $j "${g[@]}"
        one "j$n-np2-auto" gridsim-before 2 $j "${g[@]}"
    done
    for n in 2048 4096; do
        g=(--set "grid.cells=[$n,$n]" --set time.steps=$(steps $n $n) --set time.norm_every=1 "${share[@]}" --set problem.precision='"double"' --set parallel.transport='"ipc"')
        for k in 1 3; do one "j$n-double-np2-k$k" gridsim 2 $j "${g[@]}" --set parallel.time_block=$k; done
        one "j$n-double-np2-auto" gridsim 2 $j "${g[@]}"
        one "j$n-double-np2-auto" gridsim-before 2 $j "${g[@]}"
    done
    g=(--set "grid.cells=[2048,2048]" --set time.steps=$(steps 2048 2048) --set time.norm_every=1 "${share[@]}" --set parallel.transport='"staged"')
    for k in 1 3; do one "j2048-staged-np2-k$k" gridsim 2 $j "${g[@]}" --set parallel.time_block=$k; done
    one "j2048-staged-np2-auto" gridsim 2 $j "${g[@]}"
done
echo quit | nvidia-cuda-mps-control
sleep 2
for rep in 1 2; do
    # 3. One rank: unchanged.
    for n in 4096 16384; do
        g=(--set "grid.cells=[$n,$n]" --set time.steps=$(steps $n $n) --set time.norm_every=1)
        one "j$n-np1-auto" gridsim 1 $j "${g[@]}"
        one "j$n-np1-auto" gridsim-before 1 $j "${g[@]}"
    done
    # 4. Issue 20's two-GPU ratio: one GPU on half the grid (a rank's share on two).
    for c in "16384,16384" "16384,8192"; do
        for k in '"auto"' 1; do one "j$c-res100-k$k" gridsim 1 $j --set "grid.cells=[$c]" --set parallel.time_block=$k; done
    done
    for c in "512,512,512" "512,512,256"; do
        for k in '"auto"' 1; do one "h$c-k$k" gridsim 1 $h --set "grid.cells=[$c]" --set time.steps=400 --set parallel.time_block=$k; done
    done
done
sort -k1,1 -k2,2 -s "$out/timing.txt" >"$out/timing-sorted.txt"
cat "$out/summary.txt"
cat "$out/timing-sorted.txt"
