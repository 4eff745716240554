#!/usr/bin/env bash
# Seventh session, calls 8 and 11: the binaries of BINS against each other, interleaved, two
# rounds, on time-blocked decks (call 8: stop agreements taken at block ends, the first, against
# blocks cut at the agreement's step, the second; call 11: the final build against the start of
# the session). From the repository root on the GPU host after `source .gpu-host/env.sh`;
# everything under $1.
# timing.txt: binary, case, k taken, us per step, sweeps per pass, x copy.
set -uo pipefail
out=${1:?out dir}
mkdir -p "$out"
read -r -a bins <<<"${BINS:-gridsim gridsim-cut}"
j=inputs/bench_jacobi2d.toml
h=inputs/bench_heat3d.toml
cases=(
    "j16384-float-k2|$j --set time.norm_every=1 --set time.steps=400 --set parallel.time_block=2"
    "j16384-float-k3|$j --set time.norm_every=1 --set time.steps=400 --set parallel.time_block=3"
    "j16384-float-auto|$j --set time.norm_every=1 --set time.steps=400"
    "j8192-float-k3|$j --set time.norm_every=1 --set grid.cells=[8192,8192] --set time.steps=1600 --set parallel.time_block=3"
    "j4096-float-k3|$j --set time.norm_every=1 --set grid.cells=[4096,4096] --set time.steps=6000 --set parallel.time_block=3"
    "j16384-double-k3|$j --set time.norm_every=1 --set time.steps=400 --set parallel.time_block=3 --set problem.precision=\"double\""
    "j16384-float-res100-auto|$j --set time.steps=1000"
    "j16384-double-res100-auto|$j --set time.steps=1000 --set problem.precision=\"double\""
    "h512-double-auto|$h"
    "h512-float-auto|$h --set problem.precision=\"float\""
    "h256-double-auto|$h --set grid.cells=[256,256,256] --set time.steps=2000"
)
for rep in 1 2; do
    for c in "${cases[@]}"; do
        name=${c%%|*}
        read -r -a args <<<"${c#*|}"
        for bin in "${bins[@]}"; do
            "$bin" run "${args[@]}" --quiet --report "$out/r.json" >"$out/run.log" 2>&1
            python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], sys.argv[3], r["time_block"], "%.2f" % (1e6*r["time_per_step_s"]), "%.2f" % r["sweeps_per_pass"], "%.3f" % r["bandwidth_ratio"])' \
                "$out/r.json" "$bin" "$name" >>"$out/timing.txt" 2>/dev/null || echo "$bin $name FAILED" >>"$out/timing.txt"
        done
    done
done
rm -f "$out/r.json"
python3 - "$out/timing.txt" "${bins[@]}" <<'PY'
import collections, sys
bins = sys.argv[2:]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 6:
        t[f[1]][f[0]].append(f"{f[3]} (k {f[2]}, {f[4]}/pass, {f[5]})")
print("| case | " + " | ".join(bins) + " |")
print("| --- |" + " --- |" * len(bins))
for case, d in t.items():
    print(f"| {case} | " + " | ".join("; ".join(d[b]) for b in bins) + " |")
PY
