#!/usr/bin/env bash
# Seventh session, call 17 (`nvidia-h200-x2`): where a small two-GPU step's time goes, and
# whether the interior/shell split pays there (parallel.overlap true, which "auto" keeps for ranks
# with a neighbour, against false). From the repository root on the GPU host after
# `source .gpu-host/env.sh`; everything under $1. timing.txt: case, GPUs, us per step.
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
ph = r.get("phases", {})
keep = " ".join("{}={:.1f}".format(k, 1e6 * v["mean"] / r["steps"]) for k, v in ph.items() if isinstance(v, dict) and v.get("mean", 0) > 0)
print(sys.argv[2], sys.argv[3], "%.1f" % (1e6 * r["time_per_step_s"]), keep)' \
        "$out/r.json" "$name" "$np" >>"$out/timing.txt" 2>/dev/null || echo "$name $np FAILED" >>"$out/timing.txt"
}
j=inputs/bench_jacobi2d.toml
h=inputs/bench_heat3d.toml
for rep in 1 2; do
    for n in 1024 2048 4096 8192; do
        s=$((10000000000 / (n * n))); ((s > 40000)) && s=40000
        g=(--set "grid.cells=[$n,$n]" --set time.steps=$s)
        one "j$n-res1-auto" 2 $j "${g[@]}" --set time.norm_every=1
        one "j$n-res1-overlap-false" 2 $j "${g[@]}" --set time.norm_every=1 --set parallel.overlap=false
        one "j$n-res100-auto" 2 $j "${g[@]}" --set time.norm_every=100
        one "j$n-res100-overlap-false" 2 $j "${g[@]}" --set time.norm_every=100 --set parallel.overlap=false
        one "j$n-res1-phases" 2 $j "${g[@]}" --set time.norm_every=1 --set parallel.graphs=off --set parallel.phase_every=1
    done
    for n in 64 128 256; do
        s=$((10000000000 / (n * n * n))); ((s > 40000)) && s=40000
        g=(--set "grid.cells=[$n,$n,$n]" --set time.steps=$s)
        one "h$n-auto" 2 $h "${g[@]}"
        one "h$n-overlap-false" 2 $h "${g[@]}" --set parallel.overlap=false
        one "h$n-k1" 2 $h "${g[@]}" --set parallel.time_block=1
        one "h$n-k1-overlap-false" 2 $h "${g[@]}" --set parallel.time_block=1 --set parallel.overlap=false
    done
done
rm -f "$out/r.json"
sort -k1,1 -s "$out/timing.txt"
