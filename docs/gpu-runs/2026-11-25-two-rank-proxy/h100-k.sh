#!/usr/bin/env bash
# Eleventh session (nvidia-h100-x1): does "auto" take the fastest k on the H100? jacobi 16384^2
# float and double with the residual every sweep, "auto" against k = 3 and 4 (ab.sh: two
# rounds), then three "auto" runs printing the start-up trial (seconds per sweep for each k).
# From the repository root on the GPU host after `source .gpu-host/env.sh`; everything under $1.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
BINS=gridsim FILTER=NONE CASES="16384 float auto;16384 float 3;16384 float 4;16384 double auto;16384 double 3;16384 double 4" \
    bash docs/gpu-runs/2026-11-24-summing-latency/ab.sh "$out/ab" >"$out/ab.md" 2>&1
for p in float double; do
    for rep in 1 2 3; do
        gridsim run inputs/bench_jacobi2d.toml --quiet --set time.steps=400 --set time.norm_every=1 \
            --set "problem.precision=\"$p\"" --report "$out/r.json" >/dev/null 2>&1
        python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], "took", r["time_block"], "%.1f us" % (1e6*r["time_per_step_s"]), "trial", " ".join("k%d=%.1f" % (t["time_block"], 1e6*t["seconds_per_sweep"]) for t in r["time_block_trial"]))' \
            "$out/r.json" "$p" >>"$out/trial.txt" 2>&1
    done
done
rm -f "$out/r.json"
sort -k2n -k3 -k4 "$out/ab/timing.txt"
cat "$out/trial.txt"
