#!/usr/bin/env python3
"""Strong and weak scaling studies of gridsim, held against Amdahl's and Gustafson's laws.

  scaling.py run strong --deck D --ranks 1 2 4 8 --out DIR [--launcher "mpirun -np {n}"]
  scaling.py run weak   --deck D --ranks 1 2 4 8 --per-rank-cells 128 128 128 --out DIR
  scaling.py report DIR
  scaling.py model DIR --predict 8 64 512

`run` launches one gridsim run per rank count and repeat (JSON report each) and records the
study in DIR/study.json; it refuses a DIR that already holds a study. Each run writes whatever
files its deck asks for (snapshots, final file, checkpoint) into a directory of its own,
DIR/runs/<kind>_n<N>_r<repeat>/, never where the deck's output.dir points (unless --set
output.dir=... says so). `report` reads only the JSON reports and writes DIR/report.md,
DIR/scaling.csv and PNG plots (the plots need matplotlib: without it they are skipped, with one
line saying so; scripts/requirements.txt lists the modules). `model` extrapolates.
Exit codes: 0 done, 1 a run failed, 2 bad input, 3 stopped early by a STOP file in DIR (what
the batch templates create when the scheduler signals the end of the wall time).
"""

import argparse
import hashlib
import json
import os
import shlex
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pydeps  # noqa: E402
import scaling_lib as lib  # noqa: E402
import scaling_nodes as nodes  # noqa: E402
from scaling_report import grid_shown, limits_text, overlap_word, plot, shown_parts, write_csv  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
# The source tree's build, else an installed gridsim (PREFIX/share/gridsim/scripts -> PREFIX/bin),
# else whatever `gridsim` is on PATH.
DEFAULT_GRIDSIM = next(
    (p for p in (os.path.join(HERE, "..", "build", "gridsim"),
                 os.path.join(HERE, "..", "..", "..", "bin", "gridsim")) if os.path.exists(p)),
    "gridsim")
PHASES = ["interior", "boundary", "pack", "transfer", "unpack", "reduction", "vector"]


class UsageError(Exception):
    """Bad input: printed as one line, exit code 2."""


