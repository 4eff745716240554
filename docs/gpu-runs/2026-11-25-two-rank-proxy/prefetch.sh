#!/usr/bin/env bash
# Eleventh session, call 7 (one H200): the summing pass's L2 prefetch by row-chunk length. An
# experimental build (gridsim-pfx, not committed) prefetches in summing passes only where the
# launch's row chunk has at least GRIDSIM_PF_ROWS rows, and prints each summing launch's chunk
# (GRIDSIM_PF_PRINT). jacobi N^2 with the residual every sweep (ab.sh's runs), k = 3 and "auto",
# prefetch always (0) and never (1000000), interleaved, two rounds. From the repository root on
# the GPU host after `source .gpu-host/env.sh`; everything under $1.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
bin=${BIN:-gridsim-pfx}
one() {  # N P K PF
    local n=$1 p=$2 k=$3 pf=$4
    local s=$((20000000000 / (n * n)))
    ((s > 40000)) && s=40000
    ((s < 400)) && s=400
    GRIDSIM_PF_ROWS=$pf $bin run inputs/bench_jacobi2d.toml --quiet --set "grid.cells=[$n,$n]" \
        --set time.steps=$s --set time.norm_every=1 --set parallel.time_block=$k \
        --set "problem.precision=\"$p\"" --report "$out/r.json" >/dev/null 2>&1
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(" ".join(sys.argv[2:]), r["time_block"], "%.2f" % (1e6*r["time_per_step_s"]), "%.3f" % r["bandwidth_ratio"])' \
        "$out/r.json" "$n" "$p" "k$k" "pf$pf" >>"$out/timing.txt" 2>/dev/null || echo "$n $p k$k pf$pf FAILED" >>"$out/timing.txt"
}
cases="${CASES:-2048 float;4096 float;8192 float;16384 float;2048 double;4096 double;8192 double;16384 double}"
IFS=';' read -r -a cs <<<"$cases"
for c in "${cs[@]}"; do
    read -r n p <<<"$c"
    for k in 3 '"auto"'; do
        echo "== $n $p k$k" >>"$out/rows.txt"
        GRIDSIM_PF_PRINT=1 $bin run inputs/bench_jacobi2d.toml --quiet --set "grid.cells=[$n,$n]" \
            --set time.steps=20 --set time.norm_every=1 --set parallel.time_block=$k \
            --set "problem.precision=\"$p\"" 2>&1 | grep sumpass >>"$out/rows.txt"
    done
done
for rep in 1 2; do
    for c in "${cs[@]}"; do
        read -r n p <<<"$c"
        for k in 3 '"auto"'; do
            for pf in 0 1000000; do one "$n" "$p" "$k" "$pf"; done
        done
    done
done
rm -f "$out/r.json"
cat "$out/rows.txt"
sort -k1n -k2 -k3 -k4 "$out/timing.txt"
