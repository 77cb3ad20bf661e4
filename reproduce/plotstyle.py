"""One look for every paper's figures (issue 13, item 7).

- :func:`color`: one colour per machine profile (``here``, ``xeon16`` …, and the papers' own
  machines, which each paper names with its colour: ``Paper.colors``) and per kind without a
  profile (``measured``, the paper's values), the same in every figure. A label such as
  ``"ours: emulated (xeon16)"`` takes the colour of the profile named in it; :func:`style`
  adds the kind's line and marker (measured solid with circles, emulated solid with
  squares, modeled dashed, the paper's values black stars).
- :func:`paper_points` / :func:`paper_vline`: the paper's own values drawn the same way
  everywhere.
- :func:`log_ticks`: plain numbers (1, 2, 5, 10, 20 …) on log axes instead of 3×10⁰.
- :func:`finish`: a footnote under the figure (what the bands are, where the paper's
  values come from) and, for a ``--quick`` run, a visible QUICK mark.
- :func:`save`: the PNG with fixed metadata; a quick run's ``Title`` says QUICK.
"""
from __future__ import annotations

import io
import textwrap
import zlib
from pathlib import Path

PAPER_COLOR = "#000000"
# Fixed, never reordered: a name keeps its colour in every figure and every run.
COLORS = {
    "paper": PAPER_COLOR,
    "measured": "#d62728",  # red: timed here with real workers
    "here": "#ff7f0e",  # orange: the run's own start-up profile
    "here-best": "#1f77b4",  # blue
    "here-median": "#ff7f0e",  # orange, like "here": the same machine, a median latency
    "compute-only": "#2ca02c",  # green: free synchronisation, a bound
    "none": "#2ca02c",  # engine.perfmodel.FREE, the same bound
    "dev2": "#e377c2",  # pink
    "xeon16": "#17becf",  # cyan
    "xeon207x16": "#bcbd22",  # olive
    "local-calibrated": "#6b3fa0",  # a profile a run calibrates itself (local backend)
    "mpi-calibrated": "#3b6fb6",  # the same with --backend mpi
    "formula": "#7f7f7f",  # grey: a formula with no machine (an analytic model)
}
# For names not in COLORS: chosen by a stable checksum of the name (never Python's hash).
_SPARE = ("#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354")
# Aliases found inside labels; longest names are tried first so "here-best" beats "here".
_ALIASES = {"paper": "paper", "reported": "paper"}
KIND_STYLE = {"measured": dict(ls="-", marker="o"), "emulated": dict(ls="-", marker="s"),
              "modeled": dict(ls="--", marker=None), "paper": dict(ls="-", marker="*")}
BAND_NOTE = "Bands: min–max over the repeated runs (line: median)."
QUICK_TEXT = "QUICK RUN: shrunk settings (--quick), not the committed results"


def colors() -> dict:
    """{name: colour}: :data:`COLORS` and every registered paper's machines (``Paper.colors``:
    {name: (colour, *aliases found in labels)}, in the order of the paper list)."""
    return _tables()[0]


def _tables() -> tuple[dict, dict]:
    """(:func:`colors`, the aliases found in labels, longest first), from one look at the papers."""
    from reproduce import papers

    own = {}
    for entry in papers.PAPERS:
        own.update(papers.load(entry["name"]).colors)
    aliases = {a: n for n, c in own.items() for a in c[1:]}
    return ({**COLORS, **{n: c[0] for n, c in own.items()}},
            {**dict(sorted(aliases.items(), key=lambda kv: -len(kv[0]))), **_ALIASES})


def profile_of(label: str, *, tables: tuple | None = None) -> str | None:
    """The profile (or kind) name in ``label`` whose colour it takes: the name in the last
    parentheses, else the longest known name in the text; ``None`` if there is none.
    ``tables``: :func:`_tables` where the caller has them already."""
    s = str(label).lower()
    known, aliases = tables or _tables()
    if "(" in s and s.rstrip().endswith(")"):
        inner = s[s.rindex("(") + 1:s.rstrip().rindex(")")].strip()
        for name in sorted(known, key=len, reverse=True):
            if inner == name or inner.startswith(name + ",") or inner.startswith(name + " "):
                return name
        for alias, name in aliases.items():
            if inner.startswith(alias):
                return name
    if s.startswith("paper") or "reported" in s:
        return "paper"
    for name in sorted(known, key=len, reverse=True):
        if name in s and name != "paper":
            return name
    for alias, name in aliases.items():
        if alias in s:
            return name
    if "measured" in s:
        return "measured"
    return None


def color(label: str) -> str:
    """The colour of ``label`` (a profile name, a kind, or a source label naming one)."""
    tables = _tables()
    name = profile_of(label, tables=tables)
    if name is not None:
        return tables[0][name]
    return _SPARE[zlib.crc32(str(label).encode()) % len(_SPARE)]


