#!/usr/bin/env bash
# Seventh session, calls 1 and 12: where the instructions of a summing pass go. The SASS of the 2D
# levels kernels (plain and summing, float and double) and ncu's per-instruction execution counts
# (SourceCounters) of one summing pass of 3 levels and one plain pass of 3 levels at 16384^2,
# float (PRECISION=double: double) (at smaller sizes the loop's host checks, which fall due at
# every sweep under ncu's replays, cut the passes to single sweeps). From the repository root on
# the GPU host after `source .gpu-host/env.sh`; everything under $1.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
bin=$(command -v gridsim)
cuobjdump -sass "$bin" | awk '/Function :/ { p = ($0 ~ /stencil_levels_2d_(sum_)?kernelI[fd]/) } p' >"$out/levels2d.sass"
grep -n "Function :" "$out/levels2d.sass" >"$out/functions.txt"
rm -f "$out/levels2d.sass"  # 12 MB
run() {  # NAME NORM_EVERY REGEX [more gridsim options]
    local name=$1 every=$2 regex=$3
    shift 3
    ncu --clock-control none --section SourceCounters --section InstructionStats \
        --section SpeedOfLight --section WarpStateStats -k "regex:$regex" -s 2 -c 1 \
        -o "$out/$name" gridsim run inputs/bench_jacobi2d.toml --quiet \
        --set "grid.cells=[16384,16384]" --set time.steps=30 --set time.norm_every=$every \
        --set parallel.time_block=3 "$@" >"$out/$name.log" 2>&1
    ncu -i "$out/$name.ncu-rep" --page source --csv --print-source sass >"$out/$name-source.csv" 2>"$out/$name-source.err"
    ncu -i "$out/$name.ncu-rep" --page details --csv >"$out/$name-details.csv" 2>&1
    ncu -i "$out/$name.ncu-rep" --page raw --csv --metrics sass__inst_executed_per_opcode \
        --print-metric-instances values >"$out/$name-opcodes.csv" 2>&1
    rm -f "$out/$name.ncu-rep"
}
run sum-k3 1 stencil_levels_2d_sum ${PRECISION:+--set problem.precision=\"$PRECISION\"}
run plain-k3 100 stencil_levels_2d_kernel ${PRECISION:+--set problem.precision=\"$PRECISION\"}
ls -la "$out"
head -c 3000 "$out/sum-k3-source.csv"; echo
head -c 1500 "$out/sum-k3-opcodes.csv"; echo
