#!/usr/bin/env bash
# Twelfth session (one H200): do a pass's halo moves wait for the interior's blocks? A 3D levels
# block (768 threads x 80 registers) leaves a multiprocessor 4096 registers, too few for a
# 256-thread halo-move block (faces_kernel, peer_put); each binary of BINS (first: 128-thread
# blocks at 32 registers, which fit beside it) against the others. From the repository root on
# the GPU host after `source .gpu-host/env.sh`; everything under $1.
#  1. ncu (--clock-control none) of the halo moves of heat 512 x 512 x 256 double, z periodic,
#     k = 3 (two faces of 3 x 518 x 518 points per move), alone on the GPU: each binary's speed;
#  2. us per step and phases, binaries interleaved, two rounds: one rank holding a periodic
#     axis alone with overlap true (the shell, then its halo copy beside the interior, as a
#     rank with a neighbour runs) against "auto" (one launch, then the copy): heat 512 x 512 x
#     256 z periodic k = 3 and jacobi 16384 x 8192 (its periodic y) k = 8; "-ph" with graphs off
#     and every pass's phases timed; one rank on the whole decks;
#  3. two ranks sharing the GPU under MPS over ipc (pack, peer stores, unpack beside the
#     interior): jacobi 16384^2 k = 8, heat 512^3 k = 3, with and without phases;
#  4. (TESTS=0 skips) gpu_backend_test on one rank and its ipc, staged and thin cases at two.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
read -r -a bins <<<"${BINS:-gridsim gridsim-h0}"
j=inputs/bench_jacobi2d.toml
h=inputs/bench_heat3d.toml
hhalf=(--set 'grid.cells=[512,512,256]' --set parallel.time_block=3 --set 'boundary.z="periodic"')
jhalf=(--set 'grid.cells=[16384,8192]' --set parallel.time_block=8)
ph=(--set parallel.graphs=off --set parallel.phase_every=1)
m=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,launch__registers_per_thread,launch__block_size,launch__grid_size
for bin in "${bins[@]}"; do
    timeout 120 ncu --clock-control none -k regex:faces_kernel -c 4 --csv --metrics $m \
        $bin run $h --quiet "${hhalf[@]}" --set time.steps=6 >"$out/ncu-$bin.csv" 2>"$out/ncu-$bin.err"
done
one() {  # NAME NP BIN DECK [--set ...]
    local name=$1 np=$2 bin=$3 deck=$4
    shift 4
    mpirun -np "$np" $bin run "$deck" --quiet "$@" --report "$out/r.json" >"$out/run.log" 2>&1
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
ph = r.get("phases", {})
keep = " ".join("{}={:.1f}".format(k, 1e6 * v["mean"] / r["steps"]) for k, v in ph.items() if k in ("boundary", "interior", "pack", "transfer", "unpack") and isinstance(v, dict) and v.get("mean", 0) > 0)
print(sys.argv[2], sys.argv[3], sys.argv[4], r["time_block"], "%.1f" % (1e6 * r["time_per_step_s"]), "%.3f" % r["bandwidth_ratio"], keep)' \
        "$out/r.json" "$name" "$np" "$bin" >>"$out/timing.txt" 2>/dev/null || { echo "$name $np $bin FAILED" >>"$out/timing.txt"; tail -3 "$out/run.log" >>"$out/timing.txt"; }
}
for rep in 1 2; do
    for bin in "${bins[@]}"; do
        one h-emu-true 1 $bin $h "${hhalf[@]}" --set parallel.overlap=true
        one h-emu-auto 1 $bin $h "${hhalf[@]}"
        one h-emu-true-ph 1 $bin $h "${hhalf[@]}" --set parallel.overlap=true "${ph[@]}"
        one j-emu-true 1 $bin $j "${jhalf[@]}" --set parallel.overlap=true
        one j-emu-auto 1 $bin $j "${jhalf[@]}"
        one j-emu-true-ph 1 $bin $j "${jhalf[@]}" --set parallel.overlap=true "${ph[@]}"
        one h-full 1 $bin $h --set parallel.time_block=3
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
        one j-np2-ipc-ph 2 $bin $j "${s[@]}" --set parallel.time_block=8 "${ph[@]}"
        one h-np2-ipc-ph 2 $bin $h "${s[@]}" --set parallel.time_block=3 "${ph[@]}"
    done
done
echo quit | nvidia-cuda-mps-control
rm -f "$out/r.json"
if [ "${TESTS:-1}" = 1 ]; then
    timeout 240 gpu_backend_test --gtest_color=no >"$out/tests.log" 2>&1
    echo "gpu_backend_test rc $? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' "$out/tests.log" | tr '\n' ' ')" >"$out/summary.txt"
    timeout 200 mpirun -np 2 gpu_backend_test --gtest_color=no \
        --gtest_filter='*Ipc*:*NcclAndStaged*:GpuThin*' >"$out/tests-np2.log" 2>&1
    echo "gpu_backend_test np2 (one GPU shared) rc $? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' "$out/tests-np2.log" | tr '\n' ' ')" >>"$out/summary.txt"
    grep -E '^\[  FAILED  \]' "$out/tests.log" "$out/tests-np2.log" | head -20 >>"$out/summary.txt"
    gzip -f "$out/tests.log" "$out/tests-np2.log"
fi
for bin in "${bins[@]}"; do
    echo "== ncu $bin"
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
# At most eight files come back: everything in one archive, the table beside it.
tar -czf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")" && rm -rf "$out"
mkdir -p "$out" && tar -xzf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")/timing.txt"
