"""The math of scaling studies, free of I/O so it is tested on synthetic data.

Laws (CUDA C++ Best Practices Guide, "Understanding Scaling"):
  Amdahl (strong scaling, fixed problem):       S(N) = 1 / ((1 - P) + P / N)
  Gustafson (weak scaling, problem grows with N): S(N) = N + (1 - P)(1 - N)
"""

import math


class FitError(ValueError):
    """A fit that the data cannot support (one rank count, no base run, ...)."""


def speedups(ranks, times, weak=False):
    """S(N) relative to the smallest rank count N0 (normally 1).

    Strong: S = N0 * T(N0) / T(N)  (the N0-rank run is taken as N0 times faster than 1 rank).
    Weak:   S = N0 * ... scaled: N * T(N0) / T(N), the work done grows with N.
    """
    if not ranks:
        raise FitError("no runs")
    n0 = min(ranks)
    t0 = times[ranks.index(n0)]
    if weak:
        return [n * t0 / t for n, t in zip(ranks, times)]
    return [n0 * t0 / t for t in times]


def efficiencies(ranks, speedup):
    return [s / n for s, n in zip(speedup, ranks)]


def _one_parameter_lsq(xs, ys):
    """The b of y = b * x that minimises sum (y - b x)^2."""
    den = sum(x * x for x in xs)
    if den == 0:
        raise FitError("need at least two different rank counts to fit a scaling law")
    return sum(x * y for x, y in zip(xs, ys)) / den


def fit_amdahl(ranks, speedup):
    """Parallel fraction P from strong scaling: least squares of 1/S against 1/N.

    Amdahl gives 1/S - 1 = P (1/N - 1): a line through (1, 1) whose slope is -P.
    """
    if len(set(ranks)) < 2:
        raise FitError("need at least two different rank counts to fit Amdahl's law "
                       f"(have {sorted(set(ranks))})")
    xs = [1.0 / n - 1.0 for n in ranks]
    ys = [1.0 / s - 1.0 for s in speedup]
    return _one_parameter_lsq(xs, ys)


def fit_gustafson(ranks, scaled_speedup):
    """Parallel fraction P from weak scaling: S - 1 = P (N - 1), least squares."""
    if len(set(ranks)) < 2:
        raise FitError("need at least two different rank counts to fit Gustafson's law "
                       f"(have {sorted(set(ranks))})")
    xs = [n - 1.0 for n in ranks]
    ys = [s - 1.0 for s in scaled_speedup]
    return _one_parameter_lsq(xs, ys)


def amdahl(p, n):
    return 1.0 / ((1.0 - p) + p / n)


def gustafson(p, n):
    return n + (1.0 - p) * (1.0 - n)


def karp_flatt(n, s):
    """Experimentally determined serial fraction e = (1/S - 1/N) / (1 - 1/N); None at N = 1."""
    if n <= 1:
        return None
    return (1.0 / s - 1.0 / n) / (1.0 - 1.0 / n)


def compute_division(n0, compute0, n, compute, weak=False):
    """The compute phase at n ranks against its perfect division from n0 ranks: (perfect seconds,
    perfect / measured). Strong scaling divides n0's compute by n / n0; weak keeps it (each rank
    holds as many points)."""
    perfect = compute0 if weak else compute0 * n0 / n
    return perfect, (perfect / compute if compute > 0 else float("nan"))


def halo_traffic(cells, grid, periodic, value_bytes):
    """Messages and bytes sent per step by the busiest rank of a block decomposition.

    Faces only (star stencil, halo width 1); a face is sent when the block has a neighbour
    across it: always on a periodic axis split over several ranks, and on an interior face.
    """
    dims = len(cells)
    size = [math.ceil(c / g) for c, g in zip(cells, grid)]  # the largest block
    messages, nbytes = 0, 0
    for d in range(dims):
        if grid[d] == 1:
            continue  # a periodic axis on one rank is copied locally, a Dirichlet one has no face
        face = 1
        for e in range(dims):
            if e != d:
                face *= size[e]
        per_axis = 2 if (periodic[d] or grid[d] > 2) else 1
        messages += per_axis
        nbytes += per_axis * face * value_bytes
    return messages, nbytes


def fit_halo_model(samples):
    """Least squares of t = alpha * messages + bytes / bandwidth over (messages, bytes, t).

    Returns (alpha [s per message], bandwidth [bytes/s]); needs two independent samples.
    """
    pts = [(m, b, t) for m, b, t in samples if m > 0]
    if len(pts) < 2:
        raise FitError("need at least two runs that exchange halos to fit the halo model")
    smm = sum(m * m for m, _, _ in pts)
    sbb = sum(b * b for _, b, _ in pts)
    smb = sum(m * b for m, b, _ in pts)
    smt = sum(m * t for m, _, t in pts)
    sbt = sum(b * t for _, b, t in pts)
    det = smm * sbb - smb * smb
    if abs(det) <= 1e-12 * smm * sbb:
        # Messages and bytes move together: fit bandwidth alone, latency zero.
        inv_bw = sbt / sbb
        return 0.0, (1.0 / inv_bw if inv_bw > 0 else math.inf)
    alpha = (smt * sbb - sbt * smb) / det
    inv_bw = (sbt * smm - smt * smb) / det
    if alpha < 0 or inv_bw <= 0:  # unphysical: fall back to the one-term fits
        inv_bw = max(sbt / sbb, 1e-30)
        alpha = max(0.0, sum(t - b * inv_bw for m, b, t in pts) / sum(m for m, _, _ in pts))
    return alpha, 1.0 / inv_bw


