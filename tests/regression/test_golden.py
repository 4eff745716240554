"""Golden hashes: every deck in inputs/ (GPU-sized ones shrunk to CPU sizes) at 1, 2 and 4 CPU
ranks, each run's final field, residual history and stop sweep hashed and held to
golden_cpu.json. A change that only moves code (the engine's extraction into smaller units)
keeps every hash; a change that means to alter results rewrites the file, with its reason:

    GRIDSIM=build/gridsim python3 tests/regression/test_golden.py --update "REASON"

Independently of the stored hashes, the final fields of every deck but implicit heat's (whose
CG sums over the ranks) are the same bits at every rank count. Needs GRIDSIM and MPIEXEC."""
import datetime
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import h5py
import numpy as np

from deck_case import GRIDSIM, launch

HERE = os.path.dirname(os.path.abspath(__file__))
INPUTS = os.path.join(HERE, "..", "..", "inputs")
GOLDEN = os.path.join(HERE, "golden_cpu.json")
RANKS = (1, 2, 4)

# name: (deck, overrides that fit the CPU suite's time). Every deck in inputs/ appears.
CASES = {
    "bench_heat3d": ("bench_heat3d.toml", ["grid.cells=[40,36,32]", "time.steps=30"]),
    "bench_heat3d_implicit": ("bench_heat3d_implicit.toml", ["grid.cells=[24,20,16]", "time.steps=3"]),
    "bench_jacobi2d": ("bench_jacobi2d.toml", ["grid.cells=[256,192]", "time.steps=300"]),
    "bench_jacobi2d_norm1": ("bench_jacobi2d.toml",
                             ["grid.cells=[256,192]", "time.steps=120", "time.norm_every=1"]),
    "bench_jacobi3d": ("bench_jacobi3d.toml", ["grid.cells=[40,36,32]", "time.steps=40"]),
    "conduction2d_implicit": ("conduction2d_implicit.toml", ["time.steps=4"]),
    "default": ("default.toml", ["time.steps=60"]),
    "heat2d_periodic": ("heat2d_periodic.toml", ["time.steps=300"]),
    "heat3d_implicit": ("heat3d_implicit.toml", []),
    "jacobi2d_benchmark": ("jacobi2d_benchmark.toml", ["time.steps=400"]),
    "jacobi2d_benchmark_blocks": ("jacobi2d_benchmark.toml",
                                  ["time.steps=200", "time.norm_every=1", "parallel.time_block=4"]),
    "jacobi2d_small": ("jacobi2d_small.toml", []),
    "jacobi3d": ("jacobi3d.toml", []),
    "scaling_cpu": ("scaling_cpu.toml", ["time.steps=40"]),
}


def run_case(name, ranks, tmp, prefix=None, tag=None, sets=()):
    """Runs one case, through `prefix` (a launcher; default: `ranks` ranks on this machine),
    with `sets` overriding the case's keys (the backend too); returns (the hashes of the run as
    stored, its report)."""
    deck = CASES[name][0]
    out = os.path.join(tmp, f"{name}_{tag or f'np{ranks}'}")
    report = out + ".json"
    args = [*(prefix or launch(ranks)), GRIDSIM, "run", os.path.join(INPUTS, deck), "--quiet",
            "--report", report, "--set", "parallel.backend=cpu", "--set", "output.write_final=true",
            "--set", f'output.dir="{out}"']
    for s in [*CASES[name][1], *sets]:
        args += ["--set", s]
    res = subprocess.run(args, capture_output=True, text=True, timeout=600, check=False)
    if res.returncode != 0:
        raise AssertionError(f"{name} at {ranks} ranks: exit {res.returncode}\n{res.stdout}{res.stderr}")
    with open(report) as f:
        doc = json.load(f)
    with h5py.File(os.path.join(out, "snapshot_final.h5"), "r") as f:
        u = np.array(f["fields/u"])
    field = hashlib.sha256(str(u.dtype).encode() + str(u.shape).encode() + u.tobytes()).hexdigest()
    history = hashlib.sha256(json.dumps(doc.get("residual_history", [])).encode()).hexdigest()
    shutil.rmtree(out, ignore_errors=True)
    return {"field": field, "residual_history": history, "steps": doc["steps"],
            "converged": doc.get("converged")}, doc


def measure_all():
    tmp = tempfile.mkdtemp(prefix="gridsim_golden_")
    try:
        return {name: {str(n): run_case(name, n, tmp)[0] for n in RANKS} for name in CASES}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class Golden(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(GOLDEN) as f:
            cls.golden = json.load(f)["runs"]
        cls.now = measure_all()

    def test_every_deck_is_a_case(self):
        decks = {d for d in os.listdir(INPUTS) if d.endswith(".toml")}
        self.assertEqual(decks, {deck for deck, _ in CASES.values()})
        self.assertEqual(set(self.golden), set(CASES))

    def test_hashes_unchanged(self):
        for name in CASES:
            for n in RANKS:
                with self.subTest(case=name, ranks=n):
                    self.assertEqual(self.now[name][str(n)], self.golden[name][str(n)])

    def test_fields_independent_of_the_rank_count(self):
        for name, (deck, _) in CASES.items():
            if "implicit" in deck:
                continue
            with self.subTest(case=name):
                self.assertEqual({self.now[name][str(n)]["field"] for n in RANKS},
                                 {self.now[name]["1"]["field"]})


def update(reason):
    runs = measure_all()
    commit = subprocess.run(["git", "-C", HERE, "describe", "--always", "--dirty"],
                            capture_output=True, text=True, check=False).stdout.strip()
    with open(GOLDEN, "w") as f:
        json.dump({"reason": reason, "date": datetime.date.today().isoformat(), "commit": commit,
                   "runs": runs}, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {GOLDEN} ({len(runs)} cases x {len(RANKS)} rank counts)")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--update":
        update(sys.argv[2])
    else:
        unittest.main()
