"""reproduce/plotstyle.py (issue 13, item 7): one colour per profile in every figure, the
QUICK mark on a quick run's figures and index, plain-number log ticks."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from reproduce import plotstyle as S
from reproduce.profiles import names

ROOT = Path(__file__).resolve().parents[2]
# The same machine under two names: the run's profile and its median-latency variant
# (paper0), and the free-synchronisation bound as paper0 and engine.perfmodel.FREE name it.
SAME = [{"here", "here-median"}, {"compute-only", "none"}]


def test_every_profile_name_has_its_own_colour():
    shipped = {p.stem for p in (ROOT / "engine" / "profiles").glob("*.json")}
    every = set(names()) | shipped | {"here-best", "here-median", "compute-only", "measured", "paper"}
    missing = sorted(n for n in every if n not in S.colors())
    assert not missing, f"no colour for {missing}"
    by_colour = {}
    for n in every:
        by_colour.setdefault(S.colors()[n], set()).add(n)
    shared = [ns for ns in by_colour.values() if len(ns) > 1 and not any(ns <= s for s in SAME)]
    assert not shared, f"different machines share a colour: {shared}"


@pytest.mark.parametrize("label, name", [
    ("emulated (here-best)", "here-best"),  # the longer name wins over "here"
    ("emulated (here)", "here"),
    ("ours: emulated (gige2008)", "gige2008"),
    ("emulated (MultiSpert bus)", "multispert1997"),
    ("emulated (xeon207x16)", "xeon207x16"),  # not xeon16's colour
    ("ours measured", "measured"),
    ("paper (reported)", "paper"),
])
def test_a_label_takes_the_colour_of_the_profile_it_names(label, name):
    assert S.profile_of(label) == name
    assert S.color(label) == S.colors()[name]


def test_negative_control_a_label_naming_no_profile_is_not_given_a_profile_colour():
    assert S.profile_of("modeled (host 2x faster)") is None
    assert S.color("modeled (host 2x faster)") in S._SPARE


def test_colours_do_not_depend_on_the_process():
    """A colour is a function of the name: the same in a process with another hash seed
    (Python's hash() of a str changes per process; the spare colours use crc32)."""
    labels = ["emulated (here-best)", "emulated (gige2008)", "some new profile", "another one"]
    code = f"from reproduce import plotstyle as S; print([S.color(x) for x in {labels!r}])"
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": seed}).stdout
            for seed in ("1", "2")}
    assert outs == {f"{[S.color(x) for x in labels]}\n"}


def test_kind_styles():
    assert S.style("ours measured")["ls"] == "-" and S.style("ours measured")["marker"] == "o"
    assert S.style("modeled (here)")["ls"] == "--"
    assert S.style("modeled (here)")["color"] == S.style("emulated (here)")["color"]  # same machine


def _png(tmp_path, *, quick, name="f.png"):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([1, 2, 4, 8], [1, 3, 20, 300])
    ax.set(xscale="log", yscale="log")
    S.log_ticks(ax)
    S.finish(fig, quick=quick, note="Bands: min–max.")
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_yticklabels() if t.get_visible() and t.get_text()]
    texts = [t.get_text() for t in fig.texts]
    S.save(fig, tmp_path / name, quick=quick)
    return tmp_path / name, labels, texts


def _title(path):
    from PIL import Image

    with Image.open(path) as im:
        return im.info.get("Title", "")


def test_quick_figure_carries_the_mark_and_a_full_one_does_not(tmp_path):
    p, _, texts = _png(tmp_path, quick=True, name="q.png")
    assert "QUICK" in _title(p) and any("QUICK" in t for t in texts)
    p, _, texts = _png(tmp_path, quick=False, name="f.png")  # negative control
    assert "QUICK" not in _title(p) and not any("QUICK" in t for t in texts)
    assert "Bands: min–max." in texts  # the footnote


def test_log_ticks_are_plain_numbers(tmp_path):
    _, labels, _ = _png(tmp_path, quick=False)
    assert labels and all("10^" not in x and "times" not in x and "$" not in x for x in labels), labels
    assert {"1", "10", "100"} <= set(labels)


@pytest.fixture(scope="module")
def quick_paper4(tmp_path_factory):
    from reproduce.harness import run_paper
    from reproduce.paper4 import PAPER
    from reproduce.paper4.setup import QUICK

    tiny = replace(QUICK, widths=(16,), procs=(1, 2), passes_timed=3, runs=1, typical_sizes=(6, 5, 5, 2),
                   typical_epochs=5, calib_reps=5)
    root = tmp_path_factory.mktemp("results")
    run_paper(PAPER, setup=tiny, mode="quick", workers=2, backend="local", seed=1, out=root / "paper4")
    return root


def test_a_quick_runs_figure_and_index_say_quick(quick_paper4):
    from reproduce import report as R

    root = quick_paper4
    figs = json.loads((root / "paper4" / "summary.json").read_text())["meta"]["figures"]
    assert figs and all("QUICK" in _title(root / "paper4" / f) for f in figs)
    papers = [{"name": "paper4", "authors": "A", "year": 1, "title": "T"}]
    assert R.quick_papers(root, ["paper4"]) == ["paper4"]
    text = R.build_index(root, papers)
    assert "**QUICK RUN**" in text.split("## Claims")[0]
    assert "## paper4: A 1, *T* (**QUICK**)" in text
    assert "| paper4 (QUICK) |" in text  # the counts table marks it too
    assert "**QUICK RUN**" in (root / "paper4" / "report.md").read_text().split("## Claims")[0]
    screen = R.screen_lines(root, papers)  # what `report` and `all` print on the command line
    assert screen[0].startswith("**QUICK RUN** (paper4)") and any("| paper4 (QUICK) |" in x for x in screen)


def test_negative_control_index_of_a_full_run_has_no_quick_mark(quick_paper4, tmp_path):
    from reproduce import report as R

    d = tmp_path / "paper4"
    d.mkdir()
    meta = json.loads((quick_paper4 / "paper4" / "summary.json").read_text())
    meta["meta"]["mode"] = "default"
    (d / "summary.json").write_text(json.dumps(meta))
    assert R.quick_papers(tmp_path, ["paper4"]) == []
