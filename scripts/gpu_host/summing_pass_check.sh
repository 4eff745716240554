#!/usr/bin/env bash
# scripts/gpu_host/summing_pass_check.sh: a residual every sweep inside passes of several sweeps
# (Simulation::residual_sweeps, the levels kernel summing every level as the stream kernel sums
# that sweep) on a one-GPU host, from the repository root after `source .gpu-host/env.sh`.
# PARTS picks (default all):
#   tests      gpu_backend_test at one rank (FILTER, default the summing passes, time blocks,
#              fused sweeps and graph replay)
#   sanitizer  compute-sanitizer memcheck and racecheck of summing passes (jacobi 2D, benchmark
#              boundary: float at k = 2, 3, 5, 8 and "auto" with its trial (1458^2 updated
#              points, at least 2^21), double at k = 2; double with Dirichlet faces at k = 3)
#   bench      jacobi 2D with the residual every sweep, float and double, time_block 1 to 4
#              and "auto" (also GRIDSIM_BEFORE's "auto", if set), 1024^2 to 16384^2 (REPEAT
#              repeats; the "auto" rows give the k taken and the trial's us per sweep); the
#              residual every 100 sweeps (the plain levels kernel) at 2048^2 and 16384^2, this
#              build and GRIDSIM_BEFORE
#   ncu        ncu profile of the summing and the plain levels kernel at 16384^2, 8 levels
# Everything goes to $OUT (default out/summing); the last thing printed is a short table.
set -uo pipefail
out=${OUT:-out/summing}
mkdir -p "$out"
g=$(command -v gridsim || echo build/gridsim)
t=$(command -v gpu_backend_test || echo build/tests/gpu_backend_test)
before=${GRIDSIM_BEFORE:-}
parts=${PARTS:-tests sanitizer bench ncu}
repeat=${REPEAT:-2}
table=()
has() { [[ " $parts " == *" $1 "* ]]; }

if has tests; then
    filter=${FILTER:-GpuSummingPasses*:*TimeBlocks*:GpuFused*:*GraphReplay*}
    "$t" --gtest_color=no --gtest_filter="$filter" >"$out/tests.log" 2>&1
    table+=("tests (1 rank): rc $? | $(grep -E '^\[  PASSED|^\[  FAILED|^\[  SKIPPED' "$out/tests.log" | tr '\n' ' ')")
fi

