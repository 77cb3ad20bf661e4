"""paper4's runs on many-core hosts, as data: ``SOURCES``, ``MEASURED`` and ``extract`` per
reproduce/manycore_data.py, which gathers every paper's."""
from __future__ import annotations

import re

from reproduce.manycore_data import condition, trio

SOURCES = {
    "xeon16": {
        "folder": "../shared/machines/xeon16/paper4_default_local16",
        "files": ("comparison.csv", "summary.json"),
        "command": "python -m reproduce paper4 --workers 16",
        "date": "2026-11-23T03:15:34Z", "commit": "ca20bd6",
        "what": "node-parallel passes on the local backend, P = 2..16 on real processes, seeds "
                "1..3; speedup = median over runs of serial / node-parallel time per pass"},
    "xeon207x16": {
        "folder": "results/machines/xeon207x16/paper4_default_local16",
        "files": ("comparison.csv", "summary.json"),
        "command": "python3 -m reproduce paper4 --workers 16 --no-progress",
        "date": "2026-11-23T05:19:21Z", "commit": "119c890",
        "commit_note": "summary.json records d8a4d85, dirty; the README there: the tracked files "
                       "were 119c890's",
        "what": "as xeon16's paper4 run"},
}

# speedup (median, min, max) over runs, time_ms the median time per pass and comm_share the
# median share, as the row's note gives them (3 significant digits, whole percent).
MEASURED = {
    "xeon16": {
        "rows": [
            {"P": 2, "passes": "forward", "width": 512,
             "speedup": (1.2282, 1.20957, 1.28326), "time_ms": 0.45, "comm_share": 0.25},
            {"P": 4, "passes": "forward", "width": 512,
             "speedup": (1.56671, 0.23217, 1.60798), "time_ms": 0.392, "comm_share": 0.42},
            {"P": 8, "passes": "forward", "width": 512,
             "speedup": (1.46288, 1.3655, 1.51538), "time_ms": 0.383, "comm_share": 0.66},
            {"P": 16, "passes": "forward", "width": 512,
             "speedup": (0.27957, 0.205645, 0.846778), "time_ms": 1.87, "comm_share": 0.56},
            {"P": 2, "passes": "forward", "width": 2048,
             "speedup": (1.50781, 1.45517, 1.95704), "time_ms": 6.4, "comm_share": 0.11},
            {"P": 4, "passes": "forward", "width": 2048,
             "speedup": (3.07362, 2.90197, 3.48021), "time_ms": 3.63, "comm_share": 0.13},
            {"P": 8, "passes": "forward", "width": 2048,
             "speedup": (3.79909, 3.78537, 4.22138), "time_ms": 3.17, "comm_share": 0.42},
            {"P": 16, "passes": "forward", "width": 2048,
             "speedup": (6.5746, 4.57317, 7.6875), "time_ms": 2.08, "comm_share": 0.47},
            {"P": 2, "passes": "forward_backward", "width": 512,
             "speedup": (1.16343, 1.08465, 1.29236), "time_ms": 0.894, "comm_share": 0.26},
            {"P": 4, "passes": "forward_backward", "width": 512,
             "speedup": (1.32906, 0.871105, 1.50189), "time_ms": 0.761, "comm_share": 0.45},
            {"P": 8, "passes": "forward_backward", "width": 512,
             "speedup": (1.05826, 0.821751, 1.12858), "time_ms": 1.0, "comm_share": 0.61},
            {"P": 16, "passes": "forward_backward", "width": 512,
             "speedup": (0.696111, 0.550078, 0.837512), "time_ms": 1.67, "comm_share": 0.75},
            {"P": 2, "passes": "forward_backward", "width": 2048,
             "speedup": (1.70299, 1.61656, 1.77574), "time_ms": 14.6, "comm_share": 0.05},
            {"P": 4, "passes": "forward_backward", "width": 2048,
             "speedup": (2.97119, 2.69267, 3.12047), "time_ms": 8.46, "comm_share": 0.12},
            {"P": 8, "passes": "forward_backward", "width": 2048,
             "speedup": (4.32335, 1.52699, 4.83951), "time_ms": 5.89, "comm_share": 0.24},
            {"P": 16, "passes": "forward_backward", "width": 2048,
             "speedup": (4.39882, 2.84059, 4.82413), "time_ms": 5.45, "comm_share": 0.34},
        ]},
    "xeon207x16": {
        "rows": [
            {"P": 2, "passes": "forward", "width": 512,
             "speedup": (1.24031, 1.02522, 1.24337), "time_ms": 0.409, "comm_share": 0.12},
            {"P": 4, "passes": "forward", "width": 512,
             "speedup": (1.53611, 1.45156, 1.57117), "time_ms": 0.332, "comm_share": 0.2},
            {"P": 8, "passes": "forward", "width": 512,
             "speedup": (1.34814, 1.3439, 1.47033), "time_ms": 0.373, "comm_share": 0.32},
            {"P": 16, "passes": "forward", "width": 512,
             "speedup": (0.356593, 0.309863, 0.777576), "time_ms": 1.4, "comm_share": 0.45},
            {"P": 2, "passes": "forward", "width": 2048,
             "speedup": (2.00789, 1.44313, 2.32978), "time_ms": 5.8, "comm_share": 0.05},
            {"P": 4, "passes": "forward", "width": 2048,
             "speedup": (3.56362, 2.92849, 4.08319), "time_ms": 2.77, "comm_share": 0.13},
            {"P": 8, "passes": "forward", "width": 2048,
             "speedup": (6.11263, 3.89552, 6.7757), "time_ms": 1.7, "comm_share": 0.18},
            {"P": 16, "passes": "forward", "width": 2048,
             "speedup": (5.63004, 5.29015, 8.23304), "time_ms": 1.72, "comm_share": 0.28},
            {"P": 2, "passes": "forward_backward", "width": 512,
             "speedup": (1.16483, 1.15539, 1.19357), "time_ms": 0.799, "comm_share": 0.11},
            {"P": 4, "passes": "forward_backward", "width": 512,
             "speedup": (1.37566, 1.0284, 1.42574), "time_ms": 0.664, "comm_share": 0.23},
            {"P": 8, "passes": "forward_backward", "width": 512,
             "speedup": (1.23213, 1.13676, 1.43766), "time_ms": 0.739, "comm_share": 0.3},
            {"P": 16, "passes": "forward_backward", "width": 512,
             "speedup": (0.803851, 0.716946, 0.89808), "time_ms": 1.16, "comm_share": 0.35},
            {"P": 2, "passes": "forward_backward", "width": 2048,
             "speedup": (1.52998, 1.39318, 2.3775), "time_ms": 12.6, "comm_share": 0.03},
            {"P": 4, "passes": "forward_backward", "width": 2048,
             "speedup": (2.55705, 2.51922, 2.76927), "time_ms": 7.94, "comm_share": 0.1},
            {"P": 8, "passes": "forward_backward", "width": 2048,
             "speedup": (4.98791, 4.85502, 5.40005), "time_ms": 4.59, "comm_share": 0.16},
            {"P": 16, "passes": "forward_backward", "width": 2048,
             "speedup": (4.6891, 4.26347, 5.32991), "time_ms": 4.34, "comm_share": 0.26},
        ]},
}


def extract(meas: list[dict]) -> dict:
    """:data:`MEASURED`'s form from the measured rows of a host run's comparison.csv."""
    out = []
    for r in meas:
        c = condition(r["condition"])
        if r["quantity"] != "speedup" or int(c["nodes"]) < 2 or int(c["width"]) not in (512, 2048):
            continue
        ms = re.search(r"median over runs ([0-9.]+) ms", r["note"])
        sh = re.search(r"communication ([0-9]+)% of the time", r["note"])
        out.append({"P": int(c["nodes"]),
                    "passes": "forward" if r["table"] == "table2" else "forward_backward",
                    "width": int(c["width"]), "speedup": trio(r), "time_ms": float(ms.group(1)),
                    "comm_share": int(sh.group(1)) / 100})
    return {"rows": sorted(out, key=lambda d: (d["passes"], d["width"], d["P"]))}
