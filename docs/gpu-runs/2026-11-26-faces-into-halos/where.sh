#!/usr/bin/env bash
# Thirteenth session, two GPUs (call 3): where the put's time goes. gridsim-exp is this build with
# timestamps (%globaltimer) in the put kernels, summed per face slot and printed by each rank at
# exit ("EXP put face slot f: n puts, meet (block 0's wait for the peer to reach the put), stores
# (block 0 past the meeting until the last block's stores are out), wait (the last block's wait
# for the peer's data)", us per put), and GRIDSIM_EXP_PACKED=1 forcing the packed path (pack,
# the 16-byte put, unpack) with the same timestamps. Two GPUs, "auto", jacobi 16384^2 and heat
# 512^3; then the checks of the clean build (gridsim, gpu_backend_test): the halo test and the
# two-rank cases, memcheck. From the repository root on the GPU host after
# `source .gpu-host/env.sh`; under $1: timing.txt, exp.txt, summary.txt, logs.tar.gz.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name --format=csv,noheader >"$out/gpus.txt"
one() {  # NAME BINARY DECK [--set ...]
    local name=$1 bin=$2 deck=$3
    shift 3
    timeout 120 mpirun -np 2 "$bin" run "$deck" --quiet "$@" --report "$out/r.json" >"$out/run-$name.log" 2>&1
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(sys.argv[2], r["time_block"], "%.1f" % (1e6 * r["time_per_step_s"]), "%.3f" % r["bandwidth_ratio"])' \
        "$out/r.json" "$name" >>"$out/timing.txt" 2>/dev/null || echo "$name FAILED" >>"$out/timing.txt"
    grep EXP "$out/run-$name.log" | sed "s/^/$name /" >>"$out/exp.txt"
}
for deck in jacobi2d heat3d; do
    d=inputs/bench_$deck.toml
    one "$deck-direct" gridsim-exp "$d"
    GRIDSIM_EXP_PACKED=1 one "$deck-packed" gridsim-exp "$d"
    one "$deck-base" gridsim-base "$d"
done
# jacobi with Dirichlet faces: one face per rank (the benchmark's periodic rows give two, both
# to the same peer)
dj=(inputs/bench_jacobi2d.toml --set 'boundary.kind="dirichlet"')
one jacobi2d-dirichlet-direct gridsim-exp "${dj[@]}"
GRIDSIM_EXP_PACKED=1 one jacobi2d-dirichlet-packed gridsim-exp "${dj[@]}"
rm -f "$out/r.json"
sm=$out/summary.txt
timeout 120 mpirun -np 2 gpu_backend_test --gtest_color=no --gtest_filter='GpuHaloExchange*' >"$out/tests-halo.log" 2>&1
echo "gpu_backend_test np2 GpuHaloExchange rc $? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' "$out/tests-halo.log" | tr '\n' ' ')" >"$sm"
cat "$out/timing.txt" "$out/exp.txt"
timeout 300 mpirun -np 2 gpu_backend_test --gtest_color=no \
    --gtest_filter='*Ipc*:*OverlapOnOffAutoAndFused*:*TimeBlocksAreBitwiseIdentical*:GpuThin*:*GpuImplicit*' >"$out/tests-np2.log" 2>&1
echo "gpu_backend_test np2 (a GPU each) rc $? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' "$out/tests-np2.log" | tr '\n' ' ')" >>"$sm"
grep -hE '^\[  FAILED  \]|RANK|Failure|holds' "$out/tests-halo.log" "$out/tests-np2.log" | head -20 >>"$sm"
(cd "$out" && tar czf logs.tar.gz tests-*.log run-*.log && rm -f tests-*.log run-*.log)
cat "$sm"
