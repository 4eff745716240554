#!/usr/bin/env bash
# Tenth session, the final build against gridsim-base (906924d): call.sh (tests, sanitizer, the
# residual every sweep, the residual every 100 sweeps, the pass's profile), then two ranks
# sharing the GPU under MPS (../2026-11-24-summing-ranks/check.sh). From the repository root on
# the GPU host after `source .gpu-host/env.sh`; everything under $1.
set -uo pipefail
out=${1:?out dir}
here=docs/gpu-runs/2026-11-25-float-sums
BINS="gridsim gridsim-base" \
CASES="${CASES:-16384 float auto;16384 float 3;16384 float 4;16384 float 2;16384 double auto;16384 double 4;16384 double 3;16384 double 2;8192 float auto;8192 double auto;4096 float auto;4096 double auto;2048 float auto;2048 double auto;1024 float auto;16384 float 1;16384 double 1}" \
    bash $here/call.sh "$out" >"$out.log" 2>&1
[ "${RANKS:-1}" = 1 ] && bash docs/gpu-runs/2026-11-24-summing-ranks/check.sh "$out/np2" >/dev/null 2>&1
cat "$out.log" "$out/np2/summary.txt" 2>/dev/null
