#!/usr/bin/env python3
"""The GPU regression gate's verdict: the figures of a folder of run reports against a committed
baseline for the GPU model that ran them.

    python3 scripts/regress.py DIR [--baseline FILE] [--update REASON] [--tolerance 0.05]

DIR holds the JSON reports of `scripts/bench-gpu.sh regress`, one per run, named
`<figure>_r<repeat>.json` (e.g. `np2_heat3d_d_r1.json`). A figure is the run's speed as a ratio to
the device copy bandwidth measured in the same run (`bandwidth_ratio`; for implicit heat the CG
iteration's field passes over the loop time, per rank, over the copy bandwidth); the best repeat
counts. The baseline is `scripts/baselines/<gpu model>.json` unless --baseline names one.

Prints one table (figure, baseline, now, now / baseline, verdict) and exits 1 when a figure is
more than the tolerance below its baseline or a run left no report, 0 otherwise, 2 on bad input.
The tolerance is the baseline file's (--tolerance overrides it), except for a figure whose
baseline entry holds a `tolerance` of its own, with its `tolerance_reason`: one whose same-build
runs differ by more than the file's (the snapshot deck, whose time is the host's file write).
--update REASON writes the current figures as the new baseline, with REASON and the date in the
file (commit it: its history is the baseline's); the figures of a GPU count the reports do not
have are kept, each marked `kept` with the date it was measured, and every figure keeps its own
tolerance. A new file (--baseline naming one that does not exist yet, e.g. the build before a
change, gated against in the same call) takes each figure's own tolerance from the committed
baseline of the GPU model, or from every committed baseline where that model has none (a figure's
own tolerance is the spread of its host's work, whatever the GPU).
"""
import argparse
import datetime
import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BASELINES = os.path.join(HERE, "baselines")
TOLERANCE = 0.05


class GateError(Exception):
    """Bad input: a folder without reports, an unreadable baseline."""


def cg_ratio(doc):
    """One CG iteration's field passes over the owned points, per second of the loop and per
    rank, over the copy bandwidth: the figure of an implicit heat run."""
    cg = doc["cg"]
    value = 4.0 if doc["precision"] == "float" else 8.0
    moved = (cg["passes_per_iteration"] * doc["updated_points_per_step"] * value *
             cg["iterations_per_step"]["total"])
    copy = doc["copy_bandwidth_GBps"] * 1e9
    loop = doc["loop_seconds"]
    return moved / loop / doc["ranks"] / copy if copy > 0 and loop > 0 else 0.0


def figure_of(doc):
    """(ratio to the copy bandwidth, microseconds per step or per CG iteration) of one report."""
    if "cg" in doc:
        iterations = doc["cg"]["iterations_per_step"]["total"]
        us = 1e6 * doc["loop_seconds"] / iterations if iterations else float("nan")
        return cg_ratio(doc), us
    return doc["bandwidth_ratio"], 1e6 * doc["time_per_step_s"]


def gpu_model(doc):
    """The GPU model of a report's first rank, e.g. 'NVIDIA H200' (its PCI bus id dropped)."""
    placement = doc.get("placement") or [{}]
    name = placement[0].get("gpu", "")
    return re.sub(r"\s*\(.*\)\s*$", "", name).strip()


def slug(model):
    return re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-") or "unknown"


def collect(folder):
    """{figure: {"ratio", "us"}} over the reports in `folder`, the best repeat of each, and the
    GPU model; failed runs (named in `failed.txt`, one figure a line) map to None."""
    found = {}
    model = ""
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        name = re.sub(r"_r\d+$", "", os.path.basename(path)[:-len(".json")])
        try:
            with open(path) as f:
                doc = json.load(f)
            ratio, us = figure_of(doc)
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise GateError(f"{path}: not a gridsim run report ({e})") from e
        model = model or gpu_model(doc)
        best = found.get(name)
        if best is None or ratio > best["ratio"]:
            found[name] = {"ratio": ratio, "us": us}
    failed = os.path.join(folder, "failed.txt")
    if os.path.exists(failed):
        with open(failed) as f:
            for line in f:
                if line.strip() and line.strip() not in found:
                    found[line.strip()] = None
    if not found:
        raise GateError(f"{folder}: no run reports (*.json)")
    return found, model


# A figure's own entries in the baseline that --update carries over.
OWN_KEYS = ("tolerance", "tolerance_reason")


def compare(baseline, now, tolerance=TOLERANCE):
    """Rows (figure, baseline ratio, now ratio, now / baseline, verdict) in figure order, and
    whether the gate passes. Verdicts: 'ok' within the tolerance (`tolerance`, or the figure's
    own in the baseline), 'better' above it, 'WORSE' below it, 'FAILED' for a run without a
    report, 'new' for a figure the baseline lacks, 'MISSING' for a baseline figure this run did
    not measure (not a failure: fewer GPUs)."""
    rows = []
    passed = True
    for name in sorted(set(baseline) | set(now), key=figure_key):
        base = baseline.get(name)
        cur = now.get(name, "absent")
        base_ratio = base["ratio"] if base else None
        bound = base.get("tolerance", tolerance) if base else tolerance
        if cur is None:
            rows.append((name, base_ratio, None, None, "FAILED"))
            passed = False
        elif cur == "absent":
            rows.append((name, base_ratio, None, None, "MISSING"))
        elif base_ratio is None or base_ratio <= 0:
            rows.append((name, None, cur["ratio"], None, "new"))
        else:
            change = cur["ratio"] / base_ratio
            verdict = "ok"
            if change < 1.0 - bound:
                verdict = "WORSE"
                passed = False
            elif change > 1.0 + bound:
                verdict = "better"
            rows.append((name, base_ratio, cur["ratio"], change, verdict))
    return rows, passed


