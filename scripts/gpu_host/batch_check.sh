#!/usr/bin/env bash
# The batch-job behaviour on the CUDA backend (README, "Batch jobs"), in one call:
#   scripts/gpu_host/batch_check.sh
# SIGUSR1 to a one-GPU run and a STOP file in a two-GPU NCCL run end in exit code 3 with a
# checkpoint, and each restart reaches the same field, bit for bit, as an uninterrupted run; a
# float overflow is caught by the device-side check (exit 1); a grid larger than the device is
# refused before allocating (exit 2). Needs gridsim on PATH. Logs go to $OUT (or out/batch).
set -uo pipefail
out=${OUT:-out/batch}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
log="$out/batch.log"
deck=inputs/bench_heat3d.toml
common=(--set "grid.cells=${CELLS:-[256,256,256]}" --set output.progress_every=100)
result() { echo "$1: $2" | tee -a "$log"; }

# Starts a long run in the background, waits for its first progress line, then does $1.
stop_run() {  # HOW RANKS DIR
    local how=$1 ranks=$2 dir=$3
    mpirun -np "$ranks" gridsim run "$deck" "${common[@]}" --set time.steps=10000000 \
        --set "output.dir=\"$dir\"" >"$dir.log" 2>&1 &
    local pid=$!
    until grep -q "^step " "$dir.log" 2>/dev/null; do sleep 0.2; kill -0 $pid 2>/dev/null || break; done
    # The signal goes to the ranks themselves, as Slurm delivers it (mpirun forwards SIGUSR1
    # only where it may receive it).
    if [ "$how" = signal ]; then pkill -USR1 -x gridsim; else touch "$dir/STOP"; fi
    wait $pid
    echo $?
}

restart_matches() {  # RANKS DIR
    local ranks=$1 dir=$2
    local step
    step=$(sed -n 's/^stopped at step \([0-9]*\) .*/\1/p' "$dir.log")
    [ -n "$step" ] || { echo "no stop line"; return 1; }
    local end=$((step + 60))
    mpirun -np "$ranks" gridsim run "$deck" "${common[@]}" --quiet --set time.steps=$end \
        --set output.write_final=true --set "output.dir=\"$dir\"" \
        --restart "$dir/checkpoint.h5" >>"$log" 2>&1 || return 1
    mpirun -np 1 gridsim run "$deck" "${common[@]}" --quiet --set time.steps=$end \
        --set output.write_final=true --set "output.dir=\"$dir-whole\"" >>"$log" 2>&1 || return 1
    gridsim compare "$dir/snapshot_final.h5" "$dir-whole/snapshot_final.h5" --atol 0 >>"$log" 2>&1
    echo "restart from step $step to $end bitwise equal to one uninterrupted run" >>"$log"
}

mkdir -p "$work/sig"
rc=$(stop_run signal 1 "$work/sig")
cat "$work/sig.log" >>"$log"
result "SIGUSR1, 1 GPU: exit $rc (want 3)" "$([ "$rc" = 3 ] && restart_matches 1 "$work/sig" && echo PASS || echo FAIL)"

ngpus=$(nvidia-smi -L | wc -l)
if [ "$ngpus" -ge 2 ]; then
    mkdir -p "$work/stop"
    rc=$(stop_run file 2 "$work/stop")
    cat "$work/stop.log" >>"$log"
    ok=FAIL
    if [ "$rc" = 3 ] && grep -qE "transport (nccl|ipc)" "$work/stop.log" && restart_matches 2 "$work/stop"; then ok=PASS; fi
    result "STOP file, 2 GPUs, GPU-to-GPU halos: exit $rc (want 3)" "$ok"
fi

mpirun -np 1 gridsim run "$deck" --quiet --set problem.precision='"float"' \
    --set initial.amplitude=3e38 --set output.check_every=4 >"$work/blow.log" 2>&1
rc=$?
cat "$work/blow.log" >>"$log"
result "float overflow on the GPU: exit $rc (want 1)" \
    "$([ $rc = 1 ] && grep -q 'step 4: the solution blew up' "$work/blow.log" && echo PASS || echo FAIL)"

mpirun -np 1 gridsim run "$deck" --quiet --set grid.cells=[2560,2560,2560] >"$work/big.log" 2>&1
rc=$?
cat "$work/big.log" >>"$log"
result "2560^3 double on one GPU: exit $rc (want 2)" \
    "$([ $rc = 2 ] && grep -q 'of device memory' "$work/big.log" && echo PASS || echo FAIL)"
echo
grep -E ": (PASS|FAIL)$" "$log"
