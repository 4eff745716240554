#!/usr/bin/env bash
# Seventh session, call 18 (`nvidia-h200-x2`): a STOP file stops a two-GPU time-blocked run
# (NCCL or ipc deep halos, recorded sweeps) at a block end with a checkpoint, and the restart
# continues bitwise to the field of an uninterrupted run. From the repository root on the GPU
# host after `source .gpu-host/env.sh`; everything under $1.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
for deck in "jacobi inputs/bench_jacobi2d.toml --set grid.cells=[4096,4096] --set parallel.time_block=8" \
    "heat inputs/bench_heat3d.toml --set grid.cells=[256,256,256] --set parallel.time_block=3"; do
    read -r name file sets <<<"$deck"
    read -r -a sets <<<"$sets"
    d=$out/$name
    mkdir -p "$d/stop" && touch "$d/stop/STOP"
    mpirun -np 2 gridsim run "$file" "${sets[@]}" --set time.steps=100000 --set output.write_final=true \
        --set "output.dir=\"$d/stop\"" >"$d/stop.log" 2>&1
    rc=$?
    step=$(sed -n 's/.*stopped at step \([0-9]*\) of.*/\1/p' "$d/stop.log" | head -1)
    end=$((step + 37))
    mpirun -np 2 gridsim run "$file" "${sets[@]}" --quiet --set time.steps=$end --set output.write_final=true \
        --set "output.dir=\"$d/stop\"" --restart "$d/stop/checkpoint.h5" >"$d/restart.log" 2>&1
    rc2=$?
    mpirun -np 2 gridsim run "$file" "${sets[@]}" --quiet --set time.steps=$end --set output.write_final=true \
        --set "output.dir=\"$d/whole\"" >"$d/whole.log" 2>&1
    rc3=$?
    gridsim compare "$d/stop/snapshot_final.h5" "$d/whole/snapshot_final.h5" --atol 0 >"$d/compare.log" 2>&1
    echo "$name: stop rc $rc at step $step (block end: k ${sets[-1]}), restart rc $rc2, whole rc $rc3, compare rc $? ($(tail -1 "$d/compare.log"))"
    rm -rf "$d/stop" "$d/whole"
done
