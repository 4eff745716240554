#!/usr/bin/env bash
# The 3D levels kernel (2 tile rows per thread, z chunks by waves) checked and measured on a GPU
# host in one call:
#   OUT=dir [GRIDSIM_BEFORE=path] [PARTS="tests sanitizer bench"] bash scripts/gpu_host/levels3d_check.sh
# 1. tests: gpu_backend_test at one rank, and its time-block cases at two ranks sharing the GPU
#    (staged deep-halo exchange);
# 2. sanitizer: compute-sanitizer memcheck and racecheck of heat 3D at 3 and 4 levels (double,
#    float) and jacobi 3D at 3, over boxes of several tiles;
# 3. bench: heat 3D 512^3 and 256^3, double and float, time_block 1..4, 8 and "auto", and the
#    small cubes 64^3..192^3 at 1 and "auto"; GRIDSIM_BEFORE (a build of the previous kernel)
#    runs the same "auto" decks interleaved. Every report gives GLUP/s against the copy rate
#    measured in the same run; a table is printed last.
set -uo pipefail
default_out=out/levels3d
default_parts="tests sanitizer bench"
source "$(dirname "${BASH_SOURCE[0]}")/check_common.sh"

if part tests; then
    run timeout 420 "$tests" --gtest_color=no
    run timeout 300 mpirun -np 2 "$tests" --gtest_color=no \
        --gtest_filter='*TimeBlocksAreBitwiseIdentical/heat3d*:*TimeBlocksAreBitwiseIdentical/jacobi3d*:GpuLevels3d*'
fi

small=(--quiet --set parallel.backend=\"cuda\" --set output.progress_every=0)
if part sanitizer; then
    for tool in memcheck racecheck; do
        for pk in double:3 float:4 double:4; do
            run compute-sanitizer --tool $tool --error-exitcode 9 gridsim run \
                inputs/bench_heat3d.toml "${small[@]}" --set time.steps=24 \
                --set grid.cells=[77,101,29] --set problem.precision=\"${pk%:*}\" \
                --set parallel.time_block=${pk#*:}
        done
        run compute-sanitizer --tool $tool --error-exitcode 9 gridsim run inputs/jacobi3d.toml \
            "${small[@]}" --set time.steps=24 --set grid.cells=[61,90,17] --set parallel.time_block=3
    done
fi

bench() {  # label binary k sets...
    time_block_run "$1" "$2" bench_heat3d.toml "${@:3}"
}
if part bench; then
    before=${GRIDSIM_BEFORE:-}
    for p in double float; do
        for k in 1 2 3 4 8 auto; do bench "heat512-$p" gridsim $k --set problem.precision=\"$p\"; done
        [ -n "$before" ] && bench "before-heat512-$p" "$before" auto --set problem.precision=\"$p\"
        for k in 1 auto; do
            bench "heat256-$p" gridsim $k --set problem.precision=\"$p\" \
                --set grid.cells=[256,256,256] --set time.steps=2000
        done
        [ -n "$before" ] && bench "before-heat256-$p" "$before" auto \
            --set problem.precision=\"$p\" --set grid.cells=[256,256,256] --set time.steps=2000
        for n in 64 96 128 160 192; do
            steps=$((50000000000 / (n * n * n)))
            ((steps > 20000)) && steps=20000
            for k in 1 auto; do
                bench "heat$n-$p" gridsim $k --set problem.precision=\"$p\" \
                    --set grid.cells=[$n,$n,$n] --set time.steps=$steps
            done
            [ -n "$before" ] && bench "before-heat$n-$p" "$before" auto \
                --set problem.precision=\"$p\" --set grid.cells=[$n,$n,$n] --set time.steps=$steps
        done
    done
    # The 2D levels kernel is untouched: its "auto" figure as a check.
    run gridsim run inputs/bench_jacobi2d.toml --quiet --set 'parallel.time_block="auto"' \
        --report "$out/jacobi16384-float-kauto.json"
fi

grep -E "^\[  (PASSED|FAILED)|tests? ran|ERROR SUMMARY|RACECHECK SUMMARY|rc=[1-9]" "$log" | sort | uniq -c
report_table
