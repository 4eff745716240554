#!/usr/bin/env bash
# Fourteenth session, two GPUs (call 2 on): this build (time_block up to 16, blocks deeper than a
# pass in even passes, "auto"'s exchange trial timing k and 2k) against gridsim-prev (faa32c2,
# the session's start), interleaved, REPS rounds (default 3): one GPU and two GPUs "auto" on the
# benchmark decks; then gpu_backend_test at two ranks (the deep-halo test, time blocks, graphs,
# ipc, the halo test) and compute-sanitizer memcheck of two ranks whose "auto" runs the depth
# trial (TEST_FILTER: the tests' filter). From the repository root on the GPU host after `source .gpu-host/env.sh`; under $1:
# timing.txt (case, ranks, binary, k, us per step, x copy per GPU, pass trial's figure at the k
# of the pass, exchange trial per depth), summary.txt, gpus.txt, logs.tar.gz.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
q='name,clocks.sm,clocks.mem,temperature.gpu,power.draw'
nvidia-smi --query-gpu=$q --format=csv,noheader >"$out/gpus.txt"
one() {  # NAME NP BINARY DECK [--set ...]
    local name=$1 np=$2 bin=$3 deck=$4
    shift 4
    timeout 120 mpirun -np "$np" "$bin" run "$deck" --quiet "$@" --report "$out/r.json" >"$out/run.log" 2>&1
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
k = r["time_block"]
tb = r.get("time_block_trial", [])
kt = min(tb, key=lambda t: t["seconds_per_sweep"]) if tb else None
t = r.get("exchange_trial")
ex = ""
if t:
    for d in t.get("depths", []) or [dict(time_block=k, split_seconds_per_sweep=t["split_seconds_per_sweep"], fused_seconds_per_sweep=t["fused_seconds_per_sweep"])]:
        ex += " ex[%d] split %.1f fused %.1f" % (d["time_block"], 1e6 * d["split_seconds_per_sweep"], 1e6 * d["fused_seconds_per_sweep"])
    ex += " -> " + t["taken"]
print(sys.argv[2], sys.argv[3], sys.argv[4], k, "%.1f" % (1e6 * r["time_per_step_s"]), "%.3f" % r["bandwidth_ratio"], "pass-trial k=%d %.1f" % (kt["time_block"], 1e6 * kt["seconds_per_sweep"]) if kt else "", ex)' \
        "$out/r.json" "$name" "$np" "$bin" >>"$out/timing.txt" 2>/dev/null || { echo "$name $np $bin FAILED" >>"$out/timing.txt"; tail -3 "$out/run.log" >>"$out/timing.txt"; }
}
j=inputs/bench_jacobi2d.toml
h=inputs/bench_heat3d.toml
for rep in $(seq "${REPS:-3}"); do
    one jacobi-1gpu 1 gridsim $j
    for bin in gridsim-prev gridsim; do one jacobi-2gpu 2 "$bin" $j; done
    one heat-1gpu 1 gridsim $h
    for bin in gridsim-prev gridsim; do one heat-2gpu 2 "$bin" $h; done
done
rm -f "$out/r.json"
nvidia-smi --query-gpu=$q --format=csv,noheader >>"$out/gpus.txt"
sm=$out/summary.txt
: >"$sm"
if [ "${TESTS:-1}" = 1 ]; then
    timeout 420 mpirun -np 2 gpu_backend_test --gtest_color=no \
        --gtest_filter="${TEST_FILTER:-GpuDeepHalos*:*TimeBlocksAreBitwiseIdentical*:*GraphReplay*:*Ipc*:GpuHaloExchange*:GpuLevels3d*}" >"$out/tests-np2.log" 2>&1
    echo "gpu_backend_test np2 (a GPU each) rc $? $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]' "$out/tests-np2.log" | tr '\n' ' ')" >>"$sm"
    grep -hE '^\[  FAILED  \]|Failure|Which is|Expected' "$out/tests-np2.log" | head -20 >>"$sm"
    mc=(compute-sanitizer --tool memcheck --error-exitcode 9)
    timeout 150 mpirun -np 2 "${mc[@]}" gridsim run $j --quiet --set 'grid.cells=[600,301]' \
        --set 'parallel.process_grid=[1,2]' --set time.steps=40 --set time.norm_every=7 >"$out/memcheck-jacobi.log" 2>&1
    echo "memcheck np2 jacobi 600x301 [1,2] auto (depth trial): rc $? $(grep -h 'ERROR SUMMARY' "$out/memcheck-jacobi.log" | sort | uniq -c | tr '\n' ' ')" >>"$sm"
    timeout 150 mpirun -np 2 "${mc[@]}" gridsim run $h --quiet --set 'grid.cells=[140,131,40]' \
        --set parallel.time_block=8 --set time.steps=20 >"$out/memcheck-heat.log" 2>&1
    echo "memcheck np2 heat 140x131x40 k = 8 (two passes of 4): rc $? $(grep -h 'ERROR SUMMARY' "$out/memcheck-heat.log" | sort | uniq -c | tr '\n' ' ')" >>"$sm"
    timeout 150 mpirun -np 2 "${mc[@]}" gridsim run $h --quiet --set 'grid.cells=[140,131,40]' \
        --set time.steps=20 >"$out/memcheck-heat-auto.log" 2>&1
    echo "memcheck np2 heat 140x131x40 auto (depth trial): rc $? $(grep -h 'ERROR SUMMARY' "$out/memcheck-heat-auto.log" | sort | uniq -c | tr '\n' ' ')" >>"$sm"
fi
(cd "$out" && tar czf logs.tar.gz ./*.log 2>/dev/null && rm -f ./*.log)
sort -s -k1,1 "$out/timing.txt"
cat "$sm"
