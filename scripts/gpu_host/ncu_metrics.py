#!/usr/bin/env python3
"""The first launches (argument 2, default 4) of an `ncu --csv --metrics ...` file on one line:
each kernel's short name and its metrics as name=value (short names for the ones
fused_sweep_check.sh asks for)."""
import csv
import sys

SHORT = {
    "gpu__time_duration.sum": "ns",
    "smsp__inst_executed.sum": "inst",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "occ%",
    "launch__registers_per_thread": "reg",
    "launch__grid_size": "grid",
    "launch__block_size": "block",
    "dram__bytes.sum": "dram",
    "lts__t_bytes.sum": "l2",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": "lsb",
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": "bar",
    "smsp__average_warps_issue_stalled_membar_per_issue_active.ratio": "membar",
}


def main(path, most=4):
    rows = [r for r in csv.reader(open(path)) if len(r) > 10]
    if not rows:
        print("no rows")
        return
    head, body = rows[0], rows[1:]
    k, m, v, i = (head.index(x) for x in ("Kernel Name", "Metric Name", "Metric Value", "ID"))
    launches = {}
    for r in body:
        name = r[k].split("<")[0].split("(")[0].split()[-1].split("::")[-1]
        launches.setdefault((r[i], name), {})[SHORT.get(r[m], r[m])] = r[v]
    print(" || ".join(f"{name} " + " ".join(f"{a}={b}" for a, b in d.items())
                      for (_, name), d in list(launches.items())[:most]))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 4)
