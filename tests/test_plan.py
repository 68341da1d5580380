"""`rdmatool plan`: the worked examples of docs/tuning.md §10 exactly, the measured variant on the demo bundle and on
a hand-made pod with perftest results, `--json` with its schema, bad input as one line, and the examples of docs/cli.md
equal to what the commands print."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rdmatool.cli import app
from rdmatool.plan.bandwidth import bandwidth_plan
from rdmatool.plan.checkpoint import checkpoint_plan
from rdmatool.plan.units import parse_duration, parse_size
from tests.helpers import REPO
from tests.pods import bundle as pods

DEMO = REPO / "examples" / "demo-bundle"


def run(*args: str):
    return CliRunner().invoke(app, ["plan", *args], env={"COLUMNS": "200"})


def test_the_worked_bandwidth_example() -> None:
    plan = bandwidth_plan(7e9, 2, 10)
    assert plan["per_iteration_bytes"] == 28e9  # 28 GB per iteration
    assert plan["required_bytes_per_s"] == 280e9  # 280 GB/s
    assert plan["required_gbps"] == 2240  # = 2,240 Gb/s
    assert plan["planning"]["efficiency"] == 0.70
    assert plan["planning"]["line_gbps_needed"] == pytest.approx(3200)
    # the parallelism factor multiplies the estimate
    assert bandwidth_plan(7e9, 2, 10, parallelism=2)["required_gbps"] == 4480


def test_the_ring_all_reduce_per_node() -> None:
    ring = bandwidth_plan(7e9, 2, 10, nodes=8)["ring"]
    assert ring["factor"] == 2 * 7 / 8
    assert ring["per_node_bytes_per_iteration"] == pytest.approx(24.5e9)
    assert ring["per_node_gbps"] == pytest.approx(1960)
    # two nodes: each sends the whole model once; many nodes: about twice the model
    assert bandwidth_plan(7e9, 2, 10, nodes=2)["ring"]["per_node_bytes_per_iteration"] == pytest.approx(14e9)
    assert bandwidth_plan(7e9, 2, 10, nodes=1000)["ring"]["factor"] == pytest.approx(1.998)


def test_effective_bandwidth_at_a_line_rate() -> None:
    plan = bandwidth_plan(7e9, 2, 10, nodes=8, line_gbps=400)
    assert plan["planning"]["effective_gbps"] == pytest.approx(280)
    assert plan["planning"]["allreduce_s_per_iteration"] == pytest.approx(24.5e9 * 8 / 280e9)
    assert plan["planning"]["iteration_share"] == pytest.approx(7.0)
    assert bandwidth_plan(7e9, 2, 10, line_gbps=400)["planning"]["links_needed"] == pytest.approx(8.0)


def test_the_worked_checkpoint_example() -> None:
    plan = checkpoint_plan(parse_size("100GB"), parse_duration("1h"), stall_s=parse_duration("5min"))
    assert plan["lost_s_per_day"] == 2 * 3600  # 2 hours a day
    assert plan["lost_share"] == pytest.approx(1 / 12)  # ~8 %
    assert round(plan["lost_share"] * 100) == 8
    assert plan["write_gbps"] == pytest.approx(100e9 * 8 / 300 / 1e9)
    # from the write rate: 100 GB at 2.67 Gb/s is about the same 5-minute stall
    by_rate = checkpoint_plan(100e9, 3600, write_gbps=2.67)
    assert by_rate["stall_s"] == pytest.approx(299.6, abs=0.1)
    assert by_rate["stall_s"] == 100e9 * 8 / 2.67e9


def test_units() -> None:
    assert parse_size("100GB") == 1e11 and parse_size("1.5TiB") == 1.5 * 2**40 and parse_size("512") == 512
    assert parse_duration("1h") == 3600 and parse_duration("90s") == 90 and parse_duration("2d") == 172800
    for bad in ("100XB", "", "-1GB", "0GB", "GB"):
        with pytest.raises(ValueError):
            parse_size(bad)


def test_the_measured_variant_reads_the_degraded_demo_fabric() -> None:
    result = run("bandwidth", "--params", "7e9", "--iterations-per-s", "10", "--nodes", "8", "--bundle", str(DEMO),
                 "--json")
    assert result.exit_code == 1, result.output  # the degraded fabric cannot carry it (tests/test_plan_verdict.py)
    plan = json.loads(result.output)
    assert plan["schema"] == "rdmatool-plan-bandwidth/1"
    measured = plan["measured"]
    # no perftest in the demo bundle: the compute rail's rates speak (mlx5_0 usually 400 Gb/s; gpu07 negotiated
    # 100 Gb/s, its width degraded; gpu06's port is down)
    assert measured["perftest"] is None
    assert measured["rail"]["port"] == "mlx5_0/1" and measured["rail"]["nominal_gbps"] == 400
    assert measured["rail"]["slowest"] == {"target": "gpu07", "gbps": 100.0}
    assert measured["rail"]["not_active"] == ["gpu06"]
    assert measured["efficiency"] == pytest.approx(0.70 * 100 / 400)
    assert measured["effective_gbps"] == pytest.approx(70)
    # both are shown: the nominal plan on the fleet's usual line rate too
    assert plan["planning"]["effective_gbps"] == pytest.approx(280)
    assert plan["inputs"]["line_gbps"] == 400
    assert plan["verdict"]["feasible"] is False and plan["verdict"]["basis"] == "measured"


def test_the_measured_variant_uses_perftest_efficiency(tmp_path: Path) -> None:
    pod = pods.healthy_pod()
    pod.host("gpu02").bw = {65536: 300.0, 1048576: 300.0}  # one slower node among three at ~390 Gb/s
    path = pods.write(pod, tmp_path / "pod")
    plan = json.loads(run("bandwidth", "--params", "7e9", "--iterations-per-s", "10", "--bundle", str(path),
                          "--json").output)
    measured = plan["measured"]
    efficiencies = sorted([388.5 / 400, 391.2 / 400] * 2 + [300 / 400] * 2)
    assert measured["perftest"]["n"] == 6
    assert measured["perftest"]["median"] == pytest.approx((efficiencies[2] + efficiencies[3]) / 2)
    assert measured["rail"]["share"] == 1.0
    assert measured["efficiency"] == pytest.approx(measured["perftest"]["median"])
    assert measured["effective_gbps"] == pytest.approx(400 * measured["efficiency"])


def test_a_baseline_without_perftest_is_said_and_exit_3() -> None:
    result = run("bandwidth", "--params", "7e9", "--iterations-per-s", "10", "--baseline",
                 str(REPO / "baselines" / "demo-healthy.json"), "--store", str(REPO / "baselines"), "--json")
    assert result.exit_code == 3
    plan = json.loads(result.output)
    assert plan["required_gbps"] == 2240 and plan["measured"]["efficiency"] is None
    assert "no perftest efficiency" in plan["measured"]["reason"]


def test_checkpoint_json_and_text() -> None:
    result = run("checkpoint", "--size", "100GB", "--interval", "1h", "--stall", "5min", "--json")
    assert result.exit_code == 0
    plan = json.loads(result.output)
    assert plan["schema"] == "rdmatool-plan-checkpoint/1" and plan["lost_s_per_day"] == 7200
    text = run("checkpoint", "--size", "100GB", "--interval", "1h", "--stall", "5min").output
    assert "lose 2 h a day: 8.3% of the compute" in text


@pytest.mark.parametrize("args", [
    ["checkpoint", "--size", "100XB", "--interval", "1h", "--write-gbps", "2"],
    ["checkpoint", "--size", "100GB", "--interval", "1h"],
    ["bandwidth", "--params", "0", "--iterations-per-s", "10"],
    ["bandwidth", "--params", "7e9", "--iterations-per-s", "10", "--nodes", "1"],
    ["bandwidth", "--params", "7e9", "--iterations-per-s", "10", "--bundle", "/nonexistent/bundle"],
])
def test_bad_input_is_one_line_and_exit_2(args) -> None:
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1


def test_the_documented_examples_are_what_the_commands_print() -> None:
    reference = (REPO / "docs" / "cli.md").read_text()
    block = next(b for b in reference.split("```console\n")[1:] if "$ rdmatool plan" in b).split("```", 1)[0]
    commands = re.findall(r"^\s*\$ rdmatool plan (.+?)(?:\s+#.*)?$", block, re.M)
    assert len(commands) == 2
    printed = [line.strip() for line in block.splitlines() if not line.strip().startswith("$")]
    for command in commands:
        output = run(*command.split()).output
        for line in output.splitlines():
            assert line.strip() in printed, line
