#!/usr/bin/env python3
"""gridsim's CPU backend with the multigrid preconditioner against hypre's Struct PCG
preconditioned by PFMG, on the same implicit heat steps, ranks and tolerance.

  bench_hypre.py --hypre-step PATH [--gridsim PATH] [--ranks 2] [--cells 128] [--cfl 50 1000]
                 [--tol 1e-8] [--steps 3] [--repeat 3] [--launcher "mpirun -np {n}"] [--out DIR]

The problem: 3D, NxNxN points on the unit cube, Dirichlet 0, a hot spot of 1 within 0.2 of the
centre (0.5, 0.5, 0.5), dt = cfl x the explicit limit, backward Euler. Per cfl, gridsim runs the
steps (`--set` keys on a deck of its own; time per solve: the report's time per step, the
residual's set-up included; the levels are built at start-up, outside it), then hypre_step
(built by the tests where libhypre-dev is installed: build/tests/hypre_step) takes the same steps
from the same field with each of PFMG's smoothers, weighted Jacobi (hypre's default) and
symmetric red-black Gauss-Seidel, timing its set-up (PFMG's levels and Galerkin operators) and
its solve apart. Each run is repeated, the fastest solve of each solver kept (the machine is
shared, and both get the same chance). The two final fields must agree within what the tolerances allow (each solve
is within tol ||b||_2 of the exact step and no step amplifies an error: 2 tol x steps x
||u0||_2), else exit 1. Prints a Markdown table; exit 2 on bad input.
"""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pydeps  # noqa: E402

np, h5py = pydeps.require("bench_hypre.py", "numpy", "h5py")
HERE = os.path.dirname(os.path.abspath(__file__))
RADIUS = 0.2


class UsageError(Exception):
    """Bad input: one line, exit code 2."""


def deck(cells, cfl, tol, steps):
    return ('[problem]\nname = "heat"\nscheme = "implicit"\nprecision = "double"\n'
            f"[grid]\ncells = [{cells}, {cells}, {cells}]\nlength = [1.0, 1.0, 1.0]\n"
            '[boundary]\nkind = "dirichlet"\nvalue = 0.0\n'
            f'[initial]\nkind = "hotspot"\ncenter = [0.5, 0.5, 0.5]\nradius = {RADIUS}\n'
            "amplitude = 1.0\nvalue = 0.0\n"
            f"[time]\ncfl = {cfl}\nsteps = {steps}\ncg_tolerance = {tol}\n"
            'cg_preconditioner = "multigrid"\n[parallel]\nbackend = "cpu"\n'
            "[output]\nprogress_every = 0\nwrite_final = true\n")


def hotspot(cells):
    """The deck's initial field (README, "hotspot"), axes z, y, x; h = 1 / (N - 1)."""
    x = np.arange(cells) / (cells - 1.0)
    z, y, xx = np.meshgrid(x, x, x, indexing="ij")
    u = np.where((xx - 0.5) ** 2 + (y - 0.5) ** 2 + (z - 0.5) ** 2 <= RADIUS * RADIUS, 1.0, 0.0)
    for axis in range(3):
        idx = [slice(None)] * 3
        for end in (0, -1):
            idx[axis] = end
            u[tuple(idx)] = 0.0
    return u


def run(cmd, what):
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        tail = "\n".join((res.stdout + res.stderr).strip().splitlines()[-5:])
        print(f"bench_hypre: {what} failed (exit {res.returncode}):\n{tail}", file=sys.stderr)
        sys.exit(1)
    return res.stdout


def run_gridsim(args, work, cfl, k):
    """The `k`-th run at `cfl`: its report and final field."""
    path = os.path.join(work, f"cfl{cfl:g}.toml")
    with open(path, "w") as f:
        f.write(deck(args.cells, cfl, args.tol, args.steps))
    out_dir = os.path.join(work, f"out_cfl{cfl:g}_r{k}")
    report = os.path.join(work, f"cfl{cfl:g}_r{k}.json")
    run(shlex.split(args.launcher.format(n=args.ranks)) +
        [args.gridsim, "run", path, "--quiet", "--report", report,
         "--set", f'output.dir="{out_dir}"'], f"gridsim at cfl {cfl:g}")
    with open(report) as f:
        doc = json.load(f)
    with h5py.File(os.path.join(out_dir, "snapshot_final.h5")) as f:
        final = np.array(f["fields/u"], dtype=np.float64)
    return doc, final


