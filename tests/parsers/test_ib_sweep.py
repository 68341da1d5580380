"""The subnet-sweep parsers (ibnetdiscover, ibqueryerrors, sminfo, perfquery by LID, iblinkinfo) beyond their golden
pairs: every real capture of these tools in the two corpora parses (skipped when there is none), the cabling each
gives points back from the far end, the two iblinkinfo layouts agree, legacy counter names read as the current
ones, and an unknown line is one located error line and exit 1."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from rdmatool.cli import app
from tests.helpers import PARSER_FIXTURES, REAL_OUTPUTS, REAL_OUTPUTS_2, pick, run

SWEEP = ("ibnetdiscover", "ibqueryerrors", "sminfo", "perfquery", "iblinkinfo")
runner = CliRunner()


def _real_captures() -> list:
    found = []
    for corpus in (REAL_OUTPUTS, REAL_OUTPUTS_2):
        for tool in SWEEP:
            found += [(tool, path) for path in sorted(corpus.glob(f"*/{tool}/*.txt"))]
    registry = REAL_OUTPUTS_2 / "registry.json"
    if registry.is_file():
        entries = json.loads(registry.read_text(encoding="utf-8"))
        found += [(e["parser"], REAL_OUTPUTS_2 / e["path"]) for e in entries if e["parser"] in SWEEP]
    unique = sorted(set(found))
    return [pytest.param(tool, path, id=f"{tool}-{path.name}") for tool, path in unique] or [
        pytest.param(None, None, marks=pytest.mark.skip(reason="no capture of the sweep tools in the corpora"))]


@pytest.mark.parametrize(("tool", "path"), _real_captures())
def test_every_real_capture_of_the_sweep_tools_parses(tool, path) -> None:
    text = path.read_text(encoding="utf-8")
    samples = run(tool, text)
    readings = [s for s in samples if s.metric not in ("parse_skipped_lines", "tool_error")]
    assert readings, f"{path}: no readings"
    assert run(tool, text.replace("\n", "\r\n")) == samples
    assert run(tool, "# collected from a public source\n" + text) == samples


def _fixture(parser: str, case: str) -> list:
    return run(parser, (PARSER_FIXTURES / parser / f"{case}.txt").read_text())


def _texts(samples, metric: str) -> dict[str, str]:
    return {s.entity: s.text for s in samples if s.metric == metric}


@pytest.mark.parametrize("case", ["ports_report", "topology"])
def test_ibnetdiscover_cables_point_back_from_the_far_end(case: str) -> None:
    """Each cabled port names a far end (GUID, port) whose own line names this port back: switch to switch, switch
    to CA, split ports and same-named switches included."""
    samples = _fixture("ibnetdiscover", case)
    guids = _texts(samples, "ib_port_guid")
    by_guid_port = {(guid, entity.rsplit("/", 1)[1]): entity for entity, guid in guids.items()}
    neighbours, far_guids = _texts(samples, "ib_link_neighbor"), _texts(samples, "ib_link_neighbor_guid")
    assert len(neighbours) >= 8 and neighbours.keys() == far_guids.keys()
    checked = 0
    for entity, text in neighbours.items():
        far = by_guid_port.get((far_guids[entity], text.rsplit("|", 1)[1]))
        if far is None:
            continue  # the far end's own line is not in this output
        assert far_guids[far] == guids[entity] and neighbours[far].rsplit("|", 1)[1] == entity.rsplit("/", 1)[1]
        checked += 1
    assert checked >= 6
    # two switches printing one description stay apart, and each cable between them stays one cable
    quantum = sorted(e for e in guids if e.startswith("Quantum"))
    assert any("(0x0002c9030099bb00)" in e for e in quantum) and any("(" not in e for e in quantum)


def test_iblinkinfo_line_mode_gives_what_the_default_layout_gives() -> None:
    """The same ports printed node by node and a line per port (names right-justified in 30 columns) give the same
    samples under the same names; line mode adds only the far end's GUID."""
    default = """Switch: 0xb83fd20300a1b2c0 MF0;ib-leaf01:MQM9790/U1:
          12    1[  ] ==(                Down/ Polling)==>             [  ] "" ( )
          12   65[  ] ==( 2X        106.25 Gbps Active/  LinkUp)==>     101    1[  ] "gpu01 mlx5_0" ( )
          12   67[  ] ==( 2X     Extended speed Active/  LinkUp)==>     103    1[  ] "gpu03 mlx5_0" ( )
CA: MT4123 ConnectX6   Mellanox Technologies:
      0x0c42a10300e0f0b1    139    1[  ] ==( 4X       25.78125 Gbps Active/  LinkUp)==>       7    2[  ] "Quantum Mellanox Technologies" ( )
      0x0c42a10300e0f0b2    140    2[  ] ==( 4X       25.78125 Gbps Active/  LinkUp)==>       8    2[  ] "Quantum Mellanox Technologies" ( )
"""
    wanted = {"MF0;ib-leaf01:MQM9790/U1/1", "MF0;ib-leaf01:MQM9790/U1/65", "MF0;ib-leaf01:MQM9790/U1/67",
              "MT4123 ConnectX6   Mellanox Technologies/1", "MT4123 ConnectX6   Mellanox Technologies/2"}
    line_mode = [s for s in _fixture("iblinkinfo", "line_mode")
                 if s.entity in wanted and s.metric != "ib_link_neighbor_guid"]
    assert run("iblinkinfo", default) == line_mode
    assert pick(line_mode, metric="ib_link_speed")[0].text == "Extended speed"


