"""Every value of a gate profile is checked at load, as the configuration file's are: a number of the wrong kind
stops the gate before it collects anything (one line, FILE:LINE, exit 2), never a stage in the middle of a run."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rdmatool.cli import app
from rdmatool.gate.profile import ProfileError, load
from tests.helpers import REPO

runner = CliRunner()


@pytest.mark.parametrize(("text", "message"), [
    ("bandwidth: {rounds: three}\n", "bandwidth.rounds takes a whole number above 0, not 'three'"),
    ("bandwidth: {rounds: 2.5}\n", "bandwidth.rounds takes a whole number above 0, not 2.5"),
    ("bandwidth: {duration_s: 0}\n", "bandwidth.duration_s takes a whole number above 0, not 0"),
    ("bandwidth: {min_fraction_of_line_rate: 1.5}\n", "bandwidth.min_fraction_of_line_rate takes a number above 0, "
                                                      "at most 1, not 1.5"),
    ("bandwidth: {enabled: yes please}\n", "bandwidth.enabled takes true or false, not 'yes please'"),
    ("bandwidth: {test: 7}\n", "bandwidth.test takes a name, not 7"),
    ("latency: {max_p99_us: .inf}\n", "latency.max_p99_us takes a number above 0, not inf"),
    ("counters_window_s: -1\n", "counters_window_s takes a number above 0, not -1"),
    ("allow_missing: 1.5\n", "allow_missing takes a whole number from 0, not 1.5"),
    ("deadlines_s: {state: .nan}\n", "deadlines_s.state takes a number above 0, not nan"),
    ("deadlines_s: {stage9: 3}\n", "deadlines_s takes state, counters, bandwidth, latency, incast, nccl, storage"),
    ("nccl: {nodes: 1}\n", "nccl.nodes takes a whole number of nodes from 2, not 1"),
    ("nccl: {gpus_per_node: 0}\n", "nccl.gpus_per_node takes a whole number above 0, not 0"),
    ("nccl: {binary: -x}\n", "nccl.binary takes a program name or an absolute path, not '-x'"),
    ("nccl: {env: {LD_PRELOAD: x.so}}\n", "nccl.env: LD_PRELOAD: a NCCL_* or UCX_* variable with a value of letters, "
                                          "digits and _.,:=^/+- only, not 'x.so'"),
    ("nccl: {env: {NCCL_IB_HCA: 'a b'}}\n", "nccl.env: NCCL_IB_HCA: a NCCL_* or UCX_* variable with a value of "
                                            "letters, digits and _.,:=^/+- only, not 'a b'"),
    ("skip_rules: pfc_storm\n", "skip_rules takes a list of rule ids, not 'pfc_storm'"),
    ("bandwidth: [1]\n", "bandwidth takes a mapping, not [1]"),
])
def test_a_value_of_the_wrong_kind_is_refused_at_load(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "gate.yaml"
    path.write_text(text)
    with pytest.raises(ProfileError) as raised:
        load(path)
    assert str(raised.value) == f"{path}:1: {message}"


def test_good_values_load_as_their_kinds(tmp_path: Path) -> None:
    path = tmp_path / "gate.yaml"
    path.write_text("counters_window_s: 2\nallow_missing: 0\nbandwidth: {rounds: 2, min_fraction_of_line_rate: 1}\n"
                    "deadlines_s: {bandwidth: 90}\nskip_rules: [pfc_storm]\n")
    profile = load(path)
    assert (profile.counters_window_s, profile.bandwidth.rounds, profile.deadlines_s["bandwidth"]) == (2.0, 2, 90)
    assert profile.skip_rules == ("pfc_storm",) and profile.deadlines_s["state"] == 60


def test_the_gate_stops_before_collecting_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "gate.yaml"
    path.write_text("bandwidth: {enabled: true, rounds: three, duration_s: 1}\n")
    run = runner.invoke(app, ["gate", "--replay", str(REPO / "examples" / "demo-bundle"), "--profile", str(path)])
    assert run.exit_code == 2
    assert run.stderr == f"rdmatool gate: {path}:1: bandwidth.rounds takes a whole number above 0, not 'three'\n"
