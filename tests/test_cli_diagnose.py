"""`rdmatool diagnose` offline on the shipped demo bundle: the JSON contract, the renderers and the exit codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rdmatool.cli import app
from tests.helpers import REPO

runner = CliRunner()
DEMO = REPO / "examples" / "demo-bundle"
BASELINE = REPO / "baselines" / "demo-healthy.json"
FINDING_KEYS = ["rule", "severity", "target", "entity", "symptom", "cause", "check", "fix", "evidence", "suggestions"]


@pytest.fixture(scope="module")
def demo_json() -> dict:
    result = runner.invoke(app, ["diagnose", str(DEMO), "--baseline", str(BASELINE), "--format", "json"])
    assert result.exit_code == 1, result.output
    return json.loads(result.stdout)


def test_json_shape(demo_json: dict) -> None:
    # rdmatool-diagnosis/1 (docs/json-schemas.md): the schema tag, then what an on-call reads first, then the detail
    assert list(demo_json) == ["schema", "verdict", "counts", "drain", "unreachable", "findings", "suggestions",
                               "failures", "notes"]
    assert demo_json["schema"] == "rdmatool-diagnosis/1"
    assert demo_json["verdict"] == "fail"
    for finding in demo_json["findings"]:
        # `explained_by` (added within /1) only on a finding another one explains on its port
        assert list(finding) == ["id", *FINDING_KEYS, *(["explained_by"] if "explained_by" in finding else [])]
        assert finding["severity"] in ("info", "warning", "error", "critical")
        for suggestion in finding["suggestions"]:
            assert list(suggestion) == ["setting", "target", "current", "proposed", "rationale", "commands",
                                        "devices"]
            assert set(suggestion["devices"]) <= set(suggestion["commands"])  # a peer named only for its lines
            assert isinstance(suggestion["target"], str) and suggestion["target"]  # the device it changes
            assert all(isinstance(c, str) for cmds in suggestion["commands"].values() for c in cmds)


def test_demo_shows_at_least_six_distinct_faults(demo_json: dict) -> None:
    hard = {f["rule"] for f in demo_json["findings"] if f["severity"] in ("error", "critical")}
    expected = {"ib_link_flapping", "pfc_storm", "pfc_priority_mismatch_host_switch", "dcqcn_rp_disabled",
                "port_not_active", "port_width_degraded"}
    assert expected <= hard
    warnings = {f["rule"] for f in demo_json["findings"] if f["severity"] == "warning"}
    assert {"firmware_drift", "active_mtu_below_max"} <= warnings
    flap = next(f for f in demo_json["findings"] if f["rule"] == "ib_link_flapping")
    assert (flap["target"], flap["entity"]) == ("gpu01", "mlx5_0/1")
    assert flap["evidence"]["observed"] >= 1 and flap["evidence"]["window_s"] > 0


def test_suggestions_render_host_and_switch_commands(demo_json: dict) -> None:
    rp = next(f for f in demo_json["findings"] if f["rule"] == "dcqcn_rp_disabled")
    commands = [c for s in rp["suggestions"] for c in s["commands"].get("host", [])]
    assert "echo 1 > /sys/class/net/ens1f0np0/ecn/roce_rp/enable/3" in commands
    # gpu03 runs PFC on priority 4, its switch leaf03 on 3 alone, as it should: the host is the end to change, and
    # no switch command is offered for a port that is already right
    mismatch = next(f for f in demo_json["findings"] if f["rule"] == "pfc_priority_mismatch_host_switch")
    assert {p for s in mismatch["suggestions"] for p in s["commands"]} == {"host"}
    assert [c for s in mismatch["suggestions"] for c in s["commands"]["host"]] == [
        "mlnx_qos -i ens1f0np0 --pfc 0,0,0,1,0,0,0,0"]


def test_collection_failures_are_reported(demo_json: dict) -> None:
    assert any(f["target"] == "gpu12" and "refused" in f["error"] for f in demo_json["failures"])
    assert any(f.get("parser") == "ibstat" and f["target"] == "gpu10" for f in demo_json["failures"])


def test_same_bundle_same_output() -> None:
    first = runner.invoke(app, ["diagnose", str(DEMO), "--format", "json"]).stdout
    second = runner.invoke(app, ["diagnose", str(DEMO), "--format", "json"]).stdout
    assert first == second


def test_markdown_and_table_views() -> None:
    markdown = runner.invoke(app, ["diagnose", str(DEMO), "--format", "markdown"])
    assert markdown.exit_code == 1
    assert markdown.stdout.startswith("# rdmatool diagnosis: FAIL")
    assert "## Critical" in markdown.stdout and "| where | symptom |" in markdown.stdout
    table = runner.invoke(app, ["diagnose", str(DEMO)], env={"COLUMNS": "120"})
    assert table.exit_code == 1
    assert "verdict: FAIL" in table.stdout and "SUGGESTED CHANGES" in table.stdout


def test_usage_errors_exit_2_with_one_line(tmp_path: Path) -> None:
    missing = runner.invoke(app, ["diagnose", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "no such bundle" in missing.output
    foreign = tmp_path / "foreign"
    shutil.copytree(DEMO, foreign)
    (foreign / "manifest.json").write_text('{"format": "other/9"}')
    result = runner.invoke(app, ["diagnose", str(foreign)])
    assert result.exit_code == 2 and "manifest.json" in result.output and "other/9" in result.output
    bad_playbooks = tmp_path / "pb"
    bad_playbooks.mkdir()
    (bad_playbooks / "x.yaml").write_text("rules:\n  - id: x\n    kind: sorcery\n")
    result = runner.invoke(app, ["diagnose", str(DEMO), "--playbooks", str(bad_playbooks)])
    assert result.exit_code == 2 and f"{bad_playbooks / 'x.yaml'}:2:" in result.output
    assert runner.invoke(app, ["diagnose", str(DEMO), "--format", "html"]).exit_code == 2
    assert runner.invoke(app, ["diagnose"]).exit_code == 2


def test_inconclusive_when_collection_failed_but_nothing_is_wrong(tmp_path: Path) -> None:
    playbooks = tmp_path / "pb"
    playbooks.mkdir()
    (playbooks / "quiet.yaml").write_text(
        "rules:\n  - {id: never, kind: threshold, metric: load1, op: '>', value: 1000000, severity: error,\n"
        "     symptom: s, cause: c, check: k, fix: f}\n")
    result = runner.invoke(app, ["diagnose", str(DEMO), "--playbooks", str(playbooks), "--format", "json"])
    assert result.exit_code == 3
    assert json.loads(result.stdout)["verdict"] == "inconclusive"
