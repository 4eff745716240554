"""GRIDSIM_NCCL and cmake/FindNCCL.cmake against made-up NCCL installs: each place a site puts
NCCL (NCCL_ROOT, NCCL_HOME, CPATH/LIBRARY_PATH, pkg-config, -D hints) is found, the configure
output names the version and the place, NCCL_ROOT wins over the others, ON without NCCL stops
configure with one line naming what to set, and OFF looks for nothing."""
import os
import pathlib
import shutil
import subprocess
import tempfile
import unittest

HERE = pathlib.Path(__file__).resolve().parent
PROJECT = HERE / "find_nccl"
CMAKE = os.environ.get("CMAKE", "cmake")


def fake_nccl(root, minor, libdir="lib"):
    """An install prefix with an nccl.h of version 2.<minor>.7 and a libnccl.so."""
    (root / "include").mkdir(parents=True)
    (root / libdir).mkdir(parents=True)
    (root / "include" / "nccl.h").write_text(
        f"#define NCCL_MAJOR 2\n#define NCCL_MINOR {minor}\n#define NCCL_PATCH 7\n")
    (root / libdir / "libnccl.so").write_bytes(b"")
    return root


class FindNccl(unittest.TestCase):
    def setUp(self):
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="gridsim_find_nccl_"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.runs = 0

    def configure(self, *args, env=None, cuda="ON"):
        self.runs += 1
        clean = {k: v for k, v in os.environ.items()
                 if k not in ("NCCL_ROOT", "NCCL_HOME", "CPATH", "LIBRARY_PATH", "PKG_CONFIG_PATH",
                              "CMAKE_PREFIX_PATH")}
        clean.update(env or {})
        build = self.tmp / f"build{self.runs}"
        res = subprocess.run([CMAKE, "-S", str(PROJECT), "-B", str(build), f"-DFAKE_CUDA={cuda}",
                              *args], capture_output=True, text=True, env=clean, timeout=120)
        return res.returncode, res.stdout + res.stderr

    def assert_found(self, out, minor, via):
        self.assertIn(f"NCCL transport ON: NCCL 2.{minor}.7, ", out)
        self.assertIn(f"(found through {via})", out)

    def test_nccl_root_and_home(self):
        root = fake_nccl(self.tmp / "root", 41)
        home = fake_nccl(self.tmp / "home", 42, libdir="lib64")
        rc, out = self.configure(env={"NCCL_ROOT": str(root)})
        self.assertEqual(rc, 0, out)
        self.assert_found(out, 41, "NCCL_ROOT")
        self.assertIn(str(root / "lib" / "libnccl.so"), out)
        rc, out = self.configure(env={"NCCL_HOME": str(home)})
        self.assertEqual(rc, 0, out)
        self.assert_found(out, 42, "NCCL_HOME")
        rc, out = self.configure(f"-DNCCL_ROOT={root}", env={"NCCL_HOME": str(home)})
        self.assert_found(out, 41, "NCCL_ROOT")  # the CMake variable, first in the order

    def test_module_paths_pkg_config_and_hints(self):
        mod = fake_nccl(self.tmp / "module", 43)
        rc, out = self.configure(env={"CPATH": f"/nonexistent:{mod}/include",
                                      "LIBRARY_PATH": f"{mod}/lib"})
        self.assertEqual(rc, 0, out)
        self.assert_found(out, 43, "CPATH/LIBRARY_PATH")
        pc = fake_nccl(self.tmp / "pc", 44)
        (pc / "lib" / "pkgconfig").mkdir()
        (pc / "lib" / "pkgconfig" / "nccl.pc").write_text(
            f"prefix={pc}\nincludedir=${{prefix}}/include\nlibdir=${{prefix}}/lib\n"
            "Name: nccl\nDescription: NCCL\nVersion: 2.44.7\nCflags: -I${includedir}\n"
            "Libs: -L${libdir} -lnccl\n")
        if shutil.which("pkg-config"):
            rc, out = self.configure(env={"PKG_CONFIG_PATH": str(pc / "lib" / "pkgconfig")})
            self.assertEqual(rc, 0, out)
            self.assert_found(out, 44, "pkg-config")
        hint = fake_nccl(self.tmp / "hint", 45)
        rc, out = self.configure(f"-DNCCL_INCLUDE_DIR={hint}/include",
                                 f"-DNCCL_LIBRARY={hint}/lib/libnccl.so",
                                 env={"NCCL_ROOT": str(mod)})
        self.assert_found(out, 45, "NCCL_INCLUDE_DIR/NCCL_LIBRARY")

    def test_on_without_nccl_stops_with_one_line(self):
        rc, out = self.configure("-DGRIDSIM_NCCL=ON", env={"NCCL_ROOT": str(self.tmp / "none")})
        self.assertNotEqual(rc, 0, out)
        lines = [ln for ln in out.splitlines() if "GRIDSIM_NCCL=ON" in ln]
        self.assertEqual(len(lines), 1, out)
        self.assertIn("no NCCL was found: set NCCL_ROOT", lines[0])
        rc, out = self.configure("-DGRIDSIM_NCCL=ON", cuda="OFF",
                                 env={"NCCL_ROOT": str(fake_nccl(self.tmp / "r", 46))})
        self.assertNotEqual(rc, 0, out)
        self.assertIn("GRIDSIM_NCCL=ON needs the CUDA backend", out)
        rc, out = self.configure("-DGRIDSIM_NCCL=maybe")
        self.assertNotEqual(rc, 0, out)
        self.assertIn("GRIDSIM_NCCL=maybe: use AUTO, ON or OFF", out)

    def test_auto_without_nccl_and_off(self):
        root = fake_nccl(self.tmp / "root", 47)
        rc, out = self.configure(env={"NCCL_ROOT": str(self.tmp / "none")})
        self.assertEqual(rc, 0, out)
        self.assertIn("NCCL transport OFF (no NCCL found; set NCCL_ROOT to use one)", out)
        rc, out = self.configure("-DGRIDSIM_NCCL=OFF", env={"NCCL_ROOT": str(root)})
        self.assertEqual(rc, 0, out)
        self.assertIn("NCCL transport OFF (GRIDSIM_NCCL=OFF)", out)
        self.assertNotIn("2.47.7", out)


if __name__ == "__main__":
    unittest.main()
