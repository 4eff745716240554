#!/usr/bin/env bash
# Eleventh session, call 8 (one H200): the final build's checks. From the repository root on the
# GPU host after `source .gpu-host/env.sh`; everything under $1 (packed into one archive, so
# that it comes back whole), the last output a summary.
#  1. gpu_backend_test on one rank; at two ranks sharing the GPU its ipc, staged and thin cases;
#  2. compute-sanitizer memcheck of two ranks sharing the GPU over ipc (jacobi 2D with the
#     residual every sweep; heat 3D with 3-deep halos), and of one rank with periodic axes.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
s=$out/summary.txt
timeout 240 gpu_backend_test --gtest_color=no >"$out/tests.log" 2>&1
echo "gpu_backend_test rc $? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' "$out/tests.log" | tr '\n' ' ')" >"$s"
timeout 200 mpirun -np 2 gpu_backend_test --gtest_color=no \
    --gtest_filter='*Ipc*:*NcclAndStaged*:GpuThin*' >"$out/tests-np2.log" 2>&1
echo "gpu_backend_test np2 (one GPU shared) rc $? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' "$out/tests-np2.log" | tr '\n' ' ')" >>"$s"
grep -E '^\[  FAILED  \]' "$out/tests.log" "$out/tests-np2.log" | head -20 >>"$s"
share=(--set parallel.share_gpus=true --set 'parallel.transport="ipc"')
mc=(compute-sanitizer --tool memcheck --error-exitcode 9)
mpirun -np 2 "${mc[@]}" gridsim run inputs/jacobi2d_benchmark.toml --quiet --set 'grid.cells=[301,23]' \
    --set time.norm_every=1 --set time.steps=12 "${share[@]}" >"$out/memcheck-np2-jacobi.log" 2>&1
echo "memcheck np2 ipc jacobi 2D: rc $? $(grep -h 'ERROR SUMMARY' "$out/memcheck-np2-jacobi.log" | sort | uniq -c | tr '\n' ' ')" >>"$s"
mpirun -np 2 "${mc[@]}" gridsim run inputs/bench_heat3d.toml --quiet --set 'grid.cells=[45,37,29]' \
    --set parallel.time_block=3 --set time.steps=12 "${share[@]}" >"$out/memcheck-np2-heat.log" 2>&1
echo "memcheck np2 ipc heat 3D k = 3: rc $? $(grep -h 'ERROR SUMMARY' "$out/memcheck-np2-heat.log" | sort | uniq -c | tr '\n' ' ')" >>"$s"
"${mc[@]}" gridsim run inputs/bench_heat3d.toml --quiet --set 'grid.cells=[45,37,29]' \
    --set 'boundary.kind="periodic"' --set parallel.time_block=3 --set time.steps=12 >"$out/memcheck-heat-periodic.log" 2>&1
echo "memcheck heat 3D periodic k = 3: rc $? $(grep -h 'ERROR SUMMARY' "$out/memcheck-heat-periodic.log")" >>"$s"
tar -czf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")" && rm -rf "$out"
mkdir -p "$out" && tar -xzf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")/summary.txt"
cat "$out/summary.txt"
