#!/bin/bash
# Issue 35's six module groups under tools/mutate.py, each with the tests that exercise it:
#   bash tools/mutate_groups.sh SEED OUTDIR [GROUP ...]      (GROUP: nets schedule comm optim store report)
# 40 mutants a group sampled by SEED; JOBS (default 2) mutants at a time; writes OUTDIR/GROUP.json
# (the tool's --json record) and OUTDIR/GROUP.log. Run from the project root. On the 2-core VM a
# group takes 3-6 min, comm 20-40 min (its tests take 100-110 s unmutated).
SEED=$1; OUT=$2; shift 2
cd "$(dirname "$0")/.."
declare -A MODS TESTS
MODS[nets]="engine/nets/base.py engine/nets/mlp.py engine/nets/elman.py engine/nets/lstm.py engine/kernels.py engine/seqkernels.py"
TESTS[nets]="tests/test_gradients.py tests/test_mlp_worked.py tests/test_init_ranges.py tests/test_kernels.py tests/test_elman.py tests/test_lstm_ctc.py tests/test_seqkernels.py tests/test_mutation_guards.py"
MODS[schedule]="engine/schedule.py"
TESTS[schedule]="tests/test_buckets.py tests/test_schedule.py tests/test_schedule_cg.py tests/test_schedule_checks.py tests/test_bucketed.py tests/test_partitions.py tests/test_mutation_guards.py"
MODS[comm]="engine/comm/base.py engine/comm/local.py engine/comm/emulated.py engine/comm/mpi.py engine/comm/cma.py"
TESTS[comm]="tests/test_comm.py tests/test_comm_choices.py tests/test_sigterm_steps.py tests/test_faults.py tests/test_local_cleanup.py tests/test_driver.py tests/test_mutation_guards.py"
MODS[optim]="engine/optim.py"
TESTS[optim]="tests/test_optim.py tests/test_optim_path.py tests/test_cg_path.py tests/test_schedule_cg.py tests/test_mutation_guards.py"
MODS[store]="reproduce/store.py"
TESTS[store]="tests/test_store_failures.py tests/test_store_units.py tests/test_calibration.py::test_the_machine_checks_write_outside_the_committed_results_by_default tests/test_store_faults.py tests/test_harness.py tests/test_runner_jobs.py tests/test_mutation_guards.py"
MODS[report]="reproduce/report.py"
TESTS[report]="tests/test_report_fmt.py tests/test_report_units.py tests/test_harness.py::test_code_version_dirty_means_code_not_results tests/test_report_inputs.py tests/test_report_validation.py tests/test_verdicts.py tests/test_spread.py tests/test_mutation_guards.py"
PY=${PY:-.venv/bin/python}
mkdir -p "$OUT"
for g in ${@:-nets schedule comm optim store report}; do
  echo "=== $g seed $SEED start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
  $PY tools/mutate.py ${MODS[$g]} --tests ${TESTS[$g]} --sample 40 --seed "$SEED" --jobs "${JOBS:-2}" \
      --json "$OUT/$g.json" > "$OUT/$g.log" 2>&1
  echo "=== $g rc=$? end $(date -u +%T) $(grep '^score' "$OUT/$g.log")"
done
