#!/usr/bin/env bash
# HDF5 output from GPU ranks on a GPU host: the default heat deck and the small jacobi deck on
# the CUDA backend against the reference files, and a GPU restart on another rank count against
# the uninterrupted GPU run. Also reruns the gpu test suite on one GPU.
set -uo pipefail
source .gpu-host/env.sh
export NCCL_NVLS_ENABLE=0
d=$(mktemp -d)
gpu=(--set parallel.backend=cuda --set parallel.share_gpus=true --quiet)
ok() { if "$@"; then echo "CHECK PASS: $*"; else echo "CHECK FAIL: $*"; fi; }
mpirun -np 1 gpu_backend_test --gtest_brief=1 2>&1 | grep -E "PASSED|FAILED|SKIPPED"
mpirun -np 1 gridsim run inputs/default.toml "${gpu[@]}" --set "output.dir=\"$d/heat\"" | grep -E "error vs|launch"
ok gridsim compare "$d/heat/snapshot_final.h5" tests/reference/default.h5 --atol 1e-12
mpirun -np 2 gridsim run inputs/jacobi2d_small.toml "${gpu[@]}" --set "output.dir=\"$d/jac\"" > /dev/null
ok gridsim compare "$d/jac/snapshot_final.h5" tests/reference/jacobi2d_small.h5 --atol 1e-6
mpirun -np 2 gridsim run inputs/default.toml "${gpu[@]}" --set "output.dir=\"$d/ck\"" --set output.checkpoint_every=200 > /dev/null
mpirun -np 1 gridsim run inputs/default.toml "${gpu[@]}" --set "output.dir=\"$d/rs\"" --restart "$d/ck/checkpoint.h5.prev" | grep -E "restart|steps"
ok gridsim compare "$d/rs/snapshot_final.h5" "$d/heat/snapshot_final.h5" --atol 0
rm -rf "$d"
