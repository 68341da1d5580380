"""End to end: the gate's incast stage on a simulated leaf over the real sshd: five RoCE hosts on one SONiC leaf,
gpu01 receiving from the four others. The congestion model of the fabric (tests/fabric/congestion.py) decides
what the load does to the counters; the gate reads them before and after like on a real fabric."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.helpers import rdmatool
from tests.fabric.fixtures import sim_fabric
from tests.fabric.scenario import from_dict

pytestmark = pytest.mark.e2e

NIC = {"device": "mlx5_0", "link_layer": "Ethernet", "netdev": "ens1f0np0", "rate_gbps": 200, "width": "4X",
       "mtu": 4096, "firmware": "22.39.1002", "board_id": "MT_0000000359", "hca_type": "MT4125"}
SCENARIO = {
    "name": "incast-leaf",
    "host_qos": {"pfc": [3], "trust": "dscp", "roce_prio": 3, "roce_dscp": 26, "cnp_dscp": 48, "cnp_prio": 6},
    "switch_qos": {"pfc": [3], "trust": "dscp", "roce_prio": 3, "ecn_min_bytes": 153600, "ecn_max_bytes": 460800,
                   "ecn_probability": 100, "xoff_bytes": 524288},
    "hosts": [{"name": "gpu[01-05]", "address": "127.0.1.[1-5]", "role": "compute", "nics": [NIC]}],
    "switches": [{"name": "leaf01", "platform": "sonic", "address": "127.0.2.1"}],
    "links": "auto",
}
SENDERS = ["gpu02", "gpu03", "gpu04", "gpu05"]


@pytest.fixture(scope="module")
def leaf():
    with sim_fabric(from_dict(SCENARIO)) as fab:
        yield fab


@pytest.fixture
def clean(leaf):
    leaf.clear_faults()
    yield leaf
    leaf.clear_faults()


def gate(fab, tmp_path: Path, profile: str, budget: float = 300):
    path = tmp_path / "profile.yaml"
    path.write_text(profile)
    result = rdmatool("gate", "-i", str(fab.inventory_path), "--known-hosts", str(fab.known_hosts), "--profile",
                      str(path), "--json", "--budget", str(budget), "--save", str(tmp_path / "saved"), timeout=400)
    assert "Traceback" not in result.stderr, result.stderr
    return result, json.loads(result.stdout) if result.stdout.strip() else {}


PROFILE = """\
counters_window_s: 1
bandwidth: {enabled: false}
incast: {fan_in: 4, duration_s: 10}
"""


def stage(payload: dict) -> dict:
    return next(s for s in payload["stages"] if s["name"] == "incast")


def test_healthy_leaf_passes_with_the_incast_figures(clean, tmp_path: Path) -> None:
    result, payload = gate(clean, tmp_path, PROFILE)
    incast = stage(payload)
    assert result.returncode == 0, payload["stages"]
    assert payload["verdict"] == "pass" and incast["status"] == "passed"
    [group] = incast["figures"]["groups"]
    assert (group["switch"], group["receiver"], group["senders"]) == ("leaf01", "gpu01", SENDERS)
    assert group["port"] == "Ethernet0"  # the leaf's port toward the receiver, from LLDP
    # four senders share the receiver's 200 Gb/s: a quarter each, DCQCN keeping it fair
    shares = [s["goodput_share"] for s in group["sender_figures"]]
    assert shares == pytest.approx([0.25] * 4, abs=0.01)
    assert group["fairness"] == pytest.approx(1.0, abs=0.01)
    assert 0.85 < group["goodput_efficiency"] <= 1.0
    assert sum(s["goodput_gbps"] for s in group["sender_figures"]) < 200
    # ECN marks before PFC pauses: marks on the leaf's queue toward gpu01, CNPs sent and handled, pauses rare
    assert group["ecn_mark_ratio_at"] == "switch" and group["ecn_mark_ratio"] > 0.005
    assert group["pause_fraction"] < 0.01
    assert group["cnp_sent"] > 0 and group["cnp_handled"] > 0
    assert (tmp_path / "saved" / "incast" / "results.json").is_file()
    assert not [f for f in payload["findings"] if f["rule"].startswith("incast_")]


def test_ecn_thresholds_above_xoff_pause_before_they_mark(clean, tmp_path: Path) -> None:
    clean.set_fault("ecn_above_xoff", "leaf01")  # Kmin 2 x XOFF: the ingress groups pause the senders first
    result, payload = gate(clean, tmp_path, PROFILE)
    [group] = stage(payload)["figures"]["groups"]
    assert group["pause_fraction"] > 0.5 and group["ecn_mark_ratio"] < 0.0001
    found = [f for f in payload["findings"] if f["rule"] == "incast_ecn_after_pfc"]
    assert [(f["target"], f["entity"]) for f in found] == [("leaf01", "Ethernet0")]
    assert found[0]["severity"] == "error"
    [suggestion] = found[0]["suggestions"]  # the ECN thresholds to set, rendered for SONiC, the figures noted
    assert "Incast stage on Ethernet0 (fan-in 4): senders held by PFC 75 %" in suggestion["rationale"]
    assert result.returncode == 1 and payload["verdict"] == "fail"
    assert payload["drain"] == []  # the switch's configuration, not a node to drain
    # the saved bundle replays offline to the same incast finding
    replayed = rdmatool("gate", "--replay", str(tmp_path / "saved"), "--json")
    assert replayed.returncode == 1, replayed.stderr
    again = json.loads(replayed.stdout)
    assert [(f["target"], f["entity"]) for f in again["findings"] if f["rule"] == "incast_ecn_after_pfc"] == \
        [("leaf01", "Ethernet0")]
    assert stage(again)["figures"]["groups"][0]["pause_fraction"] == group["pause_fraction"]


def test_receiver_with_its_notification_point_off_marks_without_cnps(clean, tmp_path: Path) -> None:
    clean.set_fault("dcqcn_np_disabled", "gpu01", nic="mlx5_0", priority=3)
    # The state stage names the disabled bit (dcqcn_np_disabled) and would leave gpu01 out of the load; skipped here
    # so that the incast stage has to find the receiver by what it does under load.
    profile = PROFILE + "skip_rules: [dcqcn_np_disabled]\n"
    result, payload = gate(clean, tmp_path, profile)
    [group] = stage(payload)["figures"]["groups"]
    # millions of marks, and only the background trickle of CNPs from gpu01's other traffic
    assert group["receiver"] == "gpu01" and group["ecn_mark_ratio"] > 0.1
    assert group["receiver_figures"]["cnp_per_mark"] < 0.001
    found = [f for f in payload["findings"] if f["rule"] == "incast_marks_without_cnp"]
    assert [(f["target"], f["entity"]) for f in found] == [("gpu01", "ens1f0np0")]
    assert result.returncode == 1 and "gpu01" in payload["drain"]


def test_a_budget_too_short_for_the_load_is_inconclusive(clean, tmp_path: Path) -> None:
    # Enough for the state and counter reads, not for 10 s of load within its bound plus two more reads.
    result, payload = gate(clean, tmp_path, PROFILE, budget=25)
    assert result.returncode == 3, payload.get("stages")
    assert payload["verdict"] == "inconclusive"
    assert stage(payload)["status"] == "timeout"
