#!/usr/bin/env bash
# The small-subdomain step (sweeps replayed as CUDA graphs, one launch per face phase, sampled
# phase timing) checked on a GPU host, in one call:
#   scripts/gpu_host/step_cost_check.sh
# 1. the gpu tests at 1 rank and at as many ranks as the host has GPUs (graph replay bitwise
#    against the plain path, NCCL included);
# 2. compute-sanitizer memcheck and racecheck of recorded sweeps (periodic self-exchange and the
#    fused residual on one GPU);
# 3. kernels and their time per sweep from ncu's launch list, 2048^2 jacobi on one GPU, graphs
#    off with every phase timed against the default (CUDA graph nodes are profiled one by one);
#    with GRIDSIM_BEFORE (an earlier build) the same for it;
# 4. a jacobi run stopped by a STOP file under graphs restarts to the same field, bit for bit,
#    as an uninterrupted run (1 GPU, and 2 GPUs over NCCL).
# Needs gridsim and gpu_backend_test on PATH. Logs go to $OUT (or out/step-cost); a summary
# is printed last. The latency curve is `scripts/bench-gpu.sh latency`.
set -uo pipefail
out=${OUT:-out/step-cost}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}   # no NVLink multicast on shared hosts
log="$out/step-cost.log"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ngpu=$(nvidia-smi -L | wc -l)
run() { echo "=== $*" >>"$log"; "$@" >>"$log" 2>&1; local rc=$?; echo "    rc=$rc" >>"$log"; echo "rc=$rc  $*"; }
result() { echo "$1: $2" | tee -a "$log"; }

nvidia-smi -L | tee -a "$log"
for n in $(printf '%s\n' 1 "$ngpu" | sort -u); do
    run mpirun -np "$n" gpu_backend_test --gtest_brief=1
done

small=(inputs/jacobi2d_benchmark.toml --quiet --set grid.cells=[301,23] --set time.steps=12
       --set time.norm_every=1 --set parallel.phase_every=5)
run compute-sanitizer --tool memcheck --error-exitcode 9 gridsim run "${small[@]}"
run compute-sanitizer --tool racecheck --error-exitcode 9 gridsim run "${small[@]}"
run compute-sanitizer --tool memcheck --error-exitcode 9 gridsim run inputs/default.toml --quiet \
    --set grid.cells=[135,9,11] --set boundary.kind='"periodic"' --set time.steps=12

# Kernels per sweep: the launch list of 20 sweeps after 10 unprofiled ones.
launches() {  # NAME GRIDSIM [--set ...]
    local name=$1 bin=$2; shift 2
    ncu --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel \
        --launch-skip 60 --launch-count 400 \
        "$bin" run inputs/bench_jacobi2d.toml --quiet --set grid.cells=[2048,2048] \
        --set time.norm_every=1 --set time.steps=200 "$@" >"$out/ncu-$name.txt" 2>&1
    echo "--- $name: kernels in the profiled window (400 launches at most)" >>"$out/ncu-launches.txt"
    grep -E "^  [a-z_].*\(|Invocations|gpu__time_duration.sum" "$out/ncu-$name.txt" >>"$out/ncu-launches.txt"
}
if command -v ncu >/dev/null; then
    launches plain gridsim --set parallel.graphs=off --set parallel.phase_every=1
    launches graphs gridsim
    [ -n "${GRIDSIM_BEFORE:-}" ] && launches before "$GRIDSIM_BEFORE"
fi

# A STOP file once a long run is under way (after its first progress line): it stops at the
# next agreement, writes a checkpoint and exits 3; the restart to END sweeps must equal one
# straight run without graphs, bitwise.
stop_and_restart() {  # RANKS
    local n=$1 dir=$work/stop$1 end
    local deck=(inputs/bench_jacobi2d.toml --set grid.cells=[1024,1024] --set time.norm_every=1)
    mkdir -p "$dir"
    mpirun -np "$n" gridsim run "${deck[@]}" --set time.steps=1000000 --set output.progress_every=500 \
        --set "output.dir=\"$dir\"" >"$dir.log" 2>&1 &
    local pid=$!
    until grep -q "^step " "$dir.log" 2>/dev/null; do sleep 0.05; kill -0 $pid 2>/dev/null || break; done
    touch "$dir/STOP"
    wait $pid
    local rc=$? step
    step=$(sed -n 's/^stopped at step \([0-9]*\) .*/\1/p' "$dir.log")
    end=$(( ${step:-0} + 333 ))
    deck+=(--quiet)
    cat "$dir.log" >>"$log"
    mpirun -np "$n" gridsim run "${deck[@]}" --set time.steps=$end --set output.write_final=true \
        --set "output.dir=\"$dir\"" --restart "$dir/checkpoint.h5" >>"$log" 2>&1 &&
        mpirun -np "$n" gridsim run "${deck[@]}" --set time.steps=$end --set output.write_final=true \
            --set "output.dir=\"$dir-whole\"" --set parallel.graphs=off >>"$log" 2>&1 &&
        gridsim compare "$dir/snapshot_final.h5" "$dir-whole/snapshot_final.h5" --atol 0 >>"$log" 2>&1
    local same=$?
    result "STOP under graphs, $n GPU(s): exit $rc at step ${step:-?} (want 3), restart to $end bitwise equal to a run without graphs" \
        "$([ "$rc" = 3 ] && [ $same = 0 ] && grep -q "CUDA graphs" "$dir.log" && echo PASS || echo FAIL)"
}
stop_and_restart 1
[ "$ngpu" -ge 2 ] && stop_and_restart 2

echo
echo "summary:"
grep -E "PASSED|FAILED|SKIPPED" "$log" | sort | uniq -c
grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | sort | uniq -c
grep "rc=[1-9]" "$log" | sed 's/^/FAILED: /' | head
grep -E ": (PASS|FAIL)$" "$log"
cat "$out/ncu-launches.txt" 2>/dev/null | head -60
