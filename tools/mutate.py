#!/usr/bin/env python3
"""Mutation testing for this project (issue 35): change one thing in a module, run that
module's tests, and see whether they notice.

    python tools/mutate.py engine/schedule.py --tests tests/unit/test_buckets.py tests/unit/test_schedule.py
    python tools/mutate.py reproduce/report.py --function fmt --sample 20 --seed 3
    python tools/mutate.py engine/optim.py --list            # the mutants, nothing run

Every mutant is one edit of the source (``ast`` finds the places, the edit is spliced into
the original text, so comments and line numbers stay):

    compare   a comparison flipped at its boundary (< ↔ <=, > ↔ >=) or negated (< → >=,
              == ↔ !=, is ↔ is not, in ↔ not in)
    arith     an arithmetic operator swapped (+ ↔ −, * ↔ /, // → /, % → //, ** → *,
              also in += …), a unary minus dropped
    constant  a number changed (0 ↔ 1, an int n → n + 1, a float x → 1.1·x), True ↔ False
    negate    a condition negated (if, elif, while, a conditional expression, a
              comprehension's if)
    boolop    ``and`` ↔ ``or``
    return    a returned value replaced by None
    remove    a statement replaced by ``pass`` (an expression statement, an assignment,
              a raise, an assert, a del, a break or continue)

Not mutated: docstrings, strings, annotations, ``if __name__ == "__main__"`` blocks, and
any line that carries ``# pragma: no mutate``.

Each mutant runs ``python -m pytest -x -q`` on the given tests in a private copy of the
checkout (``git ls-files`` plus untracked, not-ignored files), never in the working tree,
so a run in progress that imports the real modules is never disturbed and an interrupted
mutation run leaves nothing behind. The unmutated tests run first and must pass; their time
sets the per-mutant timeout unless ``--timeout`` is given. A mutant is *killed* when pytest
fails (a failing test, an import or collection error, or the timeout, which kills the
mutant's whole process group), *survived* when every test passes.

``--sample N --seed S`` picks N mutants at random, reproducibly: the same seed and the same
source give the same mutants. Without ``--sample`` every mutant runs.

Equivalent mutants (no test can kill them: the change does not change behaviour) are listed
in tools/mutate_equivalent.toml, each with a one-line reason, keyed by module, line and
mutation (and the source line, to notice when the file has moved under the entry). They are
still run and always printed, never dropped: one that survives counts out of the score, one
that is killed means the entry is wrong and says so; an entry that matches no mutant of the
module any more is reported as stale.

The score is killed ÷ (mutants run − equivalent ones that survived). ``--json PATH`` writes
every mutant's outcome (for results/quality/); ``--fail-under PCT`` exits 1 below PCT.
Not run in CI: a module's full run takes minutes to hours.
"""
from __future__ import annotations

import argparse
import ast
import concurrent.futures as cf
import dataclasses
import fnmatch
import hashlib
import json
import os
import queue
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EQUIVALENT = ROOT / "tools" / "mutate_equivalent.toml"
PRAGMA = "pragma: no mutate"
OPERATORS = ("compare", "arith", "constant", "negate", "boolop", "return", "remove")

# ---- the mutants --------------------------------------------------------------------------

_CMP = {  # ast op: (its source text, [mutated texts])
    ast.Lt: ("<", ["<=", ">="]), ast.LtE: ("<=", ["<", ">"]),
    ast.Gt: (">", [">=", "<="]), ast.GtE: (">=", [">", "<"]),
    ast.Eq: ("==", ["!="]), ast.NotEq: ("!=", ["=="]),
    ast.Is: ("is", ["is not"]), ast.IsNot: ("is not", ["is"]),
    ast.In: ("in", ["not in"]), ast.NotIn: ("not in", ["in"]),
}
_ARITH = {
    ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.Mult: ("*", "/"), ast.Div: ("/", "*"),
    ast.FloorDiv: ("//", "/"), ast.Mod: ("%", "//"), ast.Pow: ("**", "*"),
}
_REMOVABLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Raise, ast.Assert,
              ast.Delete, ast.Break, ast.Continue)


