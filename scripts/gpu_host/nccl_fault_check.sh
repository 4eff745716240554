#!/usr/bin/env bash
# What a rank does when its NCCL peer dies (README, "Batch jobs", "No hangs"), on 2 GPUs:
#   scripts/gpu_host/nccl_fault_check.sh
# mpirun --enable-recovery keeps Open MPI from ending the job itself when a rank dies, so what
# ends the survivor is gridsim's own doing:
#   net  - NCCL forced onto its socket transport (as between nodes): the survivor's NCCL sees
#          the connection close, the poll of ncclCommGetAsyncError names it, the communicator
#          is aborted and the rank exits 1;
#   nvl  - NCCL over NVLink (one node): NCCL reports nothing (the peer's memory simply stops
#          changing), the stall watchdog (run.stall_timeout = 10 s) ends the survivor.
# Needs gridsim on PATH. Logs go to $OUT (or out/nccl-fault).
set -uo pipefail
out=${OUT:-out/nccl-fault}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
log="$out/nccl-fault.log"
: >"$log"
deck=inputs/bench_jacobi2d.toml

pid_of_rank() {  # RANK: the pid of that gridsim rank
    for p in $(pgrep -x gridsim); do
        if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1"; then
            echo "$p"
            return
        fi
    done
}

kill_peer() {  # NAME ENV...: starts 2 ranks, kills rank 1 once stepping, times the survivor
    local name=$1
    shift
    local dir
    dir=$(mktemp -d)
    env "$@" mpirun --enable-recovery -np 2 gridsim run "$deck" --set time.steps=100000000 \
        --set parallel.transport=nccl \
        --set output.progress_every=200 --set run.stall_timeout='"00:00:10"' \
        --set "output.dir=\"$dir\"" >"$out/$name.log" 2>&1 &
    local launcher=$!
    until grep -q "^step " "$out/$name.log" 2>/dev/null; do
        sleep 0.2
        kill -0 $launcher 2>/dev/null || break
    done
    local victim
    victim=$(pid_of_rank 1)
    local t0
    t0=$(date +%s.%N)
    kill -9 "$victim"
    # The survivor: how long it takes to end (the launcher returns once it has).
    timeout 120 tail --pid=$launcher -f /dev/null
    local t1
    t1=$(date +%s.%N)
    wait $launcher
    local rc=$?
    local secs
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    echo "$name: killed rank 1 (pid $victim); launcher exit $rc after $secs s" | tee -a "$log"
    grep "gridsim: rank 0: error" "$out/$name.log" | tee -a "$log"
    rm -rf "$dir"
}

kill_peer net NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1 NCCL_SOCKET_IFNAME=lo
kill_peer nvl NCCL_DEBUG=WARN
echo
echo "| case | survivor ended by | seconds after the kill |"
echo "| --- | --- | --- |"
for name in net nvl; do
    line=$(grep "^$name:" "$log")
    how=$(grep -A3 "^$name:" "$log" | grep -o "NCCL reported an asynchronous error\|no step completed" | head -1)
    echo "| $name | ${how:-nothing seen} | $(echo "$line" | sed -n 's/.*after \([0-9.]*\) s/\1/p') |"
done
