#!/bin/bash
# Issue 32's 16-core row on a lent 16-core machine: how long each paper's default takes with
# `--workers 16` (the default otherwise: --jobs 1), papers one after another from an empty
# cache, each guarded by what is left of the budget; a paper cut off by it says so in the log.
# Run from the project root:  bash benchmarks/machines/device_run8.sh [BUDGET_S] [PAPERS]
# Needs .whl/*.whl carried along (`carry: [".whl"]`); NO_WHEELS=1 for a local test.
# Output: $OUT/run8.log and $OUT/run8.tar.gz (each paper's summary.json, claims.csv,
# comparison.csv, report.md and log).
set -x
BUDGET=${1:-560}
PAPERS=${2:-"paper4 paper0 paper1"}
T0=$(date +%s)
left() { echo $(( T0 + BUDGET - $(date +%s) - 15 )); }
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
OUT=${OUT:-/tmp/out}; W=${W:-results/local/device8}; mkdir -p "$OUT" "$W"
exec > >(tee -a "$OUT/run8.log") 2>&1
if [ -z "$NO_WHEELS" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD
fi
PY=${PY:-python3}
date -u; uptime; nproc; lscpu | grep -E "Model name|^Model:|Stepping|^CPU\(s\)|Thread|Hypervisor" | cut -c1-200; $PY -V
git rev-parse HEAD 2>/dev/null; git status --short --untracked-files=no 2>/dev/null | head
$PY -c "
import numpy, scipy, numba, pydantic, greenlet; from engine import kernels
print('numpy', numpy.__version__, 'scipy', scipy.__version__, 'numba', numba.__version__, 'pydantic', pydantic.__version__, 'kernels', kernels.IMPLEMENTATION)" || exit 1
for p in $PAPERS; do
  L=$(left); [ "$L" -lt 30 ] && { echo "=== $p skipped: ${L}s left"; continue; }
  echo "=== $p start $(date -u +%FT%TZ) loadavg: $(cat /proc/loadavg) limit ${L}s"
  s=$(date +%s)
  timeout -k 5 "$L" $PY -m reproduce "$p" --workers 16 --no-progress --out "$W" > "$W/$p.log" 2>&1
  rc=$?
  echo "=== $p end rc=$rc $(( $(date +%s) - s ))s loadavg: $(cat /proc/loadavg)"
  tail -3 "$W/$p.log"
done
(cd "$W" && tar czf "$OUT/run8.tar.gz" --exclude=.cache --exclude='*.png' .)
echo "=== done in $(( $(date +%s) - T0 ))s"
