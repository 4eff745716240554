#!/usr/bin/env bash
# Fourteenth session, two GPUs (call 1): halos deeper than a pass. parallel.time_block above
# the pass's most levels (8 in 2D, 4 in 3D) runs a block between two exchanges as several
# passes of even length; does exchanging every 14 or 16 sweeps instead of every 7 bring the
# two-GPU run closer to half the one-GPU time? gridsim-prev is the session's start (faa32c2).
# Every case: us per step from the report, x copy, k, the time-block trial's figure at the k
# taken (us per sweep of a pass without exchange) and the exchange trial. From the repository
# root on the GPU host after `source .gpu-host/env.sh`; under $1: timing.txt, gpus.txt.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >"$out/gpus.txt"
one() {  # NAME NP BINARY DECK [--set ...]
    local name=$1 np=$2 bin=$3 deck=$4
    shift 4
    timeout 120 mpirun -np "$np" "$bin" run "$deck" --quiet "$@" --report "$out/r.json" >"$out/run.log" 2>&1
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
k = r["time_block"]
tb = [t["seconds_per_sweep"] for t in r.get("time_block_trial", []) if t["time_block"] == k]
t = r.get("exchange_trial")
ex = "ex-trial split %.1f fused %.1f -> %s" % (1e6 * t["split_seconds_per_sweep"], 1e6 * t["fused_seconds_per_sweep"], t["taken"]) if t else ""
print(sys.argv[2], sys.argv[3], sys.argv[4], k, "%.1f" % (1e6 * r["time_per_step_s"]), "%.3f" % r["bandwidth_ratio"], "k-trial %.1f" % (1e6 * tb[0]) if tb else "k-trial -", ex)' \
        "$out/r.json" "$name" "$np" "$bin" >>"$out/timing.txt" 2>/dev/null || { echo "$name $np $bin FAILED" >>"$out/timing.txt"; tail -3 "$out/run.log" >>"$out/timing.txt"; }
}
j=inputs/bench_jacobi2d.toml
h=inputs/bench_heat3d.toml
for rep in $(seq "${REPS:-2}"); do
    one jacobi-1gpu 1 gridsim $j
    one jacobi-2gpu-auto 2 gridsim-prev $j
    one jacobi-2gpu-auto 2 gridsim $j
    for k in ${JK:-7 8 12 14 16}; do one "jacobi-2gpu-k$k" 2 gridsim $j --set parallel.time_block=$k; done
    one jacobi-1gpu-norm1000 1 gridsim $j --set time.norm_every=1000
    one jacobi-2gpu-norm1000 2 gridsim $j --set time.norm_every=1000
    one heat-1gpu 1 gridsim $h
    one heat-2gpu-auto 2 gridsim $h
    for k in ${HK:-6 8}; do one "heat-2gpu-k$k" 2 gridsim $h --set parallel.time_block=$k; done
done
rm -f "$out/r.json"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader >>"$out/gpus.txt"
sort -s -k1,1 "$out/timing.txt"
