#!/usr/bin/env bash
# Runs the GPU scaling studies of docs/scaling.md on a multi-GPU host (RANKS, default "1 2 4";
# REPEAT, default 3; the jacobi benchmark with its residual every sweep) (the `run` step only:
# it needs nothing but Python's standard library); the reports come back as one archive and
# `scaling.py report`/`model` run on the development machine.
set -uo pipefail
out=${OUT:-out}
source .gpu-host/env.sh
export NCCL_NVLS_ENABLE=0
studies=/tmp/gridsim-studies
rm -rf "$studies"
python3 scripts/scaling.py run strong --deck inputs/bench_jacobi2d.toml --ranks ${RANKS:-1 2 4} --repeat ${REPEAT:-3} \
    --set time.norm_every=1 --gridsim .gpu-host/bin/gridsim --out "$studies/jacobi2d-strong"
python3 scripts/scaling.py run strong --deck inputs/bench_heat3d.toml --ranks ${RANKS:-1 2 4} --repeat ${REPEAT:-3} \
    --gridsim .gpu-host/bin/gridsim --out "$studies/heat3d-strong"
python3 scripts/scaling.py run weak --deck inputs/bench_heat3d.toml --ranks ${RANKS:-1 2 4} --repeat ${REPEAT:-3} \
    --per-rank-cells 512 512 512 --gridsim .gpu-host/bin/gridsim --out "$studies/heat3d-weak"
tar -C "$studies" -czf "$out/studies.tgz" .
