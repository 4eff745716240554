"""The scripts' third-party modules (numpy, h5py, matplotlib), imported through here so that
one the running interpreter lacks is a one-line error naming it and both ways to get it, not a
traceback. Users often run the scripts with a python3 other than Debian's (a venv, conda, a
cluster's `module load python`), which has none of them until they are installed."""
import importlib
import os
import sys

REQUIREMENTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "requirements.txt")
DEBIAN_PACKAGES = {"numpy": "python3-numpy", "h5py": "python3-h5py",
                   "matplotlib": "python3-matplotlib"}


def _import(name):
    """(module, None), or (None, the name of the module that could not be imported: `name`
    itself, or a module it needs)."""
    try:
        return importlib.import_module(name), None
    except ImportError as err:
        missing = getattr(err, "name", None) or name
        return None, missing if missing == name else f"{missing} (needed by {name})"


def missing_text(missing):
    """'Python module(s) ... missing from INTERPRETER: how to install them', one line."""
    wanted = [m.split(" ")[0] for m in missing]
    debian = " ".join(DEBIAN_PACKAGES.get(m, "python3-" + m) for m in wanted)
    noun = "module" if len(missing) == 1 else "modules"
    return (f"Python {noun} {', '.join(missing)} missing from {sys.executable}: install with "
            f"`{os.path.basename(sys.executable)} -m pip install -r {REQUIREMENTS}` (venv, conda, "
            f"module python) or `apt-get install {debian}` (Debian's /usr/bin/python3)")


def require(script, *names):
    """Imports the modules and returns them in order; if any is missing, prints one line
    naming every missing one and exits 2 (bad environment, like bad input)."""
    found = [_import(n) for n in names]
    missing = [m for _, m in found if m]
    if missing:
        print(f"{script}: error: {missing_text(missing)}", file=sys.stderr)
        sys.exit(2)
    modules = [m for m, _ in found]
    return modules[0] if len(modules) == 1 else modules


def pyplot():
    """matplotlib.pyplot drawing to files (Agg), or (None, one line saying why not)."""
    matplotlib, missing = _import("matplotlib")
    if matplotlib is None:
        return None, missing_text([missing])
    matplotlib.use("Agg")
    plt, missing = _import("matplotlib.pyplot")
    return (plt, None) if plt is not None else (None, missing_text([missing]))
