#!/usr/bin/env bash
# Eighth session, call 2b: two ranks on one GPU under MPS (without it the two processes take
# the GPU in turns of milliseconds: 4 ms per step at 1024^2). Process grid [1,2] (the cost model
# splits the benchmark along x, where the CUDA summing pass does not apply).
set -uo pipefail
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && echo "mps started"
for t in ipc staged; do
    for k in 1 3; do
        mpirun -np 2 gridsim run inputs/bench_jacobi2d.toml --set grid.cells=[2048,2048] --set time.steps=2000 \
            --set time.norm_every=1 --set parallel.share_gpus=true --set parallel.backend='"cuda"' \
            --set parallel.transport="\"$t\"" --set parallel.time_block=$k --set parallel.process_grid=[1,2] 2>&1 |
            grep -E "time per step|time blocking|transport|error|Error" | tr '\n' ' '
        echo " <- $t k=$k"
    done
done
echo quit | nvidia-cuda-mps-control
