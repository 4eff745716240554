# Sourced by scripts/run.sh and scripts/test.sh: installs missing build dependencies (Debian
# or Ubuntu, through apt-get, only when something is absent), then configures and builds.
# Idempotent: a second run finds everything installed and configured and only rebuilds what
# changed.

GRIDSIM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
GRIDSIM_BUILD=${GRIDSIM_BUILD_DIR:-$GRIDSIM_ROOT/build}
GRIDSIM_JOBS=${GRIDSIM_JOBS:-$(nproc 2>/dev/null || echo 2)}

# Debian package names of everything gridsim builds and tests with.
GRIDSIM_PACKAGES="cmake g++ make pkg-config git openmpi-bin libopenmpi-dev libhdf5-openmpi-dev
  hdf5-tools libhwloc-dev libcli11-dev libtomlplusplus-dev libfmt-dev nlohmann-json3-dev
  libgtest-dev python3 python3-numpy python3-h5py python3-matplotlib"

# Only the test suite needs these: ParaView's XDMF reader (a real reader opens our XDMF files),
# venv with pip (the scripts are tested under a python3 that is not Debian's), Slurm with munge
# (the batch templates run under a cluster the tests start themselves), and hypre (the implicit
# step's independent reference; gridsim does not link it).
GRIDSIM_TEST_PACKAGES="paraview python3-paraview python3-venv slurm-wlm munge libhypre-dev"

gridsim_log() { echo "[gridsim] $*" >&2; }

gridsim_missing_packages() {
    local p missing=()
    for p in $GRIDSIM_PACKAGES ${GRIDSIM_EXTRA_PACKAGES:-}; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
    done
    echo "${missing[@]:-}"
}

gridsim_install_dependencies() {
    if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
        gridsim_log "no apt-get here: install MPI, parallel HDF5, hwloc, CLI11, toml++, fmt, nlohmann-json and GoogleTest yourself; CMake will name what it cannot find"
        return 0
    fi
    local missing
    missing=$(gridsim_missing_packages)
    [ -z "$missing" ] && return 0
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo="sudo -n"
        else
            gridsim_log "missing packages: $missing"
            gridsim_log "install them with: sudo apt-get install -y $missing"
            return 1
        fi
    fi
    gridsim_log "installing: $missing"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
    GRIDSIM_INSTALLED_SOMETHING=1
}

gridsim_build() {
    # Configure on the first run, and again after installing something: CMake searches anew
    # for whatever it did not find before (pvbatch from the test packages after a first
    # `scripts/run.sh`), so the README's two commands work in either order.
    if [ ! -f "$GRIDSIM_BUILD/CMakeCache.txt" ] || [ -n "${GRIDSIM_INSTALLED_SOMETHING:-}" ]; then
        gridsim_log "configuring in $GRIDSIM_BUILD"
        cmake -S "$GRIDSIM_ROOT" -B "$GRIDSIM_BUILD" -DCMAKE_BUILD_TYPE=Release ${GRIDSIM_CMAKE_ARGS:-} >/dev/null
    fi
    gridsim_log "building ($GRIDSIM_JOBS jobs)"
    cmake --build "$GRIDSIM_BUILD" -j "$GRIDSIM_JOBS" -- --no-print-directory | grep -E "error|warning|Error" || true
    [ -x "$GRIDSIM_BUILD/gridsim" ] || { gridsim_log "build failed"; return 1; }
}

gridsim_setup() {
    gridsim_install_dependencies
    gridsim_build
}
