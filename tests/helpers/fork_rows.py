"""A fork server for tests/faults/test_bad_inputs.py: runs ``python -m MODULE ARGS`` rows in a
child forked from a process that has already imported the command line and every paper.

A refusal row is mostly interpreter start-up and imports (about 2 s, most of it numba
loading the engine's kernels); forked from a warm parent it takes a few milliseconds. The
child runs what ``python -m MODULE`` runs (the module, or a package's ``__main__.py``,
through runpy, which sets sys.argv[0] as -m does) in the row's folder, with the row's environment, its
stdout and stderr on files and stdin on /dev/null, and exits with what that code exits
with. What it cannot show is what a fresh interpreter does at import time: an environment
variable read then (the table's are read when the command line is checked, and mpi4py is
not imported here), or an import that fails. A launcher's rows (mpiexec) keep fresh
interpreters, ``test_a_file_size_limit_gives_one_line`` runs a failing import in one, and
``test_a_forked_row_is_what_a_fresh_interpreter_prints`` checks the two ways agree.

Protocol: one JSON object per line on stdin, {"module", "args", "cwd", "env", "stdout",
"stderr"};
one line back per request, {"rc": exit code (negative: killed by that signal)}. A child
still running after ``TIMEOUT`` seconds is killed by SIGALRM (rc -14).
"""
from __future__ import annotations

import atexit
import json
import os
import runpy
import signal
import sys
import traceback

import reproduce.cli  # noqa: F401 - what every row imports, loaded once here
import reproduce.report  # noqa: F401 - the report rows' (pandas)
from reproduce.papers import PAPERS, load

for _p in PAPERS:
    if _p["module"]:
        load(_p["name"])

TIMEOUT = 120


def _child(req: dict) -> int:
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    for fd, path, flags in ((0, os.devnull, os.O_RDONLY),
                            (1, req["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                            (2, req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
        f = os.open(path, flags, 0o644)
        os.dup2(f, fd)
        os.close(f)
    signal.alarm(TIMEOUT)
    sys.argv = ["-m", *req["args"]]  # run_module puts __main__.py's path in argv[0], as -m does
    try:
        runpy.run_module(req["module"], run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as e:  # as the interpreter reads sys.exit's argument
        if e.code is None or isinstance(e.code, int):
            code = e.code or 0
        else:
            print(e.code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: BLE001 - an uncaught error: the traceback and 1, as python does
        traceback.print_exc()
        code = 1
    atexit._run_exitfuncs()  # noqa: SLF001 - what the interpreter runs at exit
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:
        code = 120  # what python exits with when it cannot flush at exit
    return code


def main() -> None:
    print(json.dumps({"ready": os.getpid()}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = _child(req)
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"rc": os.waitstatus_to_exitcode(status)}), flush=True)


if __name__ == "__main__":
    main()
