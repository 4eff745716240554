#!/usr/bin/env bash
# Ninth session, call 1: the summing pass without the ring's warp (its ring in the end lanes of
# the tile's warps, the residual sweeps' x blocks laid out alike: PackGroups) against the build
# before it (gridsim-before = 902629e). From the repository root on the GPU host after
# `source .gpu-host/env.sh`; everything under $1.
#  1. the whole gpu_backend_test on one rank (the bitwise pass / sweep tests among them);
#  2. residual-every-sweep cases through the A/B script of 2026-11-24-summing-latency/ab.sh (both
#     binaries interleaved, two rounds; ncu's issue and instruction counts of one 3-level pass at
#     16384^2).
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
here=$(dirname "$0")
timeout 240 gpu_backend_test >"$out/tests.log" 2>&1
echo "gpu_backend_test rc $? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' "$out/tests.log" | tr '\n' ' ')" >"$out/summary.txt"
grep -E '^\[  FAILED  \]' "$out/tests.log" | head -20 >>"$out/summary.txt"
BINS="gridsim gridsim-before" FILTER=NONE NCU="16384:3" \
CASES="16384 float auto;16384 float 2;16384 float 3;16384 double auto;16384 double 3;8192 float auto;8192 double auto;4096 float auto;4096 double auto;2048 float auto;16384 float 1;16384 double 1;4096 float 1;2048 double 1" \
    bash docs/gpu-runs/2026-11-24-summing-latency/ab.sh "$out/ab" >"$out/ab.md" 2>&1
cat "$out/summary.txt" "$out/ab.md"
