"""`rdmatool bundle diff A B` on hand-made pods: each kind of change named (targets, configuration, cabling, rates),
identical bundles exit 0 with no change, and the exit codes of --help (0 no change, 1 changes, 2 bad input, 3 no
data). The end-to-end case on two collections of the simulated fabric is tests/e2e/test_bundle_diff.py."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from rdmatool import schemas
from rdmatool.bundle_ops.diff import SCHEMA
from rdmatool.cli import app
from tests.pods import bundle as pods


def diff(a: Path, b: Path, *extra: str):
    return CliRunner().invoke(app, ["bundle", "diff", str(a), str(b), *extra], env={"COLUMNS": "200"})


def payload_of(output: str) -> dict:
    """The JSON of a diff, validated against its shipped schema (`rdmatool schema bundle-diff`)."""
    payload = json.loads(output)
    jsonschema.validate(payload, schemas.load("bundle-diff"), cls=jsonschema.Draft202012Validator)
    return payload


@pytest.fixture(scope="module")
def before(tmp_path_factory) -> Path:
    return pods.write(pods.healthy_pod(), tmp_path_factory.mktemp("diff") / "a")


@pytest.fixture(scope="module")
def changed(tmp_path_factory) -> Path:
    pod = pods.healthy_pod()
    roce = pod.host("gpu02").port("mlx5_1")
    roce.active_mtu, roce.pfc, roce.trust = 1024, (3, 4), "pcp"
    pod.host("gpu01").port("mlx5_0").fw = "28.40.1000"
    pod.switch.kmin = 100_000
    pods.bump(pod.host("gpu03").port("mlx5_0").pma, "symbol_error", 500)
    return pods.write(pod, tmp_path_factory.mktemp("diff") / "b")


def test_identical_bundles_have_no_change_and_exit_0(before: Path) -> None:
    result = diff(before, before, "--format", "json")
    assert result.exit_code == 0, result.output
    payload = payload_of(result.output)
    assert payload["schema"] == "rdmatool-bundle-diff/1" and payload["changes"] == 0
    assert payload["config"] == payload["cabling"] == payload["rates"] == []
    assert "no change" in diff(before, before).output


def test_every_change_is_named_and_exit_1(before: Path, changed: Path) -> None:
    result = diff(before, changed, "--format", "json")
    assert result.exit_code == 1, result.output
    payload = payload_of(result.output)
    config = {(c["target"], c["setting"]): (c["before"], c["after"]) for c in payload["config"]}
    assert config == {
        ("gpu01", "fw_version"): ("28.39.1002", "28.40.1000"),
        ("gpu02", "pfc_priorities"): ("3", "3,4"),
        ("gpu02", "trust_mode"): ("dscp", "pcp"),
        ("gpu02", "active_mtu"): (4096, 1024),
        ("leaf01", "ecn_min_threshold_bytes"): (153600, 100000),
    }
    # one counter read by two tools (sysfs and perfquery) is one change
    assert [(r["target"], r["metric"], r["before"], r["after"]) for r in payload["rates"]] == [
        ("gpu03", "symbol_errors_per_s", 0.0, 500 / pods.WINDOW_S)]
    assert payload["changes"] == 6
    # the table and the markdown say the same
    text = diff(before, changed).output
    assert "28.40.1000" in text and "symbol_errors_per_s" in text and "6 changes" in text
    markdown = diff(before, changed, "--format", "markdown").output
    assert "| gpu02 mlx5_1/1 | active_mtu | 4096 | 1024 |" in markdown


def test_no_rates_and_the_tolerance(before: Path, changed: Path) -> None:
    assert payload_of(diff(before, changed, "--format", "json", "--no-rates").output)["rates"] == []
    # 50 errors/s is below a floor of 100/s
    assert payload_of(diff(before, changed, "--format", "json", "--min-rate", "100").output)["rates"] == []


def test_targets_added_removed_and_unreachable(tmp_path: Path, before: Path) -> None:
    pod = pods.healthy_pod(gpus=4)
    path = pods.write(pod, tmp_path / "more")
    payload = payload_of(diff(before, path, "--format", "json", "--no-rates").output)
    assert payload["targets"]["added"] == ["gpu04"] and payload["targets"]["removed"] == []
    back = payload_of(diff(path, before, "--format", "json", "--no-rates").output)
    assert back["targets"]["removed"] == ["gpu04"]
    # gpu04's own settings are a target change, not a list of settings gone
    assert not [c for c in back["config"] if c["target"] == "gpu04"]
    # a target whose collection failed: newly unreachable, then recovered the other way round
    manifest_path = path / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    down = tmp_path / "down"
    without = pods.healthy_pod(gpus=4)
    without.hosts = [h for h in without.hosts if h.name != "gpu02"]
    without.switch.ports = [p for p in without.switch.ports if p.host != "gpu02"]
    pods.write(without, down)
    data = json.loads((down / "manifest.json").read_text())
    data["targets"] = manifest["targets"]  # gpu02 was to be collected, and its connection was refused
    data["failures"] = [*data.get("failures", []), {"target": "gpu02", "error": "gpu02: connection refused"}]
    (down / "manifest.json").write_text(json.dumps(data))
    payload = payload_of(diff(path, down, "--format", "json", "--no-rates").output)
    assert payload["targets"]["unreachable"] == [{"target": "gpu02", "error": "gpu02: connection refused"}]
    assert not [c for c in payload["config"] if c["target"] == "gpu02"]
    assert payload_of(diff(down, path, "--format", "json", "--no-rates").output)["targets"]["recovered"] == ["gpu02"]


def test_bad_input_exit_2_and_a_bundle_without_data_exit_3(tmp_path: Path, before: Path) -> None:
    missing = diff(before, tmp_path / "nothing")
    assert missing.exit_code == 2 and len(missing.output.strip().splitlines()) == 1
    assert diff(before, before, "--format", "yaml").exit_code == 2
    empty = tmp_path / "empty"
    pods.write(pods.healthy_pod(), empty, only=set())
    data = json.loads((empty / "manifest.json").read_text())
    data["failures"] = [{"target": t["name"], "error": f"{t['name']}: connection refused"} for t in data["targets"]]
    (empty / "manifest.json").write_text(json.dumps(data))
    result = diff(before, empty)
    assert result.exit_code == 3, result.output
    assert "no data" in result.output and len(result.output.strip().splitlines()) == 1


def test_a_counter_ticking_a_few_times_is_not_a_change(tmp_path: Path, before: Path) -> None:
    def with_errors(n: int) -> Path:
        pod = pods.healthy_pod()
        pods.bump(pod.host("gpu03").port("mlx5_0").pma, "symbol_error", n)
        return pods.write(pod, tmp_path / f"errors{n}")

    few = payload_of(diff(before, with_errors(5), "--format", "json", "--min-rate", "0.1").output)
    assert few["rates"] == []  # 5 errors in the window: counting noise
    many = payload_of(diff(before, with_errors(20), "--format", "json", "--min-rate", "0.1").output)
    assert [(r["target"], r["metric"]) for r in many["rates"]] == [("gpu03", "symbol_errors_per_s")]


def test_the_json_is_of_its_shipped_schema_and_the_schema_can_say_no(before: Path, changed: Path) -> None:
    assert schemas.tag("bundle-diff") == SCHEMA == "rdmatool-bundle-diff/1"
    payload = payload_of(diff(before, changed, "--format", "json").output)  # validated
    assert payload["config"] and payload["rates"]  # every kind of entry was checked against its definition
    rate = payload["rates"][0]
    for broken in ({**payload, "changes": -1},
                   {**payload, "rates": [{**rate, "before": "fast"}]},
                   {**payload, "config": [{k: v for k, v in payload["config"][0].items() if k != "after"}]},
                   {**payload, "targets": {**payload["targets"], "unreachable": ["gpu02"]}},
                   {k: v for k, v in payload.items() if k != "cabling"}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schemas.load("bundle-diff"), cls=jsonschema.Draft202012Validator)
