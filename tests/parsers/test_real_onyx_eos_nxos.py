"""The Onyx / EOS / NX-OS parsers over every real capture in the shared corpus, with values read by eye.

Only NX-OS `show interface` has a public verbatim capture (switch/nxos); the Onyx and EOS parsers are covered by
golden fixtures built from the vendor documents.
"""

from __future__ import annotations

from rdmatool.parsers._common import is_blank_or_comment
from tests.helpers import one, pick, real_output, real_output_files, run


def _without_provenance(text: str) -> str:
    """Drop the `# ...` provenance lines a collector may have put on top (NX-OS prints no line starting with #)."""
    lines = text.splitlines()
    while lines and is_blank_or_comment(lines[0]) and lines[0].strip():
        lines.pop(0)
    return "\n".join(lines)


def test_every_nxos_show_interface_sample_parses_with_pause_counters() -> None:
    for path in real_output_files("switch", "nxos"):
        samples = run(
            "nxos_interface", _without_provenance(path.read_text(encoding="utf-8", errors="replace"))
        )
        assert pick(samples, metric="port_state"), path.name
        assert pick(samples, metric="rx_pause_frames"), path.name
        assert not pick(samples, metric="tool_error"), path.name


def test_nxos_show_interface_fex_capture_values() -> None:
    samples = run(
        "nxos_interface", _without_provenance(real_output("switch", "nxos", "show_interface__1.txt"))
    )
    ports = sorted({s.entity for s in samples})
    assert ports == ["Ethernet1/1/1", "Ethernet1/1/2"]
    assert one(samples, "Ethernet1/1/1", "port_state").text == "up"
    assert one(samples, "Ethernet1/1/1", "link_rate_gbps").value == 10
    # link-level pause received from the server side, none sent
    assert one(samples, "Ethernet1/1/1", "rx_pause_frames").value == 39027
    assert one(samples, "Ethernet1/1/1", "tx_pause_frames").value == 0
    assert one(samples, "Ethernet1/1/2", "rx_pause_frames").value == 34039
    # large egress discards on both ports
    assert one(samples, "Ethernet1/1/1", "tx_discards").value == 28126154
    assert one(samples, "Ethernet1/1/2", "tx_discards").value == 21998765
    assert one(samples, "Ethernet1/1/1", "rx_discards").value == 0
    assert one(samples, "Ethernet1/1/1", "rx_crc_errors").value == 0
    # the flapping port: 35821 resets, last flap 8 s ago
    assert one(samples, "Ethernet1/1/1", "interface_resets").value == 174
    assert one(samples, "Ethernet1/1/2", "interface_resets").value == 35821
    # 64-bit counters keep every digit
    rx_bytes = one(samples, "Ethernet1/1/1", "rx_bytes").value
    assert rx_bytes == 495988926977243 and isinstance(rx_bytes, int)
    assert one(samples, "Ethernet1/1/2", "tx_bytes").value == 472269162132004
    assert one(samples, "Ethernet1/1/1", "rx_packets").value == 76878491050
    assert one(samples, "Ethernet1/1/2", "tx_packets").value == 90108673673
    # first load interval (30 s): bits/sec converted to bytes/sec
    assert one(samples, "Ethernet1/1/1", "rx_bytes_per_s").value == 25280136 / 8
    assert one(samples, "Ethernet1/1/2", "tx_packets_per_s").value == 2088


def test_nxos_show_interface_capture_with_provenance_line() -> None:
    text = "# source: public capture\n" + real_output("switch", "nxos", "show_interface__1.txt")
    samples = run("nxos_interface", _without_provenance(text))
    assert one(samples, "Ethernet1/1/2", "rx_pause_frames").value == 34039
    # the parser itself also skips a leading comment line
    assert one(run("nxos_interface", text), "Ethernet1/1/2", "rx_pause_frames").value == 34039