@dataclasses.dataclass
class Mutant:
    module: str  # path relative to the repository root, with /
    line: int
    col: int
    kind: str  # one of OPERATORS
    desc: str  # e.g. "< -> <="
    start: int  # byte offsets of the replaced span in the source
    end: int
    new: bytes  # what replaces it
    func: str  # qualified name of the enclosing function or class, "" at module level
    code: str  # the original source line, stripped

    @property
    def mutation(self) -> str:
        return f"{self.kind}: {self.desc}"

    @property
    def ident(self) -> str:
        return f"{self.module}:{self.line}:{self.col} {self.mutation}"

    def apply(self, source: bytes) -> bytes:
        return source[:self.start] + self.new + source[self.end:]


def _line_starts(source: bytes) -> list[int]:
    starts, pos = [0, 0], 0  # 1-based: starts[1] is line 1
    for line in source.splitlines(keepends=True):
        pos += len(line)
        starts.append(pos)
    return starts


class _Finder(ast.NodeVisitor):
    """Collects the mutants of one module; offsets are UTF-8 byte offsets, as ast's
    col_offset are."""

    def __init__(self, module: str, source: bytes):
        self.module, self.src = module, source
        self.starts = _line_starts(source)
        self.lines = source.decode("utf-8").splitlines()
        self.stack: list[str] = []
        self.out: list[Mutant] = []

    # positions
    def _off(self, line: int, col: int) -> int:
        return self.starts[line] + col

    def _span(self, node) -> tuple[int, int]:
        return self._off(node.lineno, node.col_offset), self._off(node.end_lineno, node.end_col_offset)

    def _skip_line(self, line: int) -> bool:
        return PRAGMA in self.lines[line - 1]

    def _add(self, kind, desc, start, end, new: str, line, col):
        if self._skip_line(line):
            return
        self.out.append(Mutant(self.module, line, col, kind, desc, start, end, new.encode(),
                               ".".join(self.stack), self.lines[line - 1].strip()))

    def _op_in_gap(self, a: int, b: int, pattern: str) -> tuple[int, int] | None:
        """Byte span of the operator matching ``pattern`` between offsets a and b (only
        whitespace, brackets, backslashes and comments lie there)."""
        gap = self.src[a:b].decode("utf-8")
        gap = re.sub(r"#[^\n]*", lambda m: " " * len(m.group().encode()), gap)  # keep byte offsets
        hits = [m for m in re.finditer(pattern, gap)]
        if len(hits) != 1:
            return None
        m = hits[0]
        return a + len(gap[:m.start()].encode()), a + len(gap[:m.end()].encode())

    # structure
    def _body(self, node):
        body = list(node.body)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]  # the docstring
        return body

    def visit_Module(self, node):
        for stmt in self._body(node):
            self.visit(stmt)

    def _visit_def(self, node):
        self.stack.append(node.name)  # its decorators and default values count as its own
        for d in node.decorator_list:
            self.visit(d)
        if not isinstance(node, ast.ClassDef):
            a = node.args
            for default in a.defaults + [d for d in a.kw_defaults if d is not None]:
                self.visit(default)
        else:
            for b in node.bases + [k.value for k in node.keywords]:
                self.visit(b)
        for stmt in self._body(node):
            self.visit(stmt)
        self.stack.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _visit_def

    def visit_AnnAssign(self, node):  # the annotation is not mutated
        if node.value is not None:
            self._remove(node)
            self.visit(node.value)
        self.visit(node.target)

    def visit_arg(self, node):  # annotations of arguments: not mutated
        return

    def visit_If(self, node):
        t = node.test
        main = (isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and t.left.id == "__name__")
        tc = isinstance(t, ast.Name) and t.id == "TYPE_CHECKING"
        if main or tc:
            return
        self._negate(t, "if")
        self.generic_visit(node)

    def visit_While(self, node):
        self._negate(node.test, "while")
        self.generic_visit(node)

    def visit_IfExp(self, node):
        self._negate(node.test, "conditional expression")
        self.generic_visit(node)

    def visit_comprehension(self, node):
        for cond in node.ifs:
            self._negate(cond, "comprehension if")
        self.generic_visit(node)

    def _negate(self, test, where):
        s, e = self._span(test)
        text = self.src[s:e].decode("utf-8")
        self._add("negate", where, s, e, f"not ({text})", test.lineno, test.col_offset)

    def generic_visit(self, node):
        if isinstance(node, _REMOVABLE) and not isinstance(node, ast.AnnAssign):
            self._remove(node)
        super().generic_visit(node)

    def _remove(self, node):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            return  # a bare string or ...: nothing to remove
        s, e = self._span(node)
        what = type(node).__name__.lower()
        self._add("remove", what, s, e, "pass", node.lineno, node.col_offset)

    def visit_Return(self, node):
        if node.value is not None and not (isinstance(node.value, ast.Constant) and node.value.value is None):
            s, e = self._span(node.value)
            self._add("return", "value -> None", s, e, "None", node.lineno, node.col_offset)
        self.generic_visit(node)

    def visit_Compare(self, node):
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            text, news = _CMP[type(op)]
            pattern = r"not\s+in" if text == "not in" else r"is\s+not" if text == "is not" else re.escape(text)
            if text in ("in", "is"):
                pattern = rf"(?<![\w]){text}(?![\w])(?!\s+not)"
            span = self._op_in_gap(self._span(left)[1], self._span(right)[0], pattern)
            if span is not None:
                line = self.src[:span[0]].count(b"\n") + 1
                col = span[0] - self.starts[line]
                for new in news:
                    self._add("compare", f"{text} -> {new}", span[0], span[1], new, line, col)
            left = right
        self.generic_visit(node)

    def _is_str(self, n):
        return isinstance(n, ast.JoinedStr) or (isinstance(n, ast.Constant) and isinstance(n.value, (str, bytes)))

    def visit_BinOp(self, node):
        if type(node.op) in _ARITH and not (self._is_str(node.left) or self._is_str(node.right)):
            text, new = _ARITH[type(node.op)]
            span = self._op_in_gap(self._span(node.left)[1], self._span(node.right)[0],
                                   re.escape(text) + (r"(?![*/])" if text in ("*", "/") else ""))
            if span is not None:
                line = self.src[:span[0]].count(b"\n") + 1
                self._add("arith", f"{text} -> {new}", span[0], span[1], new, line, span[0] - self.starts[line])
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self._remove(node)
        if type(node.op) in _ARITH:
            text, new = _ARITH[type(node.op)]
            span = self._op_in_gap(self._span(node.target)[1], self._span(node.value)[0],
                                   re.escape(text + "="))
            if span is not None:
                line = self.src[:span[0]].count(b"\n") + 1
                self._add("arith", f"{text}= -> {new}=", span[0], span[1], new + "=", line,
                          span[0] - self.starts[line])
        self.visit(node.target)
        self.visit(node.value)

    def visit_UnaryOp(self, node):
        if isinstance(node.op, ast.USub):
            s, e = self._span(node)
            os_, oe = self._span(node.operand)
            inner = self.src[os_:oe].decode("utf-8")
            self._add("arith", "-x -> x", s, e, f"({inner})", node.lineno, node.col_offset)
        self.generic_visit(node)

    def visit_BoolOp(self, node):
        text, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
        for a, b in zip(node.values, node.values[1:]):
            span = self._op_in_gap(self._span(a)[1], self._span(b)[0], rf"\b{text}\b")
            if span is not None:
                line = self.src[:span[0]].count(b"\n") + 1
                self._add("boolop", f"{text} -> {new}", span[0], span[1], new, line, span[0] - self.starts[line])
        self.generic_visit(node)

    def visit_Constant(self, node):
        v = node.value
        if isinstance(v, bool):
            new = repr(not v)
        elif isinstance(v, int):
            new = "1" if v == 0 else "0" if v == 1 else repr(v + 1)
        elif isinstance(v, float):
            new = "1.0" if v == 0.0 else repr(float(f"{v * 1.1:.6g}"))
            if float(new) == v:
                return
        else:
            return  # strings, bytes, None, ...
        s, e = self._span(node)
        try:  # the span must be the literal itself (positions inside old f-strings were not)
            if ast.literal_eval(self.src[s:e].decode("utf-8")) != v:
                return
        except (ValueError, SyntaxError):
            return
        self._add("constant", f"{self.src[s:e].decode()} -> {new}", s, e, new, node.lineno, node.col_offset)

    def visit_JoinedStr(self, node):  # f-strings: their text is a string, not mutated
        for v in node.values:
            if isinstance(v, ast.FormattedValue):
                self.visit(v.value)
                if v.format_spec is not None:  # {x:.{n - 1}f}: the n - 1
                    self.visit(v.format_spec)


