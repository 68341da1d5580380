"""The host script's sections as CommandResults: the one conversion the SSH and the local transport share."""

from __future__ import annotations

from datetime import datetime, timezone

from rdmatool.model import CommandResult
from rdmatool.outcome.failures import COMMAND_TIMED_OUT, COMMAND_UNFINISHED, TOOL_NOT_INSTALLED
from rdmatool.transport.host_framing import Section


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=timezone.utc).isoformat(timespec="microseconds")


def section_error(target: str, section: Section) -> str | None:
    if section.exit_code is None:
        return f"{section.command.split()[0] if section.command else section.parser} {COMMAND_UNFINISHED} {target}"
    if section.exit_code == 127:
        tool = section.command.split()[0] if section.command else section.parser
        return f"{tool} {TOOL_NOT_INSTALLED} {target}"
    if section.exit_code == 124:
        return f"{section.command} {COMMAND_TIMED_OUT} {target}"
    return None


def results_of(target: str, sections: list[Section], started: str, duration_s: float) -> list[CommandResult]:
    """Each section with its own read time (else the snapshot's start) and its failure, if any, as one line."""
    return [
        CommandResult(
            target=target,
            parser=s.parser,
            command=s.command,
            stdout=s.stdout,
            exit_code=s.exit_code,
            stderr=s.stderr,
            qualifier=s.qualifier,
            started=iso(s.started_epoch) if s.started_epoch else started,
            duration_s=round(duration_s, 3),
            error=section_error(target, s),
        )
        for s in sections
    ]
