#!/usr/bin/env bash
# Background snapshots on a GPU host, in one call: the checks, then scripts/gpu_host/
# async_io_check.sh on the disk and on a memory file system, each with this build and, where
# GRIDSIM_BEFORE names an older gridsim, with that one in the same call.
#   GRIDSIM_BEFORE=/path/to/old/gridsim OUT=$OUT scripts/gpu_host/async_io_ab.sh
# 1. gpu_backend_test (every test at one rank), compute-sanitizer memcheck of a run whose
#    snapshots are staged while the steps go on; synchronous snapshots and a checkpoint staged
#    from the device compared with the CPU backend's files (gridsim compare, 1e-12);
# 2. async_io_check.sh on ./io-check (the disk), 800 steps for the 512^3 deck, hints included;
# 3. the same on /dev/shm (no disk bound), 1200 steps for the 512^3 deck (snapshots at 400 and
#    800, none on the last step), no hints;
# 2 and 3 again with GRIDSIM_BEFORE, without hints. Tables last.
set -uo pipefail
out=${OUT:-out/async-ab}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

gpu_backend_test >"$out/gpu-tests.log" 2>&1
echo "gpu_backend_test rc=$? ($(grep -c '^\[       OK' "$out/gpu-tests.log") ok)" | tee "$out/checks.txt"
rm -rf san
compute-sanitizer --tool memcheck --error-exitcode 9 gridsim run inputs/bench_heat3d.toml --quiet \
    --set grid.cells=[96,80,64] --set time.steps=60 --set output.snapshot_every=5 \
    --set 'output.async="on"' --set 'output.dir="san"' >"$out/memcheck.log" 2>&1
echo "memcheck rc=$? $(grep -h 'ERROR SUMMARY' "$out/memcheck.log")" | tee -a "$out/checks.txt"
rm -rf san
# Synchronous snapshots and a checkpoint staged from the device, against the CPU backend's.
small=(inputs/bench_heat3d.toml --quiet --set grid.cells=[72,56,40] --set time.steps=20
       --set output.snapshot_every=10 --set output.checkpoint_every=20 --set 'output.async="off"')
for be in cuda cpu; do
    rm -rf "sync-$be"
    gridsim run "${small[@]}" --set "parallel.backend=\"$be\"" --set "output.dir=\"sync-$be\"" \
        --set "output.checkpoint=\"sync-$be/ckpt.h5\"" >>"$out/sync-vs-cpu.log" 2>&1
done
for f in snapshot_00000010.h5 snapshot_00000020.h5 ckpt.h5; do
    gridsim compare --rtol 1e-12 --atol 1e-12 "sync-cuda/$f" "sync-cpu/$f" >>"$out/sync-vs-cpu.log" 2>&1
    echo "sync $f cuda vs cpu rc=$?" | tee -a "$out/checks.txt"
done
rm -rf sync-cuda sync-cpu

if [ -n "${GRIDSIM_BEFORE:-}" ]; then
    mkdir -p "$out/before-bin"
    ln -sf "$GRIDSIM_BEFORE" "$out/before-bin/gridsim"
fi
for where in disk shm; do
    if [ "$where" = disk ]; then dir=io-check; steps=800; hints=1; else dir=/dev/shm/gridsim-io; steps=1200; hints=0; fi
    OUT="$out/$where" BIG_STEPS=$steps HINTS=$hints bash "$here/async_io_check.sh" "$dir" >/dev/null
    if [ -n "${GRIDSIM_BEFORE:-}" ]; then
        PATH="$out/before-bin:$PATH" OUT="$out/$where-before" BIG_STEPS=$steps HINTS=0 \
            bash "$here/async_io_check.sh" "$dir" >/dev/null
    fi
done
rm -rf "$out/before-bin"
for t in "$out"/*/table.md; do echo "## $t"; cat "$t"; done
cat "$out/checks.txt"
