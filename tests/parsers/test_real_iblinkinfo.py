"""iblinkinfo over every real capture in ../shared/real-outputs/host/iblinkinfo (skipped when the corpus or the
folder is absent: the corpus holds none yet), plus the properties every capture must keep: each cabled port names
its far end, CRLF and a provenance comment change nothing, and the cabling it gives is consistent both ways;
the ports of a dual-port CA each match the switch port that names them."""

from __future__ import annotations

import pytest

from tests.helpers import PARSER_FIXTURES, REAL_OUTPUTS, run


def _captures():
    folder = REAL_OUTPUTS / "host" / "iblinkinfo"
    return sorted(folder.glob("*.txt")) if folder.is_dir() else []


@pytest.mark.parametrize("path", _captures() or [None], ids=lambda p: p.name if p else "none")
def test_real_iblinkinfo_parses_and_keeps_every_link(path) -> None:
    if path is None:
        pytest.skip(f"no iblinkinfo capture under {REAL_OUTPUTS}/host/iblinkinfo")
    text = path.read_text(encoding="utf-8")
    samples = run("iblinkinfo", text)
    assert samples, f"{path.name}: nothing parsed"
    assert run("iblinkinfo", text.replace("\n", "\r\n")) == samples
    assert run("iblinkinfo", "# collected from a public source\n" + text) == samples
    arrows = sum(1 for line in text.splitlines() if "==>" in line and '"' in line and '""' not in line
                 and "Port not available" not in line)
    assert sum(1 for s in samples if s.metric == "ib_link_neighbor") == arrows


def _far_ends(samples) -> dict[str, str]:
    """Port entity → the `<description>/<port>` entity its neighbour text names."""
    out = {}
    for s in samples:
        if s.metric == "ib_link_neighbor":
            description, _, port = s.text.rpartition("|")
            out[s.entity] = f"{description}/{port}"
    return out


def test_each_port_of_a_dual_port_ca_matches_its_switch_side() -> None:
    """A CA whose two ports share one node description (`gpu11 HCA-1`, `gpu12 mlx5_0`): the switch names each port by
    that description and the port number, and each CA port's entity is exactly that name, pointing back."""
    samples = run("iblinkinfo", (PARSER_FIXTURES / "iblinkinfo" / "dual_port_ca.txt").read_text())
    far = _far_ends(samples)
    switch_side = {port: ca for port, ca in far.items() if port.startswith("MF0;")}
    assert set(switch_side.values()) == {"gpu11 HCA-1/1", "gpu11 HCA-1/2", "gpu12 mlx5_0/1", "gpu12 mlx5_0/2"}
    for switch_port, ca_port in switch_side.items():
        assert far.get(ca_port) == switch_port, f"{ca_port} does not point back to {switch_port}"
    # two nodes printing the same description stay apart: the second one's ports carry its GUID
    states = {s.entity for s in samples if s.metric == "ib_link_state" and s.entity.startswith("localhost")}
    assert states == {"localhost HCA-1/1", "localhost HCA-1 (0x1070fd0300a2e641)/1"}
