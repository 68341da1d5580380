"""Tell the C library's allocator to keep the memory the process frees, for the process' next allocations.

A fleet's diagnosis makes and frees many row-length temporaries (a 10,000-host bundle: 9,000,000 rows, 36-72 MB
each). By default glibc gives a freed block above its mmap threshold straight back to the kernel and trims the top
of its heap, so the next temporary is fresh memory again, and the first touch of fresh memory is what a virtual
machine charges most for (2-3 ms per MB on the benchmark machine, whose host reclaims what the guest frees). Kept,
blocks up to 32 MiB (glibc's highest mmap threshold) are reused instead: half the page faults, and the diagnosis at
10,000 hosts 10-14 % faster (benchmarks/README.md §5). The price is a resident size that does not shrink after a
peak, which a short-lived command does not mind.

Only glibc is told (its `mallopt`); anything else (musl, macOS) is left alone, and so is a process whose user set
glibc's own allocator variables: they chose.
"""

from __future__ import annotations

import ctypes
import os

# mallopt's parameters (malloc.h)
M_TRIM_THRESHOLD = -1
M_TOP_PAD = -2
M_MMAP_THRESHOLD = -3

SETTINGS = {
    M_MMAP_THRESHOLD: 32 * 2**20,  # glibc's maximum on 64-bit: blocks up to this come from the heap and are reused
    M_TRIM_THRESHOLD: 2**31 - 1,  # (an int) never give the heap's free top back to the kernel
    M_TOP_PAD: 256 * 2**20,  # grow the heap in large steps: fewer brk calls for a fleet's tables
}
# What the user may have set for glibc themselves (then their choice stands).
USER_VARIABLES = ("GLIBC_TUNABLES", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_",
                  "MALLOC_ARENA_MAX")


def keep_freed_memory(environ: dict | None = None) -> bool:
    """Apply SETTINGS through glibc's mallopt; True when it did."""
    env = os.environ if environ is None else environ
    if any(name in env for name in USER_VARIABLES) or not _glibc():
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process' own C library
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # (mallopt returns 1 on success; a value glibc refuses leaves its default, which is only slower)
    return all(mallopt(parameter, value) == 1 for parameter, value in SETTINGS.items())


def _glibc() -> bool:
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (ValueError, OSError, AttributeError):  # not a name this system knows: not glibc
        return False
