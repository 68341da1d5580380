"""`rdmatool trial`: a tuned ECN threshold (ECN before PFC: fewer pauses, lower p99) is `helped` and exit 0, a
detuned one `hurt`, exit 1, with the commands restoring BEFORE's thresholds; a threshold moved without effect, and
runs without a configuration change, are inconclusive (exit 3). The runs are the hand-made pod's bundles
(tests/trial/fleets.py), two a side; the spread rule itself is tested on plain numbers."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
from typer.testing import CliRunner

from rdmatool import schemas
from rdmatool.cli import app
from rdmatool.config import site_profile
from rdmatool.trial import compare, runs
from rdmatool.trial.revert import revert
from tests.trial import fleets

NOOP = {"kmin": 160_000}  # a threshold moved a little: the load's outcome does not move


@pytest.fixture(scope="module")
def sides(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("trial")
    return {"before": fleets.side(root / "before", 2), "tuned": fleets.side(root / "tuned", 2, **fleets.TUNED),
            "detuned": fleets.side(root / "detuned", 2, **fleets.DETUNED),
            "noop": fleets.side(root / "noop", 2, **NOOP)}


@pytest.fixture(scope="module")
def loaded(sides) -> dict[str, list[runs.Run]]:
    return {name: runs.load(path) for name, path in sides.items()}


def judge(loaded, after: str) -> dict:
    return compare.trial(loaded["before"], loaded[after], site_profile())


def by_figure(result: dict) -> dict[str, str]:
    return {e["figure"]: e["effect"] for e in result["effects"]}


def test_a_tuned_ecn_threshold_helped(loaded) -> None:
    result = judge(loaded, "tuned")
    assert (result["verdict"], result["action"]) == ("helped", "keep")
    assert {(c["setting"], c["before"], c["after"]) for c in result["changes"]} == {
        ("ecn_min_threshold_bytes", 153_600, 51_200), ("ecn_max_threshold_bytes", 409_600, 204_800)}
    assert all(c["action"] == "keep" for c in result["changes"]) and result["revert"] == []
    effects = by_figure(result)
    assert effects["p99_latency_us"] == effects["pause_fraction"] == "better"
    assert effects["ecn_mark_ratio"] == effects["cnp_per_s"] == "changed"  # more marks: context, not judged
    assert effects["goodput_gbps"] == "noise"
    assert "p99 latency 20% lower" in result["reason"] and "pause fraction 70% lower" in result["reason"]


def test_a_detuned_ecn_threshold_hurt_and_the_revert_restores_before(loaded) -> None:
    result = judge(loaded, "detuned")
    assert (result["verdict"], result["action"]) == ("hurt", "revert")
    assert by_figure(result)["pause_fraction"] == "worse"
    [item] = result["revert"]  # Kmin and Kmax of one profile: one command
    assert (item["target"], item["entity"], item["platform"]) == ("leaf01", "AZURE_LOSSLESS", "sonic")
    assert item["commands"] == ["ecnconfig -p AZURE_LOSSLESS -gmin 153600 -gmax 409600 -gdrop 10",
                                "ecnconfig -q 3 on"]
    assert item["note"] is None  # SONiC's syntax is verified


def test_a_change_without_effect_and_no_change_at_all_are_inconclusive(loaded) -> None:
    moved = judge(loaded, "noop")
    assert moved["verdict"] == "inconclusive" and moved["reason"].startswith("no measurable effect")
    assert [c["action"] for c in moved["changes"]] == ["inconclusive"]
    same = judge(loaded, "before")  # the same runs again: nothing changed
    assert same["verdict"] == "inconclusive" and same["changes"] == []
    assert same["reason"] == "no configuration change between BEFORE and AFTER"


def test_the_spread_decides_what_is_an_effect() -> None:
    def effect(before, after, better="lower"):
        return compare.effect("f", "f", "µs", better, 0.05, before, after)["effect"]

    assert effect([10, 11, 12], [8, 8.5, 9]) == "better"
    assert effect([10, 11, 12], [9, 9.5, 10.5]) == "noise"  # 9.5 is 14 % lower, but inside BEFORE's spread
    assert effect([10, 10.1], [10.3, 10.35]) == "noise"  # apart, but under 5 %
    assert effect([10, 11], [14, 15]) == "worse"
    assert effect([10, 11], [14, 15], better=None) == "changed"
    assert effect([10], [14]) == "unproven"
    assert effect([None, None], [14, 15]) == "not measured"


def test_better_and_worse_at_once_is_inconclusive() -> None:
    found = [{"label": "p99 latency", "effect": "better", "relative": -0.2, "change": -1},
             {"label": "goodput", "effect": "worse", "relative": -0.1, "change": -10}]
    two = [SimpleNamespace(source="bundle")] * 2
    judged = compare.verdict(found, [{"setting": "x"}], [], two, two)
    assert judged["verdict"] == "inconclusive" and judged["reason"] == \
        "better: p99 latency 20% lower; worse: goodput 10% lower"


def test_revert_renders_host_settings_and_says_the_rest_in_words() -> None:
    facts = pd.DataFrame({"target": ["gpu01"], "kind": ["host"], "platform": ["linux"], "entity": ["ens1f0np0"],
                          "metric": ["trust_mode"], "value": [None]})
    pfc = {"target": "gpu01", "entity": "ens1f0np0", "setting": "pfc_priorities", "priority": None,
           "before": "3", "after": "3,4"}
    mtu = {"target": "gpu01", "entity": "mlx5_1", "setting": "active_mtu", "priority": None,
           "before": 4096, "after": 1024}
    first, second = revert([pfc, mtu], facts, site_profile())
    assert first["commands"] == ["mlnx_qos -i ens1f0np0 --pfc 0,0,0,1,0,0,0,0"] and first["platform"] == "host"
    assert second["commands"] == [] and second["by_hand"] == "restore active_mtu of gpu01 mlx5_1 to 4096"


def test_the_command_prints_the_revert_and_exits_1(sides) -> None:
    runner = CliRunner()
    out = runner.invoke(app, ["trial", str(sides["before"]), str(sides["detuned"])], env={"COLUMNS": "200"})
    assert out.exit_code == 1, out.output
    lines = out.stdout.splitlines()
    assert lines[-1] == "verdict: hurt: revert: p99 latency 50% higher, pause fraction 300% higher"
    assert "    ecnconfig -p AZURE_LOSSLESS -gmin 153600 -gmax 409600 -gdrop 10" in lines
    assert "  leaf01 AZURE_LOSSLESS ecn_min_threshold_bytes: 153600 → 1536000" in lines


def test_the_json_conforms(loaded) -> None:
    one = compare.trial(loaded["before"][:1], loaded["detuned"], site_profile())
    document = json.loads(json.dumps(one, default=str))  # as the command prints it
    assert schemas.tag("trial") == compare.SCHEMA and schemas.errors("trial", document) == []
    assert document["verdict"] == "inconclusive" and document["action"] == "repeat"  # one run before: no spread
    assert schemas.errors("trial", json.loads(json.dumps(judge(loaded, "detuned"), default=str))) == []
    assert schemas.errors("trial", {**document, "verdict": "improved"})  # the schema can say no


def test_runs_of_one_side_must_share_a_configuration(loaded) -> None:
    result = compare.trial(loaded["before"], [loaded["tuned"][0], loaded["detuned"][0]], site_profile())
    assert result["verdict"] == "inconclusive" and result["action"] == "repeat"
    assert any(n.startswith("AFTER's runs differ in configuration") for n in result["notes"])


@pytest.mark.parametrize("where", ["nope", "empty"])
def test_a_side_that_is_no_bundle_is_one_line_and_exit_2(tmp_path, sides, where) -> None:
    (tmp_path / "empty").mkdir()
    out = CliRunner().invoke(app, ["trial", str(tmp_path / where), str(sides["tuned"])])
    assert out.exit_code == 2 and len(out.output.strip().splitlines()) == 1
    assert str(tmp_path / where) in out.output and "Traceback" not in out.output


def _incast_run(run: runs.Run, pause: float, seed: int) -> runs.Run:
    """A run as a gate bundle with an incast stage gives it: its figures under load (one group) over its own."""
    group = {"name": "leaf01:gpu01", "duration_s": 10.0, "goodput_gbps": 380.0 + seed, "fairness": 0.97,
             "pause_fraction": pause * (1 + 0.02 * seed), "ecn_mark_ratio": 0.01, "cnp_sent": 5000}
    under_load, keyed = runs.incast_figures([group])
    return runs.Run(run.path, run.analysis, {**run.figures, **under_load}, keyed, "incast")


def test_a_gate_bundle_with_an_incast_stage_is_judged_on_its_figures_under_load(loaded) -> None:
    before = [_incast_run(r, 0.05, i) for i, r in enumerate(loaded["before"], 1)]
    after = [_incast_run(r, 0.01, i) for i, r in enumerate(loaded["tuned"], 1)]
    result = compare.trial(before, after, site_profile())
    assert result["before"]["source"] == result["after"]["source"] == "incast"
    pause = next(e for e in result["effects"] if e["figure"] == "pause_fraction")
    assert pause["before"]["values"] == pytest.approx([0.051, 0.052]) and pause["effect"] == "better"
    assert next(e for e in result["effects"] if e["figure"] == "cnp_per_s")["before"]["median"] == 500
    assert result["verdict"] == "helped"
    mixed = compare.trial(before, loaded["tuned"], site_profile())
    assert mixed["verdict"] == "inconclusive" and "incast figures" in mixed["reason"]


def test_the_incast_record_is_read_and_a_bad_one_is_one_line_and_exit_2(tmp_path, sides) -> None:
    import shutil

    copy = shutil.copytree(sides["before"] / "run-1", tmp_path / "b" / "run-1", symlinks=True)
    assert runs.incast_groups(copy) is None
    (copy / "incast").mkdir()
    (copy / "incast" / "results.json").write_text(json.dumps({"groups": [{"name": "leaf01:gpu01"}], "results": []}))
    assert runs.incast_groups(copy) == [{"name": "leaf01:gpu01"}]
    (copy / "incast" / "results.json").write_text('{"groups": 3}')
    out = CliRunner().invoke(app, ["trial", str(tmp_path / "b"), str(sides["tuned"])])
    assert out.exit_code == 2 and "results.json" in out.output and len(out.output.strip().splitlines()) == 1
