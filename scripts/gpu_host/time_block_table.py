#!/usr/bin/env python3
"""Prints the table of scripts/gpu_host/time_block_check.sh from its run reports: for each deck
and time_block k, the time per sweep, GLUP/s, the copy bandwidth measured in the same run, and
GLUP/s against the copy rate (copy bandwidth over 2 x bytes per value: one read and one write
per point, the most one sweep per pass over memory can reach)."""
import json
import pathlib
import re
import sys

out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "out/time-block")
rows = []
for p in sorted(out.glob("*-k*.json")):
    m = re.match(r"(.*)-k(\d+|auto)\.json$", p.name)
    d = json.loads(p.read_text())
    rows.append((m.group(1), m.group(2), d))
rows.sort(key=lambda r: (r[0], int(r[1]) if r[1].isdigit() else 99))
print("| deck | k | us per sweep | GLUP/s | copy GB/s | x copy rate | sweeps per pass |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for label, k, d in rows:
    if not k.isdigit():
        k = f"auto ({d['time_block']})"
    per_pass = d.get("sweeps_per_pass", float("nan"))
    print(f"| {label} | {k} | {d['time_per_step_s'] * 1e6:.1f} | {d['glups']:.1f} | "
          f"{d['copy_bandwidth_GBps']:.0f} | {d['bandwidth_ratio']:.3f} | {per_pass:.2f} |")
