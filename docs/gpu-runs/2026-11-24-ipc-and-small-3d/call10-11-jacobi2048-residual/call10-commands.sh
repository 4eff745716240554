source .gpu-host/env.sh
one() { gridsim run inputs/bench_jacobi2d.toml --quiet --set grid.cells=[2048,2048] --set time.steps=4000 "$@" --report /tmp/r.json >/dev/null 2>&1 || echo FAILED; python3 -c "import json;d=json.load(open('/tmp/r.json'));p=d['phases'];print(f\"{d['time_per_step_s']*1e6:7.2f} us  graphs {d['graphs']} k {d['time_block']}\", {k:round(v['mean']/d['steps']*1e6,2) for k,v in p.items() if isinstance(v,dict) and 'mean' in v})"; }
for rep in 1 2; do
echo "norm 1:            $(one --set time.norm_every=1)"
echo "norm 100, k 1:     $(one --set time.norm_every=100 --set parallel.time_block=1)"
echo "norm 1, graphs off:$(one --set time.norm_every=1 --set parallel.graphs=off)"
echo "norm 1, phase_every 1, graphs off:$(one --set time.norm_every=1 --set parallel.graphs=off --set parallel.phase_every=1)"
done
ncu --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel --launch-skip 200 --launch-count 300 gridsim run inputs/bench_jacobi2d.toml --quiet --set grid.cells=[2048,2048] --set time.norm_every=1 --set time.steps=400 2>&1 | grep -E "^  [a-z_]|gpu__time_duration|Kernel|void|stencil|fold|reduce|pack|wrap" | head -40
