"""SONiC `show pfc priority` / `show pfc asymmetric`: lossless (PFC-enabled) priorities and asymmetric PFC per port.

Command: `show pfc priority [IFACE]`, `show pfc asymmetric [IFACE]` (`-n asicN` prints a `Namespace asic0` line).
Emits (entity = port as SONiC prints it):
  `pfc_enabled` (gauge, raw_key `Lossless priorities`) for priority 0..7 on every listed port: 1 when the
  priority is in the lossless list, 0 otherwise (the list is the port's complete PFC configuration, and a rule
  comparing host and switch needs the explicit 0). `N/A` (no pfc_enable in PORT_QOS_MAP) gives the eight
  samples with value None; an empty cell gives eight zeros.
  `pfc_asymmetric` (state, text `on` / `off`, raw_key `Asymmetric`) from the asymmetric table; `N/A` -> text None.
  A failing tool (`Error: ...`) gives a `tool_error` sample on entity `host`.
Example:
    Interface    Lossless priorities
    -----------  ---------------------
    Ethernet0    3,4
Caveats: priorities outside 0..7 are a ParseError. Real-output owner of pfc_priority__* and pfc_asymmetric__*.
"""

from __future__ import annotations

import re

from rdmatool.model import Sample
from rdmatool.parsers.switch._sonic import Table, each_table, header_error, row_error

NAME = "sonic_pfc_priority"

_PRIORITIES_HEADER = ("Interface", "Lossless priorities")
_ASYMMETRIC_HEADER = ("Interface", "Asymmetric")
_PRIORITY_LIST = re.compile(r"^[0-7](?:,[0-7])*$")
_ASYMMETRIC_VALUES = {"on": "on", "off": "off", "n/a": None}


def parse(text: str) -> list[Sample]:
    return each_table(NAME, text, _table, allow_missing_trailing=True)


def _table(table: Table) -> list[Sample]:
    if table.header.cells == _PRIORITIES_HEADER:
        return _priorities(table)
    if table.header.cells == _ASYMMETRIC_HEADER:
        return _asymmetric(table)
    raise header_error(NAME, table, "expected `Interface  Lossless priorities` or `Interface  Asymmetric`")


def _priorities(table: Table) -> list[Sample]:
    samples = []
    for row in table.rows:
        port, listed = row.cells[0], row.cells[1].replace(" ", "")
        if listed.upper() == "N/A":
            enabled: set[int] | None = None
        elif not listed:
            enabled = set()
        elif _PRIORITY_LIST.match(listed):
            enabled = {int(p) for p in listed.split(",")}
        else:
            raise row_error(NAME, row, f"expected priorities like 3,4 or N/A, got {listed!r}")
        for priority in range(8):
            value = None if enabled is None else int(priority in enabled)
            samples.append(
                Sample(port, "pfc_enabled", value, priority=priority, raw_key=_PRIORITIES_HEADER[1])
            )
    return samples


def _asymmetric(table: Table) -> list[Sample]:
    samples = []
    for row in table.rows:
        port, mode = row.cells
        if mode.lower() not in _ASYMMETRIC_VALUES:
            raise row_error(NAME, row, f"expected on, off or N/A, got {mode!r}")
        samples.append(
            Sample(
                port,
                "pfc_asymmetric",
                None,
                text=_ASYMMETRIC_VALUES[mode.lower()],
                raw_key=_ASYMMETRIC_HEADER[1],
            )
        )
    return samples
