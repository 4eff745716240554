#!/usr/bin/env bash
# Thirteenth session, two GPUs (call 7): the final build (gridsim) at the decks' own step counts
# and at ten times as many (what a run's fixed costs inside the timed loop, the first passes'
# recording and a last single sweep among them, weigh at the default length), one GPU against
# two ("auto" everything), and BASE (default gridsim-base, bd31a7b) on two GPUs at ten times the
# steps; interleaved, REPS rounds (default 2). From the repository root on the GPU host after
# `source .gpu-host/env.sh`; under $1: timing.txt (case, ranks, binary, k, steps, us per step, x
# copy per GPU, the exchange trial), gpus.txt.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
base=${BASE:-gridsim-base}
nvidia-smi --query-gpu=name --format=csv,noheader >"$out/gpus.txt"
one() {  # NAME NP BINARY DECK [--set ...]
    local name=$1 np=$2 bin=$3 deck=$4
    shift 4
    timeout 150 mpirun -np "$np" "$bin" run "$deck" --quiet "$@" --report "$out/r.json" >"$out/run.log" 2>&1
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
t = r.get("exchange_trial")
extra = "trial split %.1f fused %.1f -> %s" % (1e6 * t["split_seconds_per_sweep"], 1e6 * t["fused_seconds_per_sweep"], t["taken"]) if t else ""
print(sys.argv[2], sys.argv[3], sys.argv[4], r["time_block"], r["steps"], "%.1f" % (1e6 * r["time_per_step_s"]), "%.3f" % r["bandwidth_ratio"], extra)' \
        "$out/r.json" "$name" "$np" "$bin" >>"$out/timing.txt" 2>/dev/null || { echo "$name $np $bin FAILED" >>"$out/timing.txt"; tail -3 "$out/run.log" >>"$out/timing.txt"; }
}
for rep in $(seq "${REPS:-2}"); do
    for deck in jacobi2d:10000 heat3d:4000; do
        d=inputs/bench_${deck%%:*}.toml
        long=(--set "time.steps=${deck##*:}")
        one "${deck%%:*}-1gpu" 1 gridsim "$d"
        one "${deck%%:*}-2gpu" 2 gridsim "$d"
        one "${deck%%:*}-1gpu-long" 1 gridsim "$d" "${long[@]}"
        one "${deck%%:*}-2gpu-long" 2 gridsim "$d" "${long[@]}"
        one "${deck%%:*}-2gpu-long" 2 "$base" "$d" "${long[@]}"
    done
done
rm -f "$out/r.json" "$out/run.log"
sort -s -k1,1 "$out/timing.txt"