def kind_of(label: str) -> str:
    """measured | emulated | modeled | paper, read from a source label (emulated if none)."""
    s = str(label).lower()
    if s.startswith("paper") or "reported" in s:
        return "paper"
    for k in ("measured", "modeled", "model", "formula"):
        if k in s:
            return "modeled" if k != "measured" else "measured"
    return "emulated"


def style(label: str) -> dict:
    """``color``/``ls``/``marker`` keywords for ``ax.plot`` of a source ``label``."""
    k = kind_of(label)
    return {"color": color(label), **KIND_STYLE[k]}


def palette(labels) -> dict:
    """``{label: colour}`` for seaborn's ``palette=`` (one colour per profile)."""
    return {lab: color(lab) for lab in labels}


def markers(labels) -> dict:
    """``{label: marker}`` for seaborn's ``markers=`` (one marker per kind)."""
    return {lab: KIND_STYLE[kind_of(lab)]["marker"] or "." for lab in labels}


def paper_points(ax, x, y, *, label: str, ms: float = 13, **kw) -> None:
    """The paper's own values: black stars, drawn above every curve."""
    kw = {"ls": "", "marker": "*", "mec": "white", "mew": 0.6, **kw}
    ax.plot(x, y, ms=ms, color=PAPER_COLOR, zorder=6, label=label, **kw)


def paper_vline(ax, x: float, *, label: str) -> None:
    """A processor count the paper names (e.g. its best point): a black dash-dot line."""
    ax.axvline(x, color=PAPER_COLOR, ls="-.", lw=1.1, zorder=5, label=label)


def log_ticks(ax, axis: str = "both") -> None:
    """Plain-number labels (1, 2, 5, 10, 20, 50 … or 0.1, 0.2 …) on the log axes of ``ax``;
    no minor labels (matplotlib's default writes 3×10⁰ between decades)."""
    from matplotlib import ticker

    fmt = ticker.FuncFormatter(lambda v, _: f"{v:g}")
    for name in ("x", "y") if axis == "both" else (axis,):
        a = ax.xaxis if name == "x" else ax.yaxis
        if (ax.get_xscale() if name == "x" else ax.get_yscale()) != "log":
            continue
        lo, hi = sorted(ax.get_xlim() if name == "x" else ax.get_ylim())
        if not (isinstance(a.get_major_locator(), ticker.FixedLocator)):
            subs = (1.0, 2.0, 5.0) if hi / max(lo, 1e-300) <= 1e3 else (1.0,)
            a.set_major_locator(ticker.LogLocator(base=10, subs=subs))
        a.set_major_formatter(fmt)
        a.set_minor_formatter(ticker.NullFormatter())


def finish(fig, *, quick: bool = False, note: str | None = None, reserve: float = 0.0,
           width: int = 160) -> float:
    """Lay ``fig`` out with ``note`` as a footnote under the axes and, when ``quick``, a
    red QUICK mark (top-left banner and a faint diagonal watermark). ``reserve``: inches
    kept free between the footnote and the axes (for a figure legend); returns the height
    of the footnote as a fraction of the figure (where such a legend's bottom goes)."""
    lines = textwrap.wrap(note, width=int(width * fig.get_figwidth() / 12)) if note else []
    h = fig.get_figheight()
    foot = (0.18 * len(lines) + 0.1) / h if lines else 0.0
    top = 1 - (0.3 / h if quick else 0.0)
    if quick and fig._suptitle is not None:  # below the QUICK banner, not on it
        fig._suptitle.set(y=top, va="top")
    fig.tight_layout(rect=(0, foot + reserve / h, 1, top))
    if lines:
        fig.text(0.01, 0.01, "\n".join(lines), fontsize=8, color="#333333", ha="left", va="bottom")
    if quick:
        fig.text(0.01, 0.995, QUICK_TEXT, fontsize=11, color="#d62728", weight="bold",
                 ha="left", va="top")
        fig.text(0.5, 0.5, "QUICK", fontsize=90, color="#d62728", alpha=0.12, rotation=25,
                 ha="center", va="center", weight="bold", zorder=0)
    return foot


def save(fig, path: Path, *, quick: bool = False, dpi: int = 110) -> None:
    """Write ``fig`` as PNG atomically (reproduce.store), metadata fixed so an unchanged
    figure gives identical bytes; a quick run's ``Title`` names it QUICK."""
    import matplotlib.pyplot as plt

    from reproduce.store import atomic_write

    meta = {"Software": None, "Title": (QUICK_TEXT if quick else "full run") + f": {Path(path).name}"}
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata=meta, dpi=dpi)
    atomic_write(Path(path), buf.getvalue())
    plt.close(fig)
