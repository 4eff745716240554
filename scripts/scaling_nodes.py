"""`scaling.py model DIR --nodes 1 2 4 ... 64`: a study measured on one node, extended to several
through gridsim's own model of the nodes (docs/scaling.md, "Beyond one node: a model"). For each
node count, `gridsim check --ranks N --ranks-per-node G` gives the process grid, how the nodes
hold its blocks, and its busiest rank's faces inside its node and to other nodes; the faces
inside a node cost what the measured study's transfer phase says (the fitted halo model), those
to other nodes cost a stated network: --network-latency-us per message, --network-bandwidth-GBps a
node sends, shared by its ranks (defaults for 4 x 200 Gb/s). The work divides perfectly and
nothing overlaps. A model, not a measurement: the table and plot say so."""
import csv
import json
import os
import subprocess

import pydeps
import scaling_lib as lib


# A message and the bandwidth of a node's own link, as gridsim's process-grid model has them
# (FixedCosts, src/parallel/grid_model.hpp): taken where the study's halo model is not fitted.
GRIDSIM_NODE_LINK = (4e-6, 5e11)


class ModelError(Exception):
    """Bad input for the nodes model: one line, exit 2."""


def layout(gridsim, deck, sets, ranks, per_node):
    """gridsim's layout for `ranks` ranks over nodes of `per_node` (its check command)."""
    out = subprocess.run([gridsim, "check", deck, "--json", "--ranks", str(ranks),
                          "--ranks-per-node", str(per_node)]
                         + [a for s in sets for a in ("--set", s)],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise ModelError(f"deck {deck} on {ranks} ranks: {out.stderr.strip().splitlines()[-1]}")
    return json.loads(out.stdout)["layout_for_nodes"]


def predict(study, base, gridsim, compute_per_point, halo, network, nodes, per_node):
    """One row per node count: ranks, grid, how the nodes hold it, modelled seconds per step,
    speedup (strong: against one rank's modelled time; weak: scaled) and efficiency."""
    weak = study["kind"] == "weak"
    deck, sets = study["deck_path"], study.get("set", [])
    cells = [int(c) for c in base["cells"].split("x")]
    per_rank = [c // g for c, g in zip(cells, [int(x) for x in base["process_grid"].split("x")])]
    points = 1
    for c in cells:
        points *= c
    t1 = compute_per_point * (points if not weak else points // base["ranks_used"])
    rows = []
    for m in nodes:
        ranks = m * per_node
        if weak:
            grid = layout(gridsim, deck, sets + [f"grid.cells=[{','.join(map(str, per_rank))}]"],
                          ranks, per_node)["grid"]
            cells = [c * g for c, g in zip(per_rank, grid)]
            points = 1
            for c in cells:
                points *= c
        lay = layout(gridsim, deck, sets + [f"grid.cells=[{','.join(map(str, cells))}]"], ranks,
                     per_node)
        t = lib.node_model_seconds(compute_per_point, points, ranks, lay["busiest_rank"], halo,
                                   network, per_node)
        speedup = ranks * t1 / t if weak else t1 / t
        rows.append({"nodes": m, "ranks": ranks, "grid": "x".join(map(str, lay["grid"])),
                     "boxes": "launcher's order" if lay["node_tile"][0] == 0
                     else "x".join(map(str, lay["node_tile"][:len(cells)])),
                     "seconds": t, "speedup": speedup, "efficiency": speedup / ranks,
                     "faces": lay["busiest_rank"]})
    return rows


def assumptions(halo, network, per_node, fitted=True):
    alpha, bw = halo
    latency, node_bw = network
    inside = ("the measured halo model" if fitted
              else "gridsim's model of a node's link (the study's halo model is not fitted)")
    return (f"A model, not a measurement: {per_node} GPUs per node; faces inside a node at "
            f"{inside} ({alpha * 1e6:.2f} us per message, {bw / 1e9:.1f} GB/s); faces "
            f"between nodes at {latency * 1e6:.1f} us per message and {node_bw / 1e9:.0f} GB/s a "
            f"node shared by its {per_node} ranks; the work divides perfectly; no overlap")


def table(rows, weak):
    lines = [f"{'nodes':>6} {'ranks':>6} {'grid':>10} {'node boxes':>16} {'ms/step':>10} "
             f"{'speedup' if not weak else 'scaled S':>9} {'efficiency':>10}"]
    for r in rows:
        lines.append(f"{r['nodes']:>6} {r['ranks']:>6} {r['grid']:>10} {r['boxes']:>16} "
                     f"{r['seconds'] * 1e3:>10.4f} {r['speedup']:>9.2f} "
                     f"{100 * r['efficiency']:>9.1f}%")
    return lines


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["nodes", "ranks", "grid", "node_boxes", "modelled_s_per_step", "speedup",
                    "efficiency"])
        for r in rows:
            w.writerow([r["nodes"], r["ranks"], r["grid"], r["boxes"], f"{r['seconds']:.9e}",
                        f"{r['speedup']:.6f}", f"{r['efficiency']:.6f}"])


def plot(plt, path, study, measured, rows, caption):
    """The model's speedup against ranks over nodes, the measured one-node points and the
    ideal, with the assumptions as the caption."""
    weak = study["kind"] == "weak"
    fig, ax = plt.subplots(figsize=(7.5, 5.2))
    ranks = [r["ranks"] for r in rows]
    top = max(ranks + [m["ranks"] for m in measured])
    ax.plot([1, top], [1, top], "k:", label="ideal")
    ax.plot(ranks, [r["speedup"] for r in rows], "o-",
            label="model over nodes" + (" (scaled speedup)" if weak else ""))
    ax.plot([m["ranks"] for m in measured], [m["speedup"] for m in measured], "s", ms=8,
            label="measured on one node")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("ranks (GPUs)")
    ax.set_ylabel("speedup")
    ax.set_title(f"{study['kind']} scaling beyond one node: a model ({os.path.basename(study['deck'])})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left")
    fig.text(0.01, 0.01, "\n".join(wrap(caption, 120)), fontsize=7, va="bottom")
    fig.tight_layout(rect=(0, 0.09, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def wrap(text, width):
    words, lines, line = text.split(), [], ""
    for w in words:
        if len(line) + len(w) + 1 > width:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    return lines + [line]


def report(args, study, rows, base, halo):
    """`model --nodes`: prints the table and writes DIR/nodes_model.csv and the plot (where
    matplotlib is installed). `halo`: the study's fitted halo model, or None (then a node's link
    as gridsim's own model has it)."""
    per_node = args.gpus_per_node or max(r["ranks"] for r in rows)
    fitted = halo is not None
    halo = halo or GRIDSIM_NODE_LINK
    # Work that divides over the ranks: the stencil and, for a CG, its vector operations.
    compute_per_point = ((base["compute_s"] + base["vector_s"]) * base["ranks_used"]
                         / base["report"]["updated_points_per_step"])
    network = (args.network_latency_us * 1e-6, args.network_bandwidth_GBps * 1e9)
    model = predict(study, base, args.gridsim, compute_per_point, halo, network, args.nodes,
                    per_node)
    caption = assumptions(halo, network, per_node, fitted)
    print("\nBeyond one node (gridsim's node-aware grid and order). " + caption + ".")
    print("\n".join(table(model, study["kind"] == "weak")))
    write_csv(os.path.join(args.dir, "nodes_model.csv"), model)
    plt, no_plot = pydeps.pyplot()
    if plt is None:
        print(f"[scaling] nodes plot skipped: {no_plot}")
        return
    png = args.plot or os.path.join(args.dir, "nodes_model.png")
    plot(plt, png, study, rows, model, caption)
    print(f"[scaling] wrote {os.path.join(args.dir, 'nodes_model.csv')}, {png}")