def test_legacy_counter_names_read_as_the_current_ones() -> None:
    """Old OFED releases print `SymbolErrors`, `XmtData` ...: the same fields, so the same metrics, values and
    saturation marks; only raw_key keeps the printed name."""
    legacy = (PARSER_FIXTURES / "perfquery" / "legacy_ofed_names.txt").read_text()
    current = legacy
    for old, new in (("SymbolErrors", "SymbolErrorCounter"), ("LinkRecovers", "LinkErrorRecoveryCounter"),
                     ("LinkDowned", "LinkDownedCounter"), ("RcvSwRelayErrors", "PortRcvSwitchRelayErrors"),
                     ("XmtDiscards", "PortXmitDiscards"), ("XmtData", "PortXmitData"), ("XmtPkts", "PortXmitPkts"),
                     ("XmtWait", "PortXmitWait")):
        current = re.sub(rf"^{old}:", f"{new}:", current, flags=re.MULTILINE)

    def shape(samples):
        return [(s.entity, s.metric, s.value, s.text) for s in samples]

    assert shape(run("perfquery", legacy)) == shape(run("perfquery", current))
    assert {s.text for s in pick(run("perfquery", legacy), metric="counter_saturated")} == {
        "symbol_errors", "port_xmit_data_bytes", "port_xmit_packets"}


def test_ibqueryerrors_reads_a_narrow_count_as_saturated_and_a_64_bit_one_not() -> None:
    samples = _fixture("ibqueryerrors", "errors")
    saturated = {(s.entity, s.text) for s in pick(samples, metric="counter_saturated")}
    assert ("MF0;ib-leaf01:MQM9790/U1/33", "symbol_errors") in saturated
    assert ("Quantum Mellanox Technologies/1", "port_xmit_wait") in saturated  # 32-bit PortCounters field
    assert not any(text == "port_xmit_wait" and entity.startswith("MF0") for entity, text in saturated)  # 13.673G


@pytest.mark.parametrize(("parser", "case"), [("ibnetdiscover", "diff_output"), ("ibqueryerrors", "unknown_counter"),
                                              ("sminfo", "unknown_line")])
def test_an_unknown_line_is_one_located_line_and_exit_1(parser: str, case: str) -> None:
    path = PARSER_FIXTURES / parser / f"{case}.txt"
    line = int((PARSER_FIXTURES / parser / f"{case}.error").read_text())
    result = runner.invoke(app, ["parse", parser, str(path)])
    assert result.exit_code == 1, result.output
    message = result.stderr.strip()
    assert "\n" not in message and "Traceback" not in message
    assert message.startswith(f"{parser}: {path}:{line}: ")
