#!/usr/bin/env bash
# Twelfth session, two GPUs (nvidia-h100-x2), after two_gpus.sh: where the two-GPU step with the
# exchanging pass fused loses against half of one GPU's. Two ranks, overlap "fused" and true, with
# graphs off and every pass's phases timed (us per step: interior = the fused pass or the
# interior, boundary = the shell, pack, transfer = the peer stores and the wait for the
# neighbour's, unpack), and the same without phases; jacobi 16384^2, heat 512^3, "auto" k; two
# rounds. From the repository root on the GPU host after `source .gpu-host/env.sh`; timing.txt
# under $1.
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
keep = " ".join("{}={:.1f}".format(k, 1e6 * v["mean"] / r["steps"]) for k, v in ph.items() if k in ("boundary", "interior", "pack", "transfer", "unpack") and isinstance(v, dict) and v.get("mean", 0) > 0)
print(sys.argv[2], sys.argv[3], r["time_block"], "%.1f" % (1e6 * r["time_per_step_s"]), "%.3f" % r["bandwidth_ratio"], keep)' \
        "$out/r.json" "$name" "$np" >>"$out/timing.txt" 2>/dev/null || { echo "$name $np FAILED" >>"$out/timing.txt"; tail -3 "$out/run.log" >>"$out/timing.txt"; }
}
ph=(--set parallel.graphs=off --set parallel.phase_every=1)
for rep in 1 2; do
    for deck in jacobi2d heat3d; do
        d=inputs/bench_$deck.toml
        one "$deck-1gpu-ph" 1 "$d" "${ph[@]}"
        for ov in '"fused"' true; do
            tag=$(echo "$ov" | tr -d '"')
            one "$deck-2gpu-$tag-ph" 2 "$d" --set "parallel.overlap=$ov" "${ph[@]}"
            one "$deck-2gpu-$tag" 2 "$d" --set "parallel.overlap=$ov"
        done
    done
done
rm -f "$out/r.json"
sort -s -k1,1 "$out/timing.txt"
