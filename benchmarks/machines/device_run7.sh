#!/bin/bash
# Issue 32, item 3 on a lent 16-core machine: do emulated timings hold when emulated tasks fill
# the cores that measured tasks leave free (--jobs)? Three steps, each guarded by the budget:
#   1. calibrate a profile of this host (collectives, contention, stragglers at P = 2..16);
#   2. `validate` under it at P = 1, 2, 4, 8, 16 (measured on local processes, emulated
#      interleaved), then every emulated run again 15 at a time (reproduce.validate, jobs=15);
#   3. tools/jobs_effect.py on paper3's 8-node, local-epoch-32 emulated tasks (10 seeds):
#      one at a time against 10 at a time, alternating, 3 rounds.
# Run from the project root:  bash benchmarks/machines/device_run7.sh [BUDGET_S]
# Needs .whl/*.whl carried along (`carry: [".whl"]`); NO_WHEELS=1 for a local test.
set -x
BUDGET=${1:-540}
T0=$(date +%s)
left() { echo $(( T0 + BUDGET - $(date +%s) - 10 )); }
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
OUT=${OUT:-/tmp/out}; W=${W:-results/local/device7}; mkdir -p "$OUT" "$W"
exec > >(tee -a "$OUT/run7.log") 2>&1
if [ -z "$NO_WHEELS" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD
fi
PY=${PY:-python3}
P_MAX=${P_MAX:-16}; JOBS=${JOBS:-15}; PS=${PS:-1,2,4,8,12,16}
date -u; uptime; lscpu | grep -E "Model name|^Model:|Stepping|^CPU\(s\)|Thread|Hypervisor" | cut -c1-200; $PY -V
git rev-parse HEAD 2>/dev/null; git status --short --untracked-files=no 2>/dev/null | head
$PY -c "
import numpy, scipy, numba, pydantic, greenlet; from engine import kernels
print('numpy', numpy.__version__, 'scipy', scipy.__version__, 'numba', numba.__version__, 'pydantic', pydantic.__version__, 'kernels', kernels.IMPLEMENTATION)" || exit 1

echo "=== validate start $(date -u +%FT%TZ) loadavg: $(cat /proc/loadavg)"
s=$(date +%s)
timeout -k 5 $(left) $PY - "$OUT" $P_MAX $JOBS $PS <<'PYEOF'
import sys, time
from pathlib import Path
from reproduce.profiles import resolve
from reproduce import validate as V
out, pmax, jobs = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
import os; prof = resolve(os.environ.get("PROFILE", "xeon207x16"))
Ps = sorted({int(p) for p in sys.argv[4].split(",") if int(p) <= pmax})
load0, busy, t0 = V._load(), V.busy_cores(), time.perf_counter()
rows = V.validate(workers=pmax, Ps=Ps, profile=prof, repeats=3, busy=busy, jobs=jobs,
                  progress=lambda s: print(s, flush=True))
text = (V._header(prof, pmax, False, 3, load0, busy, jobs).replace(f"P = 1..{pmax}", f"P = {', '.join(map(str, Ps))}")
        + V.markdown(rows) + f"\n\nRan in {time.perf_counter() - t0:.0f} s; 1-min load at the end: {V._load():.2f}.\n")
V.write_csv(rows, out / "validate.csv")
(out / "validate.md").write_text(text)
print(text)
PYEOF
echo "=== validate end rc=$? $(( $(date +%s) - s ))s loadavg: $(cat /proc/loadavg)"

echo "=== calibrate start $(date -u +%FT%TZ) loadavg: $(cat /proc/loadavg)"
s=$(date +%s)
timeout -k 5 $(left) $PY -m reproduce calibrate --workers $P_MAX --name device16 --out "$OUT/profile_device16.json" --no-progress
echo "=== calibrate end rc=$? $(( $(date +%s) - s ))s loadavg: $(cat /proc/loadavg)"

echo "=== done in $(( $(date +%s) - T0 ))s"
