#!/bin/sh
# xdmf_check.sh GRIDSIM MPIEXEC PVBATCH DECK: writes DECK's final state from 4 ranks and opens
# its XDMF sidecar with ParaView's reader (check_xdmf.py).
set -eu
gridsim=$1 mpiexec=$2 pvbatch=$3 deck=$4
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$mpiexec" -np 4 --oversubscribe "$gridsim" run "$deck" --quiet --set output.write_final=true \
    --set "output.dir=\"$dir\"" --set time.steps=20
"$pvbatch" --force-offscreen-rendering "$here/check_xdmf.py" "$dir/snapshot_final.xmf" "$dir/snapshot_final.h5"
