#!/usr/bin/env python3
"""plot_snapshot.py FILE.h5 [--slice AXIS=FRACTION] [--field NAME] [--out PNG]

Draws a 2D field, or one slice of a 3D field, of a gridsim snapshot or checkpoint: colour map
with a colour bar, axes in the deck's physical units (x = i * h from /grid's origin and
spacing), and a title with the problem, step and time. A 3D field is cut at the grid plane
nearest to FRACTION of the chosen axis (default z=0.5). The PNG goes to --out, by default next
to the file (FILE.png). Exit 2 with one line on bad input (a missing or non-gridsim file, an
unknown field or axis, a fraction outside [0, 1]) and when numpy, h5py or matplotlib is missing
(scripts/requirements.txt)."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pydeps  # noqa: E402

np, h5py, _ = pydeps.require("plot_snapshot.py", "numpy", "h5py", "matplotlib")

AXES = "xyz"


class UsageError(Exception):
    pass


def parse_slice(text):
    """'z=0.5' -> (axis index, fraction)."""
    axis, sep, value = text.partition("=")
    if not sep or axis not in AXES:
        raise UsageError(f"--slice {text}: expected AXIS=FRACTION with AXIS one of x, y, z")
    try:
        fraction = float(value)
    except ValueError:
        raise UsageError(f"--slice {text}: '{value}' is not a number") from None
    if not 0.0 <= fraction <= 1.0:
        raise UsageError(f"--slice {text}: the fraction must be in [0, 1]")
    return AXES.index(axis), fraction


def take_slice(u, axis, fraction):
    """A 2D plane of a field stored slowest axis first ([nz][ny][nx], or [ny][nx] for 2D).
    Returns (plane indexed [row][column], index of the plane, (column axis, row axis)); the
    plane is the grid point nearest to fraction * (n - 1) along `axis` (ties round to even)."""
    if u.ndim == 2:
        return u, None, (0, 1)
    if u.ndim != 3:
        raise UsageError(f"expected a 2D or 3D field, got {u.ndim} dimensions")
    n = u.shape[2 - axis]
    index = int(np.rint(fraction * (n - 1)))
    plane = np.take(u, index, axis=2 - axis)
    kept = [d for d in range(3) if d != axis]  # x y z order: the first kept axis is the column
    return plane, index, (kept[0], kept[1])


def as_text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def scalar(value):
    """A number stored as an attribute, which gridsim writes as a one-element array: NumPy 2
    refuses int() or float() of an array that has a dimension."""
    return np.asarray(value).reshape(-1)[0]


def read_snapshot(path, field):
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise UsageError(f"{path}: not an HDF5 file ({e})") from None
    with f:
        if as_text(f.attrs.get("format", "")) != "gridsim":
            raise UsageError(f"{path}: not a gridsim file (no format = \"gridsim\" attribute)")
        name = f"/fields/{field}"
        if name not in f:
            fields = ", ".join(f["/fields"]) if "/fields" in f else "none"
            raise UsageError(f"{path}: no field '{field}' (fields: {fields})")
        u = f[name][...]
        grid = f["/grid"].attrs
        meta = {
            "spacing": np.asarray(grid["spacing"], dtype=float),
            "origin": np.asarray(grid.get("origin", np.zeros(u.ndim)), dtype=float),
            "problem": as_text(f.attrs.get("problem", "?")),
            "step": int(scalar(f.attrs.get("step", 0))),
            "time": float(scalar(f.attrs.get("time", 0.0))),
        }
    return u, meta


def plot(u, meta, slice_axis, fraction, field, out):
    plt, why = pydeps.pyplot()
    if plt is None:
        raise UsageError(why)
    plane, index, (col, row) = take_slice(u, slice_axis, fraction)
    h, o = meta["spacing"], meta["origin"]
    extent = [o[col], o[col] + (plane.shape[1] - 1) * h[col],
              o[row], o[row] + (plane.shape[0] - 1) * h[row]]
    fig, ax = plt.subplots(figsize=(6.4, 5.2), dpi=100)
    # Values of both signs get a diverging map centred on zero, so zero reads as neutral.
    lo, hi = float(np.nanmin(plane)), float(np.nanmax(plane))
    scale = {"cmap": "inferno"}
    if lo < 0.0 < hi:
        scale = {"cmap": "RdBu_r", "vmin": -max(-lo, hi), "vmax": max(-lo, hi)}
    image = ax.imshow(plane, origin="lower", extent=extent, aspect="equal",
                      interpolation="nearest", **scale)
    fig.colorbar(image, ax=ax, label=field)
    ax.set_xlabel(AXES[col])
    ax.set_ylabel(AXES[row])
    where = "" if index is None else (
        f", {AXES[slice_axis]} = {o[slice_axis] + index * h[slice_axis]:.4g}")
    when = (f"sweep {meta['step']}" if meta["problem"] == "jacobi"
            else f"step {meta['step']}, t = {meta['time']:.4g}")
    ax.set_title(f"{meta['problem']} {field}: {when}{where}")
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("file")
    p.add_argument("--slice", default="z=0.5", help="3D: the plane to draw, AXIS=FRACTION")
    p.add_argument("--field", default="u")
    p.add_argument("--out", help="PNG path (default: FILE with .png)")
    args = p.parse_args(argv)
    try:
        axis, fraction = parse_slice(args.slice)
        u, meta = read_snapshot(args.file, args.field)
        out = args.out or os.path.splitext(args.file)[0] + ".png"
        plot(u, meta, axis, fraction, args.field, out)
    except UsageError as e:
        print(f"plot_snapshot.py: error: {e}", file=sys.stderr)
        return 2
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
