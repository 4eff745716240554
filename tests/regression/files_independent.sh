#!/bin/sh
# files_independent.sh GRIDSIM MPIEXEC H5DIFF DECK: the same deck written by 1 and by 4 ranks
# gives identical files: gridsim compare with zero tolerance and h5diff must both say so.
set -eu
gridsim=$1 mpiexec=$2 h5diff=$3 deck=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for n in 1 4; do
    "$mpiexec" -np $n --oversubscribe "$gridsim" run "$deck" --quiet --set output.write_final=true \
        --set "output.dir=\"$dir/n$n\"" --set time.steps=40
done
"$gridsim" compare "$dir/n4/snapshot_final.h5" "$dir/n1/snapshot_final.h5" --rtol 0 --atol 0
"$h5diff" "$dir/n4/snapshot_final.h5" "$dir/n1/snapshot_final.h5" /fields/u /fields/u
echo "h5diff: identical"
