#!/usr/bin/env bash
# The residual every 100 sweeps (plain passes): `gridsim run inputs/bench_jacobi2d.toml --quiet
# --set problem.precision=P [--set parallel.time_block=K]` (16384^2, 1000 sweeps, "auto" by
# default), each binary of BINS interleaved, two rounds; us per sweep and x copy (the report's
# bandwidth_ratio). From the repository root on the GPU host; everything under $1.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
read -r -a bins <<<"${BINS:-gridsim gridsim-base}"
for rep in 1 2; do
    for cfg in ${PLAIN_CASES:-float:auto double:auto float:8}; do
        p=${cfg%%:*} k=${cfg##*:}
        [ "$k" = auto ] && k='"auto"'
        for bin in "${bins[@]}"; do
            $bin run inputs/bench_jacobi2d.toml --quiet --set "problem.precision=\"$p\"" \
                --set parallel.time_block=$k --report "$out/r.json" >/dev/null 2>&1
            python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(" ".join(sys.argv[2:]), r["time_block"], "%.2f" % (1e6*r["time_per_step_s"]), "%.3f" % r["bandwidth_ratio"])' \
                "$out/r.json" "$bin" "$p" "k$k" >>"$out/timing.txt" 2>/dev/null || echo "$bin $p k$k FAILED" >>"$out/timing.txt"
        done
    done
done
rm -f "$out/r.json"
echo "| binary | precision | k asked | k | us per sweep | x copy |"
echo "| --- | --- | --- | --- | --- | --- |"
sort -k2,3 -s "$out/timing.txt" | awk '{printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6}'
