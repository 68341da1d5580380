"""NVIDIA Onyx `show dcb priority-flow-control`: switch-wide PFC priorities and per-port PFC admin/oper state.

Command: `show dcb priority-flow-control` (the `| json-print` form is accepted too).
Emits: entity `host` (switch-wide): `pfc_enabled` for priorities 0-7 from the enabled / disabled lists (all 0 when
`PFC: disabled`); per port (entity `Eth1/1`): `pfc_mode` (text: PFC admin, e.g. Auto / On / Off) and `pfc_enabled`
for priorities 0-7 = PFC oper Enabled and the priority in the switch's enabled list.
Example:
    PFC: enabled
    Priority Enabled List: 3
    Priority Disabled List: 0 1 2 4 5 6 7
    Interface        PFC admin        PFC oper
    Eth1/1           Auto             Enabled
Caveats: layout per the NVIDIA Onyx User Manual (DCB / priority flow control, "show dcb priority-flow-control") and
the JSON shape of the Ansible onyx modules: a list of objects, the last one mapping each port to
`[{"PFC admin": ..., "PFC oper": ...}]` (older releases put that map under `"Table 2"`). An empty list is allowed.
A line of dots where whoever pasted the table cut it (`......`) is skipped and counted (`parse_skipped_lines`,
entity `elided`); the ports it hides are simply absent.
"""

from __future__ import annotations

import json
import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import Noise, lines
from rdmatool.parsers._samples import HOST, tool_error
from rdmatool.parsers.switch import _onyx
from rdmatool.parsers.switch._cli import cli_lines

NAME = "onyx_dcb_pfc"

_GLOBAL = re.compile(r"^\s*PFC\s*:\s*(enabled|disabled)\s*$", re.IGNORECASE)
_LIST = re.compile(r"^\s*Priority (Enabled|Disabled) List\s*:\s*([0-7 ,]*)$", re.IGNORECASE)
_HEADER = re.compile(r"^\s*Interface\s+PFC admin\s+PFC oper\s*$", re.IGNORECASE)
_RULE = re.compile(r"^\s*-{5,}\s*$")
# Where whoever pasted the table cut it (`......`): skipped and counted, so the cut shows in the notes.
_ELIDED = re.compile(r"^\s*\.{3,}\s*$")
_ROW = re.compile(r"^\s*(Eth\d+/\d+(?:/\d+)?)\s+(\S+)\s+(Enabled|Disabled)\s*$", re.IGNORECASE)


class _State:
    def __init__(self) -> None:
        self.pfc_on = True
        self.enabled: set[int] = set()
        self.samples: list[Sample] = []
        self.switch_emitted = False

    def switch_samples(self) -> None:
        """The switch-wide list, emitted once, just before the first port (or at the end)."""
        if not self.switch_emitted:
            self.switch_emitted = True
            for prio in range(8):
                on = int(self.pfc_on and prio in self.enabled)
                self.samples.append(
                    Sample(HOST, "pfc_enabled", on, priority=prio, raw_key="Priority Enabled List")
                )

    def port(self, port: str, admin: str, oper: str) -> None:
        self.switch_samples()
        self.samples.append(Sample(port, "pfc_mode", text=admin, raw_key="PFC admin"))
        active = self.pfc_on and oper.lower() == "enabled"
        for prio in range(8):
            on = int(active and prio in self.enabled)
            self.samples.append(Sample(port, "pfc_enabled", on, priority=prio, raw_key="PFC oper"))


def parse(text: str) -> list[Sample]:
    stripped_text = text.lstrip()
    if stripped_text.startswith(("[", "{")):
        return _parse_json(text)
    state = _State()
    seen_list = False
    noise = Noise()
    for line_no, line, error in cli_lines(text, _onyx.cli_error, _RULE, _HEADER):
        if error:
            state.samples.append(tool_error(HOST, error))
            continue
        if _GLOBAL.match(line):
            state.pfc_on = _GLOBAL.match(line).group(1).lower() == "enabled"
            continue
        listed = _LIST.match(line)
        if listed:
            seen_list = True
            if listed.group(1).lower() == "enabled":
                state.enabled = {int(p) for p in re.findall(r"[0-7]", listed.group(2))}
            continue
        row = _ROW.match(line)
        if row:
            state.port(row.group(1), row.group(2), row.group(3))
            continue
        if _onyx.is_echo(line):
            continue
        if _ELIDED.match(line):
            noise.skip("elided")
            continue
        raise ParseError(NAME, line_no, line)
    if seen_list:
        state.switch_samples()
    return state.samples + noise.samples()


def _parse_json(text: str) -> list[Sample]:
    first = next(n for n, line in lines(text) if line.strip())
    try:
        document = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        line_no = getattr(exc, "lineno", first)
        bad = text.splitlines()[line_no - 1] if 0 < line_no <= len(text.splitlines()) else ""
        raise ParseError(NAME, line_no, bad, "invalid JSON") from None
    parts = document if isinstance(document, list) else [document]
    if not all(isinstance(p, dict) for p in parts):
        raise ParseError(NAME, first, text.splitlines()[first - 1], "expected a list of JSON objects")
    state = _State()
    merged = {k: v for part in parts for k, v in part.items()}
    if isinstance(merged.get("PFC"), str):
        state.pfc_on = merged["PFC"].strip().lower() == "enabled"
    if isinstance(merged.get("Priority Enabled List"), str):
        state.enabled = {int(p) for p in re.findall(r"[0-7]", merged["Priority Enabled List"])}
    ports = merged.get("Table 2", merged)
    if not isinstance(ports, dict):
        raise ParseError(NAME, first, "Table 2", "expected an object of ports")
    for name, rows in ports.items():
        port = _onyx.port_name(name)
        if port is None:
            continue  # the global keys sit in the same objects
        row = rows[0] if isinstance(rows, list) and rows else rows
        if (
            not isinstance(row, dict)
            or not isinstance(row.get("PFC admin"), str)
            or not isinstance(row.get("PFC oper"), str)
        ):
            raise ParseError(
                NAME, first, f"{name}: {str(rows)[:80]}", "port needs `PFC admin` and `PFC oper`"
            )
        state.port(port, row["PFC admin"], row["PFC oper"])
    if "Priority Enabled List" in merged:
        state.switch_samples()
    return state.samples
