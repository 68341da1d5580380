"""`rdmatool diagnose --topology FILE`: the cabling of a hand-made pod bundle diffed against an expected topology;
a bad file is one line naming FILE:LINE and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rdmatool.cli import app
from tests.pods import bundle as pods

runner = CliRunner()


@pytest.fixture(scope="module")
def pod_bundle(tmp_path_factory) -> Path:
    return pods.write(pods.healthy_pod(), tmp_path_factory.mktemp("pod") / "bundle")


def diagnose(bundle: Path, topology: Path):
    return runner.invoke(app, ["diagnose", str(bundle), "--topology", str(topology), "--format", "json"])


def topology_findings(result) -> list[dict]:
    return [f for f in json.loads(result.stdout)["findings"] if f["rule"].startswith("topology_")]


def test_matching_topology_adds_nothing(pod_bundle: Path, tmp_path: Path) -> None:
    plan = tmp_path / "topology.yaml"
    plan.write_text("rails:\n  - {nic: mlx5_1, switch: leaf01, hosts: 'gpu[01-03]'}\n"
                    "links:\n  - {host: gpu01, nic: mlx5_1, switch: leaf01, port: Ethernet0}\n")
    result = diagnose(pod_bundle, plan)
    assert result.exit_code == 0, result.output
    assert topology_findings(result) == []


def test_wrong_port_and_missing_link_are_named(pod_bundle: Path, tmp_path: Path) -> None:
    plan = tmp_path / "topology.yaml"
    plan.write_text("links:\n  - {host: gpu02, nic: mlx5_1, switch: leaf01, port: Ethernet12}\n"
                    "  - {host: gpu03, nic: mlx5_2, switch: leaf01, port: Ethernet40}\n")
    result = diagnose(pod_bundle, plan)
    assert result.exit_code == 1, result.output  # a missing link is an error
    found = {(f["rule"], f["target"], f["entity"]): f for f in topology_findings(result)}
    assert set(found) == {("topology_wrong_port", "gpu02", "mlx5_1"), ("topology_missing_link", "gpu03", "mlx5_2")}
    assert "leaf01 Ethernet4" in found[("topology_wrong_port", "gpu02", "mlx5_1")]["symptom"]
    assert "leaf01 Ethernet12" in found[("topology_wrong_port", "gpu02", "mlx5_1")]["symptom"]


@pytest.mark.parametrize("text, line", [("links:\n  - {host: gpu01, nic: mlx5_1}\n", 2), ("rails: 3\n", 1)])
def test_bad_topology_file_is_one_line_and_exit_2(pod_bundle: Path, tmp_path: Path, text: str, line: int) -> None:
    plan = tmp_path / "topology.yaml"
    plan.write_text(text)
    result = diagnose(pod_bundle, plan)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"rdmatool: {plan}:{line}:"), lines
    assert "Traceback" not in result.output
