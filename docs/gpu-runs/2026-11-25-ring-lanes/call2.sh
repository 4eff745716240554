#!/usr/bin/env bash
# Ninth session, call 2: call 1's build with the x blocks of a residual sweep cut after the last
# one that holds a pack (PackGroups::blocks), the pass's warps past the box only keeping the
# barriers, and float 2-level passes capped for 4 blocks per multiprocessor; against
# gridsim-before (902629e). From the repository root on the GPU host after
# `source .gpu-host/env.sh`; everything under $1.
#  1. the whole gpu_backend_test on one rank;
#  2. compute-sanitizer memcheck and racecheck of the summing decks
#     (scripts/gpu_host/summing_pass_check.sh, PARTS=sanitizer);
#  3. residual-every-sweep cases through docs/gpu-runs/2026-11-24-summing-latency/ab.sh (both
#     binaries interleaved, two rounds; ncu of one 3-level pass at 16384^2); CASES: other
#     cases (calls 4 on).
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
timeout 240 gpu_backend_test >"$out/tests.log" 2>&1
echo "gpu_backend_test rc $? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' "$out/tests.log" | tr '\n' ' ')" >"$out/summary.txt"
grep -E '^\[  FAILED  \]' "$out/tests.log" | head -20 >>"$out/summary.txt"
PARTS=sanitizer OUT="$out/sanitizer" bash scripts/gpu_host/summing_pass_check.sh >"$out/sanitizer.txt" 2>&1
tail -16 "$out/sanitizer.txt" >>"$out/summary.txt"
BINS="gridsim gridsim-before" FILTER=NONE NCU="16384:3" \
CASES="${CASES:-16384 float auto;16384 float 2;16384 float 3;16384 float 4;16384 double auto;16384 double 2;16384 double 3;8192 float auto;8192 double auto;4096 float auto;4096 float 3;4096 double auto;2048 float auto;2048 double auto;1024 float auto;16384 float 1;16384 double 1;2048 float 1}" \
    bash docs/gpu-runs/2026-11-24-summing-latency/ab.sh "$out/ab" >"$out/ab.md" 2>&1
cat "$out/summary.txt" "$out/ab.md"
