#!/usr/bin/env bash
# scripts/bench-gpu.sh MODE [BUILD_DIR]: the runs a user makes on a GPU host, one mode per call.
#   check     correctness of the CUDA backend: gpu_backend_test at each rank count of RANKS
#             (default "1 2 4"; ranks share the GPUs where there are fewer), then
#             compute-sanitizer memcheck of every kernel variant on small decks and racecheck of
#             the kernels that use shared memory; a summary last, exit 1 if anything failed
#             (GTEST_FILTER narrows the gpu tests, as for any GoogleTest binary)
#   bench     the benchmark decks x kernel variants x precisions x residual cadence x 1, 2 and 4
#             GPUs (as many as the host has): one table of ms/step, GLUP/s and the share of the
#             device copy bandwidth measured in the same run
#   regress [--baseline FILE] [--update REASON]
#             the regression gate: every benchmark deck at 1 GPU and each power of two the host
#             has, REGRESS_REPEAT runs each (default 2, the best counts; the snapshot deck
#             REGRESS_SNAP_RUNS times as many, default 2); scripts/regress.py
#             compares each figure (its ratio to the copy bandwidth of the same run) with the
#             baseline of this GPU model in scripts/baselines/ and exits 1 if any is more than 5%
#             worse (or than a figure's own tolerance in the baseline: the snapshot deck's).
#             --update REASON rewrites the baseline (commit it with the reason)
#   latency   time per step against points per GPU (jacobi 2D float, residual every sweep,
#             1024^2..16384^2; heat 3D double 64^3..512^3) on 1, 2 and 4 GPUs, as gridsim
#             chooses (auto), with the ipc transport, on ranks that split y alone (rows) and with
#             graphs off (off) (LATENCY_MODES picks; GRIDSIM_BEFORE=PATH adds another build);
#             latency.md and latency.png
#   scaling   the strong and weak studies of docs/scaling.md with scripts/scaling.py on 1, 2, 4
#             and 8 GPUs (as many as the host has; REPEAT runs each, default 3), on 8 GPUs also
#             heat 3D 1024^3 strong; each study's report where numpy and matplotlib are
#             installed, else the command that makes it
#   profile   Nsight Compute (ncu --clock-control none) on a few sweeps of each kernel variant
#             and deck: DRAM throughput, L1/L2 hit rates, occupancy, stall reasons
# gridsim and gpu_backend_test come from BUILD_DIR, else PATH, an install's bin/, build/. Everything goes to
# $OUT (default out/MODE): the log, the JSON reports (reports.tgz) and table.txt, printed last.
# Runs with mpirun; where no MPI is installed, source the relocatable runtime first (docs/running.md,
# "GPUs"). BENCH_LARGE=0 leaves out the 2048^3 deck (69 GB of fields).
set -uo pipefail
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
mode=${1:-}
case "$mode" in
    check|bench|regress|latency|scaling|profile) shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench-gpu.sh: unknown mode '$mode' (check, bench, regress, latency, scaling or profile)" >&2
       exit 2 ;;
esac
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
here=$(cd "$(dirname "$0")" && pwd)
decks=$(cd "$here/../inputs" && pwd)
find_tool() {  # NAME [PATH IN A BUILD DIRECTORY]: from BUILD_DIR, PATH, an install's bin/, build/
    local in_build=${2:-$1}
    if [ -n "$build" ]; then   # a build tree, or a packed runtime's flat bin/
        if [ -x "$build/$in_build" ]; then echo "$build/$in_build"; else echo "$build/$1"; fi
    elif command -v "$1"; then :
    elif [ -x "$here/../../../bin/$1" ]; then echo "$here/../../../bin/$1"
    else echo "build/$in_build"; fi
}
g=$(find_tool gridsim)
[ -x "$g" ] || { echo "bench-gpu.sh: no gridsim at $g (give the build directory)" >&2; exit 2; }
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$ngpu" -gt 0 ] || { echo "bench-gpu.sh: no GPU found (nvidia-smi -L)" >&2; exit 2; }
out=${OUT:-out/$mode}
reports=$(mktemp -d /tmp/gridsim-bench.XXXXXX)
trap 'rm -rf "$reports"' EXIT
mkdir -p "$out"
log_file="$out/$mode.log"
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}   # no NVLink multicast on shared hosts
gpu_counts() { local n; for n in 1 2 4 8; do [ "$n" -le "$ngpu" ] && echo "$n"; done; }

