#!/usr/bin/env bash
# Runs every GPU check and benchmark of the CUDA backend on a GPU host, in one call:
#   scripts/gpu_host/check.sh single   # 1-GPU host: gpu tests at 1/2/4 ranks (shared GPU),
#                                      # sanitizers, bandwidths, benchmark table
#   scripts/gpu_host/check.sh multi    # multi-GPU host: gpu tests at 2 and 4 ranks (one GPU
#                                      # each), multi-rank benchmarks
# Needs the bundle from ../shared/gpu-host/bundle.sh in .gpu-host/. Logs and JSON reports go
# to $OUT (or out/), the table last.
set -uo pipefail
mode=${1:-single}
out=${OUT:-out}
reports=/tmp/gridsim-reports   # tarred into $out at the end (the device tool returns 8 files)
mkdir -p "$out" "$reports"
source .gpu-host/env.sh
export NCCL_NVLS_ENABLE=0   # never NVLink multicast on the shared hosts
g=gridsim
log() { echo "=== $*" | tee -a "$out/check.log"; }
run() { log "$*"; "$@" >>"$out/check.log" 2>&1; local rc=$?; echo "    rc=$rc" | tee -a "$out/check.log"; return $rc; }

nvidia-smi -L | tee -a "$out/check.log"
ngpu=$(nvidia-smi -L | wc -l)
run mpirun -np 1 $g info
run mpirun -np "$ngpu" $g info
mpirun -np $(( ngpu > 1 ? 2 : 1 )) $g bench --size-mib 512 | tee -a "$out/check.log"

ranks_list="1 2 4"; [ "$mode" = multi ] && ranks_list="2 4"
for n in $ranks_list; do
    run mpirun -np "$n" --oversubscribe gpu_backend_test --gtest_brief=1
    grep -E "PASSED|FAILED|SKIPPED" "$out/check.log" | tail -3
done

bench() {  # name ranks deck [--set ...]
    local name=$1 n=$2 deck=$3; shift 3
    run mpirun -np "$n" $g run "inputs/$deck" --quiet --report "$reports/$name.json" "$@"
}
if [ "$mode" = single ]; then
    for k in tiled naive; do
        for o in true false; do
            bench "heat3d_d_${k}_ovl${o}" 1 bench_heat3d.toml --set parallel.kernel=$k --set parallel.overlap=$o
            bench "jacobi2d_f_${k}_ovl${o}" 1 bench_jacobi2d.toml --set parallel.kernel=$k --set parallel.overlap=$o
        done
        bench "heat3d_f_${k}" 1 bench_heat3d.toml --set parallel.kernel=$k --set problem.precision=float
    done
    for rows in 1 2 4 8; do
        bench "rows_heat3d_d_naive_r$rows" 1 bench_heat3d.toml --set parallel.kernel=naive --set parallel.rows_per_thread=$rows
        bench "rows_heat3d_f_naive_r$rows" 1 bench_heat3d.toml --set parallel.kernel=naive --set parallel.rows_per_thread=$rows --set problem.precision=float
        bench "rows_jacobi2d_f_naive_r$rows" 1 bench_jacobi2d.toml --set parallel.kernel=naive --set parallel.rows_per_thread=$rows
    done
    for tag in ${BLOCKS:-32x4 32x8 64x4 128x2}; do
        b="[${tag/x/,}]"
        bench "blk_heat3d_d_${tag}" 1 bench_heat3d.toml --set "parallel.block=$b"
        bench "blk_jacobi2d_f_${tag}" 1 bench_jacobi2d.toml --set "parallel.block=$b"
    done
    # 2 ranks sharing the GPU: exercises the staged transport on one device.
    bench "heat3d_d_np2_shared" 2 bench_heat3d.toml --set parallel.share_gpus=true
    small=(run inputs/default.toml --quiet --set grid.cells=[40,36,28] --set time.steps=6 --set parallel.backend=cuda --set parallel.share_gpus=true)
    for tool in memcheck racecheck; do
        run mpirun -np 2 compute-sanitizer --tool $tool --error-exitcode 9 $g "${small[@]}"
        run mpirun -np 2 compute-sanitizer --tool $tool --error-exitcode 9 $g "${small[@]}" --set parallel.kernel=naive
        run mpirun -np 2 compute-sanitizer --tool $tool --error-exitcode 9 $g run inputs/jacobi2d_benchmark.toml --quiet \
            --set grid.cells=[70,50] --set time.steps=5 --set parallel.backend=cuda --set parallel.share_gpus=true
    done
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$out/check.log" | sort | uniq -c
else
    for n in 1 2 4; do
        [ "$n" -gt "$ngpu" ] && continue
        for k in tiled naive; do
            bench "multi_heat3d_d_${k}_np$n" "$n" bench_heat3d.toml --set parallel.kernel=$k
            bench "multi_jacobi2d_f_${k}_np$n" "$n" bench_jacobi2d.toml --set parallel.kernel=$k
        done
        bench "multi_heat3d_d_naive_np${n}_noovl" "$n" bench_heat3d.toml --set parallel.kernel=naive --set parallel.overlap=false
        bench "multi_heat3d_d_staged_np$n" "$n" bench_heat3d.toml --set parallel.transport=staged
        bench "multi_jacobi2d_f_staged_np$n" "$n" bench_jacobi2d.toml --set parallel.transport=staged
        bench "multi_jacobi2d_f_naive_np${n}_noovl" "$n" bench_jacobi2d.toml --set parallel.kernel=naive --set parallel.overlap=false
    done
    # Weak scaling: 512^3 points per GPU.
    bench "weak_heat3d_d_np2" 2 bench_heat3d.toml --set parallel.kernel=naive --set "grid.cells=[1024,512,512]"
    bench "weak_heat3d_d_np4" 4 bench_heat3d.toml --set parallel.kernel=naive --set "grid.cells=[1024,1024,512]"
fi
echo
python3 scripts/gpu_host/summarize.py "$reports"/*.json | tee "$out/table.txt"
tar -C "$reports" -czf "$out/reports.tgz" .
