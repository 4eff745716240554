#!/usr/bin/env bash
# scripts/gpu_host/fused_sweep_check.sh: one-rank sweeps in one launch (Backend::apply_boxes: the
# shell and interior of a residual sweep together, the residual folded by the launch's last
# block, a periodic walk axis copied into its halo by the sweep) on a GPU host, from the
# repository root after `source .gpu-host/env.sh`. PARTS picks (default all):
#   tests      gpu_backend_test at one rank (the whole suite, or FILTER)
#   sanitizer  compute-sanitizer memcheck, racecheck and synccheck of fused residual sweeps
#              (2D benchmark, 3D with a periodic z axis)
#   ab         this build against GRIDSIM_BEFORE (a build without the change, run with the
#              environment BEFORE_ENV, e.g. CUDA_MODULE_LOADING=EAGER), same call, REPEAT
#              repeats interleaved: jacobi 2D float residual every sweep, the same every 100
#              sweeps at time_block 1, heat 3D double
#   ncu        kernel times of recorded residual sweeps, jacobi 2048^2 and 4096^2
#   shape      jacobi float with the residual every sweep and every 100 (time_block 1), 1024^2 to
#              8192^2, over rows per thread and block shapes (SHAPE_ROWS, SHAPE_BLOCKS)
#   prof       ncu profile of the stencil kernels, this build and GRIDSIM_BEFORE: heat 3D 128^3,
#              jacobi 2048^2 with the residual every sweep (time, instructions, occupancy,
#              registers, DRAM and L2 bytes, stall reasons)
# Everything goes to $OUT (default out/fused); the last thing printed is a short table.
set -uo pipefail
out=${OUT:-out/fused}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
g=$(command -v gridsim || echo build/gridsim)
t=$(command -v gpu_backend_test || echo build/tests/gpu_backend_test)
before=${GRIDSIM_BEFORE:-}
parts=${PARTS:-tests sanitizer ab ncu shape prof}
repeat=${REPEAT:-2}
table=()
has() { [[ " $parts " == *" $1 "* ]]; }

if has tests; then
    "$t" --gtest_color=no --gtest_filter="${FILTER:-*}" >"$out/tests.log" 2>&1
    table+=("tests (1 rank): rc $? | $(grep -E '^\[  PASSED|^\[  FAILED|^\[  SKIPPED' "$out/tests.log" | tr '\n' ' ')")
fi

