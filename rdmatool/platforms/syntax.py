"""The values a rendered command line may hold, validated, and the quoting of a shell command.

Every value placed in a suggested command is checked here first: names by strict patterns matched whole, numbers as
ints in range. A value that does not validate raises ValueError with a one-line reason (the suggestion then leaves
that platform's commands out and says why). Shell commands (Linux hosts, SONiC) quote every argument with `sh`.
"""

from __future__ import annotations

import re
import shlex

# Matched whole (`fullmatch`): `$` would also accept a trailing newline, i.e. a second line in a pasted command.
_NETDEV = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@:-]{0,14}")  # IFNAMSIZ 16 incl. NUL; no '/', no spaces
_RDMA_DEV = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")  # mlx5_0, rocep59s0f0, ibp3s0
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")  # WRED profile, QoS map, policy / class names


def matched(pattern: re.Pattern[str], value, refusal: str) -> str:
    """`value` when it is a string the pattern matches whole; ValueError `<refusal>: <value>` otherwise."""
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise ValueError(f"{refusal}: {value!r}")
    return value


def integer(value, lo: int, hi: int, what: str) -> int:
    """An int in [lo, hi]; integral floats (e.g. 3.0 from a DataFrame) are accepted, bools and fractions are not."""
    if isinstance(value, bool):
        raise ValueError(f"{what}: expected an integer, got {value!r}")
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(f"{what}: expected an integer, got {value!r}")
        value = int(value)
    if not isinstance(value, int) and hasattr(value, "item"):  # numpy scalar
        return integer(value.item(), lo, hi, what)
    if not isinstance(value, int):
        raise ValueError(f"{what}: expected an integer, got {value!r}")
    if not lo <= value <= hi:
        raise ValueError(f"{what}: {value} is outside {lo}..{hi}")
    return value


def priority(value) -> int:
    return integer(value, 0, 7, "priority")


def dscp(value) -> int:
    return integer(value, 0, 63, "DSCP")


def netdev(name) -> str:
    return matched(_NETDEV, name, "not a Linux interface name")


def rdma_device(name) -> str:
    return matched(_RDMA_DEV, name, "not an RDMA device name")


def config_name(name, what: str = "name") -> str:
    return matched(_NAME, name, f"not a valid {what}")


def pfc_vector(priorities) -> str:
    """`0,0,0,1,0,0,0,0` for {3}: the mlnx_qos --pfc argument (one flag per priority 0..7)."""
    wanted = {priority(p) for p in priorities}
    return ",".join("1" if p in wanted else "0" for p in range(8))


def sh(*args) -> str:
    """A shell command line with every argument quoted."""
    return " ".join(shlex.quote(str(a)) for a in args)


def echo(value: int, path: str) -> str:
    """`echo N > PATH`: a number written to a sysfs file."""
    return f"echo {int(value)} > {shlex.quote(path)}"
