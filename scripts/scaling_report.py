"""The written side of a scaling study (scripts/scaling.py report): what limits scaling, read off
the measured rows, the CSV and the plots."""

import csv
import os

import scaling_lib as lib


def overlap_word(report):
    """parallel.overlap as a run report holds it: "auto", "on" or "off" (older reports: a bool)."""
    v = report["overlap"]
    return ("on" if v else "off") if isinstance(v, bool) else v


def overlap_on(report):
    return overlap_word(report) != "off"


def shown_parts(rows):
    """The parts of a step the table and the phase plot show: the stencil and the halos always,
    vector operations and reductions where the runs spent time in them (the CG's passes over its
    vectors, its dot products and all-reduces; jacobi's residual). A part left out took no time,
    so the parts shown still add up to the step."""
    extra = [part for part in ("vector_s", "reduction_s") if any(r[part] > 0 for r in rows)]
    return ["compute_s", "transfer_s"] + extra + ["other_s"]


def percent(share):
    """A share of a step as a percentage, with a decimal where a whole number would say 0% or 1%."""
    return f"{100 * share:.1f}%" if share < 0.095 else f"{100 * share:.0f}%"


def compute_text(study, first, last):
    """Where the last rank count's step goes: its compute phase against a perfect division of the
    first's, and what the step spends beyond it (transfers and reductions not hidden). Phases of
    the two lanes run at the same time, so their sum can exceed the step."""
    weak = study["kind"] == "weak"
    perfect, ratio = lib.compute_division(first["ranks"], first["compute_s"], last["ranks"], last["compute_s"], weak)
    vectors = last["vector_s"] > 0
    parts = "it and the vector operations" if vectors else "it"
    beyond = last["time_per_step_s"] - last["compute_s"] - last["vector_s"]
    if beyond >= 0:
        rest = (f"the step {1e3 * beyond:.4f} ms more than {parts} (transfers, reductions and waits not "
                "hidden behind them)")
    elif vectors:
        rest = (f"the step {1e3 * -beyond:.4f} ms less than {parts} together: they overlapped (the two "
                "lanes ran at the same time)")
    else:
        rest = (f"the step {1e3 * -beyond:.4f} ms less than it: the interior and the boundary shell "
                "overlapped (the two lanes ran at the same time)")
    return (f"At N={last['ranks']} the compute phase (interior + boundary shell, mean over ranks) takes "
            f"{1e3 * last['compute_s']:.4f} ms, {percent(ratio)} of perfect "
            f"{'weak scaling' if weak else 'division'} of N={first['ranks']}'s ({1e3 * perfect:.4f} ms), and "
            f"{rest}.")


def step_share(row, part):
    """The share of a step that `part` of the row takes (0 where the step took no time)."""
    return row[part] / row["time_per_step_s"] if row["time_per_step_s"] else 0


def karp_flatt_text(rows):
    """How the Karp-Flatt serial fraction moves with N, and what that means; "" with fewer than two."""
    kf = [r["karp_flatt"] for r in rows if r["karp_flatt"] is not None]
    if len(kf) < 2:
        return ""
    trend = "grows" if kf[-1] > kf[0] * 1.2 else ("shrinks" if kf[-1] < kf[0] / 1.2 else "stays about constant")
    meaning = {
        "grows": "an overhead that grows with the rank count (communication, synchronisation), not a fixed serial part.",
        "shrinks": "a cost of splitting at all, paid from the first split on, not a fixed serial part.",
        "stays about constant": "consistent with a fixed serial part, as Amdahl assumes.",
    }[trend]
    return f"The Karp-Flatt serial fraction {trend} with N ({kf[0]:.3f} -> {kf[-1]:.3f}): {meaning}"


MG_PARTS = (("smoothing", "smoothing"), ("restriction", "restriction"), ("prolongation", "prolongation"),
            ("coarse_solve", "coarse solve"))


def multigrid_text(first, last):
    """Where a multigrid-preconditioned implicit step goes at the first and last rank counts: the
    V-cycle's parts per step (mean over ranks, each with its exchanges) and the coarse solve's share
    of the step, which does not shrink with N as the fine levels do (the levels below the one no
    rank's block can halve run on rank 0 alone, the others waiting), and the global sums
    per step, each an all-reduce whose latency grows with N; "" where the runs had no multigrid."""
    mg = [r["report"].get("cg", {}).get("multigrid") for r in (first, last)]
    if not all(m and "parts" in m for m in mg):
        return ""

    def parts(row, m):
        steps = max(row["report"]["steps"], 1)
        return ", ".join(f"{what} {1e3 * m['parts'][key]['mean'] / steps:.3f}" for key, what in MG_PARTS)

    def coarsest(m):
        return "x".join(map(str, m["levels"][-1]))

    def coarse_share(row, m):
        step = row["time_per_step_s"]
        return m["parts"]["coarse_solve"]["mean"] / max(row["report"]["steps"], 1) / step if step else 0

    shares = [coarse_share(row, m) for row, m in zip((first, last), mg)]
    cg = [row["report"]["cg"] for row in (first, last)]
    sums = [c["allreduce_s"] / max(row["report"]["steps"], 1) for c, row in zip(cg, (first, last))]
    return (f"Multigrid V-cycles, ms per step (mean over ranks, exchanges included): at N={first['ranks']} "
            f"{parts(first, mg[0])}; at N={last['ranks']} {parts(last, mg[1])}. The coarse solve (down to "
            f"{coarsest(mg[0])} points at N={first['ranks']}, {coarsest(mg[1])} at N={last['ranks']}) is "
            f"{percent(shares[0])} of a step at N={first['ranks']} and {percent(shares[1])} at N={last['ranks']}"
            + (": it grows, as coarse levels do not divide among ranks as the fine ones do. "
               if shares[1] > 1.2 * shares[0] and shares[1] >= 0.01 else
               ": not what limits these runs. ")
            + "Global sums: "
            f"{cg[0]['allreduces_per_step']:.1f} all-reduces per step at N={first['ranks']} and "
            f"{cg[1]['allreduces_per_step']:.1f} at N={last['ranks']}, {1e3 * sums[0]:.3f} and {1e3 * sums[1]:.3f} ms "
            "per step (the slowest rank's, waits included): their latency does not shrink with N.")


