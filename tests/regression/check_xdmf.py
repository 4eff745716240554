"""Opens a snapshot written by 4 ranks through ParaView's XDMF reader (run with pvbatch) and
checks what a user would see: the grid's extent, point count, bounds (spacing and origin) and
the range of u, against the HDF5 attributes and data read with h5py.
Usage: pvbatch check_xdmf.py FILE.xmf FILE.h5"""
import sys

import h5py
import numpy as np
from paraview.simple import XDMFReader

xmf, h5 = sys.argv[1], sys.argv[2]
with h5py.File(h5, "r") as f:
    cells = [int(c) for c in f["grid"].attrs["global_cells"]]  # x, y(, z)
    spacing = [float(s) for s in f["grid"].attrs["spacing"]]
    u = f["fields/u"][...]
reader = XDMFReader(FileNames=[xmf])
reader.UpdatePipeline()
info = reader.GetDataInformation()
extent = info.GetExtent()
bounds = info.GetBounds()
want_extent = []
want_bounds = []
for d in range(3):
    n = cells[d] if d < len(cells) else 1
    h = spacing[d] if d < len(spacing) else 0.0
    want_extent += [0, n - 1]
    want_bounds += [0.0, (n - 1) * h]
got_range = reader.PointData["u"].GetRange()
print("extent", extent, "points", info.GetNumberOfPoints(), "bounds", bounds, "u range", got_range)
assert list(extent) == want_extent, f"extent {extent} != {want_extent}"
assert info.GetNumberOfPoints() == u.size, f"points {info.GetNumberOfPoints()} != {u.size}"
assert np.allclose(bounds, want_bounds, rtol=1e-12, atol=1e-12), f"bounds {bounds} != {want_bounds}"
assert np.isclose(got_range[0], u.min()) and np.isclose(got_range[1], u.max()), f"range {got_range}"
print("XDMF OK")
