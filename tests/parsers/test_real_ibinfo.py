"""ibstat and ibstatus over every real capture in ../shared/real-outputs/host (skipped when the corpus is absent).

The values asserted here were read by eye from those files. Every file is also re-parsed with CRLF endings and
with a `# provenance` comment line on top, which must change nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

from rdmatool.model import Sample
from tests.helpers import one, pick, real_output, real_output_files, run


def _by_entity(samples: list[Sample], metric: str) -> dict[str, object]:
    """entity -> value (or text) of one metric."""
    return {s.entity: (s.value if s.value is not None else s.text) for s in samples if s.metric == metric}


def _assert_capture_variants_parse_alike(parser: str, path: Path) -> list[Sample]:
    text = path.read_text(encoding="utf-8")
    samples = run(parser, text)
    assert samples, f"{path.name}: nothing parsed"
    assert run(parser, text.replace("\n", "\r\n")) == samples, f"{path.name}: CRLF changes the result"
    assert run(parser, "# collected from a public fixture\n" + text) == samples, f"{path.name}: comment line"
    return samples


# --- ibstat ---------------------------------------------------------------------------------------------------


def test_every_ibstat_capture_parses() -> None:
    for path in real_output_files("host", "ibstat"):
        samples = _assert_capture_variants_parse_alike("ibstat", path)
        text = path.read_text(encoding="utf-8")
        # Every `CA '...'` block and every `Port N:` block of the file became one entity.
        assert len(_by_entity(samples, "ca_type")) == len(re.findall(r"^CA '", text, re.MULTILINE))
        assert len(_by_entity(samples, "port_state")) == len(re.findall(r"^\s+Port \d+:", text, re.MULTILINE))


def test_ibstat_a100_ibpanic_keeps_all_cas_and_flags_the_panic() -> None:
    samples = run("ibstat", real_output("host", "ibstat", "gpud-a100-ibpanic__3.txt"))
    cas = _by_entity(samples, "ca_type")
    assert cas == {f"mlx5_{i}": "MT4124" for i in range(8)}
    assert set(_by_entity(samples, "fw_version").values()) == {"20.41.1000"}
    assert set(_by_entity(samples, "link_rate_gbps").values()) == {200}
    assert set(_by_entity(samples, "port_state").values()) == {"Active"}
    assert one(samples, "mlx5_0/1", "base_lid").value == 13247
    assert one(samples, "mlx5_7/1", "base_lid").value == 13305
    assert one(samples, "mlx5_0/1", "sm_lid").value == 1
    assert one(samples, "mlx5_0/1", "capability_mask").text == "0xa651ec48"
    assert one(samples, "mlx5_3", "sys_image_guid").text == "0xb83fd203006e6e50"
    error = one(samples, "host", "tool_error")
    assert error.text.startswith("ibpanic:") and "'mlx5_8'" in error.text
    assert samples[-1] == error  # partial output first, the panic last, as printed


def test_ibstat_h100_some_down() -> None:
    samples = run("ibstat", real_output("host", "ibstat", "gpud-h100-some-down__1.txt"))
    assert len(_by_entity(samples, "ca_type")) == 12
    down = {e for e, state in _by_entity(samples, "port_state").items() if state == "Down"}
    assert down == {"mlx5_2/1", "mlx5_7/1", "mlx5_8/1"}
    assert {_by_entity(samples, "phys_state")[e] for e in down} == {"Disabled"}
    assert {_by_entity(samples, "link_rate_gbps")[e] for e in down} == {40}
    layers = _by_entity(samples, "link_layer")
    assert sum(1 for layer in layers.values() if layer == "InfiniBand") == 8
    assert one(samples, "mlx5_0/1", "base_lid").value == 75
    assert one(samples, "mlx5_11/1", "base_lid").value == 944
    assert set(_by_entity(samples, "sm_lid").values()) == {334, 0}
    assert one(samples, "mlx5_1", "fw_version").text == "22.38.1002"
    assert one(samples, "mlx5_1", "ca_type").text == "MT4125"
    assert not pick(samples, metric="tool_error")


def test_ibstat_h100_roce_polling() -> None:
    samples = run("ibstat", real_output("host", "ibstat", "gpud-h100-roce-polling__2.txt"))
    states = _by_entity(samples, "phys_state")
    assert states["mlx5_11/1"] == "Polling"
    assert states["mlx5_5/1"] == "Disabled"
    assert sum(1 for s in states.values() if s == "LinkUp") == 10
    assert set(_by_entity(samples, "link_layer").values()) == {"Ethernet"}
    assert one(samples, "mlx5_0/1", "link_rate_gbps").value == 400
    assert one(samples, "mlx5_1/1", "link_rate_gbps").value == 100
    assert one(samples, "mlx5_1/1", "port_guid").text == "0x0000000000000000"
    assert one(samples, "mlx5_0/1", "capability_mask").text == "0x00010000"


def test_ibstat_mlx4_two_ports_one_polling() -> None:
    # This capture begins with the shell prompt that ran it: `[root@storage02 ~]# ibstat mlx4_0`.
    samples = run("ibstat", real_output("host", "ibstat", "wiki-mlx4-port1-polling__4.txt"))
    assert one(samples, "mlx4_0", "num_ports").value == 2
    assert one(samples, "mlx4_0", "fw_version").text == "2.42.5000"
    assert one(samples, "mlx4_0", "hw_version").text == "1"
    assert one(samples, "mlx4_0/1", "port_state").text == "Down"
    assert one(samples, "mlx4_0/1", "phys_state").text == "Polling"
    assert one(samples, "mlx4_0/1", "link_rate_gbps").value == 10
    assert one(samples, "mlx4_0/2", "port_state").text == "Active"
    assert one(samples, "mlx4_0/2", "link_rate_gbps").value == 56  # FDR
    assert one(samples, "mlx4_0/2", "base_lid").value == 5
    assert one(samples, "mlx4_0/2", "capability_mask").text == "0x0259486a"
    assert len(samples) == 6 + 2 * 9


# --- ibstatus -------------------------------------------------------------------------------------------------


def test_every_ibstatus_capture_parses() -> None:
    for path in real_output_files("host", "ibstatus"):
        samples = _assert_capture_variants_parse_alike("ibstatus", path)
        headers = path.read_text(encoding="utf-8").count("Infiniband device")
        assert len(_by_entity(samples, "port_state")) == headers


def test_ibstatus_a100_all_active() -> None:
    samples = run("ibstatus", real_output("host", "ibstatus", "gpud-a100-all-active__1.txt"))
    assert len(_by_entity(samples, "port_state")) == 9
    assert set(_by_entity(samples, "port_state").values()) == {"Active"}
    assert set(_by_entity(samples, "phys_state").values()) == {"LinkUp"}
    ib_ports = [f"mlx5_{i}/1" for i in range(8)]
    for port in ib_ports:
        assert one(samples, port, "link_rate_gbps").value == 200
        assert one(samples, port, "link_width").text == "4X"
        assert one(samples, port, "link_width_lanes").value == 4
        assert one(samples, port, "link_speed").text == "HDR"
        assert one(samples, port, "link_layer").text == "InfiniBand"
        assert one(samples, port, "sm_lid").value == 1
    assert one(samples, "mlx5_0/1", "base_lid").value == 0x33BF
    assert one(samples, "mlx5_7/1", "base_lid").value == 0x33F9
    assert one(samples, "mlx5_0/1", "gid").text == "fe80:0000:0000:0000:0015:5dff:fd34:11eb"
    # The Ethernet port at the end: no default GID, 40 Gb/s QDR defaults.
    assert one(samples, "mlx5_8/1", "gid").text is None
    assert one(samples, "mlx5_8/1", "link_layer").text == "Ethernet"
    assert one(samples, "mlx5_8/1", "link_rate_gbps").value == 40
    assert one(samples, "mlx5_8/1", "link_speed").text == "QDR"


def test_ibstatus_and_ibstat_agree_on_the_same_a100_node() -> None:
    """Both gpud captures come from the same Azure A100 VM: the LIDs printed in hex and decimal must match."""
    ibstatus = run("ibstatus", real_output("host", "ibstatus", "gpud-a100-all-active__1.txt"))
    ibstat = run("ibstat", real_output("host", "ibstat", "gpud-a100-ibpanic__3.txt"))
    for metric in ("base_lid", "sm_lid", "port_state", "phys_state", "link_rate_gbps", "link_layer"):
        from_ibstat = _by_entity(ibstat, metric)
        from_ibstatus = {e: v for e, v in _by_entity(ibstatus, metric).items() if e in from_ibstat}
        assert from_ibstatus == from_ibstat, metric
