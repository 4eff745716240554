#!/usr/bin/env bash
# Eighth session, last call: the final build's GPU tests and its default settings against
# a0b8dd8 (gridsim-before). Two ranks share the one GPU under MPS (the two-GPU kinds were
# withheld). Process grids are the automatic ones: with the residual every sweep this build
# splits y (1x2, summing passes), a0b8dd8 split x (2x1, one sweep per pass). From the repository
# root on the GPU host after `source .gpu-host/env.sh`. Everything under $1: tests-np2.log,
# timing.txt (name, binary, ranks, us per step, k, sums in passes, x copy, process grid).
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
j=inputs/bench_jacobi2d.toml
h=inputs/bench_heat3d.toml
one() {  # NAME BIN NP DECK [--set ...]
    local name=$1 bin=$2 np=$3 deck=$4
    shift 4
    mpirun -np "$np" "$bin" run "$deck" --quiet "$@" --report "$out/r.json" >"$out/run.log" 2>&1
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(sys.argv[2], sys.argv[3], sys.argv[4], "%.2f" % (1e6 * r["time_per_step_s"]), r["time_block"],
      r.get("sums_in_passes"), "%.3f" % r["bandwidth_ratio"], "x".join(map(str, r["process_grid"][:2])))' \
        "$out/r.json" "$name" "$bin" "$np" >>"$out/timing.txt" 2>/dev/null ||
        echo "$name $bin $np FAILED $(tail -1 "$out/run.log")" >>"$out/timing.txt"
    rm -f "$out/r.json"
}
steps() { local s=$((20000000000 / ($1 * $2))); ((s < 400)) && s=400; ((s > 20000)) && s=20000; echo $s; }

export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d
# 1. Two ranks on the one GPU: the summing passes (one rank and two), time blocks and rank counts
# bitwise.
timeout 200 mpirun -np 2 gpu_backend_test \
    --gtest_filter='GpuSummingPasses*:GpuDeck.TimeBlocksAreBitwiseIdentical/jacobi*:GpuDeck.OneTwoAndFour*' \
    >"$out/tests-np2.log" 2>&1
echo "tests np2 rc $?" >>"$out/summary.txt"
# 2. Two ranks, the residual every sweep, default settings.
share=(--set parallel.share_gpus=true --set parallel.backend='"cuda"')
for rep in 1 2; do
    for n in 1024 2048 4096 8192; do
        g=(--set "grid.cells=[$n,$n]" --set time.steps=$(steps $n $n) --set time.norm_every=1 "${share[@]}")
        one "j$n-np2" gridsim 2 $j "${g[@]}"
        one "j$n-np2" gridsim-before 2 $j "${g[@]}"
    done
    for n in 2048 4096; do
        g=(--set "grid.cells=[$n,$n]" --set time.steps=$(steps $n $n) --set time.norm_every=1 "${share[@]}" --set problem.precision='"double"')
        one "j$n-double-np2" gridsim 2 $j "${g[@]}"
        one "j$n-double-np2" gridsim-before 2 $j "${g[@]}"
    done
done
echo quit | nvidia-cuda-mps-control
sleep 2
for rep in 1 2; do
    # 3. One rank: unchanged.
    for n in 4096 16384; do
        g=(--set "grid.cells=[$n,$n]" --set time.steps=$(steps $n $n) --set time.norm_every=1)
        one "j$n-np1" gridsim 1 $j "${g[@]}"
        one "j$n-np1" gridsim-before 1 $j "${g[@]}"
    done
    # 4. Issue 20's two-GPU ratio: one GPU on half the grid (a rank's share on two).
    for c in "16384,16384" "16384,8192"; do
        one "j$c-res100" gridsim 1 $j --set "grid.cells=[$c]"
    done
    for c in "512,512,512" "512,512,256"; do
        one "h$c-double" gridsim 1 $h --set "grid.cells=[$c]" --set time.steps=400
        one "h$c-float" gridsim 1 $h --set "grid.cells=[$c]" --set time.steps=400 --set problem.precision='"float"'
    done
done
grep -h -E '^\[  (PASSED|FAILED)|tests? (ran|skipped)|^\[  SKIPPED' "$out"/tests-np*.log | sed 's/\x1b\[[0-9;]*m//g' >>"$out/summary.txt"
sort -k1,1 -k2,2 -s "$out/timing.txt" >"$out/timing-sorted.txt"
cat "$out/summary.txt" "$out/timing-sorted.txt"