def find_mutants(module: str, source: bytes) -> list[Mutant]:
    """Every mutant of ``source`` (the text of ``module``, a path relative to the root), in
    source order, without mutants that do not parse or change nothing, and without
    duplicates (two edits that give the same text)."""
    tree = ast.parse(source)
    f = _Finder(module, source)
    f.visit(tree)
    # each mutant is parsed within its top-level statement only: the same verdict as the
    # whole file (an edit cannot reach outside its statement), at a fraction of the cost
    tops = []
    for node in tree.body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        tops.append((f._off(first, 0), f._off(node.end_lineno, node.end_col_offset)))
    seen, out = {hashlib.sha1(source).digest()}, []
    for m in sorted(f.out, key=lambda m: (m.start, m.end, m.kind, m.desc)):
        h = hashlib.sha1(m.apply(source)).digest()
        if h in seen:
            continue
        s0, e0 = next(((a, b) for a, b in tops if a <= m.start and m.end <= b), (0, len(source)))
        try:
            ast.parse(source[s0:m.start] + m.new + source[m.end:e0])
        except SyntaxError:
            continue
        seen.add(h)
        out.append(m)
    return out


def select(mutants: list[Mutant], *, operators=None, function=None, lines=None,
           sample=None, seed=0) -> list[Mutant]:
    """Filter, then draw ``sample`` of them with ``random.Random(seed)``: reproducible."""
    ms = mutants
    if operators:
        ms = [m for m in ms if m.kind in operators]
    if function:
        ms = [m for m in ms if any(fnmatch.fnmatchcase(m.func, f) or fnmatch.fnmatchcase(m.func, f + ".*")
                                   for f in function)]
    if lines:
        lo, hi = lines
        ms = [m for m in ms if lo <= m.line <= hi]
    if sample is not None and sample < len(ms):
        picked = set(random.Random(seed).sample(range(len(ms)), sample))
        ms = [m for i, m in enumerate(ms) if i in picked]
    return ms


