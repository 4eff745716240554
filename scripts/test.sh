#!/usr/bin/env bash
# scripts/test.sh [ctest options...]
#
# Installs what is missing, builds, and runs the whole CTest suite (labels: unit, mpi,
# regression). Options go to ctest, e.g. `scripts/test.sh -L unit` or `-R heat`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"
GRIDSIM_EXTRA_PACKAGES=$GRIDSIM_TEST_PACKAGES
gridsim_setup
cd "$GRIDSIM_BUILD"
exec ctest -j "$GRIDSIM_JOBS" --output-on-failure --timeout 900 "$@"
