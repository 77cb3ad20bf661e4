"""paper0's runs on many-core hosts, as data: ``SOURCES``, ``MEASURED`` and ``extract`` per
reproduce/manycore_data.py, which gathers every paper's."""
from __future__ import annotations

from reproduce.manycore_data import condition, trio

SOURCES = {
    "xeon207x16": {
        "folder": "results/machines/xeon207x16/claims30/paper0_default_local16_runs5",
        "files": ("comparison.csv", "summary.json", "runs.json"),
        "command": "python3 -m reproduce paper0 --workers 16 --jobs 8 --no-progress "
                   "--nettalk-file .whl/nettalk/nettalk.data",
        "date": "2026-11-27T08:41:26Z", "commit": "69a59ac",
        "commit_note": "summary.json records e7a1626, clean: the device's .git copy was the session's "
                       "first commit; 69a59ac adds only the driver script benchmarks/machines/device_run6.sh",
        "seeds": (1, 2, 3, 4, 5),
        "what": "network-partition loop (fig2 radio P = 2..10, fig3 parsing P = 2..16) and "
                "sequence-partition epochs (fig4 derivative, fig5 forward, P = 2..16) on the "
                "local backend, seeds 1..5; speedup over 1 worker, median of seeds and its 95 % bootstrap "
                "interval as the report gives it; "
                "runs.json keeps each seed's figures (tools/host_runs.py)"},
}

