#!/usr/bin/env bash
# Temporal blocking (parallel.time_block) checked and measured on a GPU host, in one call:
#   OUT=dir scripts/gpu_host/time_block_check.sh
# 1. gpu_backend_test's time-block, graph and overlap cases (bitwise against time_block = 1);
# 2. compute-sanitizer memcheck and racecheck of the levels kernels (2D jacobi and heat, 3D
#    heat with 3 and 4 levels);
# 3. time_block = 1..8 on jacobi 2D 16384^2 float (residual every 100 sweeps and every sweep),
#    double, jacobi 2048^2 float (a small subdomain), heat 3D 512^3 double and float, heat 3D
#    256^3 double; every report gives GLUP/s against the copy bandwidth measured in the same run;
# 4. ncu (clocks not locked) on one levels kernel launch: DRAM bytes, throughput, occupancy,
#    stall reasons (jacobi 2D float at 4 and 8 levels; heat 3D double and float, time_block 4).
# PARTS picks the parts (default "tests sanitizer bench ncu"), BENCH_DECKS the decks of part 3
# and NCU_DECKS those of part 4 (jacobi, heat3d). Reports and logs go to $OUT (or
# out/time-block); a table is printed last (scripts/gpu_host/time_block_table.py).
set -uo pipefail
out=${OUT:-out/time-block}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
log="$out/time-block.log"
run() { echo "=== $*" >>"$log"; "$@" >>"$log" 2>&1; local rc=$?; echo "    rc=$rc" >>"$log"; echo "rc=$rc  $*"; }
nvidia-smi -L | tee -a "$log"
parts=" ${PARTS:-tests sanitizer bench ncu} "
part() { [[ "$parts" == *" $1 "* ]]; }

tests=${GPU_TEST:-build/tests/gpu_backend_test}
[ -x "$tests" ] || tests=$(command -v gpu_backend_test)
if part tests; then
    run timeout 400 mpirun -np 1 "$tests" \
        --gtest_filter='*TimeBlock*:*Overlap*:*GraphReplay*:*AgreesWithTheCpu*'
    grep -E "PASSED|FAILED" "$log" | tail -12
fi

small2d=(--set parallel.backend=\"cuda\" --set time.steps=24 --set output.progress_every=0)
part sanitizer && for tool in memcheck racecheck; do
    run compute-sanitizer --tool "$tool" --error-exitcode 9 gridsim run inputs/bench_jacobi2d.toml \
        --quiet "${small2d[@]}" --set grid.cells=[301,77] --set time.norm_every=10 \
        --set parallel.time_block=5
    run compute-sanitizer --tool "$tool" --error-exitcode 9 gridsim run inputs/bench_jacobi2d.toml \
        --quiet "${small2d[@]}" --set grid.cells=[67,45] --set problem.name=\"heat\" \
        --set boundary.kind=\"dirichlet\" --set parallel.time_block=8
    for k in 3 4; do
        run compute-sanitizer --tool "$tool" --error-exitcode 9 gridsim run \
            inputs/bench_heat3d.toml --quiet "${small2d[@]}" --set grid.cells=[45,37,29] \
            --set parallel.time_block=$k
    done
done

bench() {  # label deck k sets...
    local label=$1 deck=$2 k=$3 value=$3
    shift 3
    [ "$k" = auto ] && value='"auto"'
    run gridsim run "$deck" --quiet --set "parallel.time_block=$value" "$@" \
        --report "$out/$label-k$k.json"
}
part bench || BENCH_DECKS=none
decks=" ${BENCH_DECKS:-f32 f64 norm1 2048 heat3d} "
deck() { [[ "$decks" == *" $1 "* ]]; }
deck f32 && for k in ${F32_KS:-1 2 3 4 5 6 7 8 auto}; do bench jacobi-f32 inputs/bench_jacobi2d.toml $k; done
deck f64 && for k in 1 2 3 4 5 6 7 8 auto; do
    bench jacobi-f64 inputs/bench_jacobi2d.toml $k --set problem.precision=\"double\"
done
deck norm1 && for k in 1 4 8 auto; do bench jacobi-f32-norm1 inputs/bench_jacobi2d.toml $k --set time.norm_every=1; done
deck 2048 && for k in 1 2 4 8 auto; do
    bench jacobi-2048 inputs/bench_jacobi2d.toml $k --set grid.cells=[2048,2048] \
        --set time.steps=5000
done
deck heat3d && for k in 1 2 3 4 8 auto; do bench heat3d-f64 inputs/bench_heat3d.toml $k; done
deck heat3d-f32 && for k in 1 2 3 4 8 auto; do
    bench heat3d-f32 inputs/bench_heat3d.toml $k --set problem.precision=\"float\"
done
deck heat3d-256 && for k in 1 2 3 4 auto; do
    bench heat3d-256 inputs/bench_heat3d.toml $k --set grid.cells=[256,256,256] \
        --set time.steps=2000
done

ncu_decks=" ${NCU_DECKS:-jacobi heat3d} "
# Under ncu's replays the stop agreement (about every 50 ms) cuts the 3D blocks to 2 sweeps, so
# these are 2-level launches; four of them, past the first passes.
part ncu && [[ "$ncu_decks" == *" heat3d "* ]] && for p in double float; do
    run ncu --clock-control none -k regex:stencil_levels_3d -s 40 -c 4 \
        --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
        --section WarpStateStats --section LaunchStats \
        --metrics dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum \
        gridsim run inputs/bench_heat3d.toml --quiet --set time.steps=400 \
        --set parallel.time_block=4 --set problem.precision=\"$p\"
    sed -n '/=== ncu.*bench_heat3d.*precision=."'"$p"'/,/rc=/p' "$log" >"$out/ncu-heat3d-$p-k4.txt"
done
part ncu && [[ "$ncu_decks" == *" jacobi "* ]] && for k in 4 8; do
    run ncu --clock-control none -k regex:stencil_levels -s 20 -c 1 \
        --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
        --section WarpStateStats --section LaunchStats \
        --metrics dram__bytes_read.sum,dram__bytes_write.sum \
        gridsim run inputs/bench_jacobi2d.toml --quiet --set time.steps=200 \
        --set parallel.time_block=$k
    sed -n '/=== ncu.*bench_jacobi2d.*time_block='"$k"'$/,/rc=/p' "$log" >"$out/ncu-jacobi-f32-k$k.txt"
done

python3 scripts/gpu_host/time_block_table.py "$out" | tee "$out/table.md"
tar -czf "$out/reports.tgz" -C "$out" $(cd "$out" && ls *.json ncu-*.txt 2>/dev/null)
