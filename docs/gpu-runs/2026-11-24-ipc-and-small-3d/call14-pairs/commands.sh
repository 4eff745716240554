source .gpu-host/env.sh
cd $OUT; timeout 400 gpu_backend_test --gtest_color=no --gtest_filter='*GraphReplay*:GpuGraphs*:GpuResidual*:*Overlap*:*TimeBlocks*:GpuStaging*:*AgreesWithTheCpu*' > tests.log 2>&1; echo "tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" tests.log | head; cd - >/dev/null
one() { local b=$1; shift; $b run "$@" --quiet --report /tmp/r.json >/dev/null 2>&1 || echo FAILED; python3 -c "import json;d=json.load(open('/tmp/r.json'));print(f\"{d['time_per_step_s']*1e6:7.2f} us  x copy {d['bandwidth_ratio']:.3f} k {d['time_block']}\")"; }
for rep in 1 2; do
for s in 64 96 128 160; do steps=$(( 10000000000 / (s*s*s) )); steps=$(( steps < 200 ? 200 : steps > 40000 ? 40000 : steps ))
  for b in gridsim-nopairs gridsim; do echo "heat3d $s $b: $(one $b inputs/bench_heat3d.toml --set grid.cells=[$s,$s,$s] --set time.steps=$steps)"; done; done
for s in 1024 2048 4096; do steps=$(( 10000000000 / (s*s) )); steps=$(( steps < 200 ? 200 : steps > 40000 ? 40000 : steps ))
  for b in gridsim-nopairs gridsim; do echo "jacobi $s norm 100 k 1 $b: $(one $b inputs/bench_jacobi2d.toml --set grid.cells=[$s,$s] --set time.steps=$steps --set parallel.time_block=1)"; done; done
done | tee $OUT/pairs.txt
