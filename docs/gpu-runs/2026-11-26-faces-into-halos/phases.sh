#!/usr/bin/env bash
# Thirteenth session, two GPUs (call 10): where the final build's heat 512^3 step goes. One GPU
# and two ("auto", true, "fused"), each as run (graphs and sampled phases) and with graphs off and
# every pass's phases timed (-ph); for every run the time-block trial's figure for the k it took
# (us per sweep, the steady passes of one block after another) beside the run's us per step.
# From the repository root on the GPU host after `source .gpu-host/env.sh`; under $1:
# timing.txt (case, ranks, k, us per step, x copy, trial us per sweep at k, exchange trial,
# phases in us per step).
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name --format=csv,noheader >"$out/gpus.txt"
one() {  # NAME NP [--set ...]
    local name=$1 np=$2
    shift 2
    timeout 120 mpirun -np "$np" gridsim run inputs/bench_heat3d.toml --quiet "$@" --report "$out/r.json" >"$out/run.log" 2>&1
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
k = r["time_block"]
tb = [t["seconds_per_sweep"] for t in r.get("time_block_trial", []) if t["time_block"] == k]
t = r.get("exchange_trial")
ex = "exchange-trial split %.1f fused %.1f -> %s" % (1e6 * t["split_seconds_per_sweep"], 1e6 * t["fused_seconds_per_sweep"], t["taken"]) if t else ""
ph = r.get("phases", {})
phs = " ".join("{}={:.1f}".format(n, 1e6 * v["mean"] / r["steps"]) for n, v in ph.items() if n in ("boundary", "interior", "pack", "transfer", "unpack") and isinstance(v, dict) and v.get("mean", 0) > 0)
print(sys.argv[2], sys.argv[3], k, "%.1f" % (1e6 * r["time_per_step_s"]), "%.3f" % r["bandwidth_ratio"], "k-trial %.1f" % (1e6 * tb[0]) if tb else "k-trial -", ex, phs)' \
        "$out/r.json" "$name" "$np" >>"$out/timing.txt" 2>/dev/null || { echo "$name $np FAILED" >>"$out/timing.txt"; tail -3 "$out/run.log" >>"$out/timing.txt"; }
}
ph=(--set parallel.graphs=off --set parallel.phase_every=1)
one heat3d-1gpu 1
one heat3d-1gpu-ph 1 "${ph[@]}"
for ov in '"auto"' true '"fused"'; do
    tag=$(echo "$ov" | tr -d '"')
    one "heat3d-2gpu-$tag" 2 --set "parallel.overlap=$ov"
    one "heat3d-2gpu-$tag-ph" 2 --set "parallel.overlap=$ov" "${ph[@]}"
done
rm -f "$out/r.json" "$out/run.log"
cat "$out/timing.txt"