# The one helper every mode goes through: run a command, log it with its output and exit code,
# print the exit code and the command, and remember a failure.
failures=0
run() {
    echo "=== $*" >>"$log_file"
    "$@" >>"$log_file" 2>&1
    local rc=$?
    echo "    rc=$rc" >>"$log_file"
    [ "$rc" -eq 0 ] || { failures=$((failures + 1)); echo "FAILED (rc=$rc): $*"; }
    return "$rc"
}

# bench NAME RANKS DECK [--set ...]: one run of a deck, its report in $reports/NAME.json; a run
# that fails is listed in $reports/failed.txt under its figure's name (NAME without _rN).
bench() {
    local name=$1 n=$2 deck=$3; shift 3
    run mpirun -np "$n" "${BIN:-$g}" run "$decks/$deck" --quiet --report "$reports/$name.json" "$@" ||
        echo "${name%_r[0-9]*}" >>"$reports/failed.txt"
}

check() {
    local n d k tests; tests=$(find_tool gpu_backend_test tests/gpu_backend_test)
    export GRIDSIM_TEST_SHARE_GPUS=1   # more ranks than GPUs: the ranks share them
    for n in ${RANKS:-1 2 4}; do
        run mpirun -np "$n" --oversubscribe "$tests" --gtest_brief=1
    done
    # Small decks, two ranks sharing the GPUs (staged halos): wide boxes use the 16-byte packs,
    # thin ones the scalar kernels; order 8 in double the plane walk; density conduction in time
    # blocks the levels kernels with a field (3D and 2D); order 4 in double at `time_block = 2` the
    # wide levels kernel with its reflections (its start-up trial's passes, whichever the run takes).
    local small=("jacobi2d_benchmark.toml --set grid.cells=[301,23] --set time.norm_every=1"
                 "default.toml --set grid.cells=[135,9,11]"
                 "default.toml --set grid.cells=[263,7,5] --set problem.precision=float"
                 "jacobi3d.toml --set grid.cells=[70,9,12] --set time.norm_every=1"
                 "default.toml --set grid.cells=[70,37,12] --set problem.conductivity=\"density\" \
--set initial.regions=[{shape=\"box\",lo=[0.2,0.2,0.2],hi=[0.6,0.5,0.7],density=10.0}] \
--set parallel.time_block=2"
                 "default.toml --set grid.cells=[100,40,40] --set problem.order=8"
                 "heat2d_periodic.toml --set grid.cells=[301,77] --set problem.conductivity=\"density\" \
--set initial.regions=[{shape=\"box\",lo=[0.2,0.2],hi=[0.6,0.5],density=10.0}] \
--set parallel.time_block=3"
                 "default.toml --set grid.cells=[70,37,12] --set problem.order=4 --set parallel.time_block=2")
    # Each run writes its files to a scratch directory of its own, gone after the run (what the
    # sanitizer found is in the log; reports.tgz holds reports only).
    sanitize() {  # TOOL DECK KERNEL
        local dir; dir=$(mktemp -d "$reports/sanitize.XXXXXX")
        # shellcheck disable=SC2086
        run mpirun -np 2 --oversubscribe compute-sanitizer --tool "$1" --error-exitcode 9 \
            "$g" run "$decks/"$2 --quiet --set time.steps=4 --set "output.dir=\"$dir\"" \
            --set parallel.backend=cuda \
            --set parallel.share_gpus=true --set parallel.ranks_used=2 --set parallel.kernel="$3"
        rm -rf "$dir"
    }
    for d in "${small[@]}"; do
        for k in stream tiled naive; do sanitize memcheck "$d" $k; done
    done
    for d in "${small[0]}" "${small[3]}" "${small[4]}" "${small[5]}" "${small[6]}" "${small[7]}"; do
        for k in stream tiled; do sanitize racecheck "$d" $k; done
    done
    {
        grep -E "PASSED|FAILED|SKIPPED" "$log_file" | sort | uniq -c
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log_file" | sort | uniq -c
        echo "commands: $(grep -c '^    rc=' "$log_file"), failed: $failures"
    } | tee "$out/table.txt"
}

