#!/usr/bin/env bash
# The 2D levels passes of this build against another build, interleaved in one call on a GPU host:
#   GRIDSIM_BEFORE=path [OUT=dir] [REPEAT=2] bash scripts/gpu_host/levels2d_ab.sh
# jacobi 2D, residual every 100 sweeps, 2048^2..16384^2 (4e10 / N^2 sweeps, at most 20000),
# float at k = 8 and double at k = 7 and both at "auto", each run by gridsim (PATH) and by
# GRIDSIM_BEFORE in turn; the last output is a table of us per sweep (x the copy rate measured in
# the same run, k) per case, every repeat.
set -uo pipefail
out=${OUT:-out/levels2d-ab}
before=${GRIDSIM_BEFORE:?GRIDSIM_BEFORE: the build to compare against}
mkdir -p "$out"
for ((rep = 1; rep <= ${REPEAT:-2}; rep++)); do
    for n in 2048 4096 8192 16384; do
        s=$((40000000000 / (n * n) / 10 * 10))
        ((s > 20000)) && s=20000
        for p in float:8 double:7; do
            for k in ${p#*:} auto; do
                v=$k
                [ "$k" = auto ] && v='"auto"'
                for b in now before; do
                    bin=gridsim
                    [ $b = before ] && bin=$before
                    f=$out/$b-$n-${p%:*}-k$k-r$rep.json
                    "$bin" run inputs/bench_jacobi2d.toml --quiet --set grid.cells=[$n,$n] \
                        --set time.steps=$s --set problem.precision=\"${p%:*}\" \
                        --set parallel.time_block=$v --report "$f" >/dev/null 2>&1 ||
                        echo "FAILED $f"
                done
            done
        done
    done
done
python3 - "$out" <<'PY'
import collections, glob, json, os, sys
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    r = json.load(open(f))
    build, case = os.path.basename(f)[:-5].split("-", 1)
    us = 1e6 * r["loop_seconds"] / r["steps"]
    rows[case.rsplit("-r", 1)[0]][build].append(
        f"{us:.2f} ({r['bandwidth_ratio']:.3f}, k {r['time_block']})")
print("| case | this build: us per sweep (x copy, k) | GRIDSIM_BEFORE |")
print("| --- | --- | --- |")
for case, v in rows.items():
    print(f"| {case} | {'; '.join(v['now'])} | {'; '.join(v['before'])} |")
PY
