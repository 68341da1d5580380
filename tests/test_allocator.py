"""The allocator setting keeps freed memory in the process on glibc, and leaves a user's own choice alone."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from rdmatool import allocator

_GLIBC = (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc") if hasattr(os, "confstr") else False

# A child that frees a 24 MiB block and says how much of it stayed resident (kB of RSS lost by the free).
_CHILD = """
import sys
from rdmatool import allocator
if sys.argv[1] == "keep":
    assert allocator.keep_freed_memory({})
def rss_kb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4
block = bytearray(24 * 2**20)  # zero-filled: every page touched
held = rss_kb()
del block
print(held - rss_kb())
"""


def _given_back_kb(mode: str) -> int:
    env = {k: v for k, v in os.environ.items() if k not in allocator.USER_VARIABLES}
    done = subprocess.run([sys.executable, "-c", _CHILD, mode], capture_output=True, text=True, env=env, check=True)
    return int(done.stdout)


@pytest.mark.skipif(not _GLIBC, reason="glibc's allocator only")
def test_freed_memory_stays_in_the_process_once_told() -> None:
    assert _given_back_kb("default") > 20 * 1024  # glibc's default: a block this size goes back to the kernel
    assert _given_back_kb("keep") < 4 * 1024  # kept for the next allocation


def test_a_users_own_allocator_variables_are_left_alone() -> None:
    for name in allocator.USER_VARIABLES:
        assert allocator.keep_freed_memory({name: "1"}) is False


@pytest.mark.skipif(not _GLIBC, reason="glibc's allocator only")
def test_the_command_line_applies_it() -> None:
    # the entry point calls it before any command runs: a child importing the CLI's main and calling it with
    # --version sees its allocator told (mallopt's effect is observed as above, in the same process)
    child = _CHILD.replace('if sys.argv[1] == "keep":\n    assert allocator.keep_freed_memory({})\n',
                           "from rdmatool import cli\nsys.argv = ['rdmatool', '--version']\n"
                           "try:\n    cli.main()\nexcept SystemExit:\n    pass\n")
    env = {k: v for k, v in os.environ.items() if k not in allocator.USER_VARIABLES}
    done = subprocess.run([sys.executable, "-c", child, "x"], capture_output=True, text=True, env=env, check=True)
    assert int(done.stdout.splitlines()[-1]) < 4 * 1024
