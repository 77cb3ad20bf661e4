"""The schema a machine profile's JSON must meet before any task runs (issue 33).

A profile (:class:`engine.perfmodel.MachineProfile`) prices every emulated collective and
scales every emulated compute time, so a value that parses but is wrong (a negative or
zero bandwidth, NaN, a string, an empty table, a 300 MB description) used to surface as a
"-72.9×" headline or a ZeroDivisionError after every task had run. :func:`check` refuses
such a profile up front with one line naming the field and what was expected.

pydantic does the checking: it states each field's type and range once, in the types
below, refuses a string where a number belongs (strict mode: JSON's "1e-6" is not a
number), converts JSON's string keys of the per-P tables to integers, and reports where
the first error sits, which is what the one-line message needs.

The ranges are physical bounds that keep every price finite and non-negative for up to
10^6 workers and 10^12 bytes (tests/harness/test_profile_schema.py fuzzes them): a latency of
0–10 s, a bandwidth of at least 1 byte/s (unbounded allowed: JSON null), measured
collective times of 0–1,000 s at 0–10^15 bytes and P ≥ 2 (P = 1 costs nothing), factors
above 0 and at most 1,000, straggler factors at least 1 (the expected slowest of P over
the mean).
"""
from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationError

Seconds = Annotated[float, Field(ge=0, le=1e3, allow_inf_nan=False), Strict()]
Bytes = Annotated[float, Field(ge=0, le=1e15, allow_inf_nan=False), Strict()]
Factor = Annotated[float, Field(gt=0, le=1e3, allow_inf_nan=False)]
Text = Annotated[str, Field(max_length=4000)]
P_measured = Annotated[int, Strict(False), Field(ge=2, le=1 << 20)]  # JSON keys are strings
P_any = Annotated[int, Strict(False), Field(ge=1, le=1 << 20)]
# [nbytes, s] pairs: JSON has lists, not tuples (the pair lax, its numbers strict)
Points = Annotated[list[Annotated[tuple[Bytes, Seconds], Strict(False)]],
                   Field(min_length=1, max_length=10_000)]
Table = Annotated[dict[P_measured, Points], Field(min_length=1)]
Op = Literal["allgather", "allreduce", "broadcast", "barrier"]
Kernel = Annotated[str, Field(min_length=1, max_length=40)]


class ProfileModel(BaseModel):
    """The fields of :class:`engine.perfmodel.MachineProfile` with their types and ranges."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: Annotated[str, Field(min_length=1, max_length=100)]
    latency_s: Annotated[float, Field(ge=0, le=10, allow_inf_nan=False)]
    bandwidth_Bps: Annotated[float, Field(ge=1)]  # +inf allowed: no bandwidth cost
    source: Text
    fitted: bool = False
    barrier_model: Literal["tree", "linear"] = "tree"
    description: Text = ""
    date: Annotated[str, Field(max_length=40)] = ""
    backend: Annotated[str, Field(max_length=40)] = ""
    coll: dict[Op, Table] = {}
    contention: dict[Kernel, dict[P_any, Factor]] = {}
    straggler: dict[Kernel, dict[P_any, Annotated[float, Field(ge=1, le=1e3, allow_inf_nan=False)]]] = {}
    kernels: dict[Kernel, Annotated[float, Field(gt=0, le=1e3, allow_inf_nan=False)]] = {}
    compute_ratio: Annotated[float, Field(gt=0, le=1e6, allow_inf_nan=False)] = 1.0


def check(d) -> dict:
    """``d`` if it is a valid profile (an unbounded bandwidth may be JSON null); else
    ValueError with one line: the first field that fails, what was expected, what it got."""
    if not isinstance(d, dict):
        raise ValueError(f"a machine profile is a JSON object, not {type(d).__name__}")
    if d.get("bandwidth_Bps", 0.0) is None:  # strict JSON writes an unbounded β as null
        d = {**d, "bandwidth_Bps": math.inf}
    try:
        ProfileModel.model_validate(d)
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(x) for x in err["loc"] if x != "[key]") or "the profile"
        got = "" if err["type"] == "missing" else f", got {_short(err['input'])}"
        more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
        raise ValueError(f"field {where}: {err['msg']}{got}{more}") from None
    return d


def _short(x) -> str:
    r = repr(x)
    return r if len(r) <= 60 else r[:57] + "..."