bench_matrix() {
    local n k every
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
    python3 "$here/bench_table.py" "$reports"/*.json | tee "$out/table.txt"
}

# The gate's runs: every benchmark deck at 1 GPU and each power of two the host has.
regress() {
    local n rep i jacobi3d=() snap mib
    local conduction=(--set 'problem.conductivity="density"' --set "initial.regions=[{shape=\"box\", \
lo=[0.2,0.2,0.2], hi=[0.6,0.5,0.7], density=10.0}, {shape=\"sphere\", center=[0.7,0.6,0.4], \
radius=0.2, density=0.1}]")
    local conduction2d=(--set "grid.cells=[16384,16384]" --set 'problem.conductivity="density"' \
        --set "initial.regions=[{shape=\"box\", lo=[0.2,0.2], hi=[0.6,0.5], density=10.0}, \
{shape=\"sphere\", center=[0.7,0.6], radius=0.2, density=0.1}]")
    # 2048^3 float (69 GB of fields) fits one GPU of more than 100 GB; on smaller cards the
    # jacobi 3D figure is taken at 1024^3 (the baseline is per GPU model).
    mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
    [ "${mib:-0}" -lt 100000 ] && jacobi3d=(--set "grid.cells=[1024,1024,1024]")
    # Snapshots go to memory (/dev/shm where there is one): the figure then measures gridsim's
    # output path (staging, HDF5, the background writer), not the host's disk of the day.
    snap=$(mktemp -d "$( [ -d /dev/shm ] && echo /dev/shm || echo /tmp )/gridsim-snap.XXXXXX")
    for n in $(gpu_counts); do
        for rep in $(seq "${REGRESS_REPEAT:-2}"); do
            local r="_r$rep" p="np$n"
            bench "${p}_jacobi2d_f_norm1$r" "$n" bench_jacobi2d.toml --set time.norm_every=1
            bench "${p}_jacobi2d_f_norm100$r" "$n" bench_jacobi2d.toml
            bench "${p}_jacobi2d_d_norm1$r" "$n" bench_jacobi2d.toml --set time.norm_every=1 \
                --set problem.precision=double
            bench "${p}_jacobi2d_d_norm100$r" "$n" bench_jacobi2d.toml --set problem.precision=double
            bench "${p}_heat3d_d$r" "$n" bench_heat3d.toml
            bench "${p}_heat3d_f$r" "$n" bench_heat3d.toml --set problem.precision=float
            # A small grid, whose step is mostly fixed costs (launches, the exchange's handshake),
            # which the large decks would hide.
            bench "${p}_heat3d_d_s128$r" "$n" bench_heat3d.toml --set "grid.cells=[128,128,128]" \
                --set time.steps=8000
            # Every rank exchanges both z faces (z periodic, the ranks in a column along z), as
            # the middle ranks of a z split over more GPUs do; on 2 GPUs a rank holds the block
            # a rank of 512^3 holds on 4.
            bench "${p}_heat3d_d_zfaces$r" "$n" bench_heat3d.toml --set "grid.cells=[512,512,256]" \
                --set boundary.z=periodic --set "parallel.process_grid=[1,1,$n]" \
                --set time.steps=1200
            bench "${p}_jacobi3d_f$r" "$n" bench_jacobi3d.toml "${jacobi3d[@]}"
            # Heat of orders 4 and 8 in 3D: stars of radius 2 and 4.
            bench "${p}_heat3d_d_o4$r" "$n" bench_heat3d.toml --set problem.order=4
            bench "${p}_heat3d_d_o8$r" "$n" bench_heat3d.toml --set problem.order=8
            bench "${p}_cg_o4$r" "$n" bench_heat3d_implicit.toml --set problem.order=4
            # Heat conducting through a density field (a coefficient field read every pass).
            bench "${p}_heat3d_d_cond$r" "$n" bench_heat3d.toml "${conduction[@]}"
            bench "${p}_cg_cond$r" "$n" bench_heat3d_implicit.toml "${conduction[@]}"
            bench "${p}_heat2d_d_cond$r" "$n" bench_heat3d.toml "${conduction2d[@]}"
            # Heat of order 4 in 2D: the 2D wide levels kernel's passes.
            bench "${p}_heat2d_d_o4$r" "$n" bench_heat3d.toml --set "grid.cells=[16384,16384]" \
                --set problem.order=4
            bench "${p}_cg_fused$r" "$n" bench_heat3d_implicit.toml --set parallel.cg_kernels=fused
            bench "${p}_cg_cublas$r" "$n" bench_heat3d_implicit.toml --set parallel.cg_kernels=cublas
            # The preconditioned solves at a moderate and a long time step.
            for cfl in 50 1000; do
                bench "${p}_cg_mg_cfl$cfl$r" "$n" bench_heat3d_implicit.toml --set time.cfl=$cfl \
                    --set time.cg_preconditioner=multigrid
                bench "${p}_cg_cheb_cfl$cfl$r" "$n" bench_heat3d_implicit.toml --set time.cfl=$cfl \
                    --set time.cg_preconditioner=chebyshev
            done
            # The snapshot deck's time is the file write's, which varies more between runs than
            # a stencil's: it runs REGRESS_SNAP_RUNS times per repeat (default 2), the best
            # counting as for every figure.
            for i in $(seq "${REGRESS_SNAP_RUNS:-2}"); do
                bench "${p}_heat3d_d_snap100$r$i" "$n" bench_heat3d.toml \
                    --set "grid.cells=[256,256,256]" --set output.snapshot_every=100 \
                    --set "output.dir=\"$snap/$p$r$i\""
                rm -rf "${snap:?}/$p$r$i"
            done
        done
    done
    rm -rf "$snap"
    echo
    python3 "$here/regress.py" "$reports" "${gate_args[@]}" | tee "$out/table.txt"
    return "${PIPESTATUS[0]}"
}

# Global grids N^2 / N^3 on n GPUs (strong scaling: points per GPU = N^d / n), steps for about
# 3 x 10^10 point updates (2000 to 40000: a short run's start weighs on its time per step),
# LATENCY_REPEAT runs each (the fastest is kept).
latency() {
    local n s mode rep steps modes=${LATENCY_MODES:-auto ipc rows off}
    [ -n "${GRIDSIM_BEFORE:-}" ] && modes="$modes before"
    for n in 1 2 4; do
        [ "$n" -gt "$ngpu" ] && continue
        for mode in $modes; do
            local sets=(--set "parallel.graphs=$mode") BIN=$g
            # Every mode but auto runs on all n ranks (parallel.ranks_used), also where auto
            # leaves some idle.
            [ "$mode" = ipc ] && { [ "$n" -eq 1 ] && continue; sets=(--set parallel.transport=ipc --set "parallel.ranks_used=$n"); }
            [ "$mode" = rows ] && { [ "$n" -eq 1 ] && continue; sets=(--set "parallel.process_grid=[1,$n]"); }
            [ "$mode" = off ] && sets+=(--set parallel.phase_every=1 --set "parallel.ranks_used=$n")
            [ "$mode" = before ] && sets=(--set output.progress_every=0) BIN=$GRIDSIM_BEFORE
            for rep in $(seq "${LATENCY_REPEAT:-2}"); do
                for s in ${LATENCY_2D:-1024 2048 4096 8192 16384}; do
                    steps=$(( 30000000000 / (s * s) )); steps=$(( steps < 2000 ? 2000 : steps > 40000 ? 40000 : steps ))
                    bench "lat_jacobi2d_s${s}_np${n}_${mode}_r${rep}" "$n" bench_jacobi2d.toml \
                        --set "grid.cells=[$s,$s]" --set time.steps=$steps --set time.norm_every=1 "${sets[@]}"
                done
                [ "$mode" = rows ] && continue  # only the jacobi rows depend on it
                for s in ${LATENCY_3D:-64 128 256 512}; do
                    steps=$(( 30000000000 / (s * s * s) )); steps=$(( steps < 2000 ? 2000 : steps > 40000 ? 40000 : steps ))
                    bench "lat_heat3d_s${s}_np${n}_${mode}_r${rep}" "$n" bench_heat3d.toml \
                        --set "grid.cells=[$s,$s,$s]" --set time.steps=$steps "${sets[@]}"
                done
            done
        done
    done
    python3 "$here/bench_latency.py" "$reports" "$out" | tee "$out/table.txt"
}

# The studies of docs/scaling.md: strong scaling of jacobi 2D (the residual every sweep), heat 3D
# and implicit heat; weak scaling with 512^3 and 16384^2 points per GPU.
scaling() {
    local studies="$out/studies" ranks dir
    ranks=$(gpu_counts | tr '\n' ' ')
    study() {  # NAME KIND DECK [scaling.py run options]
        local name=$1 kind=$2 deck=$3; shift 3
        # shellcheck disable=SC2086
        run python3 "$here/scaling.py" run "$kind" --deck "$decks/$deck" --ranks $ranks \
            --repeat "${REPEAT:-3}" --gridsim "$g" --out "$studies/$name" "$@"
    }
    rm -rf "$studies"
    study jacobi2d-strong strong bench_jacobi2d.toml --set time.norm_every=1
    study heat3d-strong strong bench_heat3d.toml
    # On a whole node (8 GPUs), heat at 1024^3 as well.
    if [ "$ngpu" -ge 8 ]; then
        study heat3d-1024-strong strong bench_heat3d.toml --set "grid.cells=[1024,1024,1024]"
    fi
    study implicit-strong strong bench_heat3d_implicit.toml
    study heat3d-weak weak bench_heat3d.toml --per-rank-cells 512 512 512
    study jacobi2d-weak weak bench_jacobi2d.toml --per-rank-cells 16384 16384 --set time.norm_every=1
    for dir in "$studies"/*/; do
        python3 "$here/scaling.py" report "$dir" >>"$log_file" 2>&1 ||
            echo "no report here for $dir (run: python3 scripts/scaling.py report DIR)"
    done
    tar -C "$out" -czf "$out/studies.tgz" studies
    grep -h -A6 "^| N |" "$studies"/*/report.md | tee "$out/table.txt"
}

profile() {
    command -v ncu >/dev/null || { echo "bench-gpu.sh: no ncu on PATH" >&2; return 2; }
    local k deck metrics=dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,l1tex__t_sector_hit_rate.pct,sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__average_warp_latency_issue_stalled_barrier,smsp__average_warp_latency_issue_stalled_long_scoreboard,smsp__average_warp_latency_issue_stalled_short_scoreboard,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,launch__registers_per_thread
    for k in stream tiled naive; do
        for deck in bench_jacobi2d.toml bench_heat3d.toml; do
            run ncu --clock-control none --metrics "$metrics" -k "regex:stencil_|reduce_box|fold" \
                --launch-skip 20 --launch-count 3 "$g" run "$decks/$deck" --quiet \
                --set time.steps=40 --set time.norm_every=1 --set parallel.kernel=$k
        done
    done
    grep -E "stencil_|reduce_box|fold|dram__|lts__|l1tex__|sm__warps|gpu__time|stalled|registers" \
        "$log_file" | tee "$out/table.txt"
}

run mpirun -np 1 "$g" bench --size-mib 1024
grep "device copy" "$log_file" | head -1
rc=0
case "$mode" in
    bench) bench_matrix ;;
    *) "$mode" || rc=$? ;;
esac
[ -z "$(ls -A "$reports")" ] || tar -C "$reports" -czf "$out/reports.tgz" .
[ "$rc" -ne 0 ] && exit "$rc"
[ "$failures" -eq 0 ] || exit 1
