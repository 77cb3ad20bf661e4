import sys

from engine.comm.base import install_termination_handler
from reproduce.cli import _TERM_MESSAGE, main

# A scheduler's SIGTERM: one line, the local workers killed, exit 143 (installed here, not
# in main(), so that tests calling main() in-process keep pytest's own handling).
install_termination_handler(_TERM_MESSAGE)
sys.exit(main())
