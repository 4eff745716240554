#!/usr/bin/env bash
# Twelfth session (one H200): a time-block pass split into its shell and interior (the halos
# move beside the interior) against one launch over every point followed by the halo exchange
# (the pass a rank without a neighbour runs). From the repository root on the GPU host after
# `source .gpu-host/env.sh`; everything under $1. BINS: the binaries to compare, interleaved.
#  1. one rank holding an axis alone (its halo copied as a neighbour's would be): overlap true
#     (the split) against "auto" (one launch, then the copy): jacobi 8192 x 16384 with x
#     periodic and y Dirichlet (the shell two 8-column slabs, as a rank of two splitting x
#     has one), heat 512 x 512 x 256 with z periodic; k = 8 and 3;
#  2. two ranks sharing the GPU under MPS over ipc, jacobi 16384^2 k = 8 and heat 512^3 k = 3,
#     with MPS's thread share 100 and 50 (half the multiprocessors each).
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
read -r -a bins <<<"${BINS:-gridsim-fuse gridsim}"
j=inputs/bench_jacobi2d.toml
h=inputs/bench_heat3d.toml
jx=(--set 'grid.cells=[8192,16384]' --set 'boundary.kind="dirichlet"' --set 'boundary.x="periodic"' --set parallel.time_block=8)
hz=(--set 'grid.cells=[512,512,256]' --set 'boundary.z="periodic"' --set parallel.time_block=3)
one() {  # NAME NP BIN DECK [--set ...]
    local name=$1 np=$2 bin=$3 deck=$4
    shift 4
    mpirun -np "$np" $bin run "$deck" --quiet "$@" --report "$out/r.json" >"$out/run.log" 2>&1
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(sys.argv[2], sys.argv[3], sys.argv[4], r["time_block"], "%.1f" % (1e6 * r["time_per_step_s"]), "%.3f" % r["bandwidth_ratio"])' \
        "$out/r.json" "$name" "$np" "$bin" >>"$out/timing.txt" 2>/dev/null || { echo "$name $np $bin FAILED" >>"$out/timing.txt"; tail -3 "$out/run.log" >>"$out/timing.txt"; }
}
for rep in 1 2; do
    one jx-split 1 gridsim $j "${jx[@]}" --set parallel.overlap=true
    one jx-fused 1 gridsim $j "${jx[@]}"
    one hz-split 1 gridsim $h "${hz[@]}" --set parallel.overlap=true
    one hz-fused 1 gridsim $h "${hz[@]}"
done
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d
s=(--set parallel.share_gpus=true --set 'parallel.transport="ipc"')
for rep in 1 2; do
    for share in 100 50; do
        export CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$share
        for bin in "${bins[@]}"; do
            one "j-np2-ipc-sm$share" 2 $bin $j "${s[@]}" --set parallel.time_block=8
            one "h-np2-ipc-sm$share" 2 $bin $h "${s[@]}" --set parallel.time_block=3
        done
    done
done
unset CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
echo quit | nvidia-cuda-mps-control
rm -f "$out/r.json"
sort -k1,1 -s "$out/timing.txt"
