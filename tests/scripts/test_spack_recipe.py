"""The Spack recipe (packaging/spack/packages/gridsim/package.py) against the CMake files it
builds: every find_package and pkg_check_modules call of the build has its dependency in the
recipe, and the recipe depends on nothing the build does not look for (cmake aside); the CMake
options the recipe sets exist. A dependency added to the build without the recipe, or the other
way round, fails here."""
import os
import re
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RECIPE = os.path.join(ROOT, "packaging", "spack", "packages", "gridsim", "package.py")

# CMake's name for a dependency -> the Spack package that provides it (None: optional at
# configure time, not a dependency: Git only stamps the version).
CMAKE_TO_SPACK = {"MPI": "mpi", "HDF5": "hdf5", "PkgConfig": "pkgconfig", "hwloc": "hwloc",
                  "CLI11": "cli11", "tomlplusplus": "tomlplusplus", "fmt": "fmt",
                  "nlohmann_json": "nlohmann-json", "GTest": "googletest", "CUDAToolkit": "cuda",
                  "NCCL": "nccl", "nccl": "nccl", "Git": None}
PKG_OPTIONS = {"REQUIRED", "QUIET", "IMPORTED_TARGET", "GLOBAL", "NO_CMAKE_PATH",
               "NO_CMAKE_ENVIRONMENT_PATH"}


def cmake_files():
    for top in ("CMakeLists.txt", "cmake", "src", "kernels", "tests"):
        path = os.path.join(ROOT, top)
        if os.path.isfile(path):
            yield path
            continue
        for dirpath, _, names in os.walk(path):
            if os.path.relpath(dirpath, ROOT).startswith(os.path.join("tests", "cmake")):
                continue  # the configure tests' own small projects
            for name in names:
                if name == "CMakeLists.txt" or name.endswith(".cmake"):
                    yield os.path.join(dirpath, name)


def build_dependencies():
    """{CMake name: file that looks for it}."""
    found = {}
    for path in cmake_files():
        with open(path) as f:
            text = f.read()
        for name in re.findall(r"\bfind_package\(\s*(\w+)", text):
            found.setdefault(name, path)
        for args in re.findall(r"\bpkg_check_modules\(([^)]*)\)", text):
            for word in args.split()[1:]:
                module = re.split(r"[<>=]", word)[0]
                if module and module not in PKG_OPTIONS:
                    found.setdefault(module, path)
    return found


def recipe_dependencies():
    with open(RECIPE) as f:
        return set(re.findall(r'depends_on\(\s*"([a-z0-9-]+)', f.read()))


class SpackRecipe(unittest.TestCase):
    def test_the_recipe_depends_on_what_the_build_looks_for(self):
        found = build_dependencies()
        unknown = sorted(set(found) - set(CMAKE_TO_SPACK))
        self.assertEqual(unknown, [], "a CMake dependency this test does not know: add it to the "
                                      "recipe and to CMAKE_TO_SPACK")
        wanted = {CMAKE_TO_SPACK[n] for n in found} - {None}
        recipe = recipe_dependencies()
        self.assertEqual(sorted(wanted - recipe), [], "looked for by the build, missing from the recipe")
        self.assertEqual(sorted(recipe - wanted - {"cmake"}), [],
                         "in the recipe, not looked for by the build")

    def test_the_options_the_recipe_sets_exist(self):
        with open(RECIPE) as f:
            recipe = f.read()
        options = set(re.findall(r'define(?:_from_variant)?\(\s*"([A-Z_]+)"', recipe))
        self.assertIn("GRIDSIM_CUDA", options)
        cmake_text = "".join(open(p).read() for p in cmake_files())
        for option in options:
            if option.startswith("GRIDSIM_"):
                self.assertRegex(cmake_text, rf"(set|option)\({option}\b", option)


if __name__ == "__main__":
    unittest.main()