# ---- equivalent mutants -------------------------------------------------------------------

def load_equivalent(path: Path) -> list[dict]:
    """The entries of the equivalents file: each a table with module, line, mutation and
    reason (col and code optional). A missing reason is an error: none is dropped silently."""
    if not Path(path).exists():
        return []
    entries = tomllib.loads(Path(path).read_text()).get("equivalent", [])
    for i, e in enumerate(entries):
        missing = [k for k in ("module", "line", "mutation", "reason") if not e.get(k)]
        if missing:
            raise SystemExit(f"{path}: entry {i + 1} lacks {', '.join(missing)}")
    return entries


def match_equivalent(m: Mutant, entries: list[dict]) -> dict | None:
    for e in entries:
        if (e["module"] == m.module and e["line"] == m.line and e["mutation"] == m.mutation
                and e.get("col", m.col) == m.col and e.get("code", m.code) == m.code):
            return e
    return None


# ---- running ------------------------------------------------------------------------------

def _checkout_files(root: Path) -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=root,
                         capture_output=True, check=True).stdout.decode()
    return [p for p in out.split("\0") if p]


def make_copy(root: Path, dest: Path, files: list[str]) -> Path:
    for rel in files:
        src = root / rel
        if not src.exists() and not src.is_symlink():
            continue  # deleted in the working tree
        d = dest / rel
        d.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, d, follow_symlinks=False)
    return dest