def relative_rms(measured, predicted):
    return math.sqrt(sum(((p - m) / m) ** 2 for m, p in zip(measured, predicted)) / len(measured))


def halo_inputs(report):
    """The periodic axes and the bytes per value of a run report's deck."""
    cfg = report["config"]
    periodic = [cfg["boundary"].get(a, cfg["boundary"]["kind"]) == "periodic" for a in "xyz"[:report["dims"]]]
    if cfg["boundary"]["kind"] == "benchmark":
        periodic = [False, True]
    return periodic, 4 if report["precision"] == "float" else 8


def fitted_halo_model(rows, periodic, vbytes):
    """(seconds per message, bytes per second, "") fitted to the measured transfer phase of the
    rows, or (None, None, why not)."""
    samples = []
    for r in rows:
        cells = [int(c) for c in r["cells"].split("x")]
        grid = [int(g) for g in r["process_grid"].split("x")]
        m, b = halo_traffic(cells, grid, periodic, vbytes)
        samples.append((m, b, r["report"]["phases"]["transfer"]["max"] / max(r["report"]["steps"], 1)))
    try:
        alpha, bw = fit_halo_model(samples)
    except FitError as err:
        return None, None, str(err)
    return alpha, bw, ""


def model_verdict(law_name, law_err, halo, t1):
    """The halo model's line and which model to trust: the fitted law, or (halo = (alpha, bw,
    compute, error)) the halo model."""
    alpha, bw, compute_per_point, halo_err = halo
    fitted = (f"Halo model: {alpha * 1e6:.2f} us per message + bytes / {bw / 1e9:.2f} GB/s (fitted to the measured "
              f"transfer phase), compute {compute_per_point * 1e9:.4f} ns per point per rank (stencil and vector "
              f"operations), no overlap assumed; relative RMS error on the measured points {100 * halo_err:.1f}%.")
    trust = "halo model" if halo_err <= law_err else law_name
    why = ("it follows the halo bytes and messages that actually grow with N, where the fitted law lumps every cost "
           "into one constant fraction" if trust == "halo model" else
           "it reproduces the measured points better; the halo model's assumptions (no overlap, perfect compute "
           "division) fit these runs worse")
    return [fitted, f"Trusting {'the halo model' if trust == 'halo model' else trust}: {why}. "
                    f"(t1 = {t1 * 1e3:.3f} ms per step.)"]


def job_label(report):
    """The batch job a run report names ('slurm 4242.3' for job 4242 step 3, 'pbs 31.pbs01'),
    or '-' for a run outside one (or a report older than the report's `job`)."""
    job = report.get("job") or {}
    if not job.get("id"):
        return "-"
    step = f".{job['step']}" if job.get("step") else ""
    return f"{job['scheduler']} {job['id']}{step}"


def node_model_seconds(compute_per_point, points, ranks, faces, halo, network, per_node):
    """Modelled seconds per step on `ranks` ranks over nodes of `per_node`: the divisible work
    (compute_per_point x points / ranks), the busiest rank's faces inside its node at the measured
    halo model (halo = (seconds per message, bytes per second)) and its faces to other nodes over
    the network (network = (seconds per message, bytes per second a node sends, shared by its
    ranks)). `faces`: gridsim's busiest rank (`gridsim check --ranks-per-node`). No overlap."""
    alpha, bw = halo
    latency, node_bw = network
    return (compute_per_point * points / ranks
            + alpha * faces["intra_messages"] + faces["intra_bytes"] / bw
            + latency * faces["inter_messages"] + faces["inter_bytes"] / (node_bw / per_node))


def nodes_label(report):
    """'2 x 4' for a run on 2 nodes of 4 ranks ('2 nodes: 3+1' where they hold different
    numbers), or '-' for a report older than its `nodes`."""
    nodes = report.get("nodes")
    if not nodes:
        return "-"
    counts = [len(n["ranks"]) for n in nodes]
    if len(set(counts)) == 1:
        return f"{len(nodes)} x {counts[0]}"
    return f"{len(nodes)} nodes: " + "+".join(map(str, counts))


def launcher_line(template, n, per_node):
    """The launcher command for n ranks: {n}, and {nodes} and {per_node}, the fewest nodes of
    `per_node` ranks that hold n and how many each takes (n on one node below per_node)."""
    if ("{nodes}" in template or "{per_node}" in template) and per_node < 1:
        raise ValueError("the launcher uses {nodes} or {per_node}: give --ranks-per-node")
    nodes = max(1, -(-n // per_node)) if per_node > 0 else 1
    return template.format(n=n, nodes=nodes, per_node=min(n, per_node) if per_node > 0 else n)
