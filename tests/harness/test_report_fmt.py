"""reproduce/report.py ``fmt``, the number format of every report table (issue 35), beyond
the worked examples of tests/harness/test_mutation_guards.py: the band just above 1e4, the digits
argument, negative values at each threshold, and numpy scalars.

Each expected string is worked by hand from the rule fmt documents: "–" for None or NaN;
an integer, or an integral float below 1e7, with thousands separators; else ``digits``
significant digits, in e-notation when |x| ≥ 1e4 or |x| < 1e-3, fixed with
max(digits − ⌊log10 |x|⌋ − 1, 0) decimals from 1 to 1e4, and ``.{digits}g`` below 1.

Found by these tests and fixed: a numpy integer (what pandas hands out for an all-integer
column) fell through to the float branches: np.int64(3) printed "3.00" and np.int64(123456)
"1.23e+05"; a numpy float32 NaN raised ValueError instead of printing "–".
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from reproduce import report as R

CASES = [
    # the e-notation band starts at 1e4: 10500.5 is not integral, ≥ 1e4 → .3g
    (10500.5, 3, "1.05e+04"),
    (-10500.5, 3, "-1.05e+04"),
    (10000.5, 3, "1e+04"),  # .3g drops the trailing zeros
    (10000.0, 3, "10,000"),  # integral: the integer branch comes first
    (9999.49, 3, "9,999"),  # below 1e4: fixed, 3 − 3 − 1 < 0 → 0 decimals
    # below 1e-3: .3g (e-notation from 1e-5 on, Python's rule for g)
    (0.00099, 3, "0.00099"),
    (-0.0005, 3, "-0.0005"),
    (0.000012345, 3, "1.23e-05"),
    # from 1 to 10: 3 − 0 − 1 = 2 decimals; 10 to 100: 1 decimal; 100 to 1000: none
    (1.0000001, 3, "1.00"),
    (9.876, 3, "9.88"),
    (98.76, 3, "98.8"),
    (987.6, 3, "988"),
    (-987.6, 3, "-988"),
    # below 1: .3g, so at most 3 significant digits and no trailing zeros
    (0.9999, 3, "1"),  # rounds up to 1 (fixed would have printed "1.00")
    (0.12345, 3, "0.123"),
    (0.1, 3, "0.1"),
    # the digits argument in each branch
    (12.345, 1, "12"),  # max(1 − 1 − 1, 0) = 0 decimals
    (1.2345, 2, "1.2"),  # 2 − 0 − 1 = 1 decimal
    (0.012345, 1, "0.01"),  # .1g
    (123456.7, 4, "1.235e+05"),  # .4g
    (1234.56, 5, "1,234.6"),  # 5 − 3 − 1 = 1 decimal, with separators
    # the integer branch: separators, no decimals, the 1e7 bound for integral floats
    (9999999.0, 3, "9,999,999"),
    (-9999999.0, 3, "-9,999,999"),
    (10 ** 9, 3, "1,000,000,000"),  # a Python int: never e-notation
    # numpy scalars: integers as integers, floats as floats
    (np.int64(3), 3, "3"),
    (np.int64(123456), 3, "123,456"),
    (np.int32(-42), 3, "-42"),
    (np.uint8(200), 3, "200"),
    (np.float32(3.0), 3, "3"),
    (np.float32(2.5), 3, "2.50"),
    (np.float32("nan"), 3, "–"),
    (np.float64(10500.5), 3, "1.05e+04"),
]


# kills: the 1e4 threshold moved up (a constant 1e4 → 1.1e4 survived the earlier table), the
# digits argument ignored in a branch, the decimals formula changed, numpy integers treated as
# floats
@pytest.mark.parametrize("x,digits,want", CASES, ids=[f"{c[0]!r}-{c[1]}" for c in CASES])
def test_fmt_hand_worked(x, digits, want):
    assert R.fmt(x, digits=digits) == want


def _fmt_before_the_fix(x, digits=3):
    """fmt as it was before this file: numpy integers not integers, float32 NaN not NaN."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) < 1e7):
        return f"{int(x):,}"
    ax = abs(x)
    if ax >= 1e4 or ax < 1e-3:
        return f"{x:.{digits}g}"
    return f"{x:.{digits}g}" if ax < 1 else f"{x:,.{max(digits - int(math.log10(ax)) - 1, 0)}f}"


def test_the_table_catches_the_old_numpy_behaviour_and_a_moved_threshold():
    # control: the cases above fail on fmt as it was and on a threshold at 1.1e4
    wrong = [c for c in CASES if _safe(_fmt_before_the_fix, c) != c[2]]
    assert {repr(c[0]) for c in wrong} >= {repr(np.int64(3)), repr(np.int64(123456)),
                                           repr(np.float32("nan"))}

    def moved(x, digits=3):
        if isinstance(x, float) and not x.is_integer() and 1e4 <= abs(x) < 1.1e4:
            return f"{x:,.0f}"  # the fixed branch, as with the threshold at 1.1e4
        return R.fmt(x, digits)

    assert [c for c in CASES if moved(c[0], c[1]) != c[2]]


def _safe(f, case):
    try:
        return f(case[0], case[1])
    except ValueError as e:  # np.float32("nan") made the old fmt raise
        return f"raised {e}"


# kills: the same numpy-integer fall-through where it shows: a table of an all-integer frame,
# whose rows pandas hands out as numpy integers
def test_markdown_table_of_integer_columns():
    df = pd.DataFrame({"workers": [3, 16], "patterns": [123456, 2048]})
    assert R.markdown_table(df) == ("| workers | patterns |\n|---|---|\n"
                                    "| 3 | 123,456 |\n| 16 | 2,048 |")
    row = next(df.iterrows())[1]
    assert isinstance(row["workers"], np.integer)  # why it mattered
    assert _fmt_before_the_fix(row["workers"]) == "3.00"  # control: the old table read "3.00"
