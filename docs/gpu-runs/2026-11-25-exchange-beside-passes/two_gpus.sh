#!/usr/bin/env bash
# Twelfth session, two GPUs of one host (nvidia-h100-x2): issue 20's last target, two GPUs
# >= 1.9 x one GPU with time blocks ("auto" k) at jacobi 16384^2 float (residual every 100) and
# heat 512^3 double. One GPU (one rank) against two ranks with overlap true (split), "fused" and
# "auto" (its trial: what it measured and took), interleaved, two rounds. From the repository
# root on the GPU host after `source .gpu-host/env.sh`; everything under $1 (timing.txt: case,
# ranks, k, us per step, x copy, trial).
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
t = r.get("exchange_trial")
trial = "trial split %.1f fused %.1f -> %s" % (1e6 * t["split_seconds_per_sweep"], 1e6 * t["fused_seconds_per_sweep"], t["taken"]) if t else ""
print(sys.argv[2], sys.argv[3], r["time_block"], r["transport"], "%.1f" % (1e6 * r["time_per_step_s"]), "%.3f" % r["bandwidth_ratio"], trial)' \
        "$out/r.json" "$name" "$np" >>"$out/timing.txt" 2>/dev/null || { echo "$name $np FAILED" >>"$out/timing.txt"; tail -3 "$out/run.log" >>"$out/timing.txt"; }
}
nvidia-smi --query-gpu=name --format=csv,noheader >"$out/gpus.txt"
for rep in 1 2; do
    for deck in jacobi2d heat3d; do
        d=inputs/bench_$deck.toml
        one "$deck-1gpu" 1 "$d"
        for ov in true '"fused"' '"auto"'; do
            one "$deck-2gpu-$(echo "$ov" | tr -d '"')" 2 "$d" --set "parallel.overlap=$ov"
        done
    done
done
rm -f "$out/r.json"
sort -s -k1,1 "$out/timing.txt"
