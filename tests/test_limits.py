"""The bounds on what one input may cost are settings: the configuration file's `limits:` section, checked at load
(FILE:LINE), and in effect for the run (rdmatool.limits)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rdmatool import limits
from rdmatool.capture.scan import Options
from rdmatool.cli import _config, app
from rdmatool.config import ConfigError, read
from rdmatool.transport.output_cap import CappedStream

runner = CliRunner()


@pytest.fixture(autouse=True)
def _defaults_after():
    yield
    limits.configure({})


@pytest.mark.parametrize(("text", "message"), [
    ("limits:\n  snapshot_bytes: lots\n", "cfg.yaml:2: limits.snapshot_bytes takes a whole number from 1048576"),
    ("limits:\n  pcap_flows: .inf\n", "cfg.yaml:2: limits.pcap_flows takes a whole number from 100 to 5000000"),
    ("site: {}\nlimits:\n  capture_packets: 10\n", "cfg.yaml:3: limits.capture_packets takes a whole number"),
    ("limits:\n  flows: 10\n", "cfg.yaml:2: unknown limits key 'flows' (known: snapshot_bytes, snapshot_lines"),
    ("limits: 5\n", "cfg.yaml:1: limits is a mapping of snapshot_bytes"),
])
def test_a_bad_limit_names_the_file_and_line(tmp_path, text, message) -> None:
    path = tmp_path / "cfg.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as raised:
        read(path)
    assert str(raised.value).replace(str(tmp_path) + "/", "").startswith(message)


def test_the_file_limits_are_the_runs(tmp_path, monkeypatch) -> None:
    path = tmp_path / "cfg.yaml"
    path.write_text("limits:\n  snapshot_bytes: 2097152\n  pcap_flows: 500\n  capture_packets: 5000\n")
    monkeypatch.setenv("RDMATOOL_CONFIG", str(path))
    assert _config.current().limits == {"snapshot_bytes": 2097152, "pcap_flows": 500, "capture_packets": 5000}
    assert (CappedStream().max_bytes, CappedStream().max_lines) == (2097152, limits.DEFAULTS["snapshot_lines"])
    assert Options().max_flows == 500
    inventory = tmp_path / "inv.yaml"
    inventory.write_text("hosts:\n  gpu01: {address: 127.0.0.1}\n")
    run = runner.invoke(app, ["capture", "-i", str(inventory), "--limit", "gpu01", "--device", "mlx5_0",
                              "--max-packets", "6000", "-o", str(tmp_path / "b")])
    assert run.exit_code == 2 and run.stderr.strip() == "rdmatool capture: --max-packets 6000: at most 5000"
    monkeypatch.setenv("RDMATOOL_CONFIG", "")  # no file: the defaults again
    _config.current()
    assert Options().max_flows == limits.DEFAULTS["pcap_flows"] == 50_000


def test_config_show_lists_each_limit_and_where_it_was_set(tmp_path, monkeypatch) -> None:
    path = tmp_path / "cfg.yaml"
    path.write_text("limits:\n  pcap_flows: 500\n")
    monkeypatch.setenv("RDMATOOL_CONFIG", str(path))
    run = runner.invoke(app, ["config", "show", "--json"])
    assert run.exit_code == 0, run.output
    import json

    rows = {s["key"]: s for s in json.loads(run.stdout)["settings"] if s["key"].startswith("limits.")}
    assert rows["limits.pcap_flows"] == {"key": "limits.pcap_flows", "value": 500, "source": f"{path}:2"}
    assert rows["limits.snapshot_bytes"]["value"] == 32 * 1024 * 1024
    assert rows["limits.snapshot_bytes"]["source"] == "default"


def test_every_command_runs_within_the_file_limits(tmp_path, monkeypatch) -> None:
    # pcap reads no other setting of the file: the limits still bound it (the root reads the file for every command)
    from tests.capture.build import pcap_cli, roce, write

    capture = write(tmp_path / "c.pcap", [roce(qp=0x100 + q) for q in range(150)])
    path = tmp_path / "cfg.yaml"
    path.write_text("limits:\n  pcap_flows: 100\n")
    monkeypatch.setenv("RDMATOOL_CONFIG", str(path))
    import json

    summary = json.loads(pcap_cli(str(capture), "--json").stdout)["summary"]["roce"]
    assert summary["flows"] == 100 and summary["other_flows"]["packets"] == 50
    monkeypatch.setenv("RDMATOOL_CONFIG", "")  # no file: every flow kept one by one again
    summary = json.loads(pcap_cli(str(capture), "--json").stdout)["summary"]["roce"]
    assert summary["flows"] == 150 and summary["other_flows"]["packets"] == 0


def test_a_config_file_that_cannot_be_used_stops_any_command(tmp_path, monkeypatch) -> None:
    path = tmp_path / "cfg.yaml"
    path.write_text("limits:\n  pcap_flows: lots\n")
    monkeypatch.setenv("RDMATOOL_CONFIG", str(path))
    run = runner.invoke(app, ["schema"])
    assert run.exit_code == 2 and run.stdout == ""
    assert run.stderr.startswith(f"rdmatool: {path}:2") and "pcap_flows" in run.stderr