if has sanitizer; then
    decks=("jac2d inputs/jacobi2d_benchmark.toml --set grid.cells=[301,23]"
        "jac3d inputs/jacobi3d.toml --set grid.cells=[70,9,21] --set boundary.z=\"periodic\"")
    for tool in memcheck racecheck synccheck; do
        for d in "${decks[@]}"; do
            name=${d%% *}
            # shellcheck disable=SC2086
            compute-sanitizer --tool "$tool" --error-exitcode 9 "$g" run ${d#* } --quiet \
                --set time.norm_every=1 --set time.steps=12 --set parallel.graphs='"on"' \
                >"$out/${tool}_$name.log" 2>&1
            table+=("$tool $name: rc $? | $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$out/${tool}_$name.log" | tr '\n' ' ')")
        done
    done
fi

# Steps for a run of N^D points: 10^10 / N^D, clamped to 200..40000 (as bench-gpu.sh latency).
steps() {
    local s=$((10000000000 / $1 ** $2))
    echo $((s < 200 ? 200 : s > 40000 ? 40000 : s))
}

# One run's time per step and copy bandwidth from its report: "us_per_step copy_GBps".
step_us() {
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print("%.2f %.0f" % (d["time_per_step_s"] * 1e6, d["copy_bandwidth_GBps"]))' "$1" 2>/dev/null ||
        echo "fail -"
}

if has ab; then
    cases=()
    for n in 1024 2048 4096 8192 16384; do
        cases+=("jacobi_res1_$n|inputs/bench_jacobi2d.toml --set grid.cells=[$n,$n] --set time.norm_every=1 --set time.steps=$(steps $n 2)")
    done
    for n in 1024 2048 4096; do
        cases+=("jacobi_k1_$n|inputs/bench_jacobi2d.toml --set grid.cells=[$n,$n] --set parallel.time_block=1 --set time.steps=$(steps $n 2)")
    done
    for n in 128 256; do
        cases+=("heat3d_$n|inputs/bench_heat3d.toml --set grid.cells=[$n,$n,$n] --set time.steps=$(steps $n 3)")
    done
    mkdir -p "$out/ab"
    echo "| case | before us | now us | copy GB/s (now runs) |" >"$out/ab.md"
    echo "| --- | --- | --- | --- |" >>"$out/ab.md"
    for c in "${cases[@]}"; do
        name=${c%%|*}
        args=${c#*|}
        b_all=""
        n_all=""
        copy=""
        for r in $(seq 1 "$repeat"); do
            if [ -n "$before" ]; then
                # shellcheck disable=SC2086
                env ${BEFORE_ENV:-} "$before" run $args --quiet \
                    --report "$out/ab/${name}_before_$r.json" >/dev/null 2>&1
                b_all+="$(step_us "$out/ab/${name}_before_$r.json" | cut -d' ' -f1) "
            fi
            # shellcheck disable=SC2086
            "$g" run $args --quiet --report "$out/ab/${name}_now_$r.json" >/dev/null 2>&1
            read -r us bw < <(step_us "$out/ab/${name}_now_$r.json")
            n_all+="$us "
            copy+="$bw "
        done
        echo "| $name | ${b_all:--} | $n_all | $copy |" >>"$out/ab.md"
    done
    table+=("ab: $(wc -l <"$out/ab.md") lines in ab.md")
fi

if has ncu; then
    for n in 2048 4096; do
        ncu --clock-control none --csv --metrics gpu__time_duration.sum --launch-skip 300 \
            --launch-count 12 "$g" run inputs/bench_jacobi2d.toml --quiet \
            --set "grid.cells=[$n,$n]" --set time.norm_every=1 --set time.steps=400 \
            >"$out/ncu_$n.csv" 2>"$out/ncu_$n.err"
        table+=("ncu $n: rc $? | $(python3 "$here/ncu_metrics.py" "$out/ncu_$n.csv" 6)")
    done
fi

if has shape; then
    echo "| N | residual | block | rows | us per step |" >"$out/shape.md"
    echo "| --- | --- | --- | --- | --- |" >>"$out/shape.md"
    for n in 1024 2048 4096 8192; do
        for every in 1 100; do
            for block in ${SHAPE_BLOCKS:-32,4 32,8 64,4}; do
                for rows in ${SHAPE_ROWS:-4 8 16}; do
                    "$g" run inputs/bench_jacobi2d.toml --quiet --set "grid.cells=[$n,$n]" \
                        --set "time.norm_every=$every" --set parallel.time_block=1 \
                        --set "parallel.block=[$block]" --set "parallel.rows_per_thread=$rows" \
                        --set "time.steps=$(steps "$n" 2)" \
                        --report "$out/shape.json" >/dev/null 2>&1
                    echo "| $n | $every | $block | $rows | $(step_us "$out/shape.json" | cut -d' ' -f1) |" >>"$out/shape.md"
                done
            done
        done
    done
    table+=("shape: $(($(wc -l <"$out/shape.md") - 2)) runs in shape.md")
fi

if has prof; then
    metrics=gpu__time_duration.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active
    metrics+=,launch__registers_per_thread,launch__grid_size,launch__block_size,dram__bytes.sum,lts__t_bytes.sum
    metrics+=,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
    metrics+=,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio
    metrics+=,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio
    for build in now before; do
        bin=$g
        [ "$build" = before ] && bin=$before
        [ -z "$bin" ] && continue
        for c in "heat128|inputs/bench_heat3d.toml --set grid.cells=[128,128,128] --set time.steps=300" \
            "jacobi2048res|inputs/bench_jacobi2d.toml --set grid.cells=[2048,2048] --set time.norm_every=1 --set time.steps=300"; do
            name=${c%%|*}
            # shellcheck disable=SC2086
            ncu --clock-control none --csv --metrics "$metrics" --kernel-name regex:stencil \
                --launch-skip 100 --launch-count 4 "$bin" run ${c#*|} --quiet \
                >"$out/prof_${name}_$build.csv" 2>"$out/prof_${name}_$build.err"
            table+=("prof $name $build: rc $? | $(python3 "$here/ncu_metrics.py" "$out/prof_${name}_$build.csv")")
        done
    done
fi

[ -f "$out/ab.md" ] && cat "$out/ab.md"
[ -f "$out/shape.md" ] && cat "$out/shape.md"
printf '%s\n' "${table[@]}"
