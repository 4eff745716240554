#!/usr/bin/env bash
# scripts/pack_runtime.sh OUTDIR PROGRAM...
#
# Packs a relocatable runtime for running gridsim on a GPU host that has CUDA and a driver but
# no MPI, no parallel HDF5 and no package manager (a bare node, a container): Open MPI 4.1,
# parallel HDF5 1.10 with h5diff/h5dump, hwloc and numactl from this machine's Debian or Ubuntu
# packages, every shared library they and PROGRAM... need (glibc, the C++ runtime, the CUDA
# driver, NCCL and cuBLAS excepted: the host has those), the PROGRAMs themselves, and env.sh.
#   scripts/pack_runtime.sh .gpu-host build/gridsim build/tests/gpu_backend_test
# On the GPU host, in a copy of the tree that includes OUTDIR:
#   source OUTDIR/env.sh                # unpacks once (to $GRIDSIM_RUNTIME, default /tmp)
#   mpirun -np 2 gridsim run inputs/bench_heat3d.toml
# The CUDA runtime must be linked statically (CMake's default with nvcc). Needs apt-get and
# network access to the package archive here; about 25 MB for gridsim and one test program.
set -euo pipefail
out=${1:?usage: scripts/pack_runtime.sh OUTDIR PROGRAM...}
shift
[ $# -gt 0 ] || { echo "pack_runtime.sh: name at least one program to pack" >&2; exit 2; }
for p in "$@"; do [ -x "$p" ] || { echo "pack_runtime.sh: $p is not an executable" >&2; exit 2; }; done

packages="openmpi-bin libopenmpi3 openmpi-common libpmix2 libhdf5-openmpi-103-1 libhdf5-103-1
  hdf5-tools libhwloc15 libnuma1 numactl hwloc-nox"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
lib=$root/usr/lib/x86_64-linux-gnu

unpack_packages() {
    mkdir -p "$work/debs" "$root"
    (cd "$work/debs" && apt-get download $packages >/dev/null 2>&1) ||
        { echo "pack_runtime.sh: apt-get download failed (run apt-get update first)" >&2; exit 1; }
    for deb in "$work"/debs/*.deb; do dpkg -x "$deb" "$root"; done
    rm -rf "$root"/usr/share/{doc,man,lintian}
    # Debian makes these two names with update-alternatives, which dpkg -x does not run.
    ln -sf mpirun.openmpi "$root/usr/bin/mpirun"
    ln -sf mpiexec.openmpi "$root/usr/bin/mpiexec"
    # One host needs shared memory and TCP only: drop the network-fabric plugins and the
    # Fortran/Java/OpenSHMEM bindings, which pull in large stacks that would never load.
    (cd "$lib" && rm -f libmpi_mpifh* libmpi_usempi* libmpi_java* liboshmem* \
        libmca_common_{ofi,ucx,verbs}* \
        openmpi/lib/openmpi3/mca_*_{ucx,ofi,openib,uct,psm,psm2,usnic,verbs}.so \
        openmpi/lib/openmpi3/mca_{spml,sshmem,scoll,memheap,atomic}_*)
}

# Copies into the runtime every shared library an ELF file below it (or a packed program)
# needs and it does not hold yet; repeated until nothing new appears.
close_over_libraries() {
    local host_provided='^(libc|libm|libdl|libpthread|librt|libresolv|libutil|ld-linux-x86-64|libstdc\+\+|libgcc_s|linux-vdso|libcuda|libnccl|libcublas|libcublasLt)\.'
    local added=1
    while [ "$added" -gt 0 ]; do
        added=0
        while read -r so; do
            local name
            name=$(basename "$so")
            [[ $name =~ $host_provided ]] && continue
            [ -n "$(find "$root" -name "$name" -print -quit)" ] && continue
            cp -L "$so" "$lib/$name"
            added=$((added + 1))
        done < <(find "$root" "$out/bin" -type f \( -name '*.so*' -o -perm -u+x \) -print0 |
                 xargs -0 file | awk -F: '/ELF/ {print $1}' |
                 xargs -r ldd 2>/dev/null | awk '/=> \// {print $3}' | sort -u)
    done
}

write_env() {
    cat >"$out/env.sh" <<'ENV'
# Source on the GPU host: unpacks the runtime once, then puts it first on every search path.
gridsim_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
gridsim_rt=${GRIDSIM_RUNTIME:-/tmp/gridsim-runtime}
[ -d "$gridsim_rt/root" ] ||
    { mkdir -p "$gridsim_rt" && tar -xJf "$gridsim_here/runtime.tar.xz" -C "$gridsim_rt"; }
gridsim_lib=$gridsim_rt/root/usr/lib/x86_64-linux-gnu
# Open MPI and PMIx find their own components relative to these prefixes.
export OPAL_PREFIX=$gridsim_rt/root/usr PMIX_PREFIX=$gridsim_lib/pmix2
export PMIX_MCA_mca_base_component_path=$gridsim_lib/pmix2/lib/pmix
export PMIX_MCA_pcompress_base_silence_warning=1
export PATH=$gridsim_here/bin:$gridsim_rt/root/usr/bin:$PATH
export LD_LIBRARY_PATH=$gridsim_lib:$gridsim_lib/openmpi/lib:$gridsim_lib/hdf5/openmpi:$gridsim_lib/hdf5/serial${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# cuBLAS (and NCCL) come from the host's CUDA toolkit: its library directories, last.
for gridsim_cuda in /usr/local/cuda/lib64 /usr/local/cuda/lib; do
    [ -d "$gridsim_cuda" ] && LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$gridsim_cuda
done
# Containers run as root; one host needs shared memory and TCP only.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_pml=ob1 OMPI_MCA_btl_base_warn_component_unused=0
ENV
}

unpack_packages
mkdir -p "$out/bin"
cp -L "$@" "$out/bin/"
close_over_libraries
tar -C "$work" -cJf "$out/runtime.tar.xz" root
write_env
echo "packed: $(du -sh "$out" | cut -f1) in $out (runtime.tar.xz, env.sh, bin/: $(ls "$out/bin" | tr '\n' ' '))"
