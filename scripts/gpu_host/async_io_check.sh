#!/usr/bin/env bash
# Asynchronous snapshots (output.async) measured on a GPU host, in one call:
#   scripts/gpu_host/async_io_check.sh [DIR]
# 1. the write ceiling of DIR (default ./io-check, on the disk the repository is on):
#    gridsim bench --io, 1 rank and 2 ranks;
# 2. heat 3D 256^3 double, 50 steps, a snapshot every 10 (the I/O-bound cadence), asynchronous
#    and synchronous, and without snapshots; the snapshots of both must be the same, bit for bit
#    (gridsim compare, tolerance 0);
# 3. heat 3D 512^3 double, BIG_STEPS (default 800) steps, a snapshot every 400 (few snapshots),
#    with and without, and (unless HINTS=0) synchronous with ROMIO's collective buffering and
#    data sieving off.
# 1 GPU, and 2 GPUs when the host has them. Reports and logs go to $OUT (or out/async-io); a
# table is printed last (scripts/gpu_host/async_io_table.py). DIR may be a memory file system
# (/dev/shm) to see the loop where the disk does not bound it.
set -uo pipefail
out=${OUT:-out/async-io}
dir=${1:-io-check}
mkdir -p "$out" "$dir"
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}   # no NVLink multicast on shared hosts
log="$out/async-io.log"
ngpu=$(nvidia-smi -L | wc -l)
run() { echo "=== $*" >>"$log"; "$@" >>"$log" 2>&1; local rc=$?; echo "    rc=$rc" >>"$log"; echo "rc=$rc  $*"; }
launch() { local n=$1; shift; if [ "$n" -gt 1 ]; then mpirun -np "$n" "$@"; else "$@"; fi; }

nvidia-smi -L | tee -a "$log"
ranks=$(printf '%s\n' 1 "$ngpu" | sort -u | awk '$1 <= 2')
for n in $ranks; do
    run launch "$n" gridsim bench --io "$dir" --size-mib 4096 --reps 2
    grep -A1 "bench --io" "$log" | tail -1 | sed "s/^/ranks=$n /" >"$out/io-ceiling-n$n.txt"
    # Several ranks: also the ceiling of one shared file (as a snapshot is written).
    tail -4 "$log" | grep "one shared file" | sed "s/^/ranks=$n /" >>"$out/io-ceiling-n$n.txt"
done

small=(inputs/bench_heat3d.toml --quiet --set grid.cells=[256,256,256] --set time.steps=50)
big=(inputs/bench_heat3d.toml --quiet --set time.steps=${BIG_STEPS:-800})
for n in $ranks; do
    for mode in off on; do
        rm -rf "$dir/s$n$mode"
        run launch "$n" gridsim run "${small[@]}" --set output.snapshot_every=10 \
            --set "output.dir=\"$dir/s$n$mode\"" --set "output.async=\"$mode\"" \
            --report "$out/small-n$n-$mode.json"
    done
    for step in 10 20 30 40 50; do
        f=$(printf 'snapshot_%08d.h5' "$step")
        run gridsim compare "$dir/s${n}off/$f" "$dir/s${n}on/$f"
    done
    rm -rf "$dir/s${n}off" "$dir/s${n}on"
    run launch "$n" gridsim run "${small[@]}" --set "output.dir=\"$dir/c$n\"" \
        --report "$out/small-n$n-none.json"
    for mode in on off; do
        rm -rf "$dir/b$n"
        run launch "$n" gridsim run "${big[@]}" --set output.snapshot_every=400 \
            --set "output.dir=\"$dir/b$n\"" --set "output.async=\"$mode\"" \
            --report "$out/big-n$n-$mode.json"
    done
    rm -rf "$dir/b$n"
    run launch "$n" gridsim run "${big[@]}" --set "output.dir=\"$dir/b$n\"" \
        --report "$out/big-n$n-none.json"
    [ "${HINTS:-1}" = 0 ] && continue
    # What MPI-IO's collective buffering and data sieving cost: the synchronous write again
    # with both off (ROMIO reads hints from the file ROMIO_HINTS names).
    printf 'romio_cb_write disable\nromio_ds_write disable\n' >"$out/romio-hints.txt"
    rm -rf "$dir/b$n"
    run launch "$n" env ROMIO_HINTS="$out/romio-hints.txt" gridsim run "${big[@]}" \
        --set output.snapshot_every=400 --set "output.dir=\"$dir/b$n\"" \
        --set 'output.async="off"' --report "$out/big-n$n-hints.json"
    rm -rf "$dir/b$n"
done
rm -rf "$dir"
python3 scripts/gpu_host/async_io_table.py "$out" | tee "$out/table.md"
