#!/usr/bin/env bash
# Seventh session, call 16 (`nvidia-h200-x2`, lent at the end of the session): the final build on
# two H200s. From the repository root on the GPU host after `source .gpu-host/env.sh`; everything
# under $1, the last output a short summary.
#  1. the latency curve at 1 and 2 GPUs with the issue-19 targets (auto, and ipc on 2 GPUs);
#  2. time blocks on 1 and 2 GPUs (issue 20: 2 GPUs >= 1.9 x one): jacobi 16384^2 float with the
#     residual every 100 sweeps and heat 3D 512^3 double, "auto" and k = 1, two runs each;
#  3. the gpu_backend_test cases that need a GPU per rank (NCCL, ipc, thin subdomains, graphs),
#     at two ranks.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
OUT=$out/lat LATENCY_REPEAT=2 LATENCY_MODES="auto ipc" timeout 330 bash scripts/bench-gpu.sh latency \
    >"$out/lat.log" 2>&1
tb() {  # NAME NP DECK [--set ...]
    local name=$1 np=$2 deck=$3
    shift 3
    mpirun -np "$np" gridsim run "$deck" --quiet "$@" --report "$out/$name.json" >"$out/$name.log" 2>&1
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], r["time_block"], "%.1f" % (1e6*r["time_per_step_s"]), "%.1f" % r["glups"], "%.3f" % r["bandwidth_ratio"])' \
        "$out/$name.json" "$name" >>"$out/tb.txt" 2>/dev/null || echo "$name FAILED" >>"$out/tb.txt"
}
for rep in 1 2; do
    for np in 1 2; do
        tb "j16384-auto-np$np-r$rep" $np inputs/bench_jacobi2d.toml
        tb "j16384-k1-np$np-r$rep" $np inputs/bench_jacobi2d.toml --set parallel.time_block=1
        tb "h512-auto-np$np-r$rep" $np inputs/bench_heat3d.toml
        tb "h512-k1-np$np-r$rep" $np inputs/bench_heat3d.toml --set parallel.time_block=1
    done
done
timeout 200 mpirun -np 2 gpu_backend_test --gtest_color=no \
    --gtest_filter='*NcclAndStaged*:*IpcIsBitwise*:GpuThin*:GpuGraphs*' >"$out/tests-np2.log" 2>&1
echo "tests np2 rc $? $(grep -E '^\[  PASSED|^\[  FAILED|^\[  SKIPPED' "$out/tests-np2.log" | sort -u | tr '\n' ' ')" \
    >"$out/summary.txt"
cat "$out/summary.txt"
echo "name k us/step GLUP/s x-copy-per-GPU" && cat "$out/tb.txt"
grep '^|\|^- ' "$out/lat/latency.md"
