#!/usr/bin/env python3
"""bench_latency.py REPORTS_DIR OUT_DIR: the latency curve of `scripts/bench-gpu.sh latency`.

Reads the lat_<problem>_s<N>_np<n>_<mode>_r<repeat>.json run reports, keeps the fastest repeat
of each (problem, N, n, mode), and writes OUT_DIR/latency.md (a table and the runs that were slower on more GPUs than on one)
and OUT_DIR/latency.png (time per step against points per GPU, log-log, with the memory floor:
the compulsory bytes, 2 x sizeof(value) per point, at the copy bandwidth measured in each run).
Prints the table."""
import glob
import json
import os
import re
import sys

NAME = re.compile(r"lat_(?P<problem>[a-z0-9]+)_s(?P<size>\d+)_np(?P<n>\d+)_(?P<mode>[a-z]+)_r\d+\.json$")

def load(reports):
    best = {}
    for path in glob.glob(os.path.join(reports, "lat_*.json")):
        m = NAME.search(os.path.basename(path))
        if not m:
            continue
        with open(path) as f:
            d = json.load(f)
        key = (m["problem"], int(m["size"]), int(m["n"]), m["mode"])
        if key not in best or d["time_per_step_s"] < best[key]["time_per_step_s"]:
            best[key] = d
    return best


def floor_us(d):
    """The memory floor of one step on one GPU: its compulsory bytes at its copy bandwidth."""
    per_gpu = d["updated_points_per_step"] / d["ranks"]
    return 2 * (4 if d["precision"] == "float" else 8) * per_gpu / (d["copy_bandwidth_GBps"] * 1e3)


def us(d):
    return "-" if d is None else f"{d['time_per_step_s'] * 1e6:.1f}"


def table(best):
    """One row per (problem, N, GPUs): us per step as gridsim chooses (auto; GPUs says how many
    of them it used where it left some idle), and on every GPU with direct peer stores (ipc), on
    ranks that split y alone (rows), without graphs (off), and with the earlier build (before)
    where they ran; the memory floor and its share of the step."""
    rows = ["| problem | N | GPUs | points per GPU | us/step | ipc | y split | graphs off | before | "
            "gain vs before | floor us | floor / step | speed-up vs 1 GPU |",
            "| --- " * 13 + "|"]
    for (problem, size, n, mode), d in sorted(best.items()):
        if mode != "auto":
            continue
        t = d["time_per_step_s"]
        before = best.get((problem, size, n, "before"))
        one = best.get((problem, size, 1, "auto"))
        f = floor_us(d)
        gpus = f"{n} ({d['ranks']} used)" if d["ranks"] < n else f"{n}"
        rows.append(f"| {problem} | {size} | {gpus} | {d['updated_points_per_step'] / d['ranks']:.3g} | {us(d)} | "
                    f"{us(best.get((problem, size, n, 'ipc')))} | "
                    f"{us(best.get((problem, size, n, 'rows')))} | "
                    f"{us(best.get((problem, size, n, 'off')))} | {us(before)} | "
                    + (f"{before['time_per_step_s'] / t:.2f}x" if before else "-")
                    + f" | {f:.1f} | {f / (t * 1e6):.2f} | "
                    + (f"{one['time_per_step_s'] / t:.2f} |" if one else "- |"))
    return rows


def slower_than_one(best):
    """Each run as gridsim chooses (auto) on several GPUs that took longer per step than the same
    grid on one: where a subdomain is too small for another GPU to pay."""
    lines = []
    for (problem, size, n, mode), d in sorted(best.items()):
        one = best.get((problem, size, 1, "auto"))
        if mode != "auto" or n == 1 or one is None:
            continue
        t, t1 = d["time_per_step_s"] * 1e6, one["time_per_step_s"] * 1e6
        if t > t1:
            lines.append(f"- {problem} {size} on {n} GPUs: {t:.1f} us against {t1:.1f} on one "
                         f"({t / t1:.2f}x; {d['updated_points_per_step'] / d['ranks']:.3g} points "
                         f"per GPU on {d['ranks']})")
    return lines or ["- none"]


MODE_STYLES = (("auto", "o-", "now"), ("ipc", "s-.", "ipc"), ("rows", "d-", "y split"),
               ("before", "x--", "before"))


def plot_problem(ax, best, problem):
    """One problem's time per step against points per GPU, by GPU count and mode, over its floor."""
    for n in sorted({k[2] for k in best if k[0] == problem}):
        for mode, style, what in MODE_STYLES:
            pts = sorted((d["updated_points_per_step"] / n, d["time_per_step_s"] * 1e6)
                         for k, d in best.items() if k[0] == problem and k[2] == n and k[3] == mode)
            if pts:
                ax.plot(*zip(*pts), style, label=f"{n} GPU(s), {what}")
    floor = sorted((d["updated_points_per_step"] / k[2], floor_us(d))
                   for k, d in best.items() if k[0] == problem and k[3] == "auto")
    ax.plot(*zip(*floor), "k:", label="memory floor")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("updated points per GPU")
    ax.set_ylabel("us per step")
    ax.set_title(problem + (" float, residual every sweep" if problem.startswith("jacobi") else " double"))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)


def plot(best, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as err:
        print(f"bench_latency.py: no plot ({err})")
        return
    problems = sorted({k[0] for k in best})
    fig, axes = plt.subplots(1, len(problems), figsize=(6 * len(problems), 4.5), squeeze=False)
    for ax, problem in zip(axes[0], problems):
        plot_problem(ax, best, problem)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv):
    if len(argv) != 2:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    best = load(argv[0])
    if not best:
        print(f"bench_latency.py: no lat_*.json reports in {argv[0]}", file=sys.stderr)
        return 2
    os.makedirs(argv[1], exist_ok=True)
    any_run = next(iter(best.values()))
    text = table(best) + ["", f"Device: {any_run['placement'][0].get('gpu', '?')}; slower on more GPUs "
                              "than on one:"] + slower_than_one(best)
    with open(os.path.join(argv[1], "latency.md"), "w") as f:
        f.write("\n".join(text) + "\n")
    plot(best, os.path.join(argv[1], "latency.png"))
    print("\n".join(text))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
