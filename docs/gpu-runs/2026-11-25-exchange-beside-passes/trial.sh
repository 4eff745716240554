#!/usr/bin/env bash
# Twelfth session (one GPU; calls 4-7 ran on an H100): overlap "auto"'s start-up trial of the
# exchanging pass, on two ranks sharing the GPU under MPS over ipc (the only way one GPU has
# ranks with a neighbour on another rank), with MPS's thread share 100 and 50: us per step of
# "auto" (and what its trial measured and took), true (split) and "fused"; then the checks of
# this build.
# From the repository root on the GPU host after `source .gpu-host/env.sh`; everything under
# $1, packed into one archive at the end, timing.txt and summary.txt beside it.
#  0. one rank holding an axis alone (its halo copied as a neighbour's would be), overlap true
#     (the split) against "auto" (one launch, then the copy; no trial on one rank): jacobi
#     8192 x 16384 with x periodic and y Dirichlet, k = 8, heat 512 x 512 x 256 with z periodic,
#     k = 3 (call 3 of this directory's README measured these; its files were lost);
#     (ONE_REPS rounds, default 2);
#  1. two ranks (REPS rounds, default 2): jacobi 16384^2 float k = 8, heat 512^3 double k = 3;
#  2. gpu_backend_test on one rank; at two ranks sharing the GPU its overlap and time-block
#     cases (every overlap mode, "fused" and the trial with a neighbour on another rank);
#  3. compute-sanitizer memcheck of two ranks sharing the GPU over ipc with overlap "fused" and
#     "auto" (heat 3D k = 3, jacobi 2D k = 4).
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
j=inputs/bench_jacobi2d.toml
h=inputs/bench_heat3d.toml
one() {  # NAME NP DECK [--set ...]
    local name=$1 np=$2 deck=$3
    shift 3
    mpirun -np "$np" gridsim run "$deck" --quiet "$@" --report "$out/r.json" >"$out/run.log" 2>&1
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
t = r.get("exchange_trial")
trial = "trial split %.1f fused %.1f -> %s" % (1e6 * t["split_seconds_per_sweep"], 1e6 * t["fused_seconds_per_sweep"], t["taken"]) if t else ""
print(sys.argv[2], sys.argv[3], r["time_block"], "%.1f" % (1e6 * r["time_per_step_s"]), "%.3f" % r["bandwidth_ratio"], trial)' \
        "$out/r.json" "$name" "$np" >>"$out/timing.txt" 2>/dev/null || { echo "$name $np FAILED" >>"$out/timing.txt"; tail -3 "$out/run.log" >>"$out/timing.txt"; }
}
jx=(--set 'grid.cells=[8192,16384]' --set 'boundary.kind="dirichlet"' --set 'boundary.x="periodic"' --set parallel.time_block=8)
hz=(--set 'grid.cells=[512,512,256]' --set 'boundary.z="periodic"' --set parallel.time_block=3)
for rep in $(seq "${ONE_REPS:-2}"); do
    for ov in true '"auto"'; do
        tag=$(echo "$ov" | tr -d '"')
        one "j-x-periodic-$tag" 1 $j "${jx[@]}" --set "parallel.overlap=$ov"
        one "h-z-periodic-$tag" 1 $h "${hz[@]}" --set "parallel.overlap=$ov"
    done
done
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d
s=(--set parallel.share_gpus=true --set 'parallel.transport="ipc"')
for rep in $(seq "${REPS:-2}"); do
    for share in 100 50; do
        export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$share
        for ov in '"auto"' true '"fused"'; do
            tag=$(echo "$ov" | tr -d '"')
            one "j-np2-sm$share-$tag" 2 $j "${s[@]}" --set parallel.time_block=8 --set "parallel.overlap=$ov"
            one "h-np2-sm$share-$tag" 2 $h "${s[@]}" --set parallel.time_block=3 --set "parallel.overlap=$ov"
        done
    done
done
unset CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
echo quit | nvidia-cuda-mps-control
rm -f "$out/r.json"
sm=$out/summary.txt
timeout 240 gpu_backend_test --gtest_color=no >"$out/tests.log" 2>&1
echo "gpu_backend_test rc $? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' "$out/tests.log" | tr '\n' ' ')" >"$sm"
timeout 300 mpirun -np 2 gpu_backend_test --gtest_color=no \
    --gtest_filter='*OverlapOnOffAutoAndFused*:*TimeBlocksAreBitwiseIdentical*:*Ipc*' >"$out/tests-np2.log" 2>&1
echo "gpu_backend_test np2 (one GPU shared) rc $? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' "$out/tests-np2.log" | tr '\n' ' ')" >>"$sm"
grep -E '^\[  FAILED  \]' "$out/tests.log" "$out/tests-np2.log" | head -20 >>"$sm"
mc=(compute-sanitizer --tool memcheck --error-exitcode 9)
for ov in '"fused"' '"auto"'; do
    tag=$(echo "$ov" | tr -d '"')
    mpirun -np 2 "${mc[@]}" gridsim run $h --quiet --set 'grid.cells=[45,37,29]' \
        --set parallel.time_block=3 --set time.steps=12 "${s[@]}" --set "parallel.overlap=$ov" >"$out/memcheck-heat-$tag.log" 2>&1
    echo "memcheck np2 ipc heat 3D k = 3 overlap $tag: rc $? $(grep -h 'ERROR SUMMARY' "$out/memcheck-heat-$tag.log" | sort | uniq -c | tr '\n' ' ')" >>"$sm"
    mpirun -np 2 "${mc[@]}" gridsim run inputs/jacobi2d_benchmark.toml --quiet --set 'grid.cells=[301,23]' \
        --set parallel.time_block=4 --set time.steps=12 "${s[@]}" --set "parallel.overlap=$ov" >"$out/memcheck-jacobi-$tag.log" 2>&1
    echo "memcheck np2 ipc jacobi 2D k = 4 overlap $tag: rc $? $(grep -h 'ERROR SUMMARY' "$out/memcheck-jacobi-$tag.log" | sort | uniq -c | tr '\n' ' ')" >>"$sm"
done
gzip -f "$out/tests.log" "$out/tests-np2.log"
sort -k1,1 -s "$out/timing.txt"
cat "$sm"
tar -czf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")" && rm -rf "$out"
mkdir -p "$out" && tar -xzf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")/timing.txt" "$(basename "$out")/summary.txt"
