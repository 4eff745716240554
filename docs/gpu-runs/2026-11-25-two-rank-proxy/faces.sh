#!/usr/bin/env bash
# Eleventh session, call 2 (one H200): the halo-move kernel (faces_kernel: pack, unpack, the
# rank-alone periodic copy) with 32-bit divisions (gridsim) against 64-bit ones (gridsim-b0,
# 7a36bf2). From the repository root on the GPU host after `source .gpu-host/env.sh`;
# everything under $1.
#  1. ncu (--clock-control none) of the moves of a heat 512 x 512 x 256 double run with z
#     periodic, k = 3 (two faces of 3 x 518 x 518 points per move), both binaries;
#  2. us per step, binaries interleaved, two rounds: that run, the same with z Dirichlet (no
#     moves), heat 512^3 with z periodic, jacobi 16384^2 (its periodic rows), and two ranks
#     sharing the GPU under MPS (transport ipc: pack, peer stores, unpack) on jacobi 16384^2
#     k = 8 and heat 512^3 k = 3;
#  3. gpu_backend_test on one rank, and at two ranks sharing the GPU its ipc and staged cases
#     (deep halos packed, stored into the peer and unpacked); compute-sanitizer memcheck of
#     runs that move faces: one rank with periodic axes (heat 3D k = 3, jacobi 2D k = 4) and
#     two ranks over ipc (scripts/gpu_host/ipc_check.sh, PARTS=sanitizer) (TESTS=0 skips 3).
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
read -r -a bins <<<"${BINS:-gridsim gridsim-b0}"
j=inputs/bench_jacobi2d.toml
h=inputs/bench_heat3d.toml
half=(--set 'grid.cells=[512,512,256]' --set parallel.time_block=3)
zper=(--set 'boundary.z="periodic"')
m=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes.sum,smsp__inst_executed.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio
for bin in "${bins[@]}"; do
    timeout 120 ncu --clock-control none -k regex:faces_kernel -c 4 --csv --metrics $m \
        $bin run $h --quiet "${half[@]}" "${zper[@]}" --set time.steps=6 >"$out/ncu-$bin.csv" 2>"$out/ncu-$bin.err"
done
one() {  # NAME NP BIN DECK [--set ...]
    local name=$1 np=$2 bin=$3 deck=$4
    shift 4
    mpirun -np "$np" $bin run "$deck" --quiet "$@" --report "$out/r.json" >"$out/run.log" 2>&1
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
ph = r.get("phases", {})
keep = " ".join("{}={:.1f}".format(k, 1e6 * v["mean"] / r["steps"]) for k, v in ph.items() if k in ("pack", "transfer", "unpack") and isinstance(v, dict))
print(sys.argv[2], sys.argv[3], sys.argv[4], r["time_block"], "%.1f" % (1e6 * r["time_per_step_s"]), "%.3f" % r["bandwidth_ratio"], keep)' \
        "$out/r.json" "$name" "$np" "$bin" >>"$out/timing.txt" 2>/dev/null || { echo "$name $np $bin FAILED" >>"$out/timing.txt"; tail -3 "$out/run.log" >>"$out/timing.txt"; }
}
for rep in 1 2; do
    for bin in "${bins[@]}"; do
        one h-half-zper 1 $bin $h "${half[@]}" "${zper[@]}"
        one h-half-dir 1 $bin $h "${half[@]}"
        one h-full-zper 1 $bin $h --set parallel.time_block=3 "${zper[@]}"
        one j-full 1 $bin $j --set parallel.time_block=8
    done
done
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d
s=(--set parallel.share_gpus=true --set 'parallel.transport="ipc"')
for rep in 1 2; do
    for bin in "${bins[@]}"; do
        one j-np2-ipc 2 $bin $j "${s[@]}" --set parallel.time_block=8
        one h-np2-ipc 2 $bin $h "${s[@]}" --set parallel.time_block=3
    done
done
echo quit | nvidia-cuda-mps-control
rm -f "$out/r.json"
if [ "${TESTS:-1}" = 1 ]; then
    timeout 240 gpu_backend_test --gtest_color=no >"$out/tests.log" 2>&1
    echo "gpu_backend_test rc $? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' "$out/tests.log" | tr '\n' ' ')" >"$out/summary.txt"
    grep -E '^\[  FAILED  \]' "$out/tests.log" | head -20 >>"$out/summary.txt"
    timeout 200 mpirun -np 2 gpu_backend_test --gtest_color=no \
        --gtest_filter='*Ipc*:*NcclAndStaged*:GpuThin*' >"$out/tests-np2.log" 2>&1
    echo "gpu_backend_test np2 rc $? $(grep -E '^\[  PASSED|^\[  FAILED|^\[  SKIPPED' "$out/tests-np2.log" | sort -u | tr '\n' ' ')" >>"$out/summary.txt"
    for args in "$h --set grid.cells=[45,37,29] --set boundary.kind=\"periodic\" --set parallel.time_block=3" \
        "inputs/jacobi2d_benchmark.toml --set grid.cells=[301,23] --set boundary.kind=\"periodic\" --set parallel.time_block=4"; do
        name=$(basename "${args%% *}" .toml)
        # shellcheck disable=SC2086
        eval compute-sanitizer --tool memcheck --error-exitcode 9 ${bins[0]} run $args --quiet \
            --set time.steps=12 >"$out/memcheck-$name.log" 2>&1
        echo "memcheck $name periodic: rc $? $(grep -h 'ERROR SUMMARY' "$out/memcheck-$name.log")" >>"$out/summary.txt"
    done
    PARTS=sanitizer OUT="$out/ipc" timeout 200 bash scripts/gpu_host/ipc_check.sh 2>&1 | tail -3 >>"$out/summary.txt"
fi
for bin in "${bins[@]}"; do
    echo "== ncu $bin (duration ns, dram %, dram bytes, warp instructions, sm %, math-throttle stall)"
    python3 - "$out/ncu-$bin.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows: print("no ncu rows"); sys.exit()
head = rows[0]; ki = head.index("ID"); mi = head.index("Metric Name"); vi = head.index("Metric Value")
by = {}
for r in rows[1:]: by.setdefault(r[ki], {})[r[mi]] = r[vi]
names = sorted(next(iter(by.values())))
print("ID", " ".join(names))
for k, v in by.items(): print(k, " ".join(v.get(n, "-") for n in names))
PY
done
sort -k1,1 -s "$out/timing.txt"
cat "$out/summary.txt" 2>/dev/null
