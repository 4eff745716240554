#!/usr/bin/env bash
# Thirteenth session, two GPUs (call 5): the put kernel's register cap and unroll. gridsim (128
# threads capped at 32 registers, 16 blocks a multiprocessor: ptxas spills 40-44 bytes; 2
# pieces per lane) against gridsim-r64u2 (capped at 64: 56-60 registers, no spill) and
# gridsim-r64u4 (64 registers, 4 pieces per lane), interleaved, REPS rounds (default 2): two
# GPUs heat 512^3 with overlap "auto", "fused" and true, jacobi 16384^2 "auto"; one GPU each
# deck once a round. BINS: other binaries in their place (call 6: gridsim-prev, d0d97fb, against
# gridsim with a pass's shell only k deep), also with jacobi overlap true; TESTS=1: then
# gpu_backend_test at two ranks (time-block, overlap, ipc and halo cases) and memcheck of heat 3D
# k = 3 split (overlap true) over ipc (MEMCHECK_CELLS, default [133,37,29]; call 8: [300,300,10],
# whose 2.2 MB faces go by a copy engine). From the repository root on the GPU host after
# `source .gpu-host/env.sh`; under $1: timing.txt (case, ranks, binary, k, us per step, x copy per
# GPU, the exchange trial), gpus.txt, summary.txt and logs.tar.gz with TESTS=1.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name --format=csv,noheader >"$out/gpus.txt"
one() {  # NAME NP BINARY DECK [--set ...]
    local name=$1 np=$2 bin=$3 deck=$4
    shift 4
    timeout 120 mpirun -np "$np" "$bin" run "$deck" --quiet "$@" --report "$out/r.json" >"$out/run.log" 2>&1
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
t = r.get("exchange_trial")
extra = "trial split %.1f fused %.1f -> %s" % (1e6 * t["split_seconds_per_sweep"], 1e6 * t["fused_seconds_per_sweep"], t["taken"]) if t else ""
print(sys.argv[2], sys.argv[3], sys.argv[4], r["time_block"], "%.1f" % (1e6 * r["time_per_step_s"]), "%.3f" % r["bandwidth_ratio"], extra)' \
        "$out/r.json" "$name" "$np" "$bin" >>"$out/timing.txt" 2>/dev/null || { echo "$name $np $bin FAILED" >>"$out/timing.txt"; tail -3 "$out/run.log" >>"$out/timing.txt"; }
}
j=inputs/bench_jacobi2d.toml
h=inputs/bench_heat3d.toml
for rep in $(seq "${REPS:-2}"); do
    one heat3d-1gpu 1 gridsim $h
    one jacobi2d-1gpu 1 gridsim $j
    for bin in ${BINS:-gridsim gridsim-r64u2 gridsim-r64u4}; do
        for ov in '"auto"' '"fused"' true; do
            one "heat3d-2gpu-$(echo "$ov" | tr -d '"')" 2 "$bin" $h --set "parallel.overlap=$ov"
        done
        one jacobi2d-2gpu-auto 2 "$bin" $j
        [ -z "${BINS:-}" ] || one jacobi2d-2gpu-true 2 "$bin" $j --set parallel.overlap=true
    done
done
rm -f "$out/r.json" "$out/run.log"
sort -s -k1,1 "$out/timing.txt"
[ "${TESTS:-0}" = 1 ] || exit 0
sm=$out/summary.txt
timeout 300 mpirun -np 2 gpu_backend_test --gtest_color=no \
    --gtest_filter="${TEST_FILTER:-GpuHaloExchange*:*Ipc*:*OverlapOnOffAutoAndFused*:*TimeBlocksAreBitwiseIdentical*}" >"$out/tests-np2.log" 2>&1
echo "gpu_backend_test np2 (a GPU each) rc $? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' "$out/tests-np2.log" | tr '\n' ' ')" >"$sm"
grep -hE '^\[  FAILED  \]|RANK|Failure' "$out/tests-np2.log" | head -20 >>"$sm"
timeout 120 mpirun -np 2 compute-sanitizer --tool memcheck --error-exitcode 9 gridsim run $h --quiet \
    --set "grid.cells=${MEMCHECK_CELLS:-[133,37,29]}" --set parallel.time_block=3 --set time.steps=12 \
    --set 'parallel.transport="ipc"' --set parallel.overlap=true >"$out/memcheck-heat.log" 2>&1
echo "memcheck np2 ipc heat 3D ${MEMCHECK_CELLS:-[133,37,29]} k = 3 split: rc $? $(grep -h 'ERROR SUMMARY' "$out/memcheck-heat.log" | sort | uniq -c | tr '\n' ' ')" >>"$sm"
(cd "$out" && tar czf logs.tar.gz tests-*.log memcheck-*.log && rm -f tests-*.log memcheck-*.log)
cat "$sm"
