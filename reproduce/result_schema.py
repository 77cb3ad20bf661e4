"""The shape of a task's result, checked when a cached result is read back (issue 33).

A cache entry of the wrong shape (a ``result`` of ``{}``, another paper's result, a
``"time_s": "fast"``) used to break a results folder for good: every rerun failed in the
report with ``KeyError: 'converged'`` and named no file. Each paper now states, per task,
a pydantic model of what its ``run_task`` returns (``result_model(task)`` in its tasks
module); :meth:`reproduce.store.RunCache.get` sets an entry that fails it aside as
``.corrupt`` with a warning, and the task is recomputed.

The models are strict (a string is not a number) and forbid keys they do not name, so
another task's or another paper's result does not pass. NaN and ±inf stay allowed where
a result may hold them (an unmeasured or unbounded value); ``Seconds`` and ``Count`` do
not allow them.
"""
from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError

Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]  # a measured duration
Count = Annotated[int, Field(ge=0)]
Fraction = Annotated[float, Field(ge=0, le=1)]
Load = Annotated[float, Field(ge=0, allow_inf_nan=False)]  # one load average (os.getloadavg)
LoadAvg = Annotated[list[Load], Field(min_length=3, max_length=3)]  # os.getloadavg(): 1, 5, 15 min


class Result(BaseModel):
    """Base of every paper's result models: strict, and no key it does not name."""

    model_config = ConfigDict(extra="forbid", strict=True)


def problem(model: type[BaseModel] | None, result) -> str | None:
    """None if ``result`` has ``model``'s shape (or there is no model), else one line: the
    first key that fails and what was expected."""
    if model is None:
        return None
    if not isinstance(result, dict):
        return f"a result is a JSON object, not {type(result).__name__}"
    try:
        model.model_validate(result)
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(x) for x in err["loc"]) or "the result"
        more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
        return f"{model.__name__}: {where}: {err['msg']}{more}"
    return None
