#!/usr/bin/env bash
# Tenth session: a build under test (gridsim) against gridsim-base (906924d, the start of the
# session). From the repository root on the GPU host after `source .gpu-host/env.sh`;
# everything under $1.
#  1. the whole gpu_backend_test on one rank (TESTS=0 skips it);
#  2. compute-sanitizer memcheck and racecheck of the summing decks
#     (scripts/gpu_host/summing_pass_check.sh, PARTS=sanitizer; SANITIZER=0 skips it);
#  3. residual-every-sweep cases through docs/gpu-runs/2026-11-24-summing-latency/ab.sh (the
#     binaries interleaved, two rounds; ncu of one 3-level float pass at 16384^2); CASES: the
#     cases, BINS: the binaries;
#  4. the residual every 100 sweeps (plain passes, "auto"): plain.sh;
#  5. profile.sh of the first binary (per-instruction counts of a 3-level float summing pass).
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
here=docs/gpu-runs/2026-11-25-float-sums
bins=${BINS:-gridsim gridsim-base}
: >"$out/summary.txt"
if [ "${TESTS:-1}" = 1 ]; then
    timeout 240 gpu_backend_test >"$out/tests.log" 2>&1
    echo "gpu_backend_test rc $? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' "$out/tests.log" | tr '\n' ' ')" >>"$out/summary.txt"
    grep -E '^\[  FAILED  \]' "$out/tests.log" | head -20 >>"$out/summary.txt"
fi
if [ "${SANITIZER:-1}" = 1 ]; then
    PARTS=sanitizer OUT="$out/sanitizer" bash scripts/gpu_host/summing_pass_check.sh >"$out/sanitizer.txt" 2>&1
    tail -16 "$out/sanitizer.txt" >>"$out/summary.txt"
fi
BINS="$bins" FILTER=NONE NCU="16384:3" \
CASES="${CASES:-16384 float auto;16384 float 3;16384 float 4;16384 float 2;16384 double auto;16384 double 4;16384 double 3;8192 float auto;8192 double auto;4096 float auto;4096 double auto;2048 float auto;2048 double auto;16384 float 1;16384 double 1}" \
    bash docs/gpu-runs/2026-11-24-summing-latency/ab.sh "$out/ab" >"$out/ab.md" 2>&1
BINS="$bins" bash $here/plain.sh "$out/plain" >"$out/plain.md" 2>&1
BINS="${bins%% *}" bash $here/profile.sh "$out/profile" >/dev/null 2>&1
python3 docs/gpu-runs/2026-11-24-summing-instructions/call1-sass/analyse.py \
    "$out/profile/${bins%% *}-k3-source.csv.gz" $((16384 * 16384 * 3)) >"$out/profile/opcodes.txt" 2>&1
cat "$out/summary.txt" "$out/ab.md" "$out/plain.md"
head -12 "$out/profile/opcodes.txt"
