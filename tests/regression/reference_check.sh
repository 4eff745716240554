#!/bin/sh
# reference_check.sh GRIDSIM MPIEXEC DECK REFERENCE [compare options]: runs DECK on 2 ranks,
# writing its final state to a scratch directory, and compares it with REFERENCE.
set -eu
gridsim=$1 mpiexec=$2 deck=$3 ref=$4
shift 4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$mpiexec" -np 2 --oversubscribe "$gridsim" run "$deck" --quiet --set output.write_final=true --set "output.dir=\"$dir\""
"$gridsim" compare "$dir/snapshot_final.h5" "$ref" "$@"
