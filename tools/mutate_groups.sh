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
TESTS[nets]="tests/unit/test_gradients.py tests/unit/test_mlp_worked.py tests/unit/test_init_ranges.py tests/unit/test_kernels.py tests/unit/test_elman.py tests/unit/test_lstm_ctc.py tests/unit/test_seqkernels.py tests/harness/test_mutation_guards.py"
MODS[schedule]="engine/schedule.py"
TESTS[schedule]="tests/unit/test_buckets.py tests/unit/test_schedule.py tests/unit/test_schedule_cg.py tests/unit/test_schedule_checks.py tests/equivalence/test_bucketed.py tests/equivalence/test_partitions.py tests/harness/test_mutation_guards.py"
MODS[comm]="engine/comm/base.py engine/comm/local.py engine/comm/emulated.py engine/comm/mpi.py engine/comm/cma.py"
TESTS[comm]="tests/unit/test_comm.py tests/unit/test_comm_choices.py tests/faults/test_sigterm_steps.py tests/faults/test_faults.py tests/faults/test_local_cleanup.py tests/equivalence/test_driver.py tests/harness/test_mutation_guards.py"
MODS[optim]="engine/optim.py"
TESTS[optim]="tests/unit/test_optim.py tests/unit/test_optim_path.py tests/unit/test_cg_path.py tests/unit/test_schedule_cg.py tests/harness/test_mutation_guards.py"
MODS[store]="reproduce/store.py"
TESTS[store]="tests/faults/test_store_failures.py tests/harness/test_store_units.py tests/harness/test_calibration.py::test_the_machine_checks_write_outside_the_committed_results_by_default tests/faults/test_store_faults.py tests/harness/test_harness.py tests/harness/test_runner_jobs.py tests/harness/test_mutation_guards.py"
MODS[report]="reproduce/report.py"
TESTS[report]="tests/harness/test_report_fmt.py tests/harness/test_report_units.py tests/harness/test_harness.py::test_code_version_dirty_means_code_not_results tests/harness/test_report_inputs.py tests/harness/test_report_validation.py tests/harness/test_verdicts.py tests/harness/test_spread.py tests/harness/test_mutation_guards.py"
PY=${PY:-.venv/bin/python}
mkdir -p "$OUT"
for g in ${@:-nets schedule comm optim store report}; do
  echo "=== $g seed $SEED start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
  $PY tools/mutate.py ${MODS[$g]} --tests ${TESTS[$g]} --sample 40 --seed "$SEED" --jobs "${JOBS:-2}" \
      --json "$OUT/$g.json" > "$OUT/$g.log" 2>&1
  echo "=== $g rc=$? end $(date -u +%T) $(grep '^score' "$OUT/$g.log")"
done
