#!/usr/bin/env bash
# scripts/bench-gpu.sh [matrix|tune|profile|latency|all] [BUILD_DIR]
# scripts/bench-gpu.sh regress [--baseline FILE] [--update REASON] [BUILD_DIR]
#
# The GPU benchmark matrix, run on a GPU host from the repository root: decks x kernel variants
# x precisions x residual cadence x the GPU counts the host has. Every run writes its JSON report;
# the last thing printed is one table (ms/step, GLUP/s, share of the device copy bandwidth
# measured in the same run). Modes:
#   matrix   the benchmark decks with every kernel variant (default)
#   tune     block shapes and points per thread of the stream and tiled kernels
#   profile  Nsight Compute on a few sweeps of each variant and deck (needs ncu)
#   latency  time per step against points per GPU: jacobi 2D float (residual every sweep)
#            1024^2..16384^2 and heat 3D double 64^3..512^3 on 1, 2 and 4 GPUs (as many as
#            the host has), each as gridsim chooses (auto), with direct peer stores for the
#            halos and sums (ipc; several GPUs only), the jacobi rows on ranks that split y alone
#            (rows: parallel.process_grid = [1, n], where the residuals are summed inside passes;
#            several GPUs only), without CUDA graphs (off: graphs off and every phase timed, as
#            every step ran before graphs; LATENCY_MODES picks among auto, ipc, rows and off),
#            and with GRIDSIM_BEFORE (another gridsim build, e.g. an earlier commit's) where
#            that is set; latency.md, latency.png
#   regress  the regression gate: every benchmark deck (jacobi 2D float and double with the
#            residual every sweep and every 100, heat 3D double and float, jacobi 3D, implicit
#            heat with the fused and the cuBLAS CG kernels, heat 3D with a snapshot every 100
#            steps) at 1 GPU and every power of two up to the host's count, REGRESS_REPEAT runs
#            each (default 2, the best counts); scripts/regress.py then compares each figure
#            (its ratio to the copy bandwidth of the same run) with the baseline of this GPU
#            model in scripts/baselines/, prints one table and exits 1 if any figure is more
#            than 5% worse. --update REASON rewrites the baseline (commit it with the reason).
#   all      matrix, tune, profile and latency
# gridsim comes from BUILD_DIR (default: PATH, else build/). Reports and logs go to $OUT (or
# out/bench): reports.tgz, bench.log, table.txt, ncu.txt. Runs with mpirun; where no MPI is
# installed, source the relocatable runtime first (README, section "GPUs").
# BENCH_LARGE=0 leaves out the 2048^3 deck (69 GB of fields: H100 or H200 only).
set -uo pipefail
mode=${1:-matrix}
shift $(( $# > 0 ? 1 : 0 ))
gate_args=()
while [ "$mode" = regress ] && [ $# -gt 0 ]; do
    case "$1" in
        --baseline|--update)
            [ $# -ge 2 ] || { echo "bench-gpu.sh: $1 needs a value" >&2; exit 2; }
            gate_args+=("$1" "$2"); shift 2 ;;
        *) break ;;
    esac
done
build=${1:-}
out=${OUT:-out/bench}
reports=$(mktemp -d /tmp/gridsim-bench.XXXXXX)
mkdir -p "$out"
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}   # no NVLink multicast on shared hosts
g=$(command -v gridsim || echo "${build:-build}/gridsim")
[ -n "$build" ] && g="$build/gridsim"
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$ngpu" -gt 0 ] || { echo "bench-gpu.sh: no GPU found (nvidia-smi -L)" >&2; exit 2; }
log() { echo "=== $*" >>"$out/bench.log"; }

# bench NAME RANKS DECK [--set ...]: one run, its report in $reports/NAME.json.
bench() {
    local name=$1 n=$2 deck=$3; shift 3
    local bin=${BIN:-$g}
    log "mpirun -np $n $bin run inputs/$deck --quiet --report $name.json $*"
    mpirun -np "$n" "$bin" run "inputs/$deck" --quiet --report "$reports/$name.json" "$@" \
        >>"$out/bench.log" 2>&1 || { echo "FAILED: $name (see bench.log)";
                                     echo "${name%_r[0-9]*}" >>"$reports/failed.txt"; }
}

# The gate's runs: every benchmark deck at 1 GPU and each power of two the host has.
regress() {
    local n rep jacobi3d=() snap
    # 2048^3 float (69 GB of fields) fits one GPU of more than 100 GB; on smaller cards the
    # jacobi 3D figure is taken at 1024^3 (the baseline is per GPU model).
    local mib; mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
    [ "${mib:-0}" -lt 100000 ] && jacobi3d=(--set "grid.cells=[1024,1024,1024]")
    # Snapshots go to memory (/dev/shm where there is one): the figure then measures gridsim's
    # output path (staging, HDF5, the background writer), not the host's disk of the day.
    snap=$(mktemp -d "$( [ -d /dev/shm ] && echo /dev/shm || echo /tmp )/gridsim-snap.XXXXXX")
    for n in 1 2 4 8; do
        [ "$n" -gt "$ngpu" ] && continue
        for rep in $(seq "${REGRESS_REPEAT:-2}"); do
            local r="_r$rep" p="np$n"
            bench "${p}_jacobi2d_f_norm1$r" "$n" bench_jacobi2d.toml --set time.norm_every=1
            bench "${p}_jacobi2d_f_norm100$r" "$n" bench_jacobi2d.toml
            bench "${p}_jacobi2d_d_norm1$r" "$n" bench_jacobi2d.toml --set time.norm_every=1 \
                --set problem.precision=double
            bench "${p}_jacobi2d_d_norm100$r" "$n" bench_jacobi2d.toml --set problem.precision=double
            bench "${p}_heat3d_d$r" "$n" bench_heat3d.toml
            bench "${p}_heat3d_f$r" "$n" bench_heat3d.toml --set problem.precision=float
            bench "${p}_jacobi3d_f$r" "$n" bench_jacobi3d.toml "${jacobi3d[@]}"
            bench "${p}_cg_fused$r" "$n" bench_heat3d_implicit.toml --set parallel.cg_kernels=fused
            bench "${p}_cg_cublas$r" "$n" bench_heat3d_implicit.toml --set parallel.cg_kernels=cublas
            bench "${p}_heat3d_d_snap100$r" "$n" bench_heat3d.toml --set "grid.cells=[256,256,256]" \
                --set output.snapshot_every=100 --set "output.dir=\"$snap/$p$r\""
            rm -rf "${snap:?}/$p$r"
        done
    done
    rm -rf "$snap"
}

matrix() {
    for n in 1 2 4; do
        [ "$n" -gt "$ngpu" ] && continue
        for k in stream tiled naive; do
            for every in 100 1; do
                bench "np${n}_jacobi2d_f_${k}_norm${every}" "$n" bench_jacobi2d.toml \
                    --set parallel.kernel=$k --set time.norm_every=$every
            done
            bench "np${n}_jacobi2d_d_${k}_norm100" "$n" bench_jacobi2d.toml \
                --set parallel.kernel=$k --set problem.precision=double
            bench "np${n}_heat3d_d_${k}" "$n" bench_heat3d.toml --set parallel.kernel=$k
            bench "np${n}_heat3d_f_${k}" "$n" bench_heat3d.toml --set parallel.kernel=$k \
                --set problem.precision=float
            [ "$n" -eq 1 ] && [ "${BENCH_LARGE:-1}" = 1 ] &&
                bench "np1_jacobi3d_f_${k}" 1 bench_jacobi3d.toml --set parallel.kernel=$k
        done
    done
}

tune() {
    local b pts prec
    for b in 128,1 64,1 32,4 256,1; do
        for pts in 4 8 16; do
            bench "tune_jacobi2d_f_stream_${b/,/x}_p$pts" 1 bench_jacobi2d.toml --set time.steps=300 \
                --set parallel.kernel=stream --set "parallel.block=[$b]" --set parallel.rows_per_thread=$pts
        done
    done
    for b in 32,4 16,8 16,4 32,2 64,4 32,8; do
        for pts in 4 8; do
            for prec in double float; do
                bench "tune_heat3d_${prec:0:1}_stream_${b/,/x}_p$pts" 1 bench_heat3d.toml --set time.steps=150 \
                    --set parallel.kernel=stream --set "parallel.block=[$b]" \
                    --set parallel.rows_per_thread=$pts --set problem.precision=$prec
            done
        done
    done
    for b in 128,1 256,1; do
        for pts in 8 16; do
            bench "tune_jacobi2d_f_tiled_${b/,/x}_p$pts" 1 bench_jacobi2d.toml --set time.steps=300 \
                --set parallel.kernel=tiled --set "parallel.block=[$b]" --set parallel.rows_per_thread=$pts
        done
    done
    for b in 64,4 128,2 32,8; do
        for prec in double float; do
            bench "tune_heat3d_${prec:0:1}_tiled_${b/,/x}_p8" 1 bench_heat3d.toml --set time.steps=150 \
                --set parallel.kernel=tiled --set "parallel.block=[$b]" \
                --set parallel.rows_per_thread=8 --set problem.precision=$prec
        done
    done
}

# One profiled sweep per variant and deck: DRAM throughput, L1/L2 hit rates, occupancy, the top
# stall reasons. --clock-control none: the clocks the benchmarks run at.
profile() {
    command -v ncu >/dev/null || { echo "no ncu: profile skipped"; return; }
    local metrics=dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,l1tex__t_sector_hit_rate.pct,sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__average_warp_latency_issue_stalled_barrier,smsp__average_warp_latency_issue_stalled_long_scoreboard,smsp__average_warp_latency_issue_stalled_short_scoreboard,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,launch__registers_per_thread
    for k in stream tiled naive; do
        for deck in bench_jacobi2d.toml bench_heat3d.toml; do
            log "ncu $k $deck"
            ncu --clock-control none --metrics "$metrics" -k "regex:stencil_|reduce_box|fold" \
                --launch-skip 20 --launch-count 3 \
                "$g" run "inputs/$deck" --quiet --set time.steps=40 --set time.norm_every=1 \
                --set parallel.kernel=$k >>"$out/ncu.txt" 2>&1
        done
    done
    grep -E "stencil_|reduce_box|fold|dram__|lts__|l1tex__|sm__warps|gpu__time|stalled|registers" \
        "$out/ncu.txt" >"$out/ncu-summary.txt" || true
}

# Global grids N^2 / N^3 on n GPUs (strong scaling: points per GPU = N^d / n), steps for about
# 10^10 point updates (200 to 40000), LATENCY_REPEAT runs each (the fastest is kept).
latency() {
    local n s mode rep steps modes=${LATENCY_MODES:-auto ipc rows off}
    [ -n "${GRIDSIM_BEFORE:-}" ] && modes="$modes before"
    for n in 1 2 4; do
        [ "$n" -gt "$ngpu" ] && continue
        for mode in $modes; do
            local sets=(--set parallel.graphs=$mode) BIN=$g
            [ $mode = ipc ] && { [ "$n" -eq 1 ] && continue; sets=(--set parallel.transport=ipc); }
            [ $mode = rows ] && { [ "$n" -eq 1 ] && continue; sets=(--set "parallel.process_grid=[1,$n]"); }
            [ $mode = off ] && sets+=(--set parallel.phase_every=1)
            [ $mode = before ] && sets=(--set output.progress_every=0) BIN=$GRIDSIM_BEFORE
            for rep in $(seq "${LATENCY_REPEAT:-2}"); do
                for s in ${LATENCY_2D:-1024 2048 4096 8192 16384}; do
                    steps=$(( 10000000000 / (s * s) )); steps=$(( steps < 200 ? 200 : steps > 40000 ? 40000 : steps ))
                    bench "lat_jacobi2d_s${s}_np${n}_${mode}_r${rep}" "$n" bench_jacobi2d.toml \
                        --set "grid.cells=[$s,$s]" --set time.steps=$steps --set time.norm_every=1 "${sets[@]}"
                done
                [ $mode = rows ] && continue  # only the jacobi rows depend on it
                for s in ${LATENCY_3D:-64 128 256 512}; do
                    steps=$(( 10000000000 / (s * s * s) )); steps=$(( steps < 200 ? 200 : steps > 40000 ? 40000 : steps ))
                    bench "lat_heat3d_s${s}_np${n}_${mode}_r${rep}" "$n" bench_heat3d.toml \
                        --set "grid.cells=[$s,$s,$s]" --set time.steps=$steps "${sets[@]}"
                done
            done
        done
    done
    python3 "$(dirname "$0")/gpu_host/latency.py" "$reports" "$out" | tee "$out/latency.txt"
}

mpirun -np 1 "$g" bench --size-mib 1024 | tee -a "$out/bench.log"
case "$mode" in
    matrix) matrix ;;
    tune) tune ;;
    profile) profile ;;
    latency) latency ;;
    all) matrix; tune; profile; latency ;;
    regress)
        regress
        tar -C "$reports" -czf "$out/reports.tgz" .
        echo
        python3 "$(dirname "$0")/regress.py" "$reports" "${gate_args[@]}" | tee "$out/table.txt"
        exit "${PIPESTATUS[0]}" ;;
    *) echo "bench-gpu.sh: unknown mode '$mode' (matrix, tune, profile, latency, regress or all)" >&2
       exit 2 ;;
esac
tar -C "$reports" -czf "$out/reports.tgz" .
echo
python3 "$(dirname "$0")/gpu_host/summarize.py" "$reports"/*.json | tee "$out/table.txt"
