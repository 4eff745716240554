#!/usr/bin/env bash
# Seventh session, call 11: the final build (gridsim) against the start of the session
# (gridsim-before, e193760). From the repository root on the GPU host after
# `source .gpu-host/env.sh`; everything under $1, the last output a short summary.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
here=$(dirname "${BASH_SOURCE[0]}")
before=$(command -v gridsim-before)
gpu_backend_test --gtest_color=no --gtest_filter='GpuSummingPasses*:GpuLevels3d*:*TimeBlocks*' \
    >"$out/tests.log" 2>&1
echo "tests rc $? $(grep -E '^\[  PASSED|^\[  FAILED' "$out/tests.log" | tr '\n' ' ')" >"$out/summary.txt"
OUT=$out/sum PARTS=bench REPEAT=1 GRIDSIM_BEFORE=$before bash scripts/gpu_host/summing_pass_check.sh \
    >"$out/sum.log" 2>&1
for k in 5 6 8; do
    for b in gridsim gridsim-before; do
        $b run inputs/bench_jacobi2d.toml --quiet --set "grid.cells=[16384,16384]" --set time.steps=400 \
            --set time.norm_every=1 --set parallel.time_block=$k --report "$out/r.json" >/dev/null 2>&1
        python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], "float 16384^2 k", sys.argv[3], "%.1f us" % (1e6*r["time_per_step_s"]), "%.3f x copy" % r["bandwidth_ratio"])' \
            "$out/r.json" "$b" "$k" >>"$out/high-k.txt"
    done
done
rm -f "$out/r.json"
BINS="gridsim gridsim-before" bash "$here/agreement.sh" "$out/decks" >"$out/decks.md" 2>&1
OUT=$out/lat LATENCY_REPEAT=2 LATENCY_MODES=auto GRIDSIM_BEFORE=$before bash scripts/bench-gpu.sh latency \
    >"$out/lat.log" 2>&1
cat "$out/summary.txt" "$out/high-k.txt"
grep -v pmix "$out/decks.md" | grep '^|'
grep '^|' "$out/lat/latency.md"
