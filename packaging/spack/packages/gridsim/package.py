# gridsim's Spack recipe. Installs from a checkout of the source tree: `spack develop --path
# CHECKOUT gridsim@main` in an environment, then `spack install` (docs/running.md, "Installing
# with Spack"). tests/scripts/test_spack_recipe.py holds its dependencies against the
# find_package calls of the CMake files.
from spack.package import *


class Gridsim(CMakePackage, CudaPackage):
    """MPI-parallel, multi-GPU structured-grid stencil mini-app: explicit and implicit heat and
    Jacobi on 2D and 3D grids, halo exchange overlapped with computation, parallel HDF5 output
    validated against reference files, and strong and weak scaling studies."""

    maintainers("gridsim")
    license("UNKNOWN")

    version("main")

    variant("nccl", default=True, when="+cuda", description="NCCL halo transport (needs +cuda)")

    depends_on("cmake@3.25:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("mpi")
    depends_on("hdf5+mpi")
    depends_on("hwloc@2:")
    depends_on("cli11")
    depends_on("tomlplusplus")
    depends_on("fmt")
    depends_on("nlohmann-json")
    depends_on("googletest", type="test")
    depends_on("nccl", when="+nccl")
    depends_on("cuda@12:", when="+cuda")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define_from_variant("GRIDSIM_CUDA", "cuda"),
            self.define("GRIDSIM_NCCL", "ON" if spec.satisfies("+nccl") else "OFF"),
            self.define("GRIDSIM_BUILD_TESTS", self.run_tests),
        ]
        if spec.satisfies("+cuda"):
            archs = spec.variants["cuda_arch"].value
            if "none" not in archs:
                args.append(self.define("CMAKE_CUDA_ARCHITECTURES", ";".join(archs)))
            if spec.satisfies("+nccl"):
                args.append(self.define("NCCL_ROOT", spec["nccl"].prefix))
        return args

    def check(self):
        # The unit and MPI suites: they need neither a GPU nor the site's batch system.
        with working_dir(self.builder.build_directory):
            ctest = Executable(self.spec["cmake"].prefix.bin.ctest)
            ctest("-L", "unit|mpi", "--output-on-failure", "-j", str(make_jobs))
