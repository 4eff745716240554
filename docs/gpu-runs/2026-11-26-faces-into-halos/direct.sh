#!/usr/bin/env bash
# Thirteenth session, two GPUs of one host (nvidia-h100-x2): faces of the solver's fields stored
# straight into the neighbour's halo over ipc (no pack, no unpack) against the build before it,
# for issue 20's last target (two GPUs >= 1.9 x one GPU at jacobi 16384^2 float, residual every
# 100, and heat 512^3 double, time_block "auto"). From the repository root on the GPU host after
# `source .gpu-host/env.sh`; everything under $1 (timing.txt: case, ranks, binary, k, transport,
# us per step, x copy per GPU, the exchange trial or the phases in us per step; summary.txt: the
# checks).
#  1. REPS rounds (default 2), interleaved: one GPU (this build), two GPUs "auto" with BASE
#     (default gridsim-base), this build and each of VARIANTS (default none), two GPUs "fused"
#     with this build (FUSED=0: not);
#  2. one round of phases (graphs off, every pass timed) of two GPUs "fused", PHASES (default:
#     BASE and this build);
#  0. first the new halo test at two ranks (GpuHaloExchange: every halo point of every process
#     grid, registered fields and a packed one);
#  3. gpu_backend_test at two ranks, a GPU each (transport auto takes ipc): the ipc, time-block,
#     overlap, thin-subdomain and implicit (CG vectors go packed) cases; then compute-sanitizer
#     memcheck of two ranks over ipc: heat 3D k = 3 and jacobi 2D k = 4 (periodic rows: two
#     faces to the same peer), overlap "fused" and true (MEMCHECK_MODES);
# the logs go into logs.tar.gz (a call brings back at most 8 files).
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
base=${BASE:-gridsim-base}
read -r -a variants <<<"${VARIANTS:-}"
read -r -a phased <<<"${PHASES:-$base gridsim}"
one() {  # NAME NP BINARY DECK [--set ...]
    local name=$1 np=$2 bin=$3 deck=$4
    shift 4
    timeout 120 mpirun -np "$np" "$bin" run "$deck" --quiet "$@" --report "$out/r.json" >"$out/run.log" 2>&1
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
t = r.get("exchange_trial")
extra = "trial split %.1f fused %.1f -> %s" % (1e6 * t["split_seconds_per_sweep"], 1e6 * t["fused_seconds_per_sweep"], t["taken"]) if t else ""
if sys.argv[2].endswith("-ph"):
    ph = r.get("phases", {})
    extra = " ".join("{}={:.1f}".format(k, 1e6 * v["mean"] / r["steps"]) for k, v in ph.items() if k in ("boundary", "interior", "pack", "transfer", "unpack") and isinstance(v, dict) and v.get("mean", 0) > 0)
print(sys.argv[2], sys.argv[3], sys.argv[4], r["time_block"], r["transport"], "%.1f" % (1e6 * r["time_per_step_s"]), "%.3f" % r["bandwidth_ratio"], extra)' \
        "$out/r.json" "$name" "$np" "$bin" >>"$out/timing.txt" 2>/dev/null || { echo "$name $np $bin FAILED" >>"$out/timing.txt"; tail -3 "$out/run.log" >>"$out/timing.txt"; }
}
nvidia-smi --query-gpu=name --format=csv,noheader >"$out/gpus.txt"
sm=$out/summary.txt
timeout 120 mpirun -np 2 gpu_backend_test --gtest_color=no --gtest_filter='GpuHaloExchange*' >"$out/tests-halo.log" 2>&1
echo "gpu_backend_test np2 GpuHaloExchange rc $? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' "$out/tests-halo.log" | tr '\n' ' ')" >"$sm"
for rep in $(seq "${REPS:-2}"); do
    for deck in jacobi2d heat3d; do
        d=inputs/bench_$deck.toml
        one "$deck-1gpu" 1 gridsim "$d"
        one "$deck-2gpu-auto" 2 "$base" "$d" --set 'parallel.overlap="auto"'
        one "$deck-2gpu-auto" 2 gridsim "$d" --set 'parallel.overlap="auto"'
        for v in "${variants[@]}"; do one "$deck-2gpu-auto" 2 "$v" "$d" --set 'parallel.overlap="auto"'; done
        [ "${FUSED:-1}" = 0 ] || one "$deck-2gpu-fused" 2 gridsim "$d" --set 'parallel.overlap="fused"'
    done
done
ph=(--set parallel.graphs=off --set parallel.phase_every=1 --set 'parallel.overlap="fused"')
for deck in jacobi2d heat3d; do
    for bin in "${phased[@]}"; do
        one "$deck-2gpu-fused-ph" 2 "$bin" inputs/bench_$deck.toml "${ph[@]}"
    done
done
rm -f "$out/r.json"
timeout 300 mpirun -np 2 gpu_backend_test --gtest_color=no \
    --gtest_filter='*Ipc*:*OverlapOnOffAutoAndFused*:*TimeBlocksAreBitwiseIdentical*:GpuThin*:*GpuImplicit*' >"$out/tests-np2.log" 2>&1
echo "gpu_backend_test np2 (a GPU each) rc $? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' "$out/tests-np2.log" | tr '\n' ' ')" >>"$sm"
grep -hE '^\[  FAILED  \]' "$out/tests-halo.log" "$out/tests-np2.log" | head -20 >>"$sm"
mc=(compute-sanitizer --tool memcheck --error-exitcode 9)
s=(--set 'parallel.transport="ipc"')
for ov in ${MEMCHECK_MODES:-'"fused"' true}; do
    tag=$(echo "$ov" | tr -d '"')
    timeout 120 mpirun -np 2 "${mc[@]}" gridsim run inputs/bench_heat3d.toml --quiet --set 'grid.cells=[45,37,29]' \
        --set parallel.time_block=3 --set time.steps=12 "${s[@]}" --set "parallel.overlap=$ov" >"$out/memcheck-heat-$tag.log" 2>&1
    echo "memcheck np2 ipc heat 3D k = 3 overlap $tag: rc $? $(grep -h 'ERROR SUMMARY' "$out/memcheck-heat-$tag.log" | sort | uniq -c | tr '\n' ' ')" >>"$sm"
    timeout 120 mpirun -np 2 "${mc[@]}" gridsim run inputs/jacobi2d_benchmark.toml --quiet --set 'grid.cells=[301,23]' \
        --set parallel.time_block=4 --set time.steps=12 "${s[@]}" --set "parallel.overlap=$ov" >"$out/memcheck-jacobi-$tag.log" 2>&1
    echo "memcheck np2 ipc jacobi 2D k = 4 overlap $tag: rc $? $(grep -h 'ERROR SUMMARY' "$out/memcheck-jacobi-$tag.log" | sort | uniq -c | tr '\n' ' ')" >>"$sm"
done
(cd "$out" && tar czf logs.tar.gz tests-*.log memcheck-*.log run.log && rm -f tests-*.log memcheck-*.log run.log)
sort -s -k1,1 "$out/timing.txt"
cat "$sm"
