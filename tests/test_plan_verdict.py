"""A plan says whether it can be met (rdmatool.plan.bandwidth.feasibility, rdmatool.plan.checkpoint): a ring whose
all-reduce takes longer than an iteration, or a checkpoint stall not shorter than its interval, is `verdict: NOT
FEASIBLE` and exit 1; one that fits is exit 0; and the planners take counts and sizes as people write them (7B,
100GB)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rdmatool.cli import app
from rdmatool.plan.bandwidth import bandwidth_plan
from rdmatool.plan.checkpoint import checkpoint_plan
from rdmatool.plan.units import parse_count
from tests.helpers import REPO

DEMO = REPO / "examples" / "demo-bundle"


def run(*args: str):
    return CliRunner().invoke(app, ["plan", *args], env={"COLUMNS": "200"})


def test_a_ring_that_fits_in_an_iteration_is_feasible_and_one_that_does_not_is_not() -> None:
    # 7B at BF16 on 8 nodes: 24.5 GB per node per iteration; 400 Gb/s at 70 % moves it in 0.7 s
    fits = bandwidth_plan(7e9, 2, 1, nodes=8, line_gbps=400)["verdict"]
    assert fits["feasible"] is True and fits["basis"] == "planning"
    assert fits["iteration_share"] == pytest.approx(0.7)
    over = bandwidth_plan(7e9, 2, 10, nodes=8, line_gbps=400)["verdict"]
    assert over["feasible"] is False and over["iteration_share"] == pytest.approx(7.0)
    assert "2,800 Gb/s per node" in over["reason"]  # the line rate that would carry it
    # exactly one iteration is still feasible: the bound, not a margin
    assert bandwidth_plan(7e9, 2, 1 / 0.7, nodes=8, line_gbps=400)["verdict"]["feasible"] is True


@pytest.mark.parametrize(("kwargs", "why"), [
    ({"line_gbps": 400}, "--nodes"),
    ({"nodes": 8}, "line rate"),
    ({"nodes": 8, "measured": {"efficiency": None, "reason": "the bundle holds no perftest result"}},
     "nothing measured: the bundle holds no perftest result"),
])
def test_what_cannot_be_judged_is_not_judged(kwargs: dict, why: str) -> None:
    verdict = bandwidth_plan(7e9, 2, 10, **kwargs)["verdict"]
    assert verdict["feasible"] is None and why in verdict["reason"]


def test_the_demo_fabric_cannot_carry_the_plan_it_could_nominally() -> None:
    """The issue's case: on the demo bundle (gpu07 at 100 of 400 Gb/s) the all-reduce took 280 % of an iteration and
    the command said nothing of it, exit 0."""
    args = ("bandwidth", "--params", "7B", "--iterations-per-s", "1", "--nodes", "8")
    nominal = run(*args, "--link-gbps", "400")
    assert nominal.exit_code == 0, nominal.output
    assert nominal.output.splitlines()[-1].startswith("verdict: feasible: the all-reduce takes 0.7 s")
    measured = run(*args, "--bundle", str(DEMO))
    assert measured.exit_code == 1, measured.output
    last = measured.output.splitlines()[-1]
    assert last.startswith("verdict: NOT FEASIBLE: the all-reduce takes 2.8 s at the measured 17.5% of line rate")
    assert "280% of the 1 s an iteration has" in last  # the JSON's verdict: tests/test_plan.py


def test_the_estimate_alone_prints_no_verdict_and_exits_0() -> None:
    result = run("bandwidth", "--params", "7e9", "--iterations-per-s", "10", "--nodes", "8")
    assert result.exit_code == 0 and "verdict" not in result.output


def test_a_checkpoint_stall_longer_than_its_interval_cannot_be_met() -> None:
    assert checkpoint_plan(100e9, 3600, stall_s=300)["verdict"]["feasible"] is True
    never = checkpoint_plan(100e9, 3600, write_gbps=0.1)  # 8,000 s to write, every 3,600 s
    assert never["verdict"]["feasible"] is False and never["lost_share"] == 1.0
    result = run("checkpoint", "--size", "100GB", "--interval", "1h", "--write-gbps", "0.1")
    assert result.exit_code == 1, result.output
    assert result.output.splitlines()[-1] == ("verdict: NOT FEASIBLE: a stall of 8,000 s every 3,600 s leaves no "
                                              "time to compute: checkpoint less often or write faster")
    stalled = run("checkpoint", "--size", "100GB", "--interval", "1h", "--stall", "2h", "--json")
    assert stalled.exit_code == 1 and json.loads(stalled.stdout)["verdict"]["feasible"] is False


def test_counts_take_the_suffixes_model_sizes_are_written_with() -> None:
    assert parse_count("7B") == parse_count("7b") == parse_count("7e9") == parse_count("7000000000") == 7e9
    assert parse_count("350M") == 350e6 and parse_count("1.5T") == 1.5e12 and parse_count("70k") == 70e3
    for bad in ("7X", "", "-7B", "0B", "B", "7 GB"):
        with pytest.raises(ValueError):
            parse_count(bad)


def test_params_and_size_with_units_on_the_command_line() -> None:
    by_suffix = json.loads(run("bandwidth", "--params", "7B", "--iterations-per-s", "10", "--json").stdout)
    by_number = json.loads(run("bandwidth", "--params", "7e9", "--iterations-per-s", "10", "--json").stdout)
    assert by_suffix == by_number and by_suffix["inputs"]["params"] == 7e9
    checkpoint = json.loads(run("checkpoint", "--size", "100GB", "--interval", "1h", "--stall", "5min",
                                "--json").stdout)
    assert checkpoint["size_bytes"] == 100e9
    bad = run("bandwidth", "--params", "7X", "--iterations-per-s", "10")
    assert bad.exit_code == 2
    assert bad.stderr.strip() == ("rdmatool plan bandwidth: --params '7X': expected a number with one of the "
                                  "suffixes K, M, B, T")
