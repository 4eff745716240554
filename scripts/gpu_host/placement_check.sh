#!/usr/bin/env bash
# Placement on a GPU host (README, "Running on a cluster"), in one call:
#   scripts/gpu_host/placement_check.sh [RANKS]     # default: every GPU of the host
# What the machine reports (GPUs' sysfs NUMA node, NUMA nodes, lstopo), the placement map of
# `gridsim info` with every GPU visible and with one GPU per rank (a per-task binding), a run of
# the heat benchmark under per-task binding with --verbose and a report (it must run on CUDA,
# with NCCL on several ranks, and its placement must read back cleanly), parallel.bind = strict
# and none, `gridsim bench` (pinned bandwidth on the GPU's node and a remote one), and the gpu
# tests. Needs gridsim and gpu_backend_test on PATH. Logs go to $OUT (or out/placement).
set -uo pipefail
out=${OUT:-out/placement}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}   # no NVLink multicast on shared hosts
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
gpus=$(nvidia-smi -L | wc -l)
n=${1:-$gpus}
log="$out/placement.log"
run() { echo "=== $*" >>"$log"; "$@" >>"$log" 2>&1; local rc=$?; echo "    rc=$rc" >>"$log"; echo "rc=$rc  $*"; }

{
    nvidia-smi -L
    for d in $(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader); do
        bus=$(echo "$d" | tr 'A-F' 'a-f' | sed 's/^0000\(....\):/\1:/;s/^\(....:..:..\.\).*/\1/')
        f=$(ls -d /sys/bus/pci/devices/*"${bus#0000}"* 2>/dev/null | head -1)
        echo "GPU $d: sysfs numa_node $(cat "$f/numa_node" 2>/dev/null || echo '?')"
    done
    numactl --hardware 2>/dev/null | head -3
    lstopo-no-graphics --no-caches 2>/dev/null | head -30
} >>"$log" 2>&1
run mpirun -np "$n" gridsim info
run mpirun -np "$n" "$here/per_task_gpu.sh" gridsim info
run mpirun -np "$n" "$here/per_task_gpu.sh" gridsim run inputs/bench_heat3d.toml --verbose \
    --set time.steps=200 --report "$out/per_task.json"
run mpirun -np "$n" "$here/per_task_gpu.sh" gridsim run inputs/bench_jacobi2d.toml --quiet \
    --set time.steps=200 --set time.norm_every=1 --set parallel.bind=strict --report "$out/strict.json"
run mpirun -np 1 gridsim run inputs/bench_jacobi2d.toml --quiet --set time.steps=500 \
    --set time.norm_every=1 --set parallel.bind=none --report "$out/none.json"
run mpirun -np 1 gridsim run inputs/bench_jacobi2d.toml --quiet --set time.steps=500 \
    --set time.norm_every=1 --report "$out/auto.json"
run mpirun -np 1 gridsim bench --size-mib 512
run mpirun -np 1 gpu_backend_test --gtest_brief=1
run mpirun -np "$n" gpu_backend_test --gtest_brief=1
echo
echo "summary:"
python3 - "$out" <<'PY'
import json, sys
for name in ("per_task", "strict", "none", "auto"):
    try:
        r = json.load(open(f"{sys.argv[1]}/{name}.json"))
    except OSError:
        print(f"{name}: no report"); continue
    print(f"{name}: backend {r['backend']} transport {r['transport']} ranks {r['ranks']} "
          f"ms/step {1e3 * r['time_per_step_s']:.4f} share of copy {r['bandwidth_ratio']:.3f}")
    for p in r["placement"]:
        print(f"  rank {p['rank']}: gpu {p.get('gpu')} numa {p['numa_node']} cpus {p['cpus']} "
              f"mem {p['mem_nodes'] or 'default'} pages {p['host_pages_numa']}; {p['bind_note']}")
PY
grep -E "PASSED|FAILED|SKIPPED" "$log" | sort | uniq -c
grep -c "rc=0" "$log" | sed 's/^/commands with rc=0: /'
grep "rc=[1-9]" "$log" | sed 's/^/FAILED: /' | head
