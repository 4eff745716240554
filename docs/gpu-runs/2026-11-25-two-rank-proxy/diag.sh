#!/usr/bin/env bash
# Eleventh session, call 1 (one H200): where a split rank's time-block pass loses against one
# rank holding the whole grid, looked at on one GPU. From the repository root on the GPU host
# after `source .gpu-host/env.sh`; everything under $1. timing.txt: case, ranks, k, us per step,
# x copy, phases (us per step, graphs off and every pass timed where named "phases").
#  1. one rank: heat 512 x 512 x 256 double with z Dirichlet and z periodic (the rank-alone
#     periodic copy), jacobi 16384^2 and 16384 x 8192 float (residual every 100 sweeps);
#  2. two ranks sharing the GPU under MPS (each half the grid, as on two GPUs): jacobi 16384^2
#     k = 8 and heat 512^3 k = 3, transport ipc and staged, with MPS's thread share 100 and 50.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
one() {  # NAME NP DECK [--set ...]
    local name=$1 np=$2 deck=$3
    shift 3
    mpirun -np "$np" ${BIN:-gridsim} run "$deck" --quiet "$@" --report "$out/r.json" >"$out/run.log" 2>&1
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
ph = r.get("phases", {})
keep = " ".join("{}={:.1f}".format(k, 1e6 * v["mean"] / r["steps"]) for k, v in ph.items() if isinstance(v, dict) and v.get("mean", 0) > 0)
print(sys.argv[2], sys.argv[3], r["time_block"], "%.1f" % (1e6 * r["time_per_step_s"]), "%.3f" % r["bandwidth_ratio"], keep)' \
        "$out/r.json" "$name" "$np" >>"$out/timing.txt" 2>/dev/null || { echo "$name $np FAILED" >>"$out/timing.txt"; tail -3 "$out/run.log" >>"$out/timing.txt"; }
}
j=inputs/bench_jacobi2d.toml
h=inputs/bench_heat3d.toml
ph=(--set parallel.graphs=off --set parallel.phase_every=1)
for rep in 1 2; do
    one h-half-dir 1 $h --set 'grid.cells=[512,512,256]' --set parallel.time_block=3
    one h-half-zper 1 $h --set 'grid.cells=[512,512,256]' --set 'boundary.z="periodic"' --set parallel.time_block=3
    one h-half-zper-phases 1 $h --set 'grid.cells=[512,512,256]' --set 'boundary.z="periodic"' --set parallel.time_block=3 "${ph[@]}"
    one h-full 1 $h --set parallel.time_block=3
    one j-full 1 $j --set parallel.time_block=8
    one j-half 1 $j --set 'grid.cells=[16384,8192]' --set parallel.time_block=8
done
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d
for rep in 1 2; do
    for share in 100 50; do
        export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$share
        for tr in ipc staged; do
            s=(--set parallel.share_gpus=true --set "parallel.transport=\"$tr\"")
            one "j-np2-$tr-sm$share" 2 $j "${s[@]}" --set parallel.time_block=8
            one "h-np2-$tr-sm$share" 2 $h "${s[@]}" --set parallel.time_block=3
        done
        s=(--set parallel.share_gpus=true --set 'parallel.transport="ipc"')
        one "j-np2-ipc-sm$share-phases" 2 $j "${s[@]}" --set parallel.time_block=8 "${ph[@]}"
        one "h-np2-ipc-sm$share-phases" 2 $h "${s[@]}" --set parallel.time_block=3 "${ph[@]}"
    done
done
unset CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
echo quit | nvidia-cuda-mps-control
rm -f "$out/r.json"
sort -k1,1 -s "$out/timing.txt"
