#!/usr/bin/env bash
# parallel.time_block = "auto" by a start-up trial, checked and measured on a GPU host in one call:
#   OUT=dir [PARTS="smoke tests bench2d bench3d"] [REPEAT=1] bash scripts/gpu_host/time_block_trial_check.sh
# 1. smoke: the start header of a heat 3D run at 256^3 on one rank and on two ranks sharing the
#    GPU (the ranks agree on one k), with the trial's times;
# 2. tests: gpu_backend_test at one rank;
# 3. bench3d: heat 3D, double and float, N^3 for N = 128..512: "auto" (the trial) and k = 2, 3, 4
#    (k = 3 double / 4 float is what "auto" took before the trial);
# 4. bench2d: jacobi 2D, residual every 100 sweeps, float and double, 2048^2..16384^2: "auto"
#    and k = 8 float / 7 double ("auto" before the trial).
# Every report gives GLUP/s against the copy rate measured in the same run; a table is printed
# last (report_table.py: x copy, the k taken and, per k, the trial's us per sweep).
set -uo pipefail
default_out=out/trial
default_parts="smoke tests bench3d bench2d"
source "$(dirname "${BASH_SOURCE[0]}")/check_common.sh"
repeat=${REPEAT:-1}

if part smoke; then
    run gridsim run inputs/bench_heat3d.toml --set grid.cells=[256,256,256] --set time.steps=50
    run mpirun -np 2 gridsim run inputs/bench_heat3d.toml --set grid.cells=[256,256,256] \
        --set time.steps=50
fi

if part tests; then
    run timeout 480 "$tests" --gtest_color=no
fi

bench() {  # label deck k sets...
    time_block_run "$1" gridsim "${@:2}"
}
for ((rep = 1; rep <= repeat; rep++)); do
    if part bench3d; then
        for n in 128 160 192 224 256 288 320 384 448 512; do
            steps=$((30000000000 / (n * n * n)))
            ((steps < 200)) && steps=200
            for p in double float; do
                for k in auto 2 3 4; do
                    bench "heat$n-$p-r$rep" bench_heat3d.toml $k --set problem.precision=\"$p\" \
                        --set grid.cells=[$n,$n,$n] --set time.steps=$steps
                done
            done
        done
    fi
    if part bench2d; then
        for n in 2048 4096 8192 16384; do
            steps=$((16000000000 / (n * n)))
            for p in float:8 double:7; do
                for k in auto ${p#*:}; do
                    bench "jacobi$n-${p%:*}-r$rep" bench_jacobi2d.toml $k \
                        --set problem.precision=\"${p%:*}\" --set grid.cells=[$n,$n] \
                        --set time.steps=$steps
                done
            done
        done
    fi
done

grep -E "^\[  (PASSED|FAILED)|tests? ran|rc=[1-9]" "$log" | sort | uniq -c
report_table
