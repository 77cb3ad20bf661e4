"""The why behind a verdict (issue "The why behind every verdict"): a figure split into
factors whose product it is, per seed or repetition, with intervals that share their
resamples, so that in every resample the factors' geometric means multiply to the
figure's. Each paper's ``why`` module says what its factors are; this module knows no
paper. The rows go into comparison.csv as table ``why``; each report shows them in its
"Why" section, below the claims."""
from __future__ import annotations

import math
from typing import Sequence

from reproduce import claims

TABLE = "why"  # the comparison table that holds every decomposition


def factor_intervals(records: Sequence[tuple], names: Sequence[str], *, label: str) -> dict:
    """{name: (geometric mean over records, low, high)} for the factors of ``records`` (one
    tuple per seed or repetition, one entry per name), each interval the 95 % percentile
    bootstrap over records (:func:`reproduce.claims.over_seeds`). All draw from the same
    ``label``, so every resample takes the same records for every factor."""
    recs = list(records)
    return {q: claims.over_seeds([x[k] for x in recs], claims.gmean, label=label)
            for k, q in enumerate(names)}


def ci(est: float, lo: float = math.nan, hi: float = math.nan, fmt: str = ".3g") -> str:
    """"est [lo, hi]", or "est" without an interval, or "–" for no estimate."""
    if not (isinstance(est, (int, float)) and math.isfinite(est)):
        return "–"
    s = f"{est:{fmt}}"
    return s + (f" [{lo:{fmt}}, {hi:{fmt}}]" if math.isfinite(lo) and math.isfinite(hi) else "")


FACTORS = ("The figures the claims rest on, each split into factors that multiply to it, per {per}; "
           "geometric means with 95 % bootstrap intervals{over}, the same resamples for every factor of a row")


def heading(intro: str) -> list[str]:
    """The opening lines of a report's "## Why" section: ``intro`` (what is taken apart, and
    where the code is; :data:`FACTORS` says it for a product of factors) and where its rows are."""
    return ["## Why", "", f"{intro} All rows: `comparison.csv`, table `{TABLE}`.", ""]


def table(header: Sequence[str], rows: Sequence[Sequence]) -> list[str]:
    """A markdown table."""
    return (["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            + ["| " + " | ".join(str(c) for c in r) + " |" for r in rows])


def emulated_parts(profile, P: int, compute_s: float, collectives=(), *, kernel: str = "small") -> dict:
    """An emulated time taken apart (the issue: "split every emulated time into compute,
    collective and straggler wait, each named"): {"compute": …, "straggler_wait": …, op: …}
    in seconds, one entry per collective op, summing to ``profile.emulate``'s compute +
    communication for the same arguments (engine/perfmodel.py ``MachineProfile.emulate``,
    whose own pieces these are: ``compute_scale``, ``sync_wait``, ``collective_time``)."""
    c = compute_s * profile.compute_scale(P, kernel)
    parts = {"compute": c, "straggler_wait": profile.sync_wait(P, c, kernel)}
    for op, nbytes, n in collectives:
        parts[op] = parts.get(op, 0.0) + n * profile.collective_time(op, P, int(nbytes))
    return parts


def cites(reason: str) -> bool:
    """Whether a claim's reason gives its why (the issue's rule for every not-reproduced or
    inconclusive claim): a decomposition or ablation it cites, as "why (<where>): …", or
    the word "unexplained" with what was tried."""
    return "why (" in reason or "unexplained" in reason


# ---- what the ablations cost (the item 4: "each paper's section says what they add") ----
COST = "task_seconds"  # the quantity of the cost rows


def cost_rows(paper: str, results, study_of) -> list[dict]:
    """Rows of table ``why`` with what each study of the run cost: the seconds its tasks took
    when they were computed (``_seconds``, reproduce/runner.py), summed, and how many tasks.
    ``results``: (task, result) pairs; ``study_of(task)``: "main" for the paper's setup, else
    the ablation's name. One row per study and one for all the ablations together."""
    from reproduce import report as R  # report imports nothing of this module; kept local all the same

    by: dict = {}
    for t, res in results:
        by.setdefault(study_of(t), []).append((res or {}).get("_seconds"))  # None: not recorded
    abl = [s for k, v in by.items() if k != "main" for s in v]
    groups = {**{k: by[k] for k in sorted(by, key=lambda k: (k != "main", k))},
              **({"ablations": abl} if abl and len(by) > 2 else {})}
    rows = []
    for study, secs in groups.items():
        known = [s for s in secs if s is not None]
        missing = len(secs) - len(known)
        rows.append(R.row(paper, TABLE, COST, R.condition(study=study), "s",
                          ours=math.fsum(known) if known else math.nan, kind="measured", runs=len(secs),
                          note=f"the {len(secs)} tasks' seconds, each as recorded when it was computed "
                               "(on the machine and at the load the Run line names), summed"
                               + (f"; {missing} not recorded, left out" if missing else "")))
    return rows


def cost_line(df) -> list[str]:
    """The sentence a Why section ends with: what the ablations added to the run's task time,
    from :func:`cost_rows`' rows in ``df`` (comparison.csv's frame). Nothing without ablations."""
    c = df[(df.table == TABLE) & (df.quantity == COST)]
    sec = {r.condition.split("=", 1)[1]: r for r in c.itertuples()}
    abl = sec.get("ablations") or next((r for k, r in sec.items() if k != "main"), None)
    if abl is None or "main" not in sec:
        return []
    main = sec["main"]
    total = main.ours + abl.ours
    n = int(abl.runs)
    return ["", f"**What the ablations cost.** Their {n} task{'s' * (n != 1)} took {abl.ours / 60:,.1f} min of "
                f"task time, {abl.ours / total:.0%} of the {total / 60:,.1f} min the tasks behind these results took "
                f"(the paper's setup: {int(main.runs)} tasks, {main.ours / 60:,.1f} min), each task as timed when it "
                "was computed (a task computed again, e.g. past a cap, counts once). Rows: table `why`, quantity "
                "`task_seconds`.", ""]