# speedup over 1 worker.
MEASURED = {
    "xeon207x16": {
        "rows": [
            {"P": 2, "curve": "fig2", "net": "radio", "speedup": (1.00299, 0.94484, 1.41011)},
            {"P": 3, "curve": "fig2", "net": "radio", "speedup": (1.3216, 1.06005, 1.94938)},
            {"P": 4, "curve": "fig2", "net": "radio", "speedup": (1.21285, 1.16549, 1.81667)},
            {"P": 5, "curve": "fig2", "net": "radio", "speedup": (1.30326, 1.23311, 1.99097)},
            {"P": 6, "curve": "fig2", "net": "radio", "speedup": (1.28742, 1.18526, 2.04923)},
            {"P": 7, "curve": "fig2", "net": "radio", "speedup": (1.38646, 1.22448, 1.79995)},
            {"P": 8, "curve": "fig2", "net": "radio", "speedup": (1.33096, 1.24669, 1.64131)},
            {"P": 9, "curve": "fig2", "net": "radio", "speedup": (1.39461, 1.23144, 1.67387)},
            {"P": 10, "curve": "fig2", "net": "radio", "speedup": (1.43754, 1.398, 1.90139)},
            {"P": 2, "curve": "fig3", "net": "parsing", "speedup": (1.46535, 1.05027, 1.91168)},
            {"P": 3, "curve": "fig3", "net": "parsing", "speedup": (1.98396, 1.67585, 2.36724)},
            {"P": 4, "curve": "fig3", "net": "parsing", "speedup": (2.09646, 1.45973, 2.29579)},
            {"P": 5, "curve": "fig3", "net": "parsing", "speedup": (2.2803, 1.72336, 2.35432)},
            {"P": 6, "curve": "fig3", "net": "parsing", "speedup": (2.17211, 1.50025, 2.51159)},
            {"P": 7, "curve": "fig3", "net": "parsing", "speedup": (2.40621, 1.9753, 2.52891)},
            {"P": 8, "curve": "fig3", "net": "parsing", "speedup": (2.09124, 1.52511, 2.54649)},
            {"P": 9, "curve": "fig3", "net": "parsing", "speedup": (2.34233, 1.51553, 2.44617)},
            {"P": 10, "curve": "fig3", "net": "parsing", "speedup": (2.30582, 1.55893, 2.35942)},
            {"P": 11, "curve": "fig3", "net": "parsing", "speedup": (2.33653, 1.46332, 2.59495)},
            {"P": 12, "curve": "fig3", "net": "parsing", "speedup": (2.35181, 2.12195, 2.58233)},
            {"P": 13, "curve": "fig3", "net": "parsing", "speedup": (2.19587, 1.73797, 2.53987)},
            {"P": 14, "curve": "fig3", "net": "parsing", "speedup": (2.28049, 1.80922, 2.62136)},
            {"P": 15, "curve": "fig3", "net": "parsing", "speedup": (2.28932, 1.75292, 2.56225)},
            {"P": 16, "curve": "fig3", "net": "parsing", "speedup": (2.01455, 1.65385, 2.68725)},
            {"P": 2, "curve": "fig4", "speedup": (1.58901, 1.48906, 1.935)},
            {"P": 3, "curve": "fig4", "speedup": (2.27728, 1.4749, 3.07093)},
            {"P": 4, "curve": "fig4", "speedup": (3.4493, 3.01025, 3.81017)},
            {"P": 5, "curve": "fig4", "speedup": (3.56874, 3.39214, 4.54456)},
            {"P": 6, "curve": "fig4", "speedup": (4.54281, 4.16604, 5.07557)},
            {"P": 7, "curve": "fig4", "speedup": (4.41952, 3.1426, 5.55091)},
            {"P": 8, "curve": "fig4", "speedup": (5.73425, 5.25237, 6.31485)},
            {"P": 9, "curve": "fig4", "speedup": (5.71207, 3.66076, 6.36008)},
            {"P": 10, "curve": "fig4", "speedup": (6.06354, 3.87009, 7.33802)},
            {"P": 11, "curve": "fig4", "speedup": (4.99566, 4.4078, 7.4419)},
            {"P": 12, "curve": "fig4", "speedup": (6.9002, 4.76631, 7.37485)},
            {"P": 13, "curve": "fig4", "speedup": (5.42888, 4.81711, 7.23262)},
            {"P": 14, "curve": "fig4", "speedup": (5.49786, 4.95663, 7.85586)},
            {"P": 15, "curve": "fig4", "speedup": (7.27304, 5.6125, 9.28493)},
            {"P": 16, "curve": "fig4", "speedup": (6.95694, 5.38629, 8.28035)},
            {"P": 2, "curve": "fig5", "speedup": (1.20807, 1.107, 2.05449)},
            {"P": 3, "curve": "fig5", "speedup": (1.62868, 1.59743, 2.83297)},
            {"P": 4, "curve": "fig5", "speedup": (3.33626, 2.18434, 3.48253)},
            {"P": 5, "curve": "fig5", "speedup": (2.7828, 2.42736, 4.45672)},
            {"P": 6, "curve": "fig5", "speedup": (4.84797, 2.92055, 5.28429)},
            {"P": 7, "curve": "fig5", "speedup": (4.48681, 3.25858, 5.76554)},
            {"P": 8, "curve": "fig5", "speedup": (4.2863, 3.84341, 6.04222)},
            {"P": 9, "curve": "fig5", "speedup": (4.40462, 3.80531, 6.75636)},
            {"P": 10, "curve": "fig5", "speedup": (4.15477, 4.04033, 7.38676)},
            {"P": 11, "curve": "fig5", "speedup": (5.20314, 4.67109, 7.56102)},
            {"P": 12, "curve": "fig5", "speedup": (5.0717, 4.53353, 8.04073)},
            {"P": 13, "curve": "fig5", "speedup": (5.58412, 5.4215, 5.73791)},
            {"P": 14, "curve": "fig5", "speedup": (5.815, 5.44489, 9.22547)},
            {"P": 15, "curve": "fig5", "speedup": (8.53149, 6.00794, 9.19061)},
            {"P": 16, "curve": "fig5", "speedup": (6.3255, 5.78863, 10.1014)},
        ]},
}


def extract(meas: list[dict]) -> dict:
    """:data:`MEASURED`'s form from the measured rows of a host run's comparison.csv."""
    out = []
    for r in meas:
        if r["quantity"] not in ("loop_speedup", "epoch_speedup"):
            continue
        c = condition(r["condition"])
        out.append({"P": int(c["workers"]), "curve": r["table"],
                    **({"net": c["net"]} if "net" in c else {}), "speedup": trio(r)})
    return {"rows": sorted(out, key=lambda d: (d["curve"], d["P"]))}
