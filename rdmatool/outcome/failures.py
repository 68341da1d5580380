"""What a bundle could not tell: the one list of its failures that `bundle show`, `diagnose` and the gate print.

Three kinds, from two places: a target that could not be reached (`connection`) and a command that failed on it
(`command`) are in the manifest; an output that could not be parsed (`parse`) is found when the bundle is read. The
same failure seen in several snapshots is one entry listing its snapshots, so a command that times out every time
reads once, not once per snapshot.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Protocol

# What a transport records for each command its target's deadline left unrun or cut mid-output.
DEADLINE_EXCEEDED = "target deadline exceeded"
# What the transports write for a command that ran but gave no whole answer: the host script's `timeout` fired
# (`<command> timed out on <target>`), the command never finished (`<tool> did not finish on <target>`), or a
# switch's CLI did not come back within the command's timeout (netmiko's ReadTimeout).
COMMAND_TIMED_OUT = "timed out on"
COMMAND_UNFINISHED = "did not finish on"
SWITCH_READ_TIMEOUT = "ReadTimeout"
_CUT = (DEADLINE_EXCEEDED, COMMAND_TIMED_OUT, COMMAND_UNFINISHED, SWITCH_READ_TIMEOUT)
# What the transports write for a command whose tool is not on the target (`<tool> not installed on <target>`: the
# host script found no such command), and what a shell says for one.
TOOL_NOT_INSTALLED = "not installed on"
_MISSING = (TOOL_NOT_INSTALLED, "command not found")
# The two kinds of command failure a verdict tells apart (`command_gap`).
UNFINISHED, NOT_INSTALLED = "unfinished", "not_installed"

# A parse error names its file (`snapshots/1/gpu10/ibstat:1: ...`); the snapshot part is what differs between two
# snapshots of the same failure.
_SNAPSHOT_IN_MESSAGE = re.compile(r"snapshots/\d+/")


class _ParseFailure(Protocol):
    target: str
    snapshot: int
    parser: str
    qualifier: str | None
    message: str


def bundle_failures(collection: Iterable[dict], parse: Iterable[_ParseFailure]) -> list[dict]:
    """The failures of a bundle, deduplicated, in the order first met: collection failures (the manifest's), then
    parse failures. Each: target, kind (connection | command | parse), parser (None for a connection), qualifier,
    error, snapshots (sorted; empty when the writer did not say)."""
    merged: dict[tuple, dict] = {}

    def add(kind: str, target: str, parser: str | None, qualifier: str | None, error: str | None,
            snapshot: object) -> None:
        key = (kind, target, parser, qualifier, _SNAPSHOT_IN_MESSAGE.sub("snapshots/*/", error or ""))
        entry = merged.setdefault(key, {"target": target, "kind": kind, "parser": parser, "qualifier": qualifier,
                                        "error": error, "snapshots": []})
        if isinstance(snapshot, int) and not isinstance(snapshot, bool) and snapshot not in entry["snapshots"]:
            entry["snapshots"].append(snapshot)
            entry["snapshots"].sort()

    for failure in collection:
        parser = failure.get("parser")
        add("command" if parser else "connection", failure.get("target", ""), parser or None,
            failure.get("qualifier"), failure.get("error"), failure.get("snapshot"))
    for failure in parse:
        add("parse", failure.target, failure.parser, failure.qualifier, failure.message, failure.snapshot)
    return list(merged.values())


def command_gap(error: object) -> str | None:
    """What a command's recorded failure says of it: `unfinished` (it gave no whole answer: its own timeout fired, it
    never finished, the target's deadline cut it, a switch's CLI did not come back), `not_installed` (its tool is not
    on the target), or None (another failure, or none)."""
    text = str(error or "")
    if any(cut in text for cut in _CUT):
        return UNFINISHED
    if any(missing in text for missing in _MISSING):
        return NOT_INSTALLED
    return None


def tool_gaps(failures: Iterable[dict]) -> list[dict]:
    """The failures that are a tool missing on a target (`perfquery not installed on gpu07`): a known, lasting gap
    in what the target says, judged alike by collect, diagnose and the gate (rdmatool.outcome.verdict: a warning, named,
    never inconclusive by itself). A target that gave nothing else is not read (rdmatool.table.absent_outputs)."""
    return [f for f in failures if isinstance(f, dict) and f.get("parser") and command_gap(f.get("error")) == NOT_INSTALLED]


def unread_targets(failures: Iterable[dict]) -> list[str]:
    """Targets a verdict cannot vouch for: not reached or not in the bundle (a failure with no parser), or with a
    command that gave no whole answer — cut by the target's deadline, or by its own timeout. A tool that is missing
    is a known, lasting gap (its rule says so); a tool that hangs is not: what it would have shown is unknown, and a
    wedged driver behind a hung `ethtool -S` is itself a reason not to admit the node. Sorted."""
    return sorted({f["target"] for f in failures if not f.get("parser") or command_gap(f.get("error")) == UNFINISHED})
