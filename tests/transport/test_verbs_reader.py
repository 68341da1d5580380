"""The verbs read of local mode (rdmatool/transport/verbs.py): the mapping of pyverbs' objects onto rdmatool's
units, the whole read over a fake pyverbs and a sysfs tree, and the real Debian package on this machine.

The fakes follow pyverbs 44.0 (tests/transport/fake_pyverbs.py says which shapes). The real package runs under the
distribution's Python (/usr/bin/python3, where `apt-get install python3-pyverbs` puts it): the reader is standard
library only, so that interpreter runs the file as it is, exactly as local mode runs it in a venv created with
--system-site-packages. This machine has no RDMA subsystem, so the real read ends in pyverbs' own
"Failed to get devices list".
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from rdmatool import parsers
from rdmatool.transport import verbs
from tests.transport import fake_pyverbs as fake

READER = Path(verbs.__file__)
SYSTEM_PYTHON = Path("/usr/bin/python3")


def _system_pyverbs() -> bool:
    if not SYSTEM_PYTHON.exists():
        return False
    probe = subprocess.run([str(SYSTEM_PYTHON), "-I", "-c", "import pyverbs.device"], capture_output=True)
    return probe.returncode == 0


needs_system_pyverbs = pytest.mark.skipif(not _system_pyverbs(), reason="python3-pyverbs not installed")


def test_guid_is_spelled_as_ibv_devinfo_prints_it() -> None:
    assert verbs.guid_text(fake.raw_guid("b8ce:f603:00c5:2a3c")) == "b8ce:f603:00c5:2a3c"
    assert verbs.guid_text(fake.raw_guid("0002:c903:0000:0001")) == "0002:c903:0000:0001"


@needs_system_pyverbs
def test_guid_spelling_equals_pyverbs_own() -> None:
    """The same integers through pyverbs' own guid_format (the installed package) give the same text."""
    raws = [fake.raw_guid("b8ce:f603:00c5:2a3c"), 0x0102030405060708, 1]
    code = f"import pyverbs.device as d; print('\\n'.join(d.guid_format(n) for n in {raws!r}))"
    theirs = subprocess.run([str(SYSTEM_PYTHON), "-I", "-c", code], capture_output=True, text=True, check=True)
    assert theirs.stdout.split() == [verbs.guid_text(n) for n in raws]


def test_device_attributes() -> None:
    record = verbs.device_record("mlx5_0", fake.DeviceAttr(atomic_caps=2, phys_port_cnt=2, max_qp=262144))
    assert record["fw_ver"] == "28.39.1002"
    assert record["node_guid"] == "b8ce:f603:00c5:2a3c"
    assert record["atomic_caps"] == "GLOB"
    assert (record["phys_port_cnt"], record["max_qp"], record["max_mr_size"]) == (2, 262144, 2**64 - 1)
    assert verbs.device_record("x", fake.DeviceAttr(atomic_caps=7))["atomic_caps"] == "unknown (7)"


@pytest.mark.parametrize(("width", "speed", "label", "lanes", "generation", "rate"), [
    (2, 64, "4X", 4, "HDR", 200.0),      # ConnectX-6 HDR
    (2, 128, "4X", 4, "NDR", 400.0),     # ConnectX-7 NDR
    (2, 32, "4X", 4, "EDR", 100.0),      # 100GbE RoCE reports 4X EDR
    (1, 32, "1X", 1, "EDR", 25.0),       # 25GbE RoCE
    (2, 16, "4X", 4, "FDR", 56.0),
    (2, 8, "4X", 4, "FDR10", 40.0),
    (2, 4, "4X", 4, "QDR", 40.0),        # pyverbs' speed_to_str would say 5.0 Gbps per lane here
    (16, 64, "2X", 2, "HDR", 100.0),
    (8, 1, "12X", 12, "SDR", 30.0),      # 12X: pyverbs' width_to_str says "Invalid width"
])
def test_port_rate_is_width_times_lane_speed(width, speed, label, lanes, generation, rate) -> None:
    record = verbs.port_record(1, fake.PortAttr(active_width=width, active_speed=speed))
    assert (record["width"], record["lanes"], record["speed"], record["rate_gbps"]) == (label, lanes, generation, rate)


