#!/usr/bin/env bash
# Implicit heat (problem.scheme = "implicit", CG) on the CUDA backend, in one call:
#   scripts/gpu_host/implicit_check.sh
# 1. the gpu tests at 1 rank and at every GPU's rank count (all suites: the problem-table
#    refactor touches every run), and compute-sanitizer memcheck of both vector kernels;
# 2. the 512^3 double benchmark (inputs/bench_heat3d_implicit.toml, and SIZES: its cells per
#    axis, default 512) on 1 and all GPUs, BLAS and fused vector kernels, and on several GPUs
#    both all-reduce paths (parallel.cg_allreduce = mpi, nccl: NCCL on the stream), REPEAT times
#    (default 3), reports kept;
# 3. ncu (--clock-control none) of one CG iteration's kernels on 256^3, both vector kernels;
# 4. a strong-scaling study of the implicit deck (scripts/scaling.py run, ranks 1..GPUs).
# Needs gridsim and gpu_backend_test on PATH. Logs and reports go to $OUT (or out/implicit);
# a table is printed last. TESTS=0, NCU=0 and STUDY=0 skip steps 1, 3 and 4; TEST_RANKS lists
# the rank counts of step 1 (default: 1 and the number of GPUs), SIZES="" skips step 2.
set -uo pipefail
out=${OUT:-out/implicit}
mkdir -p "$out/reports"
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
ngpus=$(nvidia-smi -L | wc -l)
deck=inputs/bench_heat3d_implicit.toml
status() { echo "$1: $2" | tee -a "$out/status.log"; }

for n in ${TEST_RANKS:-1 $ngpus}; do  # more ranks than GPUs share them (the suite allows it)
    [ "${TESTS:-1}" = 1 ] || break
    mpirun -np "$n" gpu_backend_test --gtest_brief=1 >"$out/gputest_np$n.log" 2>&1
    status "gpu tests at $n rank(s)" "rc=$? $(grep -E 'PASSED|FAILED' "$out/gputest_np$n.log" | tr '\n' ' ')"
done
for k in cublas fused; do
    for p in double float; do
        [ "${TESTS:-1}" = 1 ] || break
        compute-sanitizer --tool memcheck --error-exitcode 9 gridsim run inputs/heat3d_implicit.toml \
            --quiet --set parallel.backend='"cuda"' --set parallel.cg_kernels="\"$k\"" \
            --set problem.precision="\"$p\"" --set time.steps=2 --set output.write_final=false \
            >"$out/memcheck_${k}_$p.log" 2>&1
        status "memcheck $k $p" "rc=$? $(grep -c 'Invalid' "$out/memcheck_${k}_$p.log") invalid accesses"
    done
done

for size in ${SIZES-512}; do
    for n in 1 "$ngpus"; do
        paths=mpi
        steps=$((4 * (512 / size) * (512 / size)))  # about the same number of points updated
        [ "$n" -gt 1 ] && paths="mpi nccl"
        for k in cublas fused; do
            for a in $paths; do
                for r in $(seq 1 "${REPEAT:-3}"); do
                    name="s${size}_n${n}_${k}_${a}_r$r"
                    mpirun -np "$n" gridsim run "$deck" --quiet --set parallel.cg_kernels="\"$k\"" \
                        --set parallel.cg_allreduce="\"$a\"" \
                        --set "grid.cells=[$size,$size,$size]" --set time.steps=$steps \
                        --report "$out/reports/$name.json" >"$out/bench_$name.log" 2>&1
                    status "bench $name" "rc=$? $(grep -E 'CG iteration' "$out/bench_$name.log")"
                done
            done
        done
    done
done

metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,l1tex__t_sector_hit_rate.pct,sm__warps_active.avg.pct_of_peak_sustained_active
for k in cublas fused; do
    [ "${NCU:-1}" = 1 ] || break
    timeout 180 ncu --clock-control none --metrics "$metrics" --launch-skip 60 --launch-count 14 --csv \
        gridsim run "$deck" --quiet --set 'grid.cells=[256,256,256]' --set time.steps=1 \
        --set parallel.cg_kernels="\"$k\"" >"$out/ncu_$k.csv" 2>"$out/ncu_$k.err"
    status "ncu $k" "rc=$?"
done

if [ "${STUDY:-1}" = 1 ]; then
    studies=/tmp/gridsim-implicit-study
    rm -rf "$studies"
    python3 scripts/scaling.py run strong --deck "$deck" --ranks $(seq 1 "$ngpus") \
        --repeat "${REPEAT:-3}" --gridsim "$(command -v gridsim)" --out "$studies/heat3d-implicit-strong" \
        >"$out/scaling.log" 2>&1
    status "scaling study" "rc=$?"
    tar -C "$studies" -czf "$out/implicit-study.tgz" .
fi

echo
echo "| run | CG iteration [s] | share of copy | iterations/step | all-reduces |"
echo "| --- | --- | --- | --- | --- |"
for f in "$out"/bench_s*_r*.log; do
    [ -e "$f" ] || continue  # SIZES="": no benchmark ran
    b=$(basename "$f" .log)
    it=$(sed -n 's/.*CG iteration *\([0-9.e+-]*\) s.*passes: \([0-9.]*\)%.*/\1 | \2%/p' "$f")
    cg=$(sed -n 's/.*iterations per step \([0-9]*\) \/ \([0-9.]*\) \/ \([0-9]*\).*/\2/p' "$f")
    red=$(sed -n 's/.*global all-reduces ([a-z]*) [0-9.]* s, \([0-9.]*%\) of the loop.*/\1/p' "$f")
    echo "| ${b#bench_} | $it | $cg | $red |"
done