# ----------------------------------------------------------------------------- run
def resolved_deck(gridsim, deck, sets):
    """The resolved configuration of the deck (via `gridsim check`), as a dict of sections."""
    out = subprocess.run([gridsim, "check", deck, "--json"] + [a for s in sets for a in ("--set", s)],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise UsageError(f"deck {deck} is not valid: {tail(out.stderr, 1)}")
    return json.loads(out.stdout)


def gridsim_grid(gridsim, deck, sets, n):
    """The process grid gridsim would run the deck on with n ranks (`gridsim check --ranks n`):
    the deck's own, or its halo-cost model's cheapest. The study never re-implements it."""
    out = subprocess.run([gridsim, "check", deck, "--json", "--ranks", str(n)]
                         + [a for s in sets for a in ("--set", s)],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise UsageError(f"deck {deck} on {n} ranks: {tail(out.stderr, 1)}")
    return json.loads(out.stdout)["process_grid_for_ranks"]["grid"]


def cells_arg(cells):
    return f"grid.cells=[{','.join(map(str, cells))}]"


def study_plan(args, resolved):
    """[(n, [--set ...])] for every rank count. Strong: the deck as it is, gridsim choosing the
    grid and the ranks it uses (checked first: a deck that cannot run on n ranks stops the study
    before it starts). Weak: the grid gridsim picks for a domain shaped like one rank's block,
    each rank then holding that block (the global grid is the block times the process grid)."""
    cells = resolved["grid"]["cells"]
    dims = len(cells)
    per = args.per_rank_cells or cells
    if args.kind == "weak" and len(per) != dims:
        raise UsageError(f"--per-rank-cells needs {dims} values for this {dims}D deck")
    plan = []
    for n in args.ranks:
        if args.kind == "weak":
            pg = gridsim_grid(args.gridsim, args.deck, args.set + [cells_arg(per)], n)
            sets = [f"parallel.process_grid=[{','.join(map(str, pg))}]",
                    cells_arg([c * g for c, g in zip(per, pg)])]
        else:
            gridsim_grid(args.gridsim, args.deck, args.set, n)
            sets = []
        plan.append((n, sets))
    return plan


def tail(text, lines=12):
    return "\n".join(text.strip().splitlines()[-lines:])


def user_sets(args, key):
    """Whether the user's own --set options name this deck key."""
    return any(s.split("=", 1)[0].strip() == key for s in args.set)


def output_sets(args, run_dir):
    """Where one run writes: its own directory inside the study (snapshots, final file and
    checkpoint, whatever the deck asks for), so a study never touches files in the working
    directory, however the deck names its output, and runs never refuse each other's files.
    The user's own --set output.dir / output.checkpoint win."""
    sets = []
    if not user_sets(args, "output.dir"):
        sets.append(f"output.dir={toml_string(run_dir)}")
        if not user_sets(args, "output.checkpoint"):
            sets.append(f"output.checkpoint={toml_string(os.path.join(run_dir, 'checkpoint.h5'))}")
    return sets


def toml_string(text):
    """A TOML basic string (what --set values are parsed as)."""
    return json.dumps(text)


def run_one(args, n, sets, report, run_dir):
    launcher = shlex.split(lib.launcher_line(args.launcher, n, args.ranks_per_node))
    cmd = launcher + [args.gridsim, "run", args.deck, "--quiet", "--report", report]
    for s in args.set + sets + output_sets(args, run_dir):
        cmd += ["--set", s]
    start = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    return {"ranks": n, "command": shlex.join(cmd), "returncode": proc.returncode,
            "seconds": round(time.time() - start, 3),
            "report": os.path.basename(report) if proc.returncode == 0 and os.path.exists(report) else None,
            "stderr_tail": tail(proc.stderr) if proc.returncode != 0 else ""}


def outputs_note(args, resolved):
    """One sentence for study.json and report.md: where the runs' files went."""
    out = resolved.get("output", {})
    what = [w for w, on in (("snapshots", out.get("snapshot_every", 0) > 0),
                            ("a final snapshot", out.get("write_final", False)),
                            ("checkpoints", out.get("checkpoint_every", 0) > 0)) if on]
    files = " and ".join(what) if what else "no snapshot or checkpoint (as the deck asks)"
    if user_sets(args, "output.dir"):
        return f"Each run wrote {files} into {out.get('dir')} (given with --set output.dir)."
    return f"Each run wrote {files} into its own directory, runs/<kind>_n<N>_r<repeat>/."


def cmd_run(args):
    if os.path.exists(os.path.join(args.out, "study.json")):
        raise UsageError(f"{args.out} already holds a study (study.json); choose a new --out, "
                         "earlier results are never overwritten")
    if not os.path.isfile(args.deck):
        raise UsageError(f"deck {args.deck} does not exist")
    if not os.access(args.gridsim, os.X_OK):
        raise UsageError(f"gridsim executable {args.gridsim} not found (build first, or --gridsim)")
    if "{n}" not in args.launcher:
        raise UsageError("--launcher must contain {n}, e.g. \"mpirun -np {n}\" or \"srun -n {n}\"")
    try:
        lib.launcher_line(args.launcher, 1, args.ranks_per_node)
    except (ValueError, KeyError, IndexError) as err:
        raise UsageError(f"--launcher: {err}") from err
    resolved = resolved_deck(args.gridsim, args.deck, args.set)
    plan = study_plan(args, resolved)
    os.makedirs(os.path.join(args.out, "runs"), exist_ok=True)
    with open(args.deck, "rb") as f:
        deck_text = f.read()
    study = {"kind": args.kind, "deck": args.deck, "deck_path": os.path.abspath(args.deck),
             "deck_sha256": hashlib.sha256(deck_text).hexdigest(), "ranks": args.ranks,
             "repeat": args.repeat, "keep": args.keep, "launcher": args.launcher,
             "per_rank_cells": args.per_rank_cells, "set": args.set,
             "outputs": outputs_note(args, resolved),
             "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "runs": []}
    failed = 0
    for n, sets in plan:
        for rep in range(args.repeat):
            if os.path.exists(os.path.join(args.out, "STOP")):
                # A batch job near its wall-time limit asked to stop (scripts/slurm/*.sbatch):
                # keep what is done, start nothing new.
                study["stopped"] = "STOP file found before N={} repeat {}".format(n, rep + 1)
                write_json(os.path.join(args.out, "study.json"), study)
                print(f"[scaling] {study['stopped']}: stopping; the finished runs are kept", flush=True)
                return 3
            name = f"{args.kind}_n{n}_r{rep}"
            report = os.path.join(args.out, "runs", name + ".json")
            result = run_one(args, n, sets, report, os.path.join(args.out, "runs", name))
            study["runs"].append(result)
            status = "ok" if result["report"] else f"FAILED (exit {result['returncode']})"
            print(f"[scaling] {args.kind} N={n} repeat {rep + 1}/{args.repeat}: {status} "
                  f"in {result['seconds']} s", flush=True)
            if not result["report"]:
                failed += 1
                print(f"[scaling] stderr of the failed run:\n{result['stderr_tail']}", file=sys.stderr)
                if args.on_failure == "stop":
                    write_json(os.path.join(args.out, "study.json"), study)
                    return 1
    write_json(os.path.join(args.out, "study.json"), study)
    print(f"[scaling] {len(study['runs']) - failed} runs done, {failed} failed; "
          f"now: scaling.py report {args.out}")
    return 1 if failed else 0


def read_json(path):
    with open(path) as f:
        return json.load(f)


def write_json(path, data):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=2)
    os.replace(tmp, path)


# ----------------------------------------------------------------------------- report
def comparable_config(cfg, kind):
    """The parts of a resolved config that must agree across one study's runs."""
    c = json.loads(json.dumps(cfg))
    c.get("parallel", {}).pop("process_grid", None)
    for key in ("report", "dir", "checkpoint"):  # each run writes into its own directory
        c.get("output", {}).pop(key, None)
    if kind == "weak":
        c.get("grid", {}).pop("cells", None)
        c.get("time", {}).pop("dt", None)  # follows the spacing when lengths stay fixed
    return c


def load_study(directory):
    path = os.path.join(directory, "study.json")
    if not os.path.isfile(path):
        raise UsageError(f"{directory} holds no study.json (run `scaling.py run` first)")
    study = read_json(path)
    runs = []
    for r in study["runs"]:
        if not r.get("report"):
            continue
        rp = os.path.join(directory, "runs", r["report"])
        if not os.path.isfile(rp):
            raise UsageError(f"report {rp} listed in study.json is missing")
        runs.append(read_json(rp))
    if not runs:
        raise UsageError(f"{directory}: no successful runs to report on")
    base = comparable_config(runs[0]["config"], study["kind"])
    for r in runs[1:]:
        if comparable_config(r["config"], study["kind"]) != base:
            raise UsageError(f"{directory} mixes runs of different decks or settings; "
                             "one study per directory")
    return study, runs


def per_step_phases(report):
    """Mean over ranks of each phase, per step."""
    steps = max(report["steps"], 1)
    # Reports written before a phase existed lack it: it took no time then.
    return {p: report["phases"].get(p, {"mean": 0.0})["mean"] / steps for p in PHASES}


def summarise(study, runs):
    """One row per rank count: the kept repeat (best or median time per step)."""
    by_n = {}
    for r in runs:
        by_n.setdefault(r.get("ranks_launched", r["ranks"]), []).append(r)  # N: ranks started
    rows = []
    for n in sorted(by_n):
        reps = sorted(by_n[n], key=lambda r: r["time_per_step_s"])
        kept = reps[0] if study.get("keep", "best") == "best" else reps[(len(reps) - 1) // 2]
        t = kept["time_per_step_s"]
        if study.get("keep") == "median":
            t = statistics.median(r["time_per_step_s"] for r in reps)
        ph = per_step_phases(kept)
        parts = {"compute_s": ph["interior"] + ph["boundary"],
                 "transfer_s": ph["transfer"] + ph["pack"] + ph["unpack"],
                 "vector_s": ph["vector"], "reduction_s": ph["reduction"]}
        rows.append({"ranks": n, "ranks_used": kept["ranks"], "repeats": len(reps),
                     "process_grid": "x".join(map(str, kept["process_grid"])),
                     "cells": "x".join(map(str, kept["config"]["grid"]["cells"])),
                     "time_per_step_s": t, "glups": kept["glups"], **parts,
                     "other_s": max(0.0, t - sum(parts.values())),
                     "phases": ph, "nodes": lib.nodes_label(kept), "job": lib.job_label(kept),
                     "report": kept})
    return rows


def analyse(study, rows):
    weak = study["kind"] == "weak"
    ranks = [r["ranks"] for r in rows]
    s = lib.speedups(ranks, [r["time_per_step_s"] for r in rows], weak=weak)
    e = lib.efficiencies(ranks, s)
    for r, si, ei in zip(rows, s, e):
        r["speedup"], r["efficiency"], r["karp_flatt"] = si, ei, lib.karp_flatt(r["ranks"], si)
    fit_note, p = "", None
    try:
        p = lib.fit_gustafson(ranks, s) if weak else lib.fit_amdahl(ranks, s)
        law = lib.gustafson if weak else lib.amdahl
        for r in rows:
            r["predicted"] = law(p, r["ranks"])
    except lib.FitError as err:
        fit_note = str(err)
        for r in rows:
            r["predicted"] = None
    return p, fit_note


def optional(value, spec):
    return "-" if value is None else format(value, spec)


def report_lines(study, rows, p, fit_note, pictures, no_plots):
    """report.md, line by line: the deck and setup, the table per N, the fit, what limits
    scaling, and the notes (files, skipped plots, failed runs), then the plots."""
    first = rows[0]["report"]
    failed = [r for r in study["runs"] if not r.get("report")]
    law = "Gustafson" if study["kind"] == "weak" else "Amdahl"
    parts = shown_parts(rows)
    # One rank has no halo transport: name each transport with the rank counts that used it.
    used = {}
    for r in rows:
        used.setdefault(r["report"]["transport"], []).append(str(r["ranks"]))
    transports = ", ".join(f"{t} (N = {', '.join(n)})" for t, n in used.items())
    md = [f"# {study['kind'].capitalize()} scaling study", "",
          f"Deck `{study['deck']}` ({first['problem']} {first['dims']}D, {first['precision']}, backend "
          f"{first['backend']}, transport {transports}, overlap {overlap_word(first)}); "
          f"launcher `{study['launcher']}`; {study['repeat']} repeat(s) per N, keeping the {study['keep']}.", "",
          "| N | nodes | process grid | cells | ms/step | GLUP/s | speedup | efficiency | " + law + " | Karp-Flatt | "
          + " | ".join(part[:-2] + " ms" for part in parts) + " | job |",
          "| --- " * (11 + len(parts)) + "|"]
    for r in rows:
        md.append(f"| {r['ranks']} | {r['nodes']} | {grid_shown(r)} | {r['cells']} | {r['time_per_step_s'] * 1e3:.4f} | {r['glups']:.3f} | "
                  f"{r['speedup']:.3f} | {100 * r['efficiency']:.1f}% | {optional(r['predicted'], '.3f')} | "
                  f"{optional(r['karp_flatt'], '.4f')} | "
                  + " | ".join(f"{r[part] * 1e3:.4f}" for part in parts) + f" | {r['job']} |")
    md += ["", f"**Fit.** {law}'s law: " + (f"P = {p:.4f} (least squares over all N)." if p is not None else fit_note), "",
           "**What limits scaling.** " + limits_text(study, rows, p), ""]
    if study.get("outputs"):
        md += [f"**Files.** Each run's JSON report is runs/<kind>_n<N>_r<repeat>.json. "
               + study["outputs"], ""]
    if no_plots:
        md += [f"**Plots skipped.** {no_plots}.", ""]
    if failed:
        md += [f"**Failed runs ({len(failed)}).** " + "; ".join(f"N={r['ranks']} exit {r['returncode']}" for r in failed), ""]
    md += [f"![{name}]({name})" for name in pictures]
    return md


def cmd_report(args):
    study, runs = load_study(args.dir)
    rows = summarise(study, runs)
    p, fit_note = analyse(study, rows)
    write_csv(os.path.join(args.dir, "scaling.csv"), rows)
    # The plots need matplotlib; the tables and the fit do not, so a python3 without it still
    # gets report.md and scaling.csv.
    plt, no_plots = pydeps.pyplot()
    pictures = plot(plt, args.dir, study, rows, p) if plt is not None else []
    md = report_lines(study, rows, p, fit_note, pictures, no_plots)
    with open(os.path.join(args.dir, "report.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(line for line in md if not line.startswith("![")))
    if p is None:
        print(f"[scaling] no fit: {fit_note}")
    if no_plots:
        print(f"[scaling] plots skipped: {no_plots}")
    print(f"[scaling] wrote {args.dir}/report.md, scaling.csv"
          + "".join(f", {name}" for name in pictures))
    return 0


# ----------------------------------------------------------------------------- model
def halo_time_model(study, base, gridsim, periodic, vbytes, alpha, bw):
    """Modelled seconds per step on n ranks: the base run's divisible work per point over the
    points per rank, plus the halo traffic of gridsim's own process grid for n ranks."""
    weak = study["kind"] == "weak"
    # Work that divides over the ranks: the stencil and, for a CG, its vector operations. The
    # reductions are left out, as the halo model has no term for an all-reduce's latency.
    compute_per_point = ((base["compute_s"] + base["vector_s"]) * base["ranks_used"]
                         / base["report"]["updated_points_per_step"])

    def halo_time(n):
        cells = [int(c) for c in base["cells"].split("x")]
        deck, sets = study["deck_path"], study.get("set", [])
        if weak:
            per = [c // g for c, g in zip(cells, [int(x) for x in base["process_grid"].split("x")])]
            pg = gridsim_grid(gridsim, deck, sets + [cells_arg(per)], n)
            cells = [c * g for c, g in zip(per, pg)]
        else:
            pg = gridsim_grid(gridsim, deck, sets + [cells_arg(cells)], n)
        pts = 1
        for c in cells:
            pts *= c
        m, b = lib.halo_traffic(cells, pg, periodic, vbytes)
        return compute_per_point * pts / n + alpha * m + b / bw

    return halo_time, compute_per_point


def cmd_model(args):
    study, runs = load_study(args.dir)
    gridsim = args.gridsim
    if not os.access(gridsim, os.X_OK):
        raise UsageError(f"gridsim executable {gridsim} not found: it chooses the predicted "
                         "process grids (build first, or --gridsim)")
    rows = summarise(study, runs)
    p, fit_note = analyse(study, rows)
    weak = study["kind"] == "weak"
    if p is None:
        raise UsageError(fit_note)
    periodic, vbytes = lib.halo_inputs(rows[0]["report"])
    alpha, bw, halo_note = lib.fitted_halo_model(rows, periodic, vbytes)
    base = rows[0]
    t1 = base["time_per_step_s"] * (base["ranks"] if not weak else 1)
    law = lib.gustafson if weak else lib.amdahl
    law_name = "Gustafson's law" if weak else "Amdahl's law"
    measured = [r["speedup"] for r in rows]
    law_err = lib.relative_rms(measured, [law(p, r["ranks"]) for r in rows])
    print(f"{'N':>8} {(law_name.split()[0] + ' S'):>14} " + (f"{'halo-model S':>14}" if alpha is not None else ""))
    halo_speedup = None
    if alpha is not None:
        halo_time, compute_per_point = halo_time_model(study, base, gridsim, periodic, vbytes, alpha, bw)

        def halo_speedup(n):
            return (n if weak else 1) * halo_time(1) / halo_time(n)
        halo_err = lib.relative_rms(measured, [halo_speedup(r["ranks"]) for r in rows])
    for n in args.predict:
        line = f"{n:>8} {law(p, n):>14.3f} "
        if halo_speedup is not None:
            line += f"{halo_speedup(n):>14.3f}"
        print(line)
    print(f"\n{law_name}: P = {p:.4f}, relative RMS error on the measured points {100 * law_err:.1f}%.")
    if alpha is None:
        print(f"Halo model: not fitted ({halo_note}). Trusting {law_name}, the only model fitted.")
    else:
        print("\n".join(lib.model_verdict(law_name, law_err, (alpha, bw, compute_per_point, halo_err), t1)))
    if args.nodes:
        try:
            nodes.report(args, study, rows, base, None if alpha is None else (alpha, bw))
        except nodes.ModelError as err:
            raise UsageError(str(err)) from err
    return 0


# ----------------------------------------------------------------------------- main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a strong or weak scaling series")
    run.add_argument("kind", choices=["strong", "weak"])
    run.add_argument("--deck", required=True)
    run.add_argument("--ranks", type=int, nargs="+", required=True)
    run.add_argument("--out", required=True)
    run.add_argument("--launcher", default="mpirun -np {n}",
                     help='e.g. "srun -n {n}"; {n} = ranks, {nodes} and {per_node} = the nodes N ranks '
                     'fill at --ranks-per-node each and the ranks on each')
    run.add_argument("--ranks-per-node", type=int, default=0, help="for {nodes} and {per_node}")
    run.add_argument("--per-rank-cells", type=int, nargs="+", help="weak: points per rank per axis")
    run.add_argument("--repeat", type=int, default=1)
    run.add_argument("--keep", choices=["best", "median"], default="best")
    run.add_argument("--on-failure", choices=["stop", "continue"], default="stop")
    run.add_argument("--set", action="append", default=[], help="extra gridsim --set for every run")
    run.add_argument("--gridsim", default=os.environ.get("GRIDSIM", DEFAULT_GRIDSIM))
    rep = sub.add_parser("report", help="speedup, efficiency, fits, CSV and plots")
    rep.add_argument("dir")
    mod = sub.add_parser("model", help="extrapolate to more ranks")
    mod.add_argument("dir")
    mod.add_argument("--predict", type=int, nargs="+", required=True)
    mod.add_argument("--gridsim", default=os.environ.get("GRIDSIM", DEFAULT_GRIDSIM),
                     help="the gridsim whose process-grid choice the predictions use")
    mod.add_argument("--nodes", type=int, nargs="+", help="also model these node counts (a model: "
                     "gridsim's node-aware grid, the fitted halo model inside a node, the network below)")
    mod.add_argument("--gpus-per-node", type=int, help="ranks per node (default: the study's largest N)")
    mod.add_argument("--network-latency-us", type=float, default=10.0)
    mod.add_argument("--network-bandwidth-GBps", type=float, default=100.0,
                     help="a node's, shared by its ranks (default: 4 x 200 Gb/s)")
    mod.add_argument("--plot", help="the nodes model's PNG (default DIR/nodes_model.png)")
    args = ap.parse_args(argv)
    try:
        if args.command == "run":
            if args.repeat < 1 or any(n < 1 for n in args.ranks):
                raise UsageError("--repeat and --ranks must be >= 1")
            return cmd_run(args)
        return cmd_report(args) if args.command == "report" else cmd_model(args)
    except UsageError as err:
        print(f"scaling.py: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
