"""Shared pieces of the host port/device-info parsers: ibstat, ibstatus, ibv_devinfo and show_gids.

The four tools describe the same facts (port state, rate, LIDs, GIDs) in four spellings; this module maps those
spellings onto one vocabulary so that `port_state` reads `Active` whichever tool was asked. No I/O here.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import any_of, cli_lines, tool_error_message
from rdmatool.parsers._samples import HOST, number, tool_error

# Logical port states by their IBTA number, as ibstat spells them (ibstatus prints `4: ACTIVE`, ibv_devinfo
# `PORT_ACTIVE (4)`); the number is the reliable part, the spelling differs per tool.
PORT_STATES = {1: "Down", 2: "Initializing", 3: "Armed", 4: "Active", 5: "ActiveDefer"}
# Physical port states by number, spelled as ibstat prints them.
PHYS_STATES = {
    1: "Sleep",
    2: "Polling",
    3: "Disabled",
    4: "PortConfigurationTraining",
    5: "LinkUp",
    6: "LinkErrorRecovery",
    7: "PhyTest",
}

# Noise the capture may carry around the tool's own output.
_LIBIBVERBS_WARNING = re.compile(r"^\s*libibverbs: Warning:", re.IGNORECASE)
_IBWARN = re.compile(r"^\s*ibwarn:", re.IGNORECASE)
# Failures the shared patterns do not cover: verbs tools print these before giving up.
_EXTRA_TOOL_ERRORS = any_of([re.compile(p, re.IGNORECASE) for p in (
    r"ib device '[^']*' wasn'?t found", r"^\s*failed to (?:open|query) ", r"^\s*libibverbs: fatal",
    r"error while loading shared libraries",
)])

# The sysfs `rate` spelling that ibstatus repeats: `200 Gb/sec (4X HDR)`, `10 Gb/sec (4X)` for SDR on old
# kernels, `2.5 Gb/sec (1X SDR)`.
_RATE_TEXT = re.compile(r"^(\d+(?:\.\d+)?)\s*Gb/sec\s*\((\d+)X(?:\s+([A-Za-z0-9]+))?\)$")


def prompt_pattern(tool: str) -> re.Pattern[str]:
    """The command line that ran `tool`, with or without a prompt (`[root@node ~]# ibstat mlx4_0`, `$ sudo
    ibv_devinfo -v`, `show_gids`).

    Pasted captures often keep the command line; only a command that ran this very tool is accepted as noise.
    """
    return re.compile(
        rf"^\s*(?:(?:\S.*?)?[#$>]\s*)?(?:sudo\s+(?:-\S+\s+)*)?(?:\S*/)?{re.escape(tool)}(?:\s.*)?$"
    )


class _CommandLine:
    """`prompt_pattern(tool)`, tried only on a line that names the tool: the test is cheap, the expression (tried on
    every line of every output) is not."""

    def __init__(self, tool: str) -> None:
        self.tool, self.pattern = tool, prompt_pattern(tool)

    def match(self, line: str) -> re.Match[str] | None:
        return self.pattern.match(line) if self.tool in line else None


@functools.cache
def _command_line(tool: str) -> _CommandLine:
    return _CommandLine(tool)


class Collector:
    """Collects samples in input order and refuses a fact stated twice for the same thing.

    A repeated (entity, metric, raw_key) would make the frame ambiguous (which `port_state` is true?), so the
    second statement is a ParseError rather than a silent overwrite.
    """

    def __init__(self, parser: str) -> None:
        self.parser = parser
        self.samples: list[Sample] = []
        self._seen: set[tuple[str, str, str | None]] = set()

    def add(self, sample: Sample, line_no: int, line: str) -> None:
        if sample.metric != "tool_error":
            key = (sample.entity, sample.metric, sample.raw_key)
            if key in self._seen:
                raise ParseError(self.parser, line_no, line, f"{sample.raw_key or sample.metric} repeated")
            self._seen.add(key)
        self.samples.append(sample)

    def extend(self, samples: list[Sample], line_no: int, line: str) -> None:
        for sample in samples:
            self.add(sample, line_no, line)


def _failure(line: str) -> str | None:
    message = tool_error_message(line)
    if message is None and _EXTRA_TOOL_ERRORS.search(line):
        message = line.strip()
    return message


def content_lines(text: str, tool: str, collector: Collector) -> Iterator[tuple[int, str]]:
    """The lines that carry the tool's own output; noise is skipped and tool failures become `tool_error`.

    Skipped: blank lines, `#` provenance comments, the command line that ran `tool`, libibverbs and ibwarn warnings.
    """
    for line_no, line, message in cli_lines(text, _failure, _command_line(tool), _LIBIBVERBS_WARNING):
        if message is not None:
            collector.add(tool_error(HOST, message), line_no, line)
            continue
        if _IBWARN.match(line):
            continue
        yield line_no, line


def rate_text_samples(entity: str, raw: str, raw_key: str) -> list[Sample] | None:
    """`200 Gb/sec (4X HDR)` -> link_rate_gbps, link_width, link_width_lanes, link_speed; None if not that form."""
    match = _RATE_TEXT.match(raw.strip())
    if not match:
        return None
    gbps, lanes, speed = match.groups()
    samples = [
        Sample(entity, "link_rate_gbps", number(gbps), raw_key=raw_key),
        Sample(entity, "link_width", text=f"{lanes}X", raw_key=raw_key),
        Sample(entity, "link_width_lanes", int(lanes), raw_key=raw_key),
    ]
    if speed:
        samples.append(Sample(entity, "link_speed", text=speed, raw_key=raw_key))
    return samples


def gid_key(index: str | int) -> str:
    """How a GID table index is carried: raw_key `GID[3]` (never in `priority`, which means a 0-7 priority)."""
    return f"GID[{int(index)}]"
