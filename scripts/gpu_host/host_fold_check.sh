#!/usr/bin/env bash
# Recorded residual sweeps folded on the host (kHostFoldPartials), checked and measured on a GPU
# host in one call:
#   OUT=dir GRIDSIM_BEFORE=path [PARTS="tests sanitizer ab"] bash scripts/gpu_host/host_fold_check.sh
# 1. tests: gpu_backend_test at one rank, and its graph, fused and time-block cases at two ranks
#    sharing the GPU (sums added on the host: the host fold and MPI);
# 2. sanitizer: compute-sanitizer memcheck and racecheck of recorded residual sweeps;
# 3. ab: jacobi 2D float with the residual every sweep, N = 1024..8192, this build and
#    GRIDSIM_BEFORE interleaved, REPEAT times; a table of us per sweep is printed last.
set -uo pipefail
default_out=out/host-fold
default_parts="tests sanitizer ab"
source "$(dirname "${BASH_SOURCE[0]}")/check_common.sh"

if part tests; then
    run timeout 420 "$tests" --gtest_color=no
    run timeout 420 mpirun -np 2 "$tests" --gtest_color=no \
        --gtest_filter='*GraphReplay*:*TimeBlocksAreBitwiseIdentical/jacobi*:GpuFused*:*Overlap*'
fi
if part sanitizer; then
    for tool in memcheck racecheck; do
        run compute-sanitizer --tool $tool --error-exitcode 9 gridsim run \
            inputs/bench_jacobi2d.toml --quiet --set grid.cells=[301,123] --set time.steps=40 \
            --set time.norm_every=1 --set parallel.graphs=on --set output.progress_every=0
    done
fi
if part ab; then
    for rep in $(seq "${REPEAT:-3}"); do
        for n in ${AB_NS:-1024 2048 4096 8192}; do
            steps=$((10000000000 / (n * n)))
            ((steps > 40000)) && steps=40000
            for bin in gridsim ${GRIDSIM_BEFORE:-}; do
                tag=now
                [ "$bin" = gridsim ] || tag=before
                run "$bin" run inputs/bench_jacobi2d.toml --quiet --set grid.cells=[$n,$n] \
                    --set time.steps=$steps --set time.norm_every=1 \
                    --report "$out/ab-$tag-$n-r$rep.json"
            done
        done
    done
fi

grep -E "^\[  (PASSED|FAILED)  \]|tests? ran|ERROR SUMMARY|RACECHECK SUMMARY|rc=[1-9]" "$log" | sort | uniq -c
python3 - "$out" <<'PY'
import glob, json, os, sys, collections
t = collections.defaultdict(list)
for f in sorted(glob.glob(os.path.join(sys.argv[1], "ab-*.json"))):
    r = json.load(open(f))
    _, tag, n, _ = os.path.basename(f)[:-5].split("-")
    t[(int(n), tag)].append(1e6 * r["loop_seconds"] / (r["steps"] - r["start_step"]))
print("| N | now us per sweep | before us per sweep |")
print("| --- | --- | --- |")
for n in sorted({k[0] for k in t}):
    fmt = lambda v: ", ".join(f"{x:.2f}" for x in v)
    print(f"| {n} | {fmt(t[(n, 'now')])} | {fmt(t[(n, 'before')])} |")
PY
