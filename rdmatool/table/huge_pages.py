"""Keep numpy from asking the kernel for transparent huge pages: on a fleet's tables that ask costs more than it saves.

numpy advises the kernel (madvise MADV_HUGEPAGE) to back each large array with 2 MB pages. Where transparent huge
pages are on "madvise" and their defrag too (Debian's and most distributions' default), each such page fault may
first compact memory in the faulting thread. A 10,000-host diagnosis makes and frees ~1.5 GB of row-length arrays,
and on the benchmark machine those stalls were 3 s of system time of an 8 s run: without the advice the same
diagnosis ran in 5.3 s instead of 8.1 s (four alternated pairs, the same JSON; benchmarks/README.md §5). The 4 kB
pages cost more faults, which are cheap next to a compaction.

numpy reads its setting (NUMPY_MADVISE_HUGEPAGE) when imported, so the command line turns it off first; a user's own
value stands, and a numpy already imported is told directly.
"""

from __future__ import annotations

import os
import sys

VARIABLE = "NUMPY_MADVISE_HUGEPAGE"


def avoid_huge_pages() -> bool:
    """Turn numpy's huge-page advice off unless the user set it; True when this process' numpy will not ask."""
    if VARIABLE in os.environ:
        return os.environ[VARIABLE] == "0"
    os.environ[VARIABLE] = "0"
    numpy = sys.modules.get("numpy")
    setter = getattr(getattr(getattr(numpy, "_core", None), "multiarray", None), "_set_madvise_hugepage", None)
    if setter is not None:  # (imported before us: numpy has read the variable already)
        setter(False)
    return True
