#!/usr/bin/env bash
# Call 2: the summing pass's register cap (blocks per multiprocessor) on an experiment build whose
# GRIDSIM_EXP_SUMMB=2|4|5|6 picks __launch_bounds__(160, MB) for passes of 2 to 4 levels (2 is
# the committed cap). us per sweep with the residual every sweep; everything under $1.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
deck=inputs/bench_jacobi2d.toml
one() {  # one NAME MB N P K
    local name=$1 mb=$2 n=$3 p=$4 k=$5
    local s=$((20000000000 / (n * n)))
    ((s > 20000)) && s=20000
    ((s < 200)) && s=200
    GRIDSIM_EXP_SUMMB=$mb gridsim run $deck --quiet --set "grid.cells=[$n,$n]" --set time.steps=$s \
        --set time.norm_every=1 --set parallel.time_block=$k --set "problem.precision=\"$p\"" \
        --report "$out/$name.json" >"$out/$name.log" 2>&1
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], "%.2f" % (1e6*r["time_per_step_s"]), "%.3f" % r["bandwidth_ratio"], r["sweeps_per_pass"])' \
        "$out/$name.json" "$name" >>"$out/timing.txt" 2>/dev/null || echo "$name FAILED" >>"$out/timing.txt"
}
for mb in 6 5 4; do
    GRIDSIM_EXP_SUMMB=$mb gpu_backend_test --gtest_filter='GpuSummingPasses*' >"$out/tests-mb$mb.log" 2>&1
    echo "tests mb $mb rc $? $(grep -E '^\[  PASSED|^\[  FAILED' "$out/tests-mb$mb.log" | tr '\n' ' ')" >>"$out/timing.txt"
done
for rep in 1 2; do
    for mb in 2 4 5 6; do
        for cfg in "4096 float 2" "4096 float 3" "4096 double 2" "4096 double 3" \
            "16384 float 2" "16384 float 3" "16384 double 3" "2048 float 2" "8192 float 2"; do
            set -- $cfg
            one "n$1-$2-k$3-mb$mb-r$rep" $mb $1 $2 $3
        done
    done
    one "n4096-float-k1-r$rep" 2 4096 float 1
    one "n16384-float-k1-r$rep" 2 16384 float 1
    one "n2048-float-k1-r$rep" 2 2048 float 1
    one "n8192-float-k1-r$rep" 2 8192 float 1
done
m="gpu__time_duration.sum,launch__registers_per_thread,launch__occupancy_limit_registers,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed"
for x in wait long_scoreboard barrier not_selected short_scoreboard math_pipe_throttle no_instruction branch_resolving; do
    m="$m,smsp__average_warps_issue_stalled_${x}_per_issue_active.ratio"
done
for mb in 2 6; do
    for cfg in "16384 float 2" "16384 double 3"; do
        set -- $cfg
        GRIDSIM_EXP_SUMMB=$mb ncu --clock-control none --csv --metrics "$m" -k regex:stencil_levels_2d_sum \
            -s 2 -c 1 gridsim run $deck --quiet --set "grid.cells=[$1,$1]" --set time.steps=30 \
            --set time.norm_every=1 --set parallel.time_block=$3 --set "problem.precision=\"$2\"" \
            >"$out/ncu-$1-$2-k$3-mb$mb.csv" 2>&1
        echo "ncu $1 $2 k$3 mb$mb: $(python3 scripts/gpu_host/ncu_metrics.py "$out/ncu-$1-$2-k$3-mb$mb.csv" 1)" >>"$out/ncu.txt"
    done
done
python3 - "$out/timing.txt" <<'PY'
import collections, sys
t = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 3 and f[0].startswith("n") and "FAILED" not in line:
        t[f[0].rsplit("-r", 1)[0]].append(f[1])
    else:
        print(line.rstrip())
rows = collections.defaultdict(dict)
for name, v in t.items():
    base, _, mb = name.rpartition("-mb")
    if not base:
        base, mb = name, "k1"
    rows[base][mb] = "/".join(v)
print("| case | k1 | mb2 | mb4 | mb5 | mb6 |")
for base, d in rows.items():
    print(f"| {base} | " + " | ".join(d.get(m, "") for m in ("k1", "2", "4", "5", "6")) + " |")
PY
cat "$out/ncu.txt" | cut -c1-700