def test_port_states_mtus_and_link_layer() -> None:
    record = verbs.port_record(2, fake.PortAttr(state=1, phys_state=3, active_mtu=3, max_mtu=5, link_layer=2,
                                                lid=0, sm_lid=0))
    assert (record["port"], record["state"], record["phys_state"]) == (2, "Down", "Disabled")
    assert (record["active_mtu"], record["max_mtu"], record["link_layer"]) == (1024, 4096, "Ethernet")
    assert (record["lid"], record["sm_lid"]) == (0, 0)
    unknown = verbs.port_record(1, fake.PortAttr(active_speed=3, active_mtu=9))
    assert unknown["speed"] is None and unknown["rate_gbps"] is None and unknown["active_mtu"] is None
    assert unknown["codes"]["active_speed"] == 3 and unknown["codes"]["active_mtu"] == 9  # kept for an engineer


def test_gid_entries() -> None:
    assert verbs.gid_record(5, fake.GID("0000:0000:0000:0000:0000:0000:0000:0000"), None) is None
    v2 = verbs.gid_record(3, fake.GID("0000:0000:0000:0000:0000:ffff:0a14:000b"), 1)
    assert v2 == {"index": 3, "gid": "0000:0000:0000:0000:0000:ffff:0a14:000b", "type": "RoCE v2",
                  "ipv4": "10.20.0.11"}
    link_local = verbs.gid_record(0, fake.GID("fe80:0000:0000:0000:ba3f:d2ff:fe1c:2b3a"), 0)
    assert link_local["type"] == "IB/RoCE v1" and link_local["ipv4"] is None


def _sysfs(root: Path, device: str, port: int, files: dict[str, str]) -> None:
    base = root / device / "ports" / str(port)
    for name, value in files.items():
        path = base / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(value + "\n")


def _roce_device() -> fake.FakeDevice:
    return fake.FakeDevice(
        fake.DeviceAttr(), {1: fake.PortAttr(link_layer=2, active_width=2, active_speed=32, lid=0, sm_lid=0,
                                             active_mtu=3)},
        {(1, 0): ("fe80:0000:0000:0000:ba3f:d2ff:fe1c:2b3a", 0), (1, 1): ("fe80:0000:0000:0000:ba3f:d2ff:fe1c:2b3a", 1),
         (1, 3): ("0000:0000:0000:0000:0000:ffff:0a14:000b", 1)})


def test_read_over_fake_pyverbs_agrees_with_sysfs(monkeypatch, tmp_path) -> None:
    fake.install(monkeypatch, {"mlx5_0": _roce_device()})
    _sysfs(tmp_path, "mlx5_0", 1, {
        "state": "4: ACTIVE", "phys_state": "5: LinkUp", "rate": "100 Gb/sec (4X EDR)", "link_layer": "Ethernet",
        "lid": "0x0", "sm_lid": "0x0", "gids/3": "0000:0000:0000:0000:0000:ffff:0a14:000b",
        "gid_attrs/types/3": "RoCE v2"})
    doc = verbs.read(str(tmp_path))
    assert doc["status"] == "ok" and doc["reason"] is None
    port = doc["devices"][0]["ports"][0]
    assert [g["index"] for g in port["gids"]] == [0, 1, 3]  # the empty index 2 is left out
    assert port["sysfs"]["gids"]["3"] == ["0000:0000:0000:0000:0000:ffff:0a14:000b", "RoCE v2"]
    samples = parsers.parse("verbs", json.dumps(doc))
    by = {(s.entity, s.metric, s.raw_key): s for s in samples}
    assert by[("mlx5_0/1", "link_rate_gbps", "rate_gbps")].value == 100.0
    assert by[("mlx5_0/1", "ipv4_address", "GID[3]")].text == "10.20.0.11"
    assert by[("mlx5_0/1", "gid_type", "GID[1]")].text == "RoCE v2"
    assert by[("host", "verbs_devices", "devices")].value == 1
    assert not [s for s in samples if s.metric in ("verbs_disagreement", "verbs_unavailable")]


