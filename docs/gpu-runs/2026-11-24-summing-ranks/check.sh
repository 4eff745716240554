#!/usr/bin/env bash
# Eighth session, call 6 (one H200): the final build. Two ranks on the one GPU under MPS: the
# summing-pass tests, and the run header's note (automatic grid 2x1: a note, one sweep per pass;
# process grid [1,2]: no note, summed in passes). From the repository root on the GPU host after
# `source .gpu-host/env.sh`; everything under $1.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d
timeout 200 mpirun -np 2 gpu_backend_test --gtest_filter='GpuSummingPasses*' 2>&1 |
    grep -v -E "pmix|dlopen|Perhaps" | sed 's/\x1b\[[0-9;]*m//g' >"$out/tests-np2.log"
echo "tests np2 rc ${PIPESTATUS[0]}: $(grep -E '^\[  (PASSED|FAILED)' "$out/tests-np2.log")" >"$out/summary.txt"
for grid in "[0,0]" "[1,2]"; do
    mpirun -np 2 gridsim run inputs/bench_jacobi2d.toml --set grid.cells=[2048,2048] --set time.steps=2000 \
        --set time.norm_every=1 --set parallel.share_gpus=true --set parallel.process_grid="$grid" 2>&1 |
        grep -E "^  (ranks|backend|transport|note|time blocking|time per step)|residual summed" >>"$out/summary.txt"
done
echo quit | nvidia-cuda-mps-control
cat "$out/summary.txt"
