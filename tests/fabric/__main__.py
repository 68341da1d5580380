"""`python -m tests.fabric up | status | down`: the simulated fabric to try rdmatool on (tests/fabric/try_it.py)."""

import sys

from tests.fabric.try_it import main

sys.exit(main())
