#!/bin/sh
# install_check.sh CMAKE BUILD_DIR PYTHON: installs the build into a temporary prefix and uses
# the installed tree the way a user would.
set -eu
cmake=$1 build=$2 python=$3
unset GRIDSIM  # the installed script must find the installed binary by itself
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
"$cmake" --install "$build" --prefix "$prefix" >/dev/null
version=$("$prefix/bin/gridsim" --version)
echo "$version"
echo "$version" | grep -Eq '^gridsim [0-9]+\.[0-9]+\.[0-9]+'
"$prefix/bin/gridsim" check "$prefix/share/gridsim/inputs/default.toml" --ranks 4 >/dev/null
test -f "$prefix/share/gridsim/README.md"
test -x "$prefix/share/gridsim/scripts/scaling.py"
# Only what a user runs is installed: the scripts that build, test or pack the source tree and
# the one-off ones are not.
scripts=$(cd "$prefix/share/gridsim/scripts" && find . -path ./reframe/__pycache__ -prune -o -type f -print | sort | tr '\n' ' ')
expected="./baselines/nvidia-h100-80gb-hbm3.json ./baselines/nvidia-h200.json ./bench-gpu.sh ./bench_latency.py ./bench_table.py \
./per_task_gpu.sh ./plot_snapshot.py ./pydeps.py ./reframe/gridsim_checks.py ./reframe/settings.py \
./regress.py ./requirements.txt ./scaling.py ./scaling_lib.py ./scaling_nodes.py ./scaling_report.py ./slurm/run.sbatch \
./slurm/strong.sbatch ./slurm/weak.sbatch "
[ "$scripts" = "$expected" ] || { echo "installed scripts: $scripts"; echo "expected: $expected"; exit 1; }
"$prefix/share/gridsim/scripts/bench-gpu.sh" --help | grep -q "^  regress"
test -f "$prefix/share/gridsim/scripts/reframe/gridsim_checks.py"
test -f "$prefix/share/gridsim/reference/default.h5"
# The installed scaling script runs the installed binary (one tiny run).
out="$prefix/study"
"$python" "$prefix/share/gridsim/scripts/scaling.py" run strong \
    --deck "$prefix/share/gridsim/inputs/default.toml" --ranks 1 --repeat 1 \
    --launcher "mpirun -np {n}" --out "$out" --set time.steps=2 >/dev/null
ls "$out"/*.json >/dev/null
echo "install OK"
