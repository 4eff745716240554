#!/usr/bin/env bash
# The GPU correctness checks of the CUDA backend on a GPU host, in one call (performance is
# scripts/bench-gpu.sh):
#   scripts/gpu_host/check.sh [RANKS...]   # gpu tests at each rank count (default: 1 2; ranks
#                                          # share the GPUs when there are fewer), then
#                                          # compute-sanitizer memcheck and racecheck of every
#                                          # kernel variant, with and without the fused residual
# Needs gridsim and gpu_backend_test on PATH (a build directory, or the relocatable runtime:
# README, section "GPUs"). Logs go to $OUT (or out/check); a summary is printed last.
set -uo pipefail
out=${OUT:-out/check}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}   # no NVLink multicast on shared hosts
export GRIDSIM_TEST_SHARE_GPUS=1   # the gpu tests run with fewer GPUs than ranks, sharing them
ranks_list=${*:-1 2}
log="$out/check.log"
run() { echo "=== $*" >>"$log"; "$@" >>"$log" 2>&1; local rc=$?; echo "    rc=$rc" >>"$log"; echo "rc=$rc  $*"; }

nvidia-smi -L | tee -a "$log"
for n in $ranks_list; do
    run mpirun -np "$n" --oversubscribe gpu_backend_test --gtest_brief=1
done
# Small decks, every variant, staged transport (a one-GPU host); wide boxes use the 16-byte
# packs, thin ones the scalar kernels.
decks=("inputs/jacobi2d_benchmark.toml --set grid.cells=[301,23] --set time.norm_every=1"
       "inputs/default.toml --set grid.cells=[135,9,11]"
       "inputs/default.toml --set grid.cells=[263,7,5] --set problem.precision=float"
       "inputs/jacobi3d.toml --set grid.cells=[70,9,12] --set time.norm_every=1")
sanitize() {  # TOOL DECK KERNEL
    # shellcheck disable=SC2086
    run mpirun -np 2 --oversubscribe compute-sanitizer --tool "$1" --error-exitcode 9 \
        gridsim run $2 --quiet --set time.steps=4 --set parallel.backend=cuda \
        --set parallel.share_gpus=true --set parallel.kernel="$3"
}
for d in "${decks[@]}"; do
    for k in stream tiled naive; do sanitize memcheck "$d" $k; done
done
# Shared memory: the tiled tiles and the block sums of the fused residual.
for d in "${decks[0]}" "${decks[3]}"; do
    for k in stream tiled; do sanitize racecheck "$d" $k; done
done
echo
echo "summary:"
grep -E "PASSED|FAILED|SKIPPED" "$log" | sort | uniq -c
grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | sort | uniq -c
grep -c "rc=0" "$log" | sed 's/^/commands with rc=0: /'
grep "rc=[1-9]" "$log" | sed 's/^/FAILED: /' | head
