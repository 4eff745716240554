#!/usr/bin/env bash
# Starts a command with one GPU visible, the one of this rank's node-local index, as Slurm's
# --gpus-per-task=1 / --gpu-bind does: mpirun -np 4 scripts/per_task_gpu.sh gridsim run ...
# (Open MPI and Slurm local-rank variables; MPICH's MPI_LOCALRANKID too).
local_rank=${OMPI_COMM_WORLD_LOCAL_RANK:-${SLURM_LOCALID:-${MPI_LOCALRANKID:-0}}}
export CUDA_VISIBLE_DEVICES=$local_rank
exec "$@"