if has sanitizer; then
    decks=("float inputs/jacobi2d_benchmark.toml --set grid.cells=[301,123] --set parallel.time_block=5"
        "float2 inputs/jacobi2d_benchmark.toml --set grid.cells=[1301,723] --set parallel.time_block=2"
        "float3 inputs/jacobi2d_benchmark.toml --set grid.cells=[1301,723] --set parallel.time_block=3"
        "auto inputs/jacobi2d_benchmark.toml --set grid.cells=[1460,1460] --set parallel.time_block=\"auto\""
        "double2 inputs/jacobi2d_benchmark.toml --set grid.cells=[261,140] --set parallel.time_block=2 --set problem.precision=\"double\""
        "thin inputs/jacobi2d_benchmark.toml --set grid.cells=[301,23] --set parallel.time_block=8"
        "double inputs/jacobi2d_benchmark.toml --set grid.cells=[261,140] --set parallel.time_block=3 --set problem.precision=\"double\" --set boundary.kind=\"dirichlet\" --set boundary.face_values=[1,2,3,4]")
    for tool in memcheck racecheck; do
        for d in "${decks[@]}"; do
            name=${d%% *}
            # shellcheck disable=SC2086
            compute-sanitizer --tool "$tool" --error-exitcode 9 "$g" run ${d#* } --quiet \
                --set time.norm_every=1 --set time.steps=12 >"$out/${tool}_$name.log" 2>&1
            table+=("$tool $name: rc $? | $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$out/${tool}_$name.log" | tr '\n' ' ')")
        done
    done
fi

# Steps for a run of N^2 points: 10^10 / N^2, clamped to 200..40000 (as bench-gpu.sh latency).
steps() {
    local s=$((10000000000 / $1 ** 2))
    echo $((s < 200 ? 200 : s > 40000 ? 40000 : s))
}

# One run: "us_per_step x_copy k sweeps_per_pass trial" from its report (trial: "auto"'s
# candidates as k:us_per_sweep, or -).
summary() {
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
trial = ",".join("%d:%.1f" % (t["time_block"], t["seconds_per_sweep"] * 1e6)
                 for t in d.get("time_block_trial", [])) or "-"
print("%.2f %.3f %d %.2f %s" % (d["time_per_step_s"] * 1e6, d["bandwidth_ratio"], d["time_block"],
                                d["sweeps_per_pass"], trial))' "$1" 2>/dev/null || echo "fail - - - -"
}

# run NAME BINARY ARGS...: one benchmark run, its summary line appended to bench.md.
run() {
    local name=$1 bin=$2
    shift 2
    "$bin" run "$@" --quiet --report "$out/bench/$name.json" >/dev/null 2>"$out/bench/$name.err"
    read -r us ratio k per_pass trial < <(summary "$out/bench/$name.json")
    echo "| $name | $k | $us | $ratio | $per_pass | $trial |" >>"$out/bench.md"
}

# res1 NAME PRECISION N K [BINARY]: jacobi N^2 with the residual every sweep at time_block K.
res1() {
    run "$1" "${5:-$g}" inputs/bench_jacobi2d.toml --set time.norm_every=1 \
        --set "grid.cells=[$3,$3]" --set "problem.precision=\"$2\"" \
        --set "time.steps=$(steps "$3")" --set "parallel.time_block=$4"
}

if has bench; then
    mkdir -p "$out/bench"
    echo "| run | k | us per sweep | x copy | sweeps per pass | trial (k: us per sweep) |" >"$out/bench.md"
    echo "| --- | --- | --- | --- | --- | --- |" >>"$out/bench.md"
    for r in $(seq 1 "$repeat"); do
        for prec in float double; do
            for n in 1024 2048 4096 8192 16384; do
                for k in 1 2 3 4 '"auto"'; do
                    res1 "res1_${prec}_${n}_k${k//\"/}_r$r" "$prec" "$n" "$k"
                done
                if [ -n "$before" ]; then
                    res1 "res1_${prec}_${n}_kauto_before_r$r" "$prec" "$n" '"auto"' "$before"
                fi
            done
        done
    done
    for n in 2048 16384; do
        s=$((n == 16384 ? 1000 : 5000))
        run "res100_${n}_auto" "$g" inputs/bench_jacobi2d.toml --set "grid.cells=[$n,$n]" \
            --set "time.steps=$s"
        if [ -n "$before" ]; then
            run "res100_${n}_auto_before" "$before" inputs/bench_jacobi2d.toml \
                --set "grid.cells=[$n,$n]" --set "time.steps=$s"
        fi
    done
    table+=("bench: $(($(wc -l <"$out/bench.md") - 2)) runs in bench.md")
fi

if has ncu; then
    metrics=gpu__time_duration.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active
    metrics+=,launch__registers_per_thread,launch__grid_size,launch__block_size,dram__bytes.sum
    metrics+=,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed
    metrics+=,l1tex__throughput.avg.pct_of_peak_sustained_elapsed
    metrics+=,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio
    metrics+=,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
    metrics+=,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio
    metrics+=,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio
    for every in 1 100; do
        ncu --clock-control none --csv --metrics "$metrics" --kernel-name regex:stencil_levels \
            --launch-skip 4 --launch-count 2 "$g" run inputs/bench_jacobi2d.toml --quiet \
            --set time.norm_every=$every --set parallel.time_block=8 --set time.steps=64 \
            >"$out/ncu_every$every.csv" 2>"$out/ncu_every$every.err"
        table+=("ncu every $every: rc $?")
    done
fi

echo
for line in "${table[@]}"; do echo "$line"; done
[ -f "$out/bench.md" ] && cat "$out/bench.md"
