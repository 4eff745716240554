source .gpu-host/env.sh
cd $OUT; timeout 300 gpu_backend_test --gtest_color=no --gtest_filter='*GraphReplay*:GpuGraphs*:GpuResidual*:*Overlap*' > tests.log 2>&1; echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" tests.log | head; cd - >/dev/null
one() { local b=$1; shift; $b run inputs/bench_jacobi2d.toml --quiet "$@" --report /tmp/r.json >/dev/null 2>&1 || echo FAILED; python3 -c "import json;d=json.load(open('/tmp/r.json'));print(f\"{d['time_per_step_s']*1e6:7.2f} us  x copy {d['bandwidth_ratio']:.3f}\")"; }
for rep in 1 2 3; do for s in 1024 2048 4096 8192; do steps=$(( 10000000000 / (s*s) )); steps=$(( steps < 200 ? 200 : steps > 40000 ? 40000 : steps ))
  for b in gridsim-before gridsim; do echo "jacobi $s norm 1 $b: $(one $b --set grid.cells=[$s,$s] --set time.steps=$steps --set time.norm_every=1)"; done; done; done | tee $OUT/fold_read.txt
