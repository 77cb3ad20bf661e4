"""Machine profiles are checked before any task runs (issue 33, engine/profile_schema.py):
the shipped and paper profiles pass unchanged; worked bad values are refused with the
field named; a fuzzer over every field (negative, zero, NaN, inf, wrong type, missing)
finds no profile that passes and then prices a collective or a compute step as
non-finite or negative; and the two clamps in the table extrapolation never bind on the
shipped profiles (their prices keep their bits), with a control where they do."""
import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.perfmodel import FREE, MachineProfile
from engine.profile_schema import check
from reproduce.profiles import PROFILES_DIR, SHIPPED

BASE = json.loads((PROFILES_DIR / "dev2.json").read_text())
OPS = ("allgather", "allreduce", "broadcast", "barrier")


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_profiles_pass_and_load_as_before(name):
    d = json.loads((PROFILES_DIR / f"{name}.json").read_text())
    assert check(d) is d
    p = MachineProfile.load(PROFILES_DIR / f"{name}.json")
    assert p == MachineProfile(**d)  # the check changes nothing it lets through


def test_profiles_written_by_as_dict_pass():
    from reproduce.paper3.setup import gige2008

    for p in (FREE, gige2008()):
        assert MachineProfile.from_dict(p.as_dict()) == p
    assert MachineProfile.from_dict({**BASE, "bandwidth_Bps": None}).bandwidth_Bps == math.inf


@pytest.mark.parametrize("change,field", [
    ({"bandwidth_Bps": -1e9}, "bandwidth_Bps"), ({"bandwidth_Bps": 0}, "bandwidth_Bps"),
    ({"bandwidth_Bps": math.nan}, "bandwidth_Bps"), ({"latency_s": -1e-6}, "latency_s"),
    ({"latency_s": math.inf}, "latency_s"), ({"latency_s": "1e-6"}, "latency_s"),
    ({"coll": {"allgather": {}}}, "coll.allgather"), ({"coll": {"allgather": {"2": []}}}, "coll.allgather.2"),
    ({"coll": {"allgather": {"1": [[8, 1e-6]]}}}, "coll.allgather.1"),
    ({"coll": {"allgather": {"2": [[8, -1e-6]]}}}, "coll.allgather.2.0.1"),
    ({"coll": {"scatter": {"2": [[8, 1e-6]]}}}, "coll.scatter"),
    ({"straggler": {"small": {"2": 0.5}}}, "straggler.small.2"),
    ({"contention": {"small": {"2": 0}}}, "contention.small.2"),
    ({"kernels": {"small": math.nan}}, "kernels.small"), ({"compute_ratio": 0}, "compute_ratio"),
    ({"barrier_model": "ring"}, "barrier_model"), ({"fitted": "yes"}, "fitted"),
    ({"description": "x" * 5000}, "description"), ({"colour": "red"}, "colour"),
])
def test_a_bad_field_is_refused_by_name(change, field):
    with pytest.raises(ValueError, match=rf"^field {field}: "):
        MachineProfile.from_dict({**BASE, **change})
    # control: the same profile without the change passes
    MachineProfile.from_dict({**BASE, **{k: BASE[k] for k in change if k in BASE}})


def test_not_an_object_or_missing_fields_and_a_file_named():
    with pytest.raises(ValueError, match="a machine profile is a JSON object, not list"):
        MachineProfile.from_dict([])
    with pytest.raises(ValueError, match="field latency_s: Field required"):
        MachineProfile.from_dict({"name": "p"})


def test_load_names_the_file(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps({**BASE, "latency_s": -1}))
    with pytest.raises(ValueError, match=rf"^{p}: field latency_s"):
        MachineProfile.load(p)
    p.write_text("{not json")
    with pytest.raises(ValueError, match=rf"^{p}: Expecting"):
        MachineProfile.load(p)


def _prices(p: MachineProfile) -> list[float]:
    out = []
    for P in (1, 2, 3, 7, 16, 1000, 10**6):
        for nbytes in (0, 8, 8000, 10**6, 10**12):
            out += [p.collective_time(op, P, nbytes) for op in OPS]
        out += list(p.emulate(P, 1.5, [("allgather", 8000, 3)], kernel="small"))
    return out


BAD = st.one_of(st.just(None), st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**20, 10**20),
                st.text(max_size=5), st.booleans(), st.lists(st.floats(), max_size=2),
                st.dictionaries(st.text(max_size=3), st.floats(), max_size=2))
NUM = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10, 10**16),
                st.sampled_from([0, -0.0, 1e-300, 1e300]))
PKEY = st.one_of(st.integers(-2, 40).map(str), st.sampled_from(["1", "2", "1048577", "x", ""]))


@st.composite
def profiles(draw):
    d = json.loads(json.dumps(BASE))
    for _ in range(draw(st.integers(1, 4))):
        field = draw(st.sampled_from(sorted(BASE)))
        how = draw(st.sampled_from(["value", "number", "missing", "table"]))
        if how == "missing":
            d.pop(field, None)
        elif how == "number" or field in ("latency_s", "bandwidth_Bps", "compute_ratio"):
            d[field] = draw(NUM)
        elif how == "table" and field in ("coll", "contention", "straggler", "kernels"):
            if field == "coll":
                d[field] = {draw(st.sampled_from(OPS)): {draw(PKEY): draw(st.lists(
                    st.lists(NUM, min_size=2, max_size=2), min_size=0, max_size=3))}}
            elif field == "kernels":
                d[field] = {"small": draw(NUM)}
            else:
                d[field] = {"small": {draw(PKEY): draw(NUM)}}
        else:
            d[field] = draw(BAD)
    return d


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(profiles())
def test_fuzzed_profiles_are_refused_or_price_finite_and_non_negative(d):
    try:
        p = MachineProfile.from_dict(d)
    except ValueError:
        return  # refused before any task: what the issue asks
    prices = _prices(p)
    assert all(math.isfinite(x) and x >= 0 for x in prices), (d, prices)


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_the_extrapolation_clamps_never_bind_on_shipped_profiles(name):
    """Their prices keep every bit: no measured table falls with bytes in its last
    segment, and no time at a size is below the zero-byte (barrier) time."""
    p = MachineProfile.load(PROFILES_DIR / f"{name}.json")
    for op, table in p.coll.items():
        for P in table:
            lat = p._at(op, P, 0.0)
            for nbytes in (8, 8000, 10**6, 10**9):
                assert p._at(op, P, nbytes) >= lat
            pts = table[P]
            if len(pts) > 1:
                assert pts[-1][1] >= pts[-2][1]


def test_a_falling_table_prices_flat_not_negative():
    d = {**BASE, "coll": {"allgather": {"2": [[8, 5e-6], [64000, 4e-6]]}}}
    p = MachineProfile.from_dict(d)
    assert p.collective_time("allgather", 2, 10**12) == 4e-6  # flat beyond the last point
    assert p.collective_time("allgather", 2, 32004) == pytest.approx(4.5e-6)  # inside: as measured
    # beyond the measured P the bytes part never turns negative either
    d = {**BASE, "coll": {"barrier": {"2": [[0, 9e-6]]}, "allgather": {"2": [[8, 5e-6], [64000, 6e-6]]}}}
    p = MachineProfile.from_dict(d)
    assert p.collective_time("allgather", 1000, 8) >= 0


def test_control_without_the_check_a_bad_profile_prices_negative():
    """What the fuzzer guards against is real: the same bad profile, built without the
    check, prices an allgather below zero."""
    p = MachineProfile(**{**BASE, "bandwidth_Bps": -1e9, "coll": {}})
    assert min(_prices(p)) < 0
