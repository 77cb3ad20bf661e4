import signal
import sys

# A file-size limit (ulimit -f) sends SIGXFSZ, which ends the process silently: ignored, a
# write past the limit raises OSError (EFBIG) instead, which the run reports in one line.
if hasattr(signal, "SIGXFSZ"):
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
try:
    from engine.comm.base import install_termination_handler
    from reproduce.cli import _TERM_MESSAGE, main
except OSError as e:  # at import (a library probes its temporary folder): before main can speak
    print(f"error: cannot start: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
          file=sys.stderr)
    sys.exit(1)

# A scheduler's SIGTERM: one line, the local workers killed, exit 143 (installed here, not
# in main(), so that tests calling main() in-process keep pytest's own handling).
install_termination_handler(_TERM_MESSAGE)
sys.exit(main())
