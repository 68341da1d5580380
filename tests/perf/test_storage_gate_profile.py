"""The gate profile's `storage` key (rdmatool.gate.profile): off unless given, on with `{}`, each value checked at
load (a typo or a bad value is a ProfileError naming the file and the key, never a stage failing mid-gate), and
its slow share the one the storage figures judge by; a saved stage judged again from its record (replay_storage),
a record of the wrong shape a BundleError naming the file."""

from __future__ import annotations

import pytest

from rdmatool.diagnose.pipeline import default_playbooks
from rdmatool.errors import BundleError
from rdmatool.gate import profile
from rdmatool.gate.storage_stage import replay_storage
from rdmatool.perf import storage, storage_run
from rdmatool.perf.model import PairResult
from rdmatool.rules import playbook


def load(tmp_path, text: str) -> profile.GateProfile:
    path = tmp_path / "profile.yaml"
    path.write_text(text)
    return profile.load(path)


def test_storage_is_off_by_default_and_on_when_given(tmp_path) -> None:
    assert profile.load(None).storage.enabled is False
    wanted = load(tmp_path, "storage: {clients_per_node: 2, duration_s: 3, slow_share_of_median: 0.6}\n").storage
    assert (wanted.enabled, wanted.clients_per_node, wanted.duration_s, wanted.test) == (True, 2, 3, "ib_read_bw")
    assert wanted.slow_share_of_median == 0.6
    assert load(tmp_path, "storage: {}\ndeadlines_s: {storage: 90}\n").deadlines_s["storage"] == 90
    assert load(tmp_path, "storage: {test: ib_write_bw}\n").storage.test == "ib_write_bw"  # the write path


@pytest.mark.parametrize(("text", "message"), [
    ("storage: {clients: 2}", "unknown key storage.clients"),
    ("storage: {clients_per_node: 0}", "storage.clients_per_node takes a whole number above 0"),
    ("storage: {duration_s: 2.5}", "storage.duration_s takes a whole number"),
    ("storage: {test: ib_send_lat}", "storage.test takes ib_read_bw (reads) or ib_write_bw (writes)"),
    ("storage: {slow_share_of_median: 1.5}", "storage.slow_share_of_median takes a number above 0, at most 1"),
    ("storage: 4", "storage takes a mapping"),
])
def test_a_bad_storage_value_stops_the_profile_at_load(tmp_path, text: str, message: str) -> None:
    with pytest.raises(profile.ProfileError, match="profile.yaml:1: ") as caught:
        load(tmp_path, text + "\n")
    assert message in str(caught.value)


def test_the_slow_share_decides_which_node_is_slow() -> None:
    rounds = storage.plan(["stor01", "stor02", "stor03"], ["gpu01", "gpu02", "gpu03"], 1)
    gbps = {"stor01": 190.0, "stor02": 140.0, "stor03": 190.0}  # stor02 at 74 % of the median
    results = [PairResult(g.receiver, c, "ib_read_bw", 65536, gbps[g.receiver], None, None, None, 0, "", "", 1.0)
               for r in rounds for g in r for c in g.senders]
    line = dict.fromkeys(gbps, 200.0)
    assert [n["node"] for n in storage.figures(rounds, results, line)["nodes"] if n["slow"]] == ["stor02"]
    assert not any(n["slow"] for n in storage.figures(rounds, results, line, slow_share=0.7)["nodes"])


def test_a_saved_storage_stage_is_judged_again_from_its_record(tmp_path) -> None:
    assert replay_storage(str(tmp_path), []) is None  # no storage run in this bundle
    rounds = storage.plan(["stor01", "stor02", "stor03"], ["gpu01", "gpu02", "gpu03"], 1)
    gbps = {"stor01": 196.0, "stor02": 100.0, "stor03": 196.0}  # the fleet at 82 %: above the reference
    results = [PairResult(g.receiver, c, "ib_read_bw", 65536, gbps[g.receiver], None, None, None, 0, "", "", 1.0)
               for r in rounds for g in r for c in g.senders]
    figures = storage.figures(rounds, results, dict.fromkeys(gbps, 200.0), 0.806)
    rows = storage.facts(figures, dict.fromkeys(gbps, "mlx5_0"))
    storage_run.StorageRun(rounds, results, figures, None, rows).write(tmp_path / "storage" / "results.json")
    stage = replay_storage(str(tmp_path), playbook.load_dir(default_playbooks()))
    assert stage.status == "failed" and stage.detail.endswith("(recorded)")
    assert [(f.rule, f.target, f.entity) for f in stage.findings] == [("storage_node_slow", "stor02", "mlx5_0")]
    (tmp_path / "storage" / "results.json").write_text('{"facts": 3, "figures": {}}')
    with pytest.raises(BundleError, match="results.json: unreadable storage results"):
        replay_storage(str(tmp_path), [])
