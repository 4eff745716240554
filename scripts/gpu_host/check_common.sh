# Sourced by the GPU-host check scripts (levels3d_check.sh, host_fold_check.sh) after they set
# default_out and default_parts: the output folder ($OUT or default_out) and its check.log,
# run (a command logged with its output and exit code, which is also echoed), part (whether
# $PARTS, default default_parts, names a part), and tests (gpu_backend_test on PATH).
out=${OUT:-$default_out}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
log="$out/check.log"
run() {
    echo "=== $*" >>"$log"
    "$@" >>"$log" 2>&1
    local rc=$?
    echo "    rc=$rc" >>"$log"
    echo "rc=$rc  $*"
}
parts=" ${PARTS:-$default_parts} "
part() { [[ "$parts" == *" $1 "* ]]; }
tests=$(command -v gpu_backend_test)
nvidia-smi -L | tee -a "$log"