def test_read_names_what_verbs_and_sysfs_say_differently(monkeypatch, tmp_path) -> None:
    fake.install(monkeypatch, {"mlx5_0": _roce_device()})
    _sysfs(tmp_path, "mlx5_0", 1, {
        "state": "1: DOWN", "phys_state": "5: LinkUp", "rate": "25 Gb/sec (1X EDR)", "link_layer": "Ethernet",
        "gids/3": "0000:0000:0000:0000:0000:ffff:0a14:000c", "gid_attrs/types/1": "IB/RoCE v1"})
    samples = parsers.parse("verbs", json.dumps(verbs.read(str(tmp_path))))
    [disagreement] = [s for s in samples if s.metric == "verbs_disagreement"]
    assert disagreement.entity == "mlx5_0/1"
    assert "port_state: verbs Active, sysfs Down" in disagreement.text
    assert "link_rate_gbps: verbs 100, sysfs 25" in disagreement.text
    assert "GID[3]: verbs 0000:0000:0000:0000:0000:ffff:0a14:000b, sysfs" in disagreement.text
    assert "GID[1] type: verbs RoCE v2, sysfs IB/RoCE v1" in disagreement.text
    assert "phys_state" not in disagreement.text  # the two agree there


def test_a_device_that_cannot_be_opened_does_not_hide_the_others(monkeypatch, tmp_path) -> None:
    fake.install(monkeypatch, {"mlx5_0": _roce_device()})
    broken = fake.Device(b"mlx5_9")
    module = __import__("sys").modules["pyverbs.device"]
    monkeypatch.setattr(module, "get_device_list", lambda: [fake.Device(b"mlx5_0"), broken])
    doc = verbs.read(str(tmp_path))
    assert [d["name"] for d in doc["devices"]] == ["mlx5_0", "mlx5_9"]
    assert doc["devices"][1]["error"] == "Failed to open device mlx5_9"
    errors = [s for s in parsers.parse("verbs", json.dumps(doc)) if s.metric == "tool_error"]
    assert [(s.entity, s.text) for s in errors] == [("mlx5_9", "verbs: Failed to open device mlx5_9")]


def test_pyverbs_failing_to_list_devices_is_said(monkeypatch) -> None:
    fake.install(monkeypatch, None, list_error="Failed to get devices list")
    doc = verbs.read()
    assert (doc["status"], doc["reason"], doc["devices"]) == ("failed", "pyverbs: Failed to get devices list", [])


def test_no_pyverbs_is_said(monkeypatch) -> None:
    monkeypatch.setitem(__import__("sys").modules, "pyverbs", None)  # what an absent package looks like to import
    doc = verbs.read()
    assert doc["status"] == "unavailable" and "pyverbs is not importable" in doc["reason"]


@needs_system_pyverbs
def test_the_real_debian_package_on_a_machine_without_rdma() -> None:
    """Debian's python3-pyverbs under the system Python: the reader runs, and says pyverbs' own reason."""
    done = subprocess.run([str(SYSTEM_PYTHON), "-I", str(READER)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    if Path("/sys/class/infiniband").is_dir() and any(Path("/sys/class/infiniband").iterdir()):
        pytest.skip("this machine has RDMA devices: the no-RDMA path cannot be seen here")
    assert doc["status"] == "failed"
    assert doc["reason"] == "pyverbs: Failed to get devices list"
    assert doc["pyverbs"].startswith("/usr/lib/python3/dist-packages/pyverbs")
    [unavailable] = [s for s in parsers.parse("verbs", done.stdout) if s.metric == "verbs_unavailable"]
    assert unavailable.text == "pyverbs: Failed to get devices list"
