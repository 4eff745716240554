#!/usr/bin/env bash
# scripts/gpu_host/ipc_check.sh: the ipc halo transport (direct peer stores) on a GPU host with
# two or more GPUs, from the repository root after `source .gpu-host/env.sh`. PARTS picks
# (default all):
#   tests      mpirun -np N gpu_backend_test, the IPC, NCCL and graph-replay cases (N: the GPUs,
#              at most 4)
#   fallback   each rank sees only its own GPU (per-task binding): "ipc" is refused with one
#              line and exit 2, "auto" runs (NCCL)
#   sanitizer  compute-sanitizer memcheck of 2-rank ipc runs (2D, and 3D with 3-deep halos)
#   latency    scripts/bench-gpu.sh latency, auto (NCCL) against ipc, 1 and 2 GPUs
#   cadence    jacobi 2048^2 and 4096^2 with the residual every 100 sweeps, 2 GPUs, ipc and nccl
# Everything goes to $OUT (default out/ipc); the last thing printed is a short table.
set -uo pipefail
out=${OUT:-out/ipc}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
here=$(cd "$(dirname "$0")" && pwd)
g=$(command -v gridsim || echo build/gridsim)
t=$(command -v gpu_backend_test || echo build/tests/gpu_backend_test)
ngpu=$(nvidia-smi -L | wc -l)
n=$((ngpu > 4 ? 4 : ngpu))
parts=${PARTS:-tests fallback sanitizer latency cadence}
table=()
has() { [[ " $parts " == *" $1 "* ]]; }

if has tests; then
    mpirun -np "$n" "$t" --gtest_color=no \
        --gtest_filter='*Ipc*:*NcclAndStaged*:*GraphReplay*:GpuGraphs*:*GpuImplicit*' \
        >"$out/tests.log" 2>&1
    table+=("tests ($n ranks): rc $? | $(grep -E '^\[  PASSED|^\[  FAILED|^\[  SKIPPED' "$out/tests.log" | tr '\n' ' ')")
fi

if has fallback; then
    deck=(inputs/bench_jacobi2d.toml --quiet --set "grid.cells=[512,512]" --set time.steps=50)
    mpirun -np 2 "$here/per_task_gpu.sh" "$g" run "${deck[@]}" --report "$out/fallback_auto.json" \
        >"$out/fallback_auto.log" 2>&1
    rc=$?
    table+=("per-task binding, auto: rc $rc, $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("transport", d["transport"])' "$out/fallback_auto.json" 2>&1)")
    mpirun -np 2 "$here/per_task_gpu.sh" "$g" run "${deck[@]}" --set parallel.transport=ipc \
        >"$out/fallback_ipc.log" 2>&1
    rc=$?
    table+=("per-task binding, ipc: rc $rc, $(grep -c 'gridsim: error' "$out/fallback_ipc.log") error line(s): $(grep 'gridsim: error' "$out/fallback_ipc.log" | head -1)")
fi

if has sanitizer; then
    for args in "inputs/jacobi2d_benchmark.toml --set grid.cells=[301,23] --set time.norm_every=1" \
        "inputs/bench_heat3d.toml --set grid.cells=[45,37,29] --set parallel.time_block=3"; do
        name=$(basename "${args%% *}" .toml)
        # shellcheck disable=SC2086
        mpirun -np 2 compute-sanitizer --tool memcheck --error-exitcode 9 "$g" run $args --quiet \
            --set time.steps=12 --set parallel.transport=ipc >"$out/memcheck_$name.log" 2>&1
        table+=("memcheck $name ipc: rc $? | $(grep -h 'ERROR SUMMARY' "$out/memcheck_$name.log" | sort | uniq -c | tr '\n' ' ')")
    done
fi

if has latency; then
    OUT="$out/latency" LATENCY_REPEAT=${LATENCY_REPEAT:-2} LATENCY_MODES=${LATENCY_MODES:-auto ipc} \
        LATENCY_2D=${LATENCY_2D:-2048 4096 8192 16384} LATENCY_3D=${LATENCY_3D:-128 256 512} \
        bash scripts/bench-gpu.sh latency >"$out/latency.log" 2>&1
    table+=("latency: rc $? (table in latency/latency.md)")
fi

if has cadence; then
    for s in 2048 4096; do
        for tr in ipc nccl; do
            mpirun -np 2 "$g" run inputs/bench_jacobi2d.toml --quiet --set "grid.cells=[$s,$s]" \
                --set time.steps=4000 --set parallel.transport=$tr \
                --report "$out/cadence_s${s}_$tr.json" >>"$out/cadence.log" 2>&1
            table+=("jacobi $s^2, residual every 100, 2 GPUs, $tr: $(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print("%.1f us/sweep, transport %s" % (d["time_per_step_s"] * 1e6, d["transport"]))' "$out/cadence_s${s}_$tr.json" 2>&1)")
        done
    done
fi

[ -f "$out/latency/latency.md" ] && cat "$out/latency/latency.md"
printf '%s\n' "${table[@]}"
