"""What real runs on many-core hosts measured, gathered from the papers (issue 12, item 4).

Each paper whose configurations a host ran holds its own data in its package's
``hosts.py`` (``Paper.hosts``): ``SOURCES`` (per host: the run's folder, command, date and
commit), ``MEASURED`` (per host: its rows of P, the configuration's keys and the measured
numbers) and ``extract(rows)``, which reads those numbers from the run's comparison.csv
again (tests/harness/test_manycore.py checks the constants equal the files where the folders exist).
Here, by (paper, host): :func:`sources`, :func:`measured_data`, :func:`seeds_of` and
:func:`extract`; and what the papers share: the hosts, the seeds, the project root and the
profile of the machine that timed the compute-only runs. :mod:`reproduce.manycore`
composes the emulated twins and compares.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the project root
HOSTS = ("xeon16", "xeon207x16")
SEEDS = (1, 2, 3)  # the host runs used seeds 1..3 (runs 0..2 of seed 1), unless a source says "seeds"

# The reference kernels' seconds per call *here*, i.e. on the machine that timed the cached
# compute-only runs: the 2-core development machine ("dev2"), whose probe timed them the same
# morning as the committed default runs (results/machines/dev2/, 2026-11-23 05:20 UTC). A
# quick re-timing at report time on that shared machine varies up to 2× between calls, so
# the recorded probe is used; pass here_kernels to :func:`reproduce.manycore.host_profile`
# to use others.
HERE_PROFILE = "dev2"


def condition(s: str) -> dict:
    """A comparison row's condition ``k=v;k=v`` as a dict."""
    return dict(kv.split("=", 1) for kv in s.split(";")) if s else {}


def trio(r) -> tuple:
    """(ours, ours_low, ours_high) of a comparison row, as floats."""
    return (float(r["ours"]), float(r["ours_low"]), float(r["ours_high"]))


def _hosts(paper: str):
    """``paper``'s hosts module (``Paper.hosts``), or None."""
    from reproduce import papers

    return papers.load(paper).hosts if paper in papers.BY_NAME else None


def _gather(what: str) -> dict:
    from reproduce import papers

    out = {}
    for entry in papers.PAPERS:
        h = _hosts(entry["name"])
        for host, d in (getattr(h, what) if h is not None else {}).items():
            out[(entry["name"], host)] = d
    return out


def sources() -> dict:
    """{(paper, host): where the host's run of the paper came from} over every paper."""
    return _gather("SOURCES")


def measured_data() -> dict:
    """{(paper, host): what the host's run of the paper measured} over every paper."""
    return _gather("MEASURED")


def seeds_of(paper: str, host: str) -> tuple:
    """The seeds the host's run of ``paper`` ran (runs 0.. of seed 1): its source's
    ``seeds``, else :data:`SEEDS`."""
    return sources().get((paper, host), {}).get("seeds", SEEDS)


def extract(paper: str, host: str, folder: Path | None = None) -> dict:
    """The measured numbers of the host's run of ``paper``, read from its comparison.csv by
    the paper's ``extract``, in the form of its ``MEASURED``."""
    h = _hosts(paper)
    if h is None or host not in h.SOURCES:
        raise ValueError(f"no many-core data for {paper!r} on {host!r}")
    folder = Path(folder) if folder else ROOT / h.SOURCES[host]["folder"]
    rows = list(csv.DictReader((folder / "comparison.csv").open()))
    return h.extract([r for r in rows if r["kind"] == "measured"])


def print_constants(paper: str) -> None:
    """Print ``paper``'s ``MEASURED`` as its hosts.py holds it, from the files (:func:`extract`)."""
    print("MEASURED = {")
    for host in _hosts(paper).SOURCES:
        d = extract(paper, host)
        print(f'    "{host}": {{')
        for k, v in d.items():
            if k != "rows":
                print(f'        "{k}": {v!r},')
        print('        "rows": [')
        for r in d["rows"]:
            items = [f'"{k}": {json.dumps(v) if isinstance(v, str) else repr(v)}' for k, v in r.items()]
            line = "            {" + ", ".join(items) + "},"
            if len(line) > 104:  # the configuration, then the numbers
                cut = next(i for i, k in enumerate(r) if k in ("speedup", "time_s"))
                line = ("            {" + ", ".join(items[:cut]) + ",\n             "
                        + ", ".join(items[cut:]) + "},")
            print(line)
        print("        ]},")
    print("}")
