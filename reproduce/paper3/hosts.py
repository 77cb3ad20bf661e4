"""paper3's runs on many-core hosts, as data: ``SOURCES``, ``MEASURED`` and ``extract`` per
reproduce/manycore_data.py, which gathers every paper's."""
from __future__ import annotations

from reproduce.manycore_data import condition, trio

SOURCES = {
    "xeon16": {
        "folder": "../shared/machines/xeon16/paper3_quick_runs3_local8",
        "files": ("comparison.csv", "summary.json"),
        "command": "python -m reproduce paper3 --quick --runs 3 --workers 8",
        "date": "2026-11-23T03:17:08Z", "commit": "ca20bd6",
        "what": "PPT on the local backend, nodes 2, 4, 8 on real processes, local epochs 32 "
                "and 256, seeds 1..3; speedup = the invocation's serial median / the PPT median"},
    "xeon207x16": {
        "folder": "results/machines/xeon207x16/paper3_quick_runs3_local16",
        "files": ("comparison.csv", "summary.json"),
        "command": "python3 -m reproduce paper3 --quick --runs 3 --workers 16 --no-progress",
        "date": "2026-11-23T05:13:53Z", "commit": "119c890",
        "commit_note": "summary.json records d8a4d85, dirty; the README there: the tracked files "
                       "were 119c890's",
        "what": "as xeon16's paper3 run, with 16 workers allowed (paper3 measures nodes 2, 4, 8)"},
}

# serial_s and time_s are (median, min, max) s over seeds 1..3 (converged runs); comm_share
# the median measured share at 8 nodes (Table 2 rows).
MEASURED = {
    "xeon16": {
        "serial_s": (3.01128, 2.98762, 3.98303),
        "rows": [
            {"P": 2, "local_epoch": 32, "time_s": (1.12734, 1.0526, 1.28642)},
            {"P": 4, "local_epoch": 32, "time_s": (0.631733, 0.609656, 0.77117)},
            {"P": 8, "local_epoch": 32,
             "time_s": (0.445917, 0.436872, 0.452548), "comm_share": 0.437568},
            {"P": 8, "local_epoch": 256,
             "time_s": (0.837182, 0.722445, 0.898839), "comm_share": 0.310781},
        ]},
    "xeon207x16": {
        "serial_s": (2.93956, 2.8524, 3.05634),
        "rows": [
            {"P": 2, "local_epoch": 32, "time_s": (1.00165, 0.88016, 1.08583)},
            {"P": 4, "local_epoch": 32, "time_s": (0.470033, 0.429833, 0.487828)},
            {"P": 8, "local_epoch": 32, "time_s": (0.273484, 0.25034, 0.30703), "comm_share": 0.255625},
            {"P": 8, "local_epoch": 256,
             "time_s": (0.66597, 0.529922, 0.714213), "comm_share": 0.253124},
        ]},
}


def extract(meas: list[dict]) -> dict:
    """:data:`MEASURED`'s form from the measured rows of a host run's comparison.csv."""
    serial = trio(next(r for r in meas if r["table"] == "table1" and r["quantity"] == "total_time"
                       and r["condition"] == "nodes=1"))
    out = {}
    for r in meas:
        c = condition(r["condition"])
        if r["condition"] == "nodes=1" or "local_epoch" not in c:
            continue
        k = (int(c["nodes"]), int(c["local_epoch"]))
        d = out.setdefault(k, {"P": k[0], "local_epoch": k[1]})
        if r["quantity"] == "total_time":
            d["time_s"] = trio(r)
        elif r["quantity"] == "comm_share":
            d["comm_share"] = float(r["ours"])
    return {"serial_s": serial, "rows": [out[k] for k in sorted(out)]}
