#!/usr/bin/env bash
# Call 1 of the sixth session: where a float summing pass (a residual every sweep inside passes
# of k sweeps) spends its time at 4096^2, against one sweep per pass. From the repository root
# on the GPU host after `source .gpu-host/env.sh`; everything under $1.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
deck=inputs/bench_jacobi2d.toml
# bench NAME N K NORM_EVERY [more --set]: one run, "NAME us_per_sweep x_copy" to timing.txt.
bench() {
    local name=$1 n=$2 k=$3 every=$4
    shift 4
    local s=$((20000000000 / (n * n)))
    ((s > 20000)) && s=20000
    ((s < 200)) && s=200
    gridsim run $deck --quiet --set "grid.cells=[$n,$n]" --set time.steps=$s \
        --set time.norm_every=$every --set parallel.time_block=$k "$@" \
        --report "$out/$name.json" >"$out/$name.log" 2>&1
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], "%.2f" % (1e6*r["time_per_step_s"]), "%.3f" % r["bandwidth_ratio"])' \
        "$out/$name.json" "$name" >>"$out/timing.txt" 2>/dev/null || echo "$name FAILED" >>"$out/timing.txt"
}
for rep in 1 2; do
    for k in 1 2 3 4; do bench "n4096-sum-k$k-r$rep" 4096 $k 1; done
    bench "n4096-plain-k2-r$rep" 4096 2 100
    bench "n4096-sum-k2-graphsoff-r$rep" 4096 2 1 --set parallel.graphs=\"off\"
    bench "n4096-sum-k1-graphsoff-r$rep" 4096 1 1 --set parallel.graphs=\"off\"
    for k in 1 2 3; do bench "n16384-sum-k$k-r$rep" 16384 $k 1; done
done
sections="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --metrics smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_branch_resolving_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__inst_executed.sum,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active"
# Every kernel of a few passes (k = 2) and sweeps (k = 1) at 4096^2, residual every sweep.
ncu --clock-control none --csv $sections -s 40 -c 12 gridsim run $deck --quiet \
    --set "grid.cells=[4096,4096]" --set time.steps=80 --set time.norm_every=1 \
    --set parallel.time_block=2 >"$out/ncu-4096-k2.csv" 2>"$out/ncu-4096-k2.err"
ncu --clock-control none --csv $sections -s 40 -c 8 gridsim run $deck --quiet \
    --set "grid.cells=[4096,4096]" --set time.steps=80 --set time.norm_every=1 \
    --set parallel.time_block=1 >"$out/ncu-4096-k1.csv" 2>"$out/ncu-4096-k1.err"
# The plain 2-level pass at 4096^2 and the summing pass at 16384^2.
ncu --clock-control none --csv $sections -k regex:stencil_levels -s 4 -c 2 gridsim run $deck \
    --quiet --set "grid.cells=[4096,4096]" --set time.steps=60 --set time.norm_every=100 \
    --set parallel.time_block=2 >"$out/ncu-4096-plain-k2.csv" 2>"$out/ncu-4096-plain-k2.err"
ncu --clock-control none --csv $sections -k regex:stencil_levels -s 4 -c 2 gridsim run $deck \
    --quiet --set "grid.cells=[16384,16384]" --set time.steps=30 --set time.norm_every=1 \
    --set parallel.time_block=2 >"$out/ncu-16384-k2.csv" 2>"$out/ncu-16384-k2.err"
python3 - "$out" <<'PY' >"$out/ncu-summary.txt"
import csv, glob, os, sys
keep = ("Duration", "Registers Per Thread", "Grid Size", "Block Size", "Achieved Occupancy",
        "Theoretical Occupancy", "DRAM Throughput", "Memory Throughput", "Compute (SM) Throughput",
        "Executed Ipc Active", "Issue Slots Busy", "Warp Cycles Per Issued Instruction",
        "Block Limit Registers", "Block Limit Shared Mem", "Dynamic Shared Memory Per Block",
        "L1/TEX Hit Rate", "L2 Hit Rate", "Executed Instructions")
for f in sorted(glob.glob(sys.argv[1] + "/ncu-*.csv")):
    rows = [r for r in csv.reader(open(f)) if len(r) > 10]
    if not rows:
        print(os.path.basename(f), "no rows"); continue
    h = rows[0]
    ki, mi, vi, ui, ii = (h.index(x) for x in ("Kernel Name", "Metric Name", "Metric Value", "Metric Unit", "ID"))
    launches = {}
    for r in rows[1:]:
        name = r[ki].split("<")[0].split("(")[0].split()[-1]
        if r[mi] in keep:
            launches.setdefault((r[ii], name), []).append(f"{r[mi]}={r[vi]}{r[ui]}")
    print("##", os.path.basename(f))
    for (i, n), ms in launches.items():
        print(i, n, "; ".join(ms))
PY
# Stall reasons of the levels kernels (WarpStateStats rows), per launch.
python3 - "$out" <<'PY' >"$out/ncu-stalls.txt"
import csv, glob, os, sys
for f in sorted(glob.glob(sys.argv[1] + "/ncu-*.csv")):
    rows = [r for r in csv.reader(open(f)) if len(r) > 10]
    if not rows: continue
    h = rows[0]
    ki, si, mi, vi, ii = (h.index(x) for x in ("Kernel Name", "Section Name", "Metric Name", "Metric Value", "ID"))
    print("##", os.path.basename(f))
    for r in rows[1:]:
        if "levels" not in r[ki] or ("stalled" not in r[mi] and "inst_executed" not in r[mi]): continue
        print(r[ii], r[ki].split("(")[0][-50:], r[mi].replace("smsp__average_warps_issue_stalled_", "").replace("_per_issue_active.ratio", ""), r[vi])
PY
cat "$out/timing.txt"
cat "$out/ncu-summary.txt" | cut -c1-900
