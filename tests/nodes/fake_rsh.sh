#!/bin/sh
# Open MPI's remote-shell agent for fake nodes (tests/nodes/fake_nodes.py): mpirun calls it as
# `fake_rsh.sh HOST COMMAND...` to start its daemon on HOST. The daemon runs here, in a UTS
# namespace of its own whose host name is HOST, so that every rank it starts is on node HOST to
# MPI (MPI_COMM_TYPE_SHARED, MPI_Get_processor_name) and talks to the others over TCP on the
# loopback. FAKE_NODE_FULL="HOST:DIR" mounts a 64 KiB tmpfs over DIR for HOST's ranks alone (in a
# mount namespace of their own): a node whose output directory is full.
host=$1
shift
case "${FAKE_NODE_FULL:-}" in
    "$host":*)
        dir=${FAKE_NODE_FULL#*:}
        exec unshare --uts --mount -- sh -c 'hostname "$1" && mount -t tmpfs -o size=64k tmpfs "$2" && exec sh -c "$3"' \
            fake_rsh "$host" "$dir" "$*" ;;
    *)
        exec unshare --uts -- sh -c 'hostname "$1" && exec sh -c "$2"' fake_rsh "$host" "$*" ;;
esac
