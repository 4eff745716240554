#!/usr/bin/env bash
# Thirteenth session, two GPUs (call 4 on): this build (faces of long rows straight into the
# neighbour's field, faces across x packed, one put kernel for both) against BASE (default
# gridsim-base), interleaved, REPS rounds (default 2): one GPU, two GPUs "auto" (the decks'
# defaults: jacobi 16384^2 float residual every 100, split along x by the process-grid model;
# heat 512^3 double split along z), and jacobi split along y (process_grid = [1, 2]: two faces
# straight into the same peer); then gpu_backend_test at two ranks (the halo test, the ipc,
# time-block, overlap, thin and implicit cases) and memcheck (heat 3D k = 3, jacobi 2D k = 4,
# overlap "fused"). From the repository root on the GPU host after `source .gpu-host/env.sh`;
# under $1: timing.txt (case, ranks, binary, k, process grid, us per step, x copy per GPU, the
# exchange trial), summary.txt, gpus.txt, logs.tar.gz.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
base=${BASE:-gridsim-base}
nvidia-smi --query-gpu=name --format=csv,noheader >"$out/gpus.txt"
one() {  # NAME NP BINARY DECK [--set ...]
    local name=$1 np=$2 bin=$3 deck=$4
    shift 4
    timeout 120 mpirun -np "$np" "$bin" run "$deck" --quiet "$@" --report "$out/r.json" >"$out/run.log" 2>&1
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
t = r.get("exchange_trial")
extra = "trial split %.1f fused %.1f -> %s" % (1e6 * t["split_seconds_per_sweep"], 1e6 * t["fused_seconds_per_sweep"], t["taken"]) if t else ""
print(sys.argv[2], sys.argv[3], sys.argv[4], r["time_block"], "x".join(str(p) for p in r.get("process_grid", [])), "%.1f" % (1e6 * r["time_per_step_s"]), "%.3f" % r["bandwidth_ratio"], extra)' \
        "$out/r.json" "$name" "$np" "$bin" >>"$out/timing.txt" 2>/dev/null || { echo "$name $np $bin FAILED" >>"$out/timing.txt"; tail -3 "$out/run.log" >>"$out/timing.txt"; }
}
sm=$out/summary.txt
timeout 120 mpirun -np 2 gpu_backend_test --gtest_color=no --gtest_filter='GpuHaloExchange*' >"$out/tests-halo.log" 2>&1
echo "gpu_backend_test np2 GpuHaloExchange rc $? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' "$out/tests-halo.log" | tr '\n' ' ')" >"$sm"
j=inputs/bench_jacobi2d.toml
h=inputs/bench_heat3d.toml
for rep in $(seq "${REPS:-2}"); do
    one jacobi2d-1gpu 1 gridsim $j
    for bin in "$base" gridsim; do
        one jacobi2d-2gpu 2 "$bin" $j
        one jacobi2d-2gpu-y 2 "$bin" $j --set 'parallel.process_grid=[1,2]'
    done
    one heat3d-1gpu 1 gridsim $h
    for bin in "$base" gridsim; do one heat3d-2gpu 2 "$bin" $h; done
done
rm -f "$out/r.json"
sort -s -k1,1 "$out/timing.txt"
timeout 300 mpirun -np 2 gpu_backend_test --gtest_color=no \
    --gtest_filter='*Ipc*:*OverlapOnOffAutoAndFused*:*TimeBlocksAreBitwiseIdentical*:GpuThin*:*GpuImplicit*' >"$out/tests-np2.log" 2>&1
echo "gpu_backend_test np2 (a GPU each) rc $? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' "$out/tests-np2.log" | tr '\n' ' ')" >>"$sm"
grep -hE '^\[  FAILED  \]|RANK|Failure|holds' "$out/tests-halo.log" "$out/tests-np2.log" | head -20 >>"$sm"
mc=(compute-sanitizer --tool memcheck --error-exitcode 9)
s=(--set 'parallel.transport="ipc"' --set 'parallel.overlap="fused"')
timeout 120 mpirun -np 2 "${mc[@]}" gridsim run $h --quiet --set 'grid.cells=[133,37,29]' \
    --set parallel.time_block=3 --set time.steps=12 "${s[@]}" >"$out/memcheck-heat.log" 2>&1
echo "memcheck np2 ipc heat 3D 133x37x29 k = 3 fused: rc $? $(grep -h 'ERROR SUMMARY' "$out/memcheck-heat.log" | sort | uniq -c | tr '\n' ' ')" >>"$sm"
timeout 120 mpirun -np 2 "${mc[@]}" gridsim run inputs/jacobi2d_benchmark.toml --quiet --set 'grid.cells=[301,23]' \
    --set parallel.time_block=4 --set time.steps=12 "${s[@]}" >"$out/memcheck-jacobi.log" 2>&1
echo "memcheck np2 ipc jacobi 2D 301x23 k = 4 fused: rc $? $(grep -h 'ERROR SUMMARY' "$out/memcheck-jacobi.log" | sort | uniq -c | tr '\n' ' ')" >>"$sm"
timeout 120 mpirun -np 2 "${mc[@]}" gridsim run inputs/jacobi2d_benchmark.toml --quiet --set 'grid.cells=[301,23]' \
    --set 'parallel.process_grid=[1,2]' --set parallel.time_block=4 --set time.steps=12 "${s[@]}" >"$out/memcheck-jacobi-y.log" 2>&1
echo "memcheck np2 ipc jacobi 2D 301x23 split along y k = 4 fused: rc $? $(grep -h 'ERROR SUMMARY' "$out/memcheck-jacobi-y.log" | sort | uniq -c | tr '\n' ' ')" >>"$sm"
(cd "$out" && tar czf logs.tar.gz tests-*.log memcheck-*.log run.log && rm -f tests-*.log memcheck-*.log run.log)
cat "$sm"
