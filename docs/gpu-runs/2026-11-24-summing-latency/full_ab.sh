#!/usr/bin/env bash
# Call 10: float summing passes with a branch-free path for interior warps (full), this build
# (gridsim) against 6fa79e4 (gridsim-6fa), interleaved, two rounds; then ncu of one pass each,
# the summing-pass tests, and the branch count of the 2-level float kernel. Everything under $1.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
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
for rep in 1 2; do
    for cfg in "4096 float 3" "8192 float 3" "16384 float 2" "16384 float 3" "4096 float auto" "16384 float auto" "4096 double 3" "16384 double 3"; do
        set -- $cfg
        k=$3; [ "$k" = auto ] && k='"auto"'
        for bin in gridsim gridsim-6fa; do one $bin $1 $2 "$k"; done
    done
done
m="gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum"
for bin in gridsim gridsim-6fa; do
    ncu --clock-control none --csv --metrics "$m" -k regex:stencil_levels_2d_sum -s 2 -c 1 $bin run $deck \
        --quiet --set "grid.cells=[16384,16384]" --set time.steps=30 --set time.norm_every=1 \
        --set parallel.time_block=2 >"$out/ncu-$bin.csv" 2>&1
    echo "ncu $bin: $(python3 scripts/gpu_host/ncu_metrics.py "$out/ncu-$bin.csv" 1)" >>"$out/ncu.txt"
    cuobjdump -sass "$(command -v $bin)" | awk '/Function : .*stencil_levels_2d_sum_kernelIfLi2ELi4E/{f=1;next} /Function :/{f=0} f' >"$out/sass-$bin.txt"
    echo "sass $bin float 2 levels: $(grep -c 'BSSY' "$out/sass-$bin.txt") BSSY, $(grep -cE '^\s+/\*[0-9a-f]{4}\*/' "$out/sass-$bin.txt") instructions" >>"$out/ncu.txt"
done
gpu_backend_test --gtest_filter='GpuSummingPasses*:GpuLevels3d*' >"$out/tests.log" 2>&1
echo "tests rc $? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]' "$out/tests.log" | tr '\n' ' ')" >>"$out/ncu.txt"
rm -f "$out/r.json"
python3 - "$out/timing.txt" <<'PY'
import collections, sys
t = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 7:
        t[" ".join(f[1:4])][f[0]].append(f"{f[5]} (k {f[4]})")
print("| case | this build | 6fa79e4 |")
print("| --- | --- | --- |")
for case, d in t.items():
    print(f"| {case} | {', '.join(d['gridsim'])} | {', '.join(d['gridsim-6fa'])} |")
PY
cat "$out/ncu.txt"
