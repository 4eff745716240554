# Sourced by the GPU-host check scripts (levels3d_check.sh, host_fold_check.sh) after they set
# default_out and default_parts: the output folder ($OUT or default_out) and its check.log,
# run (a command logged with its output and exit code, which is also echoed), part (whether
# $PARTS, default default_parts, names a part), tests (gpu_backend_test on PATH), time_block_run
# (one benchmark run and its report) and report_table (the table of the reports in $out).
out=${OUT:-$default_out}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
export GRIDSIM_TEST_SHARE_GPUS=1  # the gpu tests run with fewer GPUs than ranks, sharing them
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
# time_block_run LABEL BIN DECK K [--set ...]: BIN runs inputs/DECK at parallel.time_block = K
# ("auto" quoted for the deck), its report in $out/LABEL-kK.json.
time_block_run() {
    local label=$1 bin=$2 deck=$3 k=$4 value=$4
    shift 4
    [ "$k" = auto ] && value='"auto"'
    run "$bin" run "inputs/$deck" --quiet --set "parallel.time_block=$value" "$@" \
        --report "$out/$label-k$k.json"
}
common_dir=$(dirname "${BASH_SOURCE[0]}")
report_table() { python3 "$common_dir/report_table.py" "$out"; }