HYPRE_LINE = re.compile(r"hypre_step: (\d+) iterations, relative residual (\S+), setup (\S+) s, solve (\S+) s")


def run_hypre(args, work, dt, relax):
    h = 1.0 / (args.cells - 1)
    r = dt / (h * h)
    src, dst = os.path.join(work, "u0.bin"), os.path.join(work, f"hypre_{relax}.bin")
    n = str(args.cells)
    out = run(shlex.split(args.launcher.format(n=args.ranks)) +
              [args.hypre_step, n, n, n, "0", "0", "0", *(f"{r:.17g}",) * 3, str(args.steps),
               f"{args.tol:g}", src, dst, str(relax)], f"hypre_step (relax {relax})")
    steps = [tuple(map(float, m.groups())) for m in HYPRE_LINE.finditer(out)]
    if len(steps) != args.steps:
        print(f"bench_hypre: hypre_step printed {len(steps)} of {args.steps} steps", file=sys.stderr)
        sys.exit(1)
    final = np.fromfile(dst, dtype=np.float64).reshape((args.cells,) * 3)
    return steps, final


RELAX = {1: "weighted Jacobi", 2: "symmetric red-black GS"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hypre-step", required=True)
    ap.add_argument("--gridsim", default=os.path.join(HERE, "..", "build", "gridsim"))
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--cells", type=int, default=128)
    ap.add_argument("--cfl", type=float, nargs="+", default=[50.0, 1000.0])
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each solver, the fastest kept")
    ap.add_argument("--launcher", default="mpirun -np {n}")
    ap.add_argument("--out", help="keep the decks, reports and fields here (default: a temporary directory)")
    args = ap.parse_args()
    try:
        for path, what in ((args.gridsim, "--gridsim"), (args.hypre_step, "--hypre-step")):
            if not os.access(path, os.X_OK):
                raise UsageError(f"{what} {path} is not an executable")
        if args.cells < 9 or min(args.ranks, args.steps, args.repeat) < 1 or not 0 < args.tol < 1:
            raise UsageError("--cells needs >= 9, --ranks, --steps and --repeat >= 1, --tol in (0, 1)")
    except UsageError as err:
        print(f"bench_hypre: {err}", file=sys.stderr)
        return 2
    work = args.out or tempfile.mkdtemp(prefix="bench_hypre_")
    os.makedirs(work, exist_ok=True)
    u0 = hotspot(args.cells)
    u0.tofile(os.path.join(work, "u0.bin"))
    bound = 2 * args.tol * args.steps * np.linalg.norm(u0)
    rows = ["| cfl | solver | iterations per step | set-up s | solve s (mean per step) | hypre / gridsim |",
            "| --- | --- | --- | --- | --- | --- |"]
    worst = 0.0
    for cfl in args.cfl:
        doc, mine = min((run_gridsim(args, work, cfl, k) for k in range(args.repeat)),
                        key=lambda run: run[0]["time_per_step_s"])
        with open(os.path.join(work, f"cfl{cfl:g}.json"), "w") as f:
            json.dump(doc, f)  # the run kept
        t = doc["time_per_step_s"]
        its = doc["cg"]["iterations_per_step"]["mean"]
        rows.append(f"| {cfl:g} | gridsim CG + multigrid | {its:.1f} | {doc['startup_s']:.3f} (all start-up) | "
                    f"{t:.4f} | 1 |")
        for relax in (1, 2):
            steps, theirs = min((run_hypre(args, work, doc["dt"], relax) for _ in range(args.repeat)),
                                key=lambda run: sum(s[3] for s in run[0]))
            worst = max(worst, float(np.abs(theirs - mine).max()))
            solve = sum(s[3] for s in steps) / len(steps)
            rows.append(f"| {cfl:g} | hypre PCG + PFMG ({RELAX[relax]}) | "
                        f"{sum(s[0] for s in steps) / len(steps):.1f} | "
                        f"{sum(s[2] for s in steps) / len(steps):.3f} | {solve:.4f} | {solve / t:.2f} |")
    print(f"{args.cells}^3 double, {args.ranks} ranks, tolerance {args.tol:g}, {args.steps} steps, "
          f"fastest of {args.repeat} runs each "
          f"({args.launcher.format(n=args.ranks)})")
    print("\n".join(rows))
    print(f"largest difference of the final fields {worst:.3e} (allowed {bound:.3e})")
    if worst > bound:
        print("bench_hypre: the final fields differ beyond the tolerances' bound", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
