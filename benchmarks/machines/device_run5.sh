#!/bin/bash
# Issue 30 on a lent 16-core machine: paper4's default setup (5 runs per configuration) with 16
# local workers, so that the claims on Tables 2-3 at P = 16 rest on 5 measured repetitions of
# the code as it stands (the earlier host runs had 3). Keeps the task cache, whose sweep
# entries hold each run's serial and node-parallel time per pass (tools/host_runs.py reads it).
# Run from the project root:  bash benchmarks/machines/device_run5.sh [BUDGET_S]
# Needs .whl/*.whl carried along (`carry: [".whl"]`).
set -x
BUDGET=${1:-500}
T0=$(date +%s)
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
OUT=${OUT:-/tmp/out}; W=/tmp/res; mkdir -p "$OUT" "$W"
exec > >(tee -a "$OUT/run5.log") 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
date -u; uptime; lscpu | grep -E "Model name|^Model:|Stepping|^CPU\(s\)|Thread|Hypervisor"; python3 -V
git rev-parse HEAD 2>/dev/null; git status --short --untracked-files=no 2>/dev/null | head
python3 -c "
import numpy, scipy, pandas, numba; from engine import kernels
print('numpy', numpy.__version__, 'scipy', scipy.__version__, 'pandas', pandas.__version__, 'numba', numba.__version__, 'kernels', kernels.IMPLEMENTATION)" || exit 1
echo "=== paper4 start $(date -u +%FT%TZ) loadavg: $(cat /proc/loadavg)"
s=$(date +%s)
timeout -k 10 $(( T0 + BUDGET - $(date +%s) - 15 )) python3 -m reproduce paper4 --workers 16 --no-progress --out "$W"
echo "=== paper4 end rc=$? $(( $(date +%s) - s ))s loadavg: $(cat /proc/loadavg)"
tar czf "$OUT/paper4_default_local16_runs5.tgz" --exclude='*.png' -C "$W" paper4
echo "=== done in $(( $(date +%s) - T0 ))s"
