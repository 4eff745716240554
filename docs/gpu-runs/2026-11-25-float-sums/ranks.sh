#!/usr/bin/env bash
# Two ranks sharing the GPU under MPS, process grid [1, 2] (summing passes on two ranks), jacobi
# 2048^2 and 4096^2 float with the residual every sweep, each binary of BINS interleaved, three
# rounds; then one rank through ab.sh (CASES, default 2048^2 k = 3 and 2, 4096^2 k = 3). From the repository root on the GPU host after
# `source .gpu-host/env.sh`; everything under $1.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
read -r -a bins <<<"${BINS:-gridsim gridsim-base}"
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d
for rep in 1 2 3; do
    for n in 2048 4096; do
        for bin in "${bins[@]}"; do
            mpirun -np 2 $bin run inputs/bench_jacobi2d.toml --quiet --set grid.cells=[$n,$n] \
                --set time.steps=2000 --set time.norm_every=1 --set parallel.share_gpus=true \
                --set parallel.process_grid=[1,2] --report "$out/r.json" >/dev/null 2>&1
            python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(" ".join(sys.argv[2:]), r["time_block"], "%.2f" % (1e6*r["time_per_step_s"]))' \
                "$out/r.json" "$bin" "$n" np2 >>"$out/np2.txt" 2>/dev/null || echo "$bin $n np2 FAILED" >>"$out/np2.txt"
        done
    done
done
echo quit | nvidia-cuda-mps-control
rm -f "$out/r.json"
sort -k2n -k1 "$out/np2.txt"
BINS="${bins[*]}" FILTER=NONE CASES="${CASES:-2048 float 3;2048 float 2;4096 float 3}" \
    bash docs/gpu-runs/2026-11-24-summing-latency/ab.sh "$out/ab" 2>&1 | head -6
