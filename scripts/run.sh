#!/usr/bin/env bash
# scripts/run.sh [DECK] [-np N] [gridsim run options...]
#
# Installs what is missing, builds, and runs DECK (default inputs/default.toml, a small 3D heat
# problem) on N MPI ranks (default 2). Extra options go to `gridsim run`, e.g.
#   scripts/run.sh inputs/jacobi2d_benchmark.toml -np 4 --set grid.cells=[2048,2048] --report out.json
# A deck with a reference in tests/reference/ ends with its validation (PASS or FAIL); a run
# that wrote a final snapshot ends with a PNG of it (scripts/plot_snapshot.py).
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
log=$(mktemp)
trap 'rm -f "$log" "$log.cmp"' EXIT
"${launch[@]}" "$GRIDSIM_BUILD/gridsim" run "$deck" "${extra[@]}" | tee "$log"
status=${PIPESTATUS[0]}
[ "$status" -eq 0 ] || exit "$status"

# A deck with a reference file ends with the validation: its final snapshot against it.
stem=$(basename "$deck" .toml)
ref="$GRIDSIM_ROOT/tests/reference/$stem.h5"
final=$(sed -n 's/^  wrote  *\(.*_final\.h5\)$/\1/p' "$log" | tail -1)
if [ -f "$ref" ] && [ -n "$final" ]; then
    atol=$(awk -v d="$stem" '$1 == d {print $2}' "$GRIDSIM_ROOT/tests/reference/tolerances.txt")
    echo "validation: $final against tests/reference/$stem.h5 (atol ${atol:-0})"
    if "$GRIDSIM_BUILD/gridsim" compare "$final" "$ref" --atol "${atol:-0}" > "$log.cmp"; then
        echo "validation: PASS"
    else
        cat "$log.cmp"
        echo "validation: FAIL"
        exit 1
    fi
fi
# A picture of the final field (a slice through the middle of a 3D one).
if [ -n "$final" ]; then
    py=/usr/bin/python3  # Debian's, which has the h5py and matplotlib that setup installed
    [ -x "$py" ] || py=python3
    if png=$("$py" "$GRIDSIM_ROOT/scripts/plot_snapshot.py" "$final"); then
        echo "picture: $png"
    fi
fi
