#!/usr/bin/env bash
# Calls 9-11: builds of the summing pass against each other with the residual every sweep, from
# the repository root on the GPU host after `source .gpu-host/env.sh`; everything under $1.
#   BINS    the gridsim binaries on PATH, the build under test first (default "gridsim gridsim-base")
#   CASES   "N P K" triples separated by ';' (K: a number or auto)
#   NCU     "N:K" pairs: ncu of one summing pass of each binary (NCU_STEPS sweeps, default 30)
#   SASS    1: count the BSSY of each binary's 2-level float summing kernel (cuobjdump)
#   FILTER  gpu_backend_test's filter (default the summing passes and 3D levels)
# Each case runs interleaved over the binaries, two rounds (`gridsim run
# inputs/bench_jacobi2d.toml --quiet --set grid.cells=[N,N] --set time.steps=2e10/N^2 (400..40000)
# --set time.norm_every=1 --set parallel.time_block=K --set problem.precision=P`); timing.txt has
# binary, N, P, k asked, k taken, us per sweep, x copy; the last output is a table.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
read -r -a bins <<<"${BINS:-gridsim gridsim-base}"
deck=inputs/bench_jacobi2d.toml
one() {  # one BIN N P K
    local bin=$1 n=$2 p=$3 k=$4
    local s=$((20000000000 / (n * n)))
    ((s > 40000)) && s=40000
    ((s < 400)) && s=400
    $bin run $deck --quiet --set "grid.cells=[$n,$n]" --set time.steps=$s --set time.norm_every=1 \
        --set parallel.time_block=$k --set "problem.precision=\"$p\"" --report "$out/r.json" >/dev/null 2>&1
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(" ".join(sys.argv[2:]), r["time_block"], "%.2f" % (1e6*r["time_per_step_s"]), "%.3f" % r["bandwidth_ratio"])' \
        "$out/r.json" "$bin" "$n" "$p" "k$k" >>"$out/timing.txt" 2>/dev/null || echo "$bin $n $p k$k FAILED" >>"$out/timing.txt"
}
IFS=';' read -r -a cases <<<"${CASES:?CASES: \"N P K\" triples separated by ';'}"
for rep in 1 2; do
    for cfg in "${cases[@]}"; do
        read -r n p k <<<"$cfg"
        [ "$k" = auto ] && k='"auto"'
        for bin in "${bins[@]}"; do one "$bin" "$n" "$p" "$k"; done
    done
done
m="gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum"
for bin in "${bins[@]}"; do
    for nk in ${NCU:-}; do
        n=${nk%%:*} k=${nk##*:}
        ncu --clock-control none --csv --metrics "$m" -k regex:stencil_levels_2d_sum -s 2 -c 1 $bin run $deck \
            --quiet --set "grid.cells=[$n,$n]" --set time.steps=${NCU_STEPS:-30} --set time.norm_every=1 \
            --set parallel.time_block=$k >"$out/ncu-$bin-$n.csv" 2>&1
        echo "ncu $bin $n k$k: $(python3 scripts/gpu_host/ncu_metrics.py "$out/ncu-$bin-$n.csv" 1)" >>"$out/ncu.txt"
    done
    if [ "${SASS:-0}" = 1 ]; then
        cuobjdump -sass "$(command -v "$bin")" | awk '/Function : .*stencil_levels_2d_sum_kernelIfLi2ELi4E/{f=1;next} /Function :/{f=0} f' >"$out/sass.txt"
        echo "sass $bin float 2 levels: $(grep -c 'BSSY' "$out/sass.txt") BSSY, $(grep -cE '^\s+/\*[0-9a-f]{4}\*/' "$out/sass.txt") instructions" >>"$out/ncu.txt"
        rm -f "$out/sass.txt"
    fi
done
gpu_backend_test --gtest_filter="${FILTER:-GpuSummingPasses*:GpuLevels3d*}" >"$out/tests.log" 2>&1
echo "tests rc $? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]' "$out/tests.log" | tr '\n' ' ')" >>"$out/ncu.txt"
rm -f "$out/r.json"
python3 - "$out/timing.txt" "${bins[@]}" <<'PY'
import collections, sys
bins = sys.argv[2:]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 7:
        t[" ".join(f[1:4])][f[0]].append(f"{f[5]} (k {f[4]})")
print("| case | " + " | ".join(bins) + " |")
print("| --- |" + " --- |" * len(bins))
for case, d in t.items():
    print(f"| {case} | " + " | ".join(", ".join(d[b]) for b in bins) + " |")
PY
cat "$out/ncu.txt"
