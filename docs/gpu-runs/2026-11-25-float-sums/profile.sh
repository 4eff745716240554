#!/usr/bin/env bash
# Tenth session: where the instructions of a float summing pass go now. ncu's per-instruction
# execution counts (SourceCounters), stall reasons (WarpStateStats) and throughput of one
# 3-level float summing pass at 16384^2 with the residual every sweep, for each binary in BINS
# (default gridsim). From the repository root on the GPU host after `source .gpu-host/env.sh`;
# everything under $1 (analyse with ../2026-11-24-summing-instructions/call1-sass/analyse.py).
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
read -r -a bins <<<"${BINS:-gridsim}"
for bin in "${bins[@]}"; do
    name=$bin-k${K:-3}
    ncu --clock-control none --section SourceCounters --section InstructionStats \
        --section SpeedOfLight --section WarpStateStats --section Occupancy \
        -k regex:stencil_levels_2d_sum -s 2 -c 1 -o "$out/$name" \
        $bin run inputs/bench_jacobi2d.toml --quiet --set "grid.cells=[16384,16384]" \
        --set time.steps=30 --set time.norm_every=1 --set parallel.time_block=${K:-3} \
        >"$out/$name.log" 2>&1
    ncu -i "$out/$name.ncu-rep" --page source --csv --print-source sass 2>"$out/$name-source.err" |
        gzip >"$out/$name-source.csv.gz"
    ncu -i "$out/$name.ncu-rep" --page details --csv >"$out/$name-details.csv" 2>&1
    rm -f "$out/$name.ncu-rep"
done
ls -la "$out"