def _env(copy: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(copy), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # a stale .pyc of the same size and second is never read
    env["NUMBA_CACHE_DIR"] = str(copy / ".numba-cache")
    env["PYTHONHASHSEED"] = "0"
    return env


def _pytest(copy: Path, tests: list[str], timeout: float, python: str):
    """Run the tests in ``copy``: (pytest's exit code or None on timeout, its output,
    seconds). The output goes to a file, not a pipe, so a worker a mutant left behind cannot
    hold the run open; whatever is left of the run's session is killed when pytest ends."""
    cmd = [python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
           "--no-header", "-rfE", *tests]
    t0 = time.monotonic()
    with tempfile.TemporaryFile() as log:
        p = subprocess.Popen(cmd, cwd=copy, env=_env(copy), stdin=subprocess.DEVNULL,
                             stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        with _RUNNING_LOCK:
            _RUNNING.add(p)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            rc = None
        finally:
            _killpg(p)  # the mutant's workers too, stragglers included
            p.wait()
            with _RUNNING_LOCK:
                _RUNNING.discard(p)
        log.seek(0)
        out = log.read()
    return rc, out.decode("utf-8", "replace"), time.monotonic() - t0


_RUNNING: set = set()  # the pytest processes running now (own sessions: Ctrl-C does not reach them)
_RUNNING_LOCK = threading.Lock()


def _killpg(p) -> None:
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _stop_all() -> None:
    with _RUNNING_LOCK:
        for p in list(_RUNNING):
            _killpg(p)


_STAMP = [time.time()]
_STAMP_LOCK = threading.Lock()


def _write(path: Path, data: bytes) -> None:
    """Write, then give the file an mtime no earlier write had: caches keyed on (mtime, size),
    numba's among them, never take a mutant for the original or the reverse."""
    path.write_bytes(data)
    with _STAMP_LOCK:
        _STAMP[0] = stamp = max(_STAMP[0] + 1.0, time.time())
    os.utime(path, (stamp, stamp))


def _first_failure(out: str) -> str:
    for line in out.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            return line.split(" ", 1)[1].split(" - ")[0]
    return ""


def run_mutant(m: Mutant, copy: Path, original: bytes, tests, timeout, python) -> dict:
    target = copy / m.module
    _write(target, m.apply(original))
    try:
        rc, out, took = _pytest(copy, tests, timeout, python)
    finally:
        _write(target, original)
    if rc is None:
        status = "killed"
        how = f"timeout after {timeout:.0f} s"
    elif rc == 0:
        status, how = "survived", ""
    elif rc == 5:
        status, how = "survived", "no tests ran"
    else:
        status = "killed"
        how = _first_failure(out) or {2: "interrupted (collection or import error)", 3: "pytest internal error"}.get(rc, f"rc {rc}")
    return {"status": status, "how": how, "seconds": round(took, 2), "rc": rc}


def tests_for(module: str, root: Path) -> list[str]:
    """Test files that import ``module`` (by its dotted name): the default --tests."""
    dotted = module[:-3].replace("/", ".")
    pkg, _, name = dotted.rpartition(".")
    pats = [re.compile(rf"\b{re.escape(dotted)}\b"),
            re.compile(rf"from\s+{re.escape(pkg)}\s+import\s+[^\n]*\b{re.escape(name)}\b")]
    return [str(p.relative_to(root)) for p in sorted((root / "tests").glob("*/test_*.py"))
            if any(r.search(p.read_text(errors="replace")) for r in pats)]


def provenance(root: Path) -> dict:
    """When and on what code a run was made, for its record in results/quality/: the UTC
    date, the commit and whether the checkout had uncommitted changes (its mutants then
    come from source no commit holds), and the Python."""
    def git(*a):
        r = subprocess.run(["git", *a], cwd=root, capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else None
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "commit": git("rev-parse", "HEAD"), "dirty": None if status is None else bool(status),
            "python": sys.version.split()[0]}


def _show(m: Mutant, original: bytes) -> list[str]:
    """The lines the mutant changes, before (-) and after (+)."""
    mutated = m.apply(original)
    first = original[:m.start].count(b"\n")
    a = original.decode().splitlines()[first:original[:m.end].count(b"\n") + 1]
    b = mutated.decode().splitlines()[first:mutated[:m.start + len(m.new)].count(b"\n") + 1]
    return [f"    - {x}" for x in a] + [f"    + {x}" for x in b]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("modules", nargs="+", help="source files to mutate, relative to the repository root")
    ap.add_argument("--tests", nargs="+", help="test files (or node ids) to run against each "
                    "mutant; default: the test files that import the module")
    ap.add_argument("--sample", type=int, help="run this many mutants, drawn at random by --seed")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--operators", nargs="+", choices=OPERATORS)
    ap.add_argument("--function", nargs="+", help="only inside these functions or classes "
                    "(qualified names, globs: fmt, ConjugateGradient.*)")
    ap.add_argument("--lines", help="only lines A-B")
    ap.add_argument("--timeout", type=float, help="seconds per mutant (default: 3 × the "
                    "unmutated run + 10 s)")
    ap.add_argument("--jobs", type=int, default=1, help="mutants run at once, each in its own copy")
    ap.add_argument("--equivalent", type=Path, default=EQUIVALENT)
    ap.add_argument("--json", type=Path, help="write every mutant's outcome here")
    ap.add_argument("--fail-under", type=float, help="exit 1 when the score is below this percentage")
    ap.add_argument("--list", action="store_true", help="print the selected mutants and stop")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--keep", action="store_true", help="keep the working copies (printed)")
    args = ap.parse_args(argv)

    root = ROOT
    lines = None
    if args.lines:
        lo, _, hi = args.lines.partition("-")
        lines = (int(lo), int(hi or lo))
    sources, all_of, chosen, total = {}, {}, [], 0
    for mod in args.modules:
        mod = Path(mod).resolve().relative_to(root).as_posix() if Path(mod).is_absolute() else Path(mod).as_posix()
        src = (root / mod).read_bytes()
        sources[mod] = src
        all_of[mod] = allm = find_mutants(mod, src)
        total += len(allm)
        chosen += select(allm, operators=args.operators, function=args.function, lines=lines)
    pool_size = len(chosen)
    chosen = select(chosen, sample=args.sample, seed=args.seed)
    entries = load_equivalent(args.equivalent)
    stale = [e for e in entries if e["module"] in sources
             and not any(match_equivalent(m, [e]) for m in all_of[e["module"]])]

    if args.list:
        for m in chosen:
            eq = match_equivalent(m, entries)
            print(f"{m.ident}   [{m.func or '<module>'}]" + (f"   (equivalent: {eq['reason']})" if eq else ""))
        print(f"{len(chosen)} of {total} mutants")
        for e in stale:
            print(f"stale entry in {args.equivalent.name}: {e['module']}:{e['line']} {e['mutation']}")
        return 0

    tests = args.tests or sorted({t for mod in sources for t in tests_for(mod, root)})
    if not tests:
        print("no tests given and none import the module: pass --tests", file=sys.stderr)
        return 2
    print(f"mutate: {len(chosen)} of {pool_size} mutants (of {total} in {', '.join(sources)})"
          + (f", sample by seed {args.seed}" if args.sample is not None else ""))
    print(f"tests: {' '.join(tests)}")

    started = time.monotonic()
    prov = provenance(root)  # the checkout the copies are made from, as it is now
    work = Path(tempfile.mkdtemp(prefix="mutate-"))
    interrupted = False
    copies: queue.Queue = queue.Queue()
    results: list[tuple[Mutant, dict]] = []
    try:
        files = _checkout_files(root)
        first = make_copy(root, work / "c0", files)
        for mod in sources:  # the tests must import the copy, not the checkout
            if (first / mod).parent.joinpath("__init__.py").exists() or "/" not in mod:
                name = mod[:-3].replace("/", ".")
                r = subprocess.run([args.python, "-c", f"import {name} as m; print(m.__file__)"],
                                   cwd=first, env=_env(first), capture_output=True, text=True)
                if r.returncode == 0 and not Path(r.stdout.strip()).resolve().is_relative_to(first.resolve()):
                    print(f"error: {name} imports from {r.stdout.strip()}, not the copy", file=sys.stderr)
                    return 2
        rc, out, base = _pytest(first, tests, args.timeout or 3600, args.python)
        if rc != 0:
            print(out[-3000:])
            print(f"error: the unmutated tests do not pass (pytest rc {rc}); nothing to measure",
                  file=sys.stderr)
            return 2
        timeout = args.timeout or 3 * base + 10
        print(f"baseline: tests pass in {base:.1f} s; timeout per mutant {timeout:.0f} s")
        copies.put(first)
        for i in range(1, max(1, args.jobs)):
            copies.put(make_copy(root, work / f"c{i}", files))

        def one(m: Mutant):
            c = copies.get()
            try:
                return run_mutant(m, c, sources[m.module], tests, timeout, args.python)
            finally:
                copies.put(c)

        n = len(chosen)
        ex = cf.ThreadPoolExecutor(max_workers=max(1, args.jobs))
        try:
            futs = {ex.submit(one, m): m for m in chosen}
            for k, fut in enumerate(cf.as_completed(futs), 1):
                m = futs[fut]
                r = fut.result()
                eq = match_equivalent(m, entries)
                if eq:
                    r["equivalent"] = eq["reason"]
                results.append((m, r))
                label = r["status"] + (" (equivalent)" if eq and r["status"] == "survived" else "")
                print(f"[{k}/{n}] {label:<21} {m.ident}  ({r['seconds']:.1f} s"
                      + (f"; {r['how']}" if r["how"] else "") + ")", flush=True)
        except KeyboardInterrupt:
            ex.shutdown(wait=False, cancel_futures=True)  # no further mutant starts
            _stop_all()  # and the running ones end now; their copies are restored by run_mutant
            raise
        finally:
            ex.shutdown(wait=True)
    except KeyboardInterrupt:
        interrupted = True
        print("interrupted: the checkout was never changed; partial results below", file=sys.stderr)
    finally:
        if args.keep:
            print(f"working copies kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    results.sort(key=lambda x: (x[0].module, x[0].start, x[0].desc))
    killed = [x for x in results if x[1]["status"] == "killed"]
    survived = [x for x in results if x[1]["status"] == "survived"]
    eq_surv = [x for x in survived if "equivalent" in x[1]]
    eq_killed = [x for x in killed if "equivalent" in x[1]]
    real_surv = [x for x in survived if "equivalent" not in x[1]]
    timeouts = sum(1 for x in killed if x[1]["how"].startswith("timeout"))
    counted = len(results) - len(eq_surv)
    score = 100.0 * len(killed) / counted if counted else 100.0
    print(f"\nscore: {len(killed)}/{counted} killed = {score:.1f} %  ({len(results)} run, "
          f"{len(eq_surv)} equivalent, {timeouts} by timeout)")
    if real_surv:
        print("survivors:")
        for m, _ in real_surv:
            print(f"  {m.ident}   in {m.func or '<module>'}")
            print("\n".join(_show(m, sources[m.module])))
    if eq_surv:
        print(f"equivalent (from {args.equivalent.name}; out of the score):")
        for m, r in eq_surv:
            print(f"  {m.ident}: {r['equivalent']}")
    if eq_killed:
        print("marked equivalent but KILLED (the entry is wrong; remove it):")
        for m, r in eq_killed:
            print(f"  {m.ident}: {r['how']}")
    if stale:
        print(f"stale entries in {args.equivalent.name} (no such mutant any more; update or remove):")
        for e in stale:
            print(f"  {e['module']}:{e['line']} {e['mutation']}: {e['reason']}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({
            **prov, "seconds": round(time.monotonic() - started, 1),
            "modules": list(sources), "tests": tests, "seed": args.seed, "sample": args.sample,
            "mutants_total": total, "run": len(results), "killed": len(killed),
            "equivalent": len(eq_surv), "score_pct": round(score, 2),
            "mutants": [{"id": m.ident, "module": m.module, "line": m.line, "col": m.col,
                         "mutation": m.mutation, "function": m.func, "code": m.code, **r}
                        for m, r in results]}, indent=2) + "\n")
    if interrupted:
        return 130
    if args.fail_under is not None and score < args.fail_under:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
