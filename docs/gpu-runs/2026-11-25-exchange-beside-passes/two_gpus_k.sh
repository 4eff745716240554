#!/usr/bin/env bash
# Twelfth session, two GPUs (nvidia-h100-x2), after two_gpus.sh: does a deeper block help two
# GPUs, whose exchange every k sweeps is exposed with the fused pass? One GPU "auto" against two
# GPUs overlap "fused" at "auto" k and at fixed k: jacobi 16384^2 k = 6, 7, 8; heat 512^3
# k = 3, 4; two rounds. As two_gpus.sh: from the repository root on the GPU host after
# `source .gpu-host/env.sh`; timing.txt under $1.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
one() {  # NAME NP DECK [--set ...]
    local name=$1 np=$2 deck=$3
    shift 3
    mpirun -np "$np" gridsim run "$deck" --quiet "$@" --report "$out/r.json" >"$out/run.log" 2>&1
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(sys.argv[2], sys.argv[3], r["time_block"], r["transport"], "%.1f" % (1e6 * r["time_per_step_s"]), "%.3f" % r["bandwidth_ratio"])' \
        "$out/r.json" "$name" "$np" >>"$out/timing.txt" 2>/dev/null || { echo "$name $np FAILED" >>"$out/timing.txt"; tail -3 "$out/run.log" >>"$out/timing.txt"; }
}
f=(--set 'parallel.overlap="fused"')
for rep in 1 2; do
    one jacobi2d-1gpu 1 inputs/bench_jacobi2d.toml
    one jacobi2d-2gpu-fused-auto 2 inputs/bench_jacobi2d.toml "${f[@]}"
    for k in 6 7 8; do one "jacobi2d-2gpu-fused-k$k" 2 inputs/bench_jacobi2d.toml "${f[@]}" --set parallel.time_block=$k; done
    for k in 7 8; do one "jacobi2d-1gpu-k$k" 1 inputs/bench_jacobi2d.toml --set parallel.time_block=$k; done
    one heat3d-1gpu 1 inputs/bench_heat3d.toml
    one heat3d-2gpu-fused-auto 2 inputs/bench_heat3d.toml "${f[@]}"
    for k in 3 4; do one "heat3d-2gpu-fused-k$k" 2 inputs/bench_heat3d.toml "${f[@]}" --set parallel.time_block=$k; done
done
rm -f "$out/r.json"
sort -s -k1,1 "$out/timing.txt"
