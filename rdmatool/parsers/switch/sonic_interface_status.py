"""SONiC `show interfaces status`: each front-panel port's operational speed, oper/admin state and MTU.

Command: `show interfaces status [IFACE]` (intfutil; `-n asicN` and `-d all` on multi-ASIC systems).
Emits (entity = port as SONiC prints it, `Ethernet0`, the name its own LLDP gives the local port):
  `link_rate_gbps` (gauge, raw_key `Speed`, or `Oper Speed` where the release prints that column): the port's speed
  in Gb/s (`100G` -> 100.0, `2.5G` -> 2.5, `10M` -> 0.01), only when the port is operationally up;
  `oper_state` (state, raw_key `Oper`, or `Admin` when the port is administratively down): Up, Down, or Disabled
  when Admin is down; `N/A` gives text None;
  `port_mtu` (gauge, raw_key `MTU`): the port's MTU in bytes, None for `N/A`;
  `port_alias` (state, raw_key `Alias`): the port's alias (`etp1`), which SONiC's LLDP advertises as the port ID
  (the name goes in the port description): the neighbours' LLDP joins the port through it (rdmatool.platforms.port_names).
  A failing tool (`Error: ...`) gives a `tool_error` sample on entity `host`.
Example:
      Interface            Lanes    Speed    MTU    FEC    Alias    Vlan    Oper    Admin              Type    Asym PFC
    -----------  ---------------  -------  -----  -----  -------  ------  ------  -------  ----------------  ----------
      Ethernet0  0,1,2,3,4,5,6,7     400G   9100     rs     etp1  routed      up       up  QSFP-DD or later         off
      Ethernet8        8,9,10,11     100G   9100     rs     etp2  routed    down       up               N/A         off
Caveats: the layout is sonic-utilities' intfutil (python-tabulate "simple", right-aligned) as its unit tests and
the SONiC command reference print it. Its Speed column is the operational speed of a port that is up and the
configured speed of one that is down, so a down port gives no rate (never 0): what it prints is no negotiated rate.
Some releases add an `Oper Speed` column (Speed is then the configured one); its value is preferred. Columns are
found by name (Interface, Speed, Oper, Admin and MTU are read, the others are not), so added columns (`Oper Speed`,
a description) and reordered ones are tolerated; a table without Interface, Speed and Oper is a ParseError. Rows of
PortChannels (aggregates, whose speed is the sum of their members) and of any interface not named `Ethernet...`
are skipped and counted (`parse_skipped_lines`, entity `port_channel` / `other_interface`). Namespace banners,
prompts and `...` lines are the shared SONiC noise (rdmatool.parsers.switch._sonic).
"""

from __future__ import annotations

import re

from rdmatool.model import Sample
from rdmatool.parsers._common import Noise
from rdmatool.parsers._samples import gauge, speed_gbps
from rdmatool.parsers.switch._sonic import Row, Table, each_table, header_error, row_error

NAME = "sonic_interface_status"

_REQUIRED = ("Interface", "Speed", "Oper")
# intfutil's port_speed_parse: `<n>M` below 1000 Mb/s, `<n.n>G` for fractional Gb/s, `<n>G` otherwise.
_SPEED = re.compile(r"^(?P<number>\d+(?:\.\d+)?)\s*(?P<unit>[MG])$", re.IGNORECASE)
_UP_DOWN = {"up": "Up", "down": "Down"}
_NA = "n/a"


def parse(text: str) -> list[Sample]:
    noise = Noise()
    samples = each_table(NAME, text, lambda table: _table(table, noise))
    return samples + noise.samples()


def _table(table: Table, noise: Noise) -> list[Sample]:
    header = table.header.cells
    missing = [name for name in _REQUIRED if name not in header]
    if header[0] != "Interface" or missing:
        raise header_error(NAME, table, "expected `Interface  Lanes  Speed  MTU ... Oper  Admin ...`")
    column = {name: index for index, name in enumerate(header)}
    speed = "Oper Speed" if "Oper Speed" in column else "Speed"
    samples: list[Sample] = []
    for row in table.rows:
        port = row.cells[0]
        if not port.startswith("Ethernet"):
            noise.skip("port_channel" if port.startswith("PortChannel") else "other_interface")
            continue
        cells = {name: row.cells[index] for name, index in column.items()}
        samples.extend(_port(row, port, cells, speed))
    return samples


def _port(row: Row, port: str, cells: dict[str, str], speed_column: str) -> list[Sample]:
    oper = _up_down(row, "Oper", cells["Oper"])
    admin = _up_down(row, "Admin", cells["Admin"]) if "Admin" in cells else None
    state, state_key = ("Disabled", "Admin") if admin == "Down" else (oper, "Oper")
    out = [Sample(port, "oper_state", None, text=state, raw_key=state_key)]
    rate = _gbps(row, cells[speed_column])
    if rate is not None and oper == "Up":
        out.append(Sample(port, "link_rate_gbps", rate, raw_key=speed_column))
    if "MTU" in cells:
        out.append(Sample(port, "port_mtu", gauge(NAME, row.line_no, row.line, cells["MTU"]), raw_key="MTU"))
    if cells.get("Alias", "").strip() not in ("", "N/A"):
        out.append(Sample(port, "port_alias", None, text=cells["Alias"].strip(), raw_key="Alias"))
    return out


def _up_down(row: Row, column: str, cell: str) -> str | None:
    value = cell.strip().lower()
    if value == _NA:
        return None
    if value not in _UP_DOWN:
        raise row_error(NAME, row, f"expected {column} up, down or N/A, got {cell!r}")
    return _UP_DOWN[value]


def _gbps(row: Row, cell: str) -> float | None:
    """`400G` -> 400.0, `2.5G` -> 2.5, `100M` -> 0.1; `N/A` -> None."""
    if cell.strip().lower() == _NA:
        return None
    match = _SPEED.match(cell.strip())
    if not match:
        raise row_error(NAME, row, f"expected a speed like 100G, 2.5G, 10M or N/A, got {cell!r}")
    return speed_gbps(match.group("number"), match.group("unit"))