def limits_text(study, rows, p):
    """What limits scaling, read off the measurements."""
    if len(rows) < 2:
        return "One rank count only: nothing to say about scaling yet."
    first, last = rows[0], rows[-1]
    lines = []
    share0, share1 = step_share(first, "transfer_s"), step_share(last, "transfer_s")
    lines.append(f"Halo transfer (pack + transfer + unpack, mean over ranks) is {100 * share0:.0f}% of a step "
                 f"at N={first['ranks']} and {100 * share1:.0f}% at N={last['ranks']}"
                 + (" (overlapped with the interior, so it can exceed what it costs the step)." if overlap_on(last["report"]) else "."))
    kf = karp_flatt_text(rows)
    if kf:
        lines.append(kf)
    lines.append(compute_text(study, first, last))
    # Vector operations shrink with N like the stencil; global reductions (the CG's dot products,
    # jacobi's residual: a local sum and an all-reduce) have a latency that does not.
    shown = shown_parts(rows)
    for part, what in (("vector_s", "Vector operations (passes over the solver's vectors"),
                       ("reduction_s", "Reductions (local sums and all-reduces")):
        if part in shown:
            lines.append(f"{what}, mean over ranks) are {percent(step_share(first, part))} of a step "
                         f"at N={first['ranks']} and {percent(step_share(last, part))} at N={last['ranks']}.")
    mg = multigrid_text(first, last)
    if mg:
        lines.append(mg)
    if p is not None:
        lines.append(f"Fitted parallel fraction P = {p:.4f}"
                     + (": at or below zero, the runs got no faster with more ranks." if p <= 0 else "."))
    if len(rows) == 2:
        lines.append("With two rank counts any one-parameter law fits exactly; add rank counts to test it.")
    if last["efficiency"] < 0.5:
        lines.append(f"Efficiency at N={last['ranks']} is {100 * last['efficiency']:.0f}%: adding ranks there costs more than it gains.")
    return " ".join(lines)


def grid_shown(row):
    """The row's process grid, and how many of its N ranks ran where gridsim left some idle
    (docs/running.md, "Ranks used")."""
    if row["ranks_used"] < row["ranks"]:
        return f"{row['process_grid']} ({row['ranks_used']} of {row['ranks']} ranks)"
    return row["process_grid"]


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["ranks", "nodes", "process_grid", "cells", "repeats", "time_per_step_s", "glups", "speedup",
                    "efficiency", "predicted_speedup", "karp_flatt", "compute_s", "transfer_s", "vector_s",
                    "reduction_s", "other_s", "job"])
        for r in rows:
            w.writerow([r["ranks"], r["nodes"], grid_shown(r), r["cells"], r["repeats"], f"{r['time_per_step_s']:.9e}",
                        f"{r['glups']:.6f}", f"{r['speedup']:.6f}", f"{r['efficiency']:.6f}",
                        "" if r["predicted"] is None else f"{r['predicted']:.6f}",
                        "" if r["karp_flatt"] is None else f"{r['karp_flatt']:.6f}",
                        *(f"{r[part]:.9e}" for part in ("compute_s", "transfer_s", "vector_s", "reduction_s",
                                                        "other_s")), r["job"]])


def plot_curve(plt, path, study, rows, p, what):
    """Measured speedup or efficiency against the ideal and (P fitted) the law, on log2 ranks."""
    weak = study["kind"] == "weak"
    ranks = [r["ranks"] for r in rows]
    dense = sorted(set([1] + ranks + [max(ranks) * 2]))
    law = (lambda n: lib.gustafson(p, n)) if weak else (lambda n: lib.amdahl(p, n))
    speedup = what == "speedup"
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(ranks, [r[what] for r in rows], "o-", label="measured")
    ax.plot(dense, [n if speedup else 1.0 for n in dense], "k--", label="ideal")
    if p is not None:
        fitted = [law(n) if speedup else law(n) / n for n in dense]
        ax.plot(dense, fitted, ":", label=f"{'Gustafson' if weak else 'Amdahl'} P={p:.3f}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("ranks N")
    ax.set_ylabel(("scaled " if weak and speedup else "") + what)
    ax.set_title(f"{study['kind']} scaling: {what}")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_phases(plt, path, rows):
    """Each rank count's step as stacked phase means, with the wall time per step."""
    fig, ax = plt.subplots(figsize=(6, 4))
    bottom = [0.0] * len(rows)
    x = range(len(rows))
    for part in shown_parts(rows):
        vals = [r[part] * 1e3 for r in rows]
        ax.bar(x, vals, bottom=bottom, label=part[:-2])
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.plot(x, [r["time_per_step_s"] * 1e3 for r in rows], "ko-", label="wall time per step")
    ax.set_xticks(list(x), [str(r["ranks"]) for r in rows])
    ax.set_xlabel("ranks N")
    ax.set_ylabel("ms per step (phase means over ranks)")
    ax.set_title("phase breakdown")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot(plt, directory, study, rows, p):
    files = []
    for what in ("speedup", "efficiency"):
        name = f"{what}.png"
        plot_curve(plt, os.path.join(directory, name), study, rows, p, what)
        files.append(name)
    plot_phases(plt, os.path.join(directory, "phases.png"), rows)
    return files + ["phases.png"]
