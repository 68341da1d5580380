"""Cisco NX-OS `show interface priority-flow-control`: PFC mode, operational priorities and RxPPP/TxPPP per port.

Command: `show interface priority-flow-control` (`| json` accepted too).
Emits (entity = port, long form `Ethernet1/1`): `pfc_mode` (text On/Off/Auto, raw_key `Mode`); `pfc_enabled` for
priorities 0-7 from the operational state and its VL bitmap (raw_key `Oper(VL bmap)`); `rx_pause_frames` and
`tx_pause_frames` (priority None: RxPPP/TxPPP count PFC frames of all priorities together).
Example:
    ============================================================
    Port               Mode Oper(VL bmap)  RxPPP      TxPPP
    ============================================================
    Ethernet1/1        On   On  (8)        1,204      77
Caveats: format per the Cisco Nexus 9000 Series NX-OS Quality of Service Configuration Guide ("Verifying the
Priority Flow Control Configuration") and command reference; no public verbatim capture exists. The number in
`On (8)` is read as the hex bitmap of no-drop priorities (8 = priority 3, 18 = priorities 3 and 4); an `Oper` of Off
gives pfc_enabled 0 for all eight priorities, `On` without a bitmap gives no pfc_enabled samples. JSON rows
(`TABLE_qosmgr_ifs` or any `TABLE_`/`ROW_` table with `ifname`, `adminmode`, `opermode`, `vl_bmap`, `rxppp`, `txppp`)
are read with the same meaning. `N/A` counters are emitted with value None.
"""

from __future__ import annotations

import re

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._samples import HOST, gauge, json_number, tool_error
from rdmatool.parsers.switch import _nxos
from rdmatool.parsers.switch._cli import cli_lines

NAME = "nxos_pfc"

_HEADER = re.compile(r"^\s*Port\s+Mode\s+Oper.*RxPPP\s+TxPPP\s*$", re.IGNORECASE)
_RULE = re.compile(r"^\s*[=\-+]{5,}\s*$")
_ROW = re.compile(
    r"^\s*(?P<port>\S+)\s+(?P<mode>On|Off|Auto|N/A)\s+(?P<oper>On|Off|N/A)(?:\s*\(\s*(?P<bmap>[0-9a-fA-Fx]+)\s*\))?"
    r"\s+(?P<rx>\S+)\s+(?P<tx>\S+)\s*$",
    re.IGNORECASE,
)


def parse(text: str) -> list[Sample]:
    start = _nxos.json_start(text)
    if start is not None:
        return _parse_json(text, start)
    samples: list[Sample] = []
    for line_no, line, error in cli_lines(text, _nxos.cli_error, _RULE, _HEADER):
        if error:
            samples.append(tool_error(HOST, error))
            continue
        row = _ROW.match(line)
        if row:
            rx = gauge(NAME, line_no, line, row["rx"])
            tx = gauge(NAME, line_no, line, row["tx"])
            samples.extend(
                _port_samples(line_no, line, row["port"], row["mode"], row["oper"], row["bmap"], rx, tx)
            )
            continue
        if _nxos.is_echo(line):
            continue
        raise ParseError(NAME, line_no, line)
    return samples


def _port_samples(
    line_no: int, line: str, port_raw: str, mode: str, oper: str, bmap: str | None, rx: object, tx: object
) -> list[Sample]:
    port = _nxos.long_port(port_raw)
    out = [Sample(port, "pfc_mode", text=mode.capitalize(), raw_key="Mode")]
    out.extend(_enabled_priorities(line_no, line, port, oper, bmap))
    out.append(Sample(port, "rx_pause_frames", rx, raw_key="RxPPP"))
    out.append(Sample(port, "tx_pause_frames", tx, raw_key="TxPPP"))
    return out


def _enabled_priorities(line_no: int, line: str, port: str, oper: str, bmap: str | None) -> list[Sample]:
    if oper.lower() == "off":
        mask = 0
    elif bmap is None:  # PFC on, but which priorities is not printed: say nothing rather than guess
        return []
    else:
        try:
            mask = int(bmap, 16)
        except ValueError:
            raise ParseError(NAME, line_no, line, f"VL bitmap {bmap!r} is not hexadecimal") from None
        if mask > 0xFF:
            raise ParseError(NAME, line_no, line, f"VL bitmap {bmap!r} names more than 8 priorities")
    return [
        Sample(port, "pfc_enabled", (mask >> prio) & 1, priority=prio, raw_key="Oper(VL bmap)")
        for prio in range(8)
    ]


def _parse_json(text: str, start: int) -> list[Sample]:
    line_no = start + 1
    document = _nxos.load_json(NAME, text, start)
    samples: list[Sample] = []
    for row in _json_rows(document):
        port_raw = _nxos.field(row, "ifname", "if_name", "interface")
        mode = _nxos.field(row, "adminmode", "admin_mode", "mode")
        oper = _nxos.field(row, "opermode", "oper_mode", "oper")
        bmap = _nxos.field(row, "vl_bmap", "vlbmap", "oper_vl_bmap")
        if not all(isinstance(v, str) for v in (port_raw, mode, oper)) or not isinstance(
            bmap, (str, int, type(None))
        ):
            raise ParseError(
                NAME, line_no, str(row)[:120], "PFC row needs ifname, adminmode and opermode strings"
            )
        oper_word, _, oper_bmap = oper.partition("(")
        bmap_text = str(bmap) if bmap is not None else (oper_bmap.strip(" )") or None)
        rx = json_number(NAME, line_no, "rxppp", _nxos.field(row, "rxppp", "rx_ppp"))
        tx = json_number(NAME, line_no, "txppp", _nxos.field(row, "txppp", "tx_ppp"))
        row_line = f"{port_raw} {mode} {oper}"
        if oper_word.strip().lower() not in ("on", "off", "n/a"):
            raise ParseError(NAME, line_no, row_line, f"unknown operational state {oper!r}")
        samples.extend(_port_samples(line_no, row_line, port_raw, mode, oper_word.strip(), bmap_text, rx, tx))
    if not samples:
        raise ParseError(
            NAME, line_no, text.splitlines()[start], "no PFC interface rows in the JSON document"
        )
    return samples


def _json_rows(document: dict) -> list[dict]:
    """Rows of whichever `TABLE_x` holds the per-interface PFC rows (the table name differs between releases)."""
    rows: list[dict] = []
    for key, value in document.items():
        if key.startswith("TABLE_"):
            rows.extend(_nxos.table_rows(NAME, 1, {key: value}, key[len("TABLE_") :]))
    return rows
