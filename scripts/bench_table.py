#!/usr/bin/env python3
"""Prints one table row per gridsim JSON run report given on the command line."""
import json
import sys


def overlap_word(v):
    """parallel.overlap as a report holds it: "auto", "on" or "off" (older reports: a bool)."""
    return ("on" if v else "off") if isinstance(v, bool) else v


def row(path):
    d = json.load(open(path))
    c = d["config"]
    cells = "x".join(str(n) for n in c["grid"]["cells"])
    ph = d["phases"]
    every = c["time"]["norm_every"] if d["problem"] == "jacobi" else "-"
    return (f"{path.split('/')[-1]:<38} {d['problem']:<6} {cells:<16} {d['precision']:<6} "
            f"{d['ranks']:>2} {d['launch'][:36]:<36} {every:>4} {overlap_word(d['overlap']):<4} "
            f"{d['time_per_step_s']*1e3:9.4f} {d['glups']:8.2f} {d['effective_bandwidth_GBps']:8.1f} "
            f"{d['copy_bandwidth_GBps']:7.0f} {d['bandwidth_ratio']*100:5.1f}% "
            f"{ph['interior']['max']:7.3f} {ph['transfer']['max']:7.3f}")


print(f"{'report':<38} {'prob':<6} {'cells':<16} {'prec':<6} {'np':>2} {'launch':<36} norm ovl "
      f"{'ms/step':>9} {'GLUP/s':>8} {'GB/s':>8} {'copyGB/s':>7} {'ratio':>6} {'int[s]':>7} {'xfer[s]':>7}")
for p in sys.argv[1:]:
    try:
        print(row(p))
    except Exception as e:  # a failed run leaves no report: say so, keep going
        print(f"{p}: unreadable ({e})")
