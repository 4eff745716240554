"""A markdown table of the gridsim reports in a folder (the GPU-host check scripts print it last):
run, time_block, GLUP/s, x the copy rate of the same run, us per step and, where "auto" ran its
start-up trial, each k's us per sweep.

    python3 scripts/gpu_host/report_table.py DIR
"""
import glob
import json
import os
import sys


def main(folder):
    print("| run | k | GLUP/s | x copy | us per step | trial (k: us per sweep) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for f in sorted(glob.glob(os.path.join(folder, "*.json"))):
        r = json.load(open(f))
        steps = r.get("steps", 0) - r.get("start_step", 0)
        us = 1e6 * r["loop_seconds"] / steps if steps else float("nan")
        trial = " ".join(f"{t['time_block']}:{1e6 * t['seconds_per_sweep']:.1f}"
                         for t in r.get("time_block_trial", []))
        name = os.path.basename(f)[:-5]
        print(f"| {name} | {r['time_block']} | {r['glups']:.1f} | {r['bandwidth_ratio']:.3f} "
              f"| {us:.2f} | {trial} |")


if __name__ == "__main__":
    main(sys.argv[1])