def figure_key(name):
    """GPU count first, then the name: np1_*, np2_*, np4_*, np8_*."""
    m = re.match(r"np(\d+)_(.*)", name)
    return (int(m.group(1)), m.group(2)) if m else (0, name)


def table(rows, now):
    def num(v, fmt="{:.3f}"):
        return "-" if v is None else fmt.format(v)

    lines = ["| figure | baseline (x copy) | now (x copy) | now / baseline | us | verdict |",
             "| --- | --- | --- | --- | --- | --- |"]
    for name, base, cur, change, verdict in rows:
        us = now.get(name) if isinstance(now.get(name), dict) else None
        lines.append(f"| {name} | {num(base)} | {num(cur)} | {num(change)} | "
                     f"{num(us['us'] if us else None, '{:.1f}')} | {verdict} |")
    return "\n".join(lines)


def load_baseline(path):
    if not os.path.exists(path):
        return {"figures": {}}
    try:
        with open(path) as f:
            doc = json.load(f)
        if not isinstance(doc.get("figures"), dict):
            raise ValueError("no 'figures' table")
        return doc
    except ValueError as e:
        raise GateError(f"{path}: not a baseline file ({e})") from e


def own_tolerances(doc):
    """Each figure's own tolerance keys in a baseline document."""
    return {k: {key: v[key] for key in OWN_KEYS if key in v}
            for k, v in doc.get("figures", {}).items()}


def committed_tolerances(committed):
    """The own tolerances a new baseline takes: those of the GPU model's committed baseline
    `committed`, else those of every committed baseline (the first file by name where several
    hold one for a figure)."""
    if os.path.exists(committed):
        return own_tolerances(load_baseline(committed))
    own = {}
    for path in sorted(glob.glob(os.path.join(BASELINES, "*.json"))):
        for k, v in own_tolerances(load_baseline(path)).items():
            if v:
                own.setdefault(k, v)
    return own


def write_baseline(path, model, now, reason, old, own):
    """`own`: each figure's own tolerance keys (own_tolerances)."""
    figures = {k: {"ratio": round(v["ratio"], 4), "us": round(v["us"], 2)}
               for k, v in now.items() if v}
    for k, v in figures.items():
        v.update(own.get(k, {}))
    # A GPU count this host does not have keeps its figures, marked with the date they were taken.
    measured = {figure_key(k)[0] for k in figures}
    for k, v in old.get("figures", {}).items():
        if figure_key(k)[0] not in measured:
            figures[k] = dict(v, kept=v.get("kept", old.get("updated", "unknown")))
    figures = dict(sorted(figures.items(), key=lambda kv: figure_key(kv[0])))
    doc = {"gpu": model, "updated": datetime.date.today().isoformat(), "reason": reason,
           "command": "scripts/bench-gpu.sh regress --update REASON",
           "tolerance": old.get("tolerance", TOLERANCE), "figures": figures}
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("reports")
    ap.add_argument("--baseline")
    ap.add_argument("--update", metavar="REASON")
    ap.add_argument("--tolerance", type=float)
    args = ap.parse_args(argv)
    try:
        if args.update is not None and not args.update.strip():
            raise GateError("--update needs a reason, e.g. --update 'new fused kernel'")
        now, model = collect(args.reports)
        committed = os.path.join(BASELINES, slug(model) + ".json")
        path = args.baseline or committed
        old = load_baseline(path)
        own = own_tolerances(old) if os.path.exists(path) else committed_tolerances(committed)
        tolerance = args.tolerance if args.tolerance is not None else old.get("tolerance",
                                                                              TOLERANCE)
        rows, passed = compare(old["figures"], now, tolerance)
    except GateError as e:
        print(f"regress.py: error: {e}", file=sys.stderr)
        return 2
    print(f"GPU {model or 'unknown'}; baseline {os.path.relpath(path)}"
          f" ({old.get('updated', 'none yet')}); a figure more than {tolerance:.0%} below its"
          " baseline fails")
    for name, entry in sorted(old["figures"].items(), key=lambda kv: figure_key(kv[0])):
        if "tolerance" in entry and name in now:
            print(f"  {name}: {entry['tolerance']:.0%} ({entry.get('tolerance_reason', '')})")
    print(table(rows, now))
    if args.update is not None:
        write_baseline(path, model, now, args.update.strip(), old, own)
        print(f"baseline written: {path} ({args.update.strip()})")
        return 0 if all(v is not None for v in now.values()) else 1
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
