#!/usr/bin/env bash
# Eleventh session, call 3 (one H200): what bounds the halo-move kernel (faces_kernel). ncu
# (--clock-control none) details, per-instruction stalls (SourceCounters, SASS) and memory
# tables of one move of a heat 512 x 512 x 256 double run with z periodic at k = 3 (two faces
# of 3 x 518 x 518 points, the periodic copy), for each binary in BINS. From the repository
# root on the GPU host after `source .gpu-host/env.sh`; everything under $1.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
read -r -a bins <<<"${BINS:-gridsim}"
for bin in "${bins[@]}"; do
    ncu --clock-control none --set full --import-source no -k regex:faces_kernel -s 1 -c 1 -o "$out/$bin" \
        $bin run inputs/bench_heat3d.toml --quiet --set 'grid.cells=[512,512,256]' \
        --set parallel.time_block=3 --set 'boundary.z="periodic"' --set time.steps=6 \
        >"$out/$bin.log" 2>&1
    ncu -i "$out/$bin.ncu-rep" --page source --csv --print-source sass 2>"$out/$bin-source.err" |
        gzip >"$out/$bin-source.csv.gz"
    ncu -i "$out/$bin.ncu-rep" --page details --csv >"$out/$bin-details.csv" 2>&1
    rm -f "$out/$bin.ncu-rep"
done
