#!/usr/bin/env bash
# scripts/run.sh [DECK] [-np N] [gridsim run options...]
#
# Installs what is missing, builds, and runs DECK (default inputs/default.toml, a small 3D heat
# problem) on N MPI ranks (default 2). Extra options go to `gridsim run`, e.g.
#   scripts/run.sh inputs/jacobi2d.toml -np 4 --set grid.cells=[2048,2048] --report out.json
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"

deck="$GRIDSIM_ROOT/inputs/default.toml"
ranks=2
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        -np|-n) ranks=${2:?"-np needs a number"}; shift 2 ;;
        -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *.toml) deck=$1; shift ;;
        *) extra+=("$1"); shift ;;
    esac
done

gridsim_setup

launch=(mpirun -np "$ranks")
# Convenience for containers and small machines only: a batch job's own mpirun/srun line
# needs neither.
[ "$(id -u)" -eq 0 ] && launch+=(--allow-run-as-root)
[ "$ranks" -gt "$(nproc)" ] && launch+=(--oversubscribe)
gridsim_log "${launch[*]} gridsim run $deck ${extra[*]:-}"
exec "${launch[@]}" "$GRIDSIM_BUILD/gridsim" run "$deck" "${extra[@]}"
