#!/usr/bin/env bash
# The 3D levels kernel's tile shapes (V x points and R rows per thread, Rows thread rows)
# checked and measured on a GPU host in one call:
#   OUT=dir SHAPES="0 1 2 3" bash scripts/gpu_host/levels3d_shape_check.sh
# GRIDSIM_EXP_3D=S picks shape S for heat at 3 and 4 levels (0: the shipped one).
# PARTS: tests sanitizer bench.
set -uo pipefail
out=${OUT:-out/levels3d}
mkdir -p "$out"
log="$out/check.log"
run() { echo "=== $*" >>"$log"; "$@" >>"$log" 2>&1; local rc=$?; echo "    rc=$rc" >>"$log"; echo "rc=$rc  $*"; }
parts=" ${PARTS:-tests sanitizer bench} "
part() { [[ "$parts" == *" $1 "* ]]; }
shapes=${SHAPES:-0 1 2 3}
configs=${CONFIGS:-0:0 0:1 1:1 2:1 3:1 4:1}  # shape:chunk rule
sanitize=${SANITIZE:-2 3}
ks=${KS:-2 3 4}
tests=$(command -v gpu_backend_test)
nvidia-smi -L | tee -a "$log"
if part tests; then
    for s in $shapes; do
        GRIDSIM_EXP_3D=$s run timeout 300 "$tests" --gtest_color=no \
            --gtest_filter='*TimeBlocksAreBitwiseIdentical/heat3d*'
    done
fi
small=(--quiet --set parallel.backend=\"cuda\" --set time.steps=24 --set output.progress_every=0)
if part sanitizer; then
    for s in $sanitize; do
        for tool in memcheck racecheck; do
            for p in double float; do
                GRIDSIM_EXP_3D=$s run compute-sanitizer --tool $tool --error-exitcode 9 \
                    gridsim run inputs/bench_heat3d.toml "${small[@]}" \
                    --set grid.cells=[77,83,29] --set problem.precision=\"$p\" \
                    --set parallel.time_block=4
            done
        done
    done
fi
if part bench; then
    for rep in ${REPS:-1}; do
        for sc in $configs; do
            s=${sc%:*} c=${sc#*:}
            for p in double float; do
                for k in $ks; do
                    GRIDSIM_EXP_3D=$s GRIDSIM_EXP_CHUNK=$c run gridsim run inputs/bench_heat3d.toml \
                        --quiet --set problem.precision=\"$p\" --set parallel.time_block=$k \
                        --report "$out/s$s-c$c-$p-k$k-512-r$rep.json"
                    GRIDSIM_EXP_3D=$s GRIDSIM_EXP_CHUNK=$c run gridsim run inputs/bench_heat3d.toml \
                        --quiet --set problem.precision=\"$p\" --set parallel.time_block=$k \
                        --set grid.cells=[256,256,256] --set time.steps=2000 \
                        --report "$out/s$s-c$c-$p-k$k-256-r$rep.json"
                done
            done
        done
    done
fi
if part small; then
    for n in ${SMALL_NS:-64 96 128 160 192 224}; do
        steps=$(( 50000000000 / (n * n * n) )); (( steps > 20000 )) && steps=20000; (( steps < 400 )) && steps=400
        for sc in ${SMALL_CONFIGS:-1:1}; do
            s=${sc%:*} c=${sc#*:}
            for p in double float; do
                for k in 1 2 3 4; do
                    GRIDSIM_EXP_3D=$s GRIDSIM_EXP_CHUNK=$c run gridsim run inputs/bench_heat3d.toml \
                        --quiet --set problem.precision=\"$p\" --set parallel.time_block=$k \
                        --set grid.cells=[$n,$n,$n] --set time.steps=$steps \
                        --report "$out/small-s$s-c$c-$p-k$k-$n.json"
                done
            done
        done
    done
fi
metrics=gpu__time_duration.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,launch__block_size,dram__bytes.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__throughput.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed
if part ncu; then
    for sc in ${NCU_CONFIGS:-0:1 1:1}; do
        s=${sc%:*} c=${sc#*:}
        for pk in double:3 float:4; do
            p=${pk%:*} k=${pk#*:}
            GRIDSIM_EXP_3D=$s GRIDSIM_EXP_CHUNK=$c ncu --clock-control none --csv --metrics $metrics \
                -k regex:stencil_levels_3d -s 20 -c 2 gridsim run inputs/bench_heat3d.toml --quiet \
                --set time.steps=400 --set parallel.time_block=$k --set problem.precision=\"$p\" \
                >"$out/ncu-s$s-$p-k$k.csv" 2>>"$log"
            echo "ncu s$s $p k$k"; python3 - "$out/ncu-s$s-$p-k$k.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
h = rows[0]
k, m, v, i = (h.index(x) for x in ("Kernel Name", "Metric Name", "Metric Value", "ID"))
by = {}
for r in rows[1:]:
    by.setdefault(r[i], [r[k][:40]]).append(f"{r[m].split('.')[0].replace('__', ':')[-28:]}={r[v]}")
for key, vals in by.items():
    print(key, " ".join(vals))
PY
        done
    done
fi
grep -E "PASSED|FAILED|ERROR SUMMARY|RACECHECK SUMMARY" "$log" | sort | uniq -c
python3 - "$out" <<'PY'
import glob, json, os, sys
rows = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    r = json.load(open(f))
    def find(d, key):
        if isinstance(d, dict):
            if key in d: return d[key]
            for v in d.values():
                x = find(v, key)
                if x is not None: return x
        return None
    name = os.path.basename(f).rsplit("-r", 1)[0]
    rows.setdefault(name, []).append((find(r, "bandwidth_ratio"), find(r, "loop_seconds")))
for k, v in rows.items():
    print(f"{k:28s} " + "  ".join(f"{a:.3f} ({b:.4f}s)" if a is not None else str((a, b)) for a, b in v))
PY
