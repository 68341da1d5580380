"""End to end: `rdmatool gate` on a rail-optimised pod of the simulated fabric. Four GPU hosts, each with two RoCE
NICs: mlx5_0 on rail leaf leaf01 (SONiC), mlx5_1 on rail leaf leaf02 (Cumulus), the cabling seen by the gate's own
LLDP collection. The bandwidth stage runs rail by rail (NIC k against NIC k, both rails at once) and reports the
exposure of its rail plan, bad rail NIC included; one slow NIC (fault slow_nic) drains its host naming the NIC, and
`gate --replay` of the saved bundle comes to the same conclusion. Each pair names the device/port of both ends (JSON,
JUnit, the stage's line), and a host whose compute rail is down passes neither the gate nor `perf run`, which names
the rail and why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.helpers import rdmatool
from tests.fabric import scenario as scenario_mod
from tests.fabric.fixtures import sim_fabric

pytestmark = pytest.mark.e2e

HOSTS = [f"gpu0{i}" for i in range(1, 5)]
RAILS = ["mlx5_0", "mlx5_1"]
NIC = {"link_layer": "Ethernet", "rate_gbps": 200, "width": "4X", "mtu": 4096, "firmware": "22.39.1002",
       "board_id": "MT_0000000359", "hca_type": "MT4125"}
PROFILE = "counters_window_s: 1\nbandwidth: {rounds: 3, duration_s: 1}\n"


def rail_pod() -> scenario_mod.Scenario:
    links = []
    for i, host in enumerate(HOSTS):
        links.append({"host": host, "nic": "mlx5_0", "switch": "leaf01", "switch_port": f"Ethernet{4 * i}"})
        links.append({"host": host, "nic": "mlx5_1", "switch": "leaf02", "switch_port": f"swp{i + 1}"})
    return scenario_mod.from_dict({
        "name": "rail-gate",
        "hosts": [{"name": "gpu[01-04]", "address": "127.0.1.[1-4]", "role": "compute",
                   "nics": [{"device": "mlx5_0", "netdev": "ens1f0np0", **NIC},
                            {"device": "mlx5_1", "netdev": "ens1f1np1", **NIC}]}],
        "switches": [
            {"name": "leaf01", "platform": "sonic", "address": "127.0.2.1",
             "ports": [{"name": f"Ethernet{4 * i}", "speed_gbps": 200} for i in range(len(HOSTS))]},
            {"name": "leaf02", "platform": "cumulus", "address": "127.0.2.2",
             "ports": [{"name": f"swp{i + 1}", "speed_gbps": 200} for i in range(len(HOSTS))]},
        ],
        "links": links,
    })


@pytest.fixture(scope="module")
def pod():
    with sim_fabric(rail_pod()) as fab:
        yield fab


@pytest.fixture
def clean(pod):
    pod.clear_faults()
    yield pod
    pod.clear_faults()


def gate(fab, tmp_path: Path, *extra: str):
    (tmp_path / "profile.yaml").write_text(PROFILE)
    result = rdmatool("gate", "-i", str(fab.inventory_path), "--known-hosts", str(fab.known_hosts), "--profile",
                      str(tmp_path / "profile.yaml"), "--json", "--save", str(tmp_path / "bundle"), *extra,
                      timeout=400)
    assert "Traceback" not in result.stderr, result.stderr
    return result, (json.loads(result.stdout) if result.stdout.strip() else {})


def bandwidth_of(payload: dict) -> dict:
    (stage,) = [s for s in payload["stages"] if s["name"] == "bandwidth"]
    return stage


def test_the_gate_tests_every_rail_side_by_side_and_reports_the_rail_plans_exposure(clean, tmp_path: Path) -> None:
    result, payload = gate(clean, tmp_path)
    assert result.returncode == 0, payload.get("stages")
    plan = bandwidth_of(payload)["figures"]["schedule"]
    assert plan["kind"] == "topology" and plan["source"] == "lldp" and plan["rails"] == RAILS, plan
    assert "rail-aligned on 2 rails (mlx5_0, mlx5_1)" in plan["why"]
    assert plan["bad_rail_nic"] == {"faults": 8, "exposed": 8, "probability": 1.0, "not_exposed": []}
    assert plan["bad_node"]["probability"] == 1.0
    assert plan["bad_inter_leaf_link"]["faults"] == 0  # each rail on one leaf: no path between leaves
    assert plan["bad_rail_nics"] == [] and plan["confirmation_pair_runs"] == 0
    results = json.loads((tmp_path / "bundle" / "perf" / "results.json").read_text())
    assert {r["rail"] for r in results} == set(RAILS) and all(r["error"] is None for r in results)
    assert len(results) == plan["pair_runs"] == 12  # 3 rounds of 2 pairs on each rail
    for round_no in range(plan["rounds"]):
        mine = [r for r in results if r["round"] == round_no]
        assert {r["rail"] for r in mine} == set(RAILS)  # the rails' round i together
        nics = [(h, r["rail"]) for r in mine for h in (r["server"], r["client"])]
        assert len(nics) == len(set(nics)), mine  # no NIC twice in a round
    for rail in RAILS:  # every pair of hosts met on every rail, NIC k against NIC k
        met = {frozenset((r["server"], r["client"])) for r in results if r["rail"] == rail}
        assert len(met) == 6
    raw = sorted((tmp_path / "bundle" / "perf" / "raw").glob("*_mlx5_1.client.txt"))
    assert raw and all("Device         : mlx5_1" in p.read_text() for p in raw)


def test_one_slow_nic_drains_its_host_naming_the_nic_and_the_replay_agrees(clean, tmp_path: Path) -> None:
    clean.set_fault("slow_nic", "gpu03", nic="mlx5_1", value=0.5)
    result, payload = gate(clean, tmp_path)
    assert result.returncode == 1, payload.get("stages")
    assert payload["drain"] == ["gpu03"] and payload["bad_links"] == []
    (why,) = payload["drain_reasons"]
    assert (why["node"], why["stage"], why["rule"], why["entity"]) == ("gpu03", "bandwidth", "perf_bad_rail_nic",
                                                                       "mlx5_1")
    (finding,) = [f for f in payload["findings"] if f["rule"] == "perf_bad_rail_nic"]
    assert "gpu03 NIC mlx5_1" in finding["symptom"] and "at speed on mlx5_0" in finding["symptom"]
    assert finding["fix"].startswith("Drain gpu03, naming NIC mlx5_1")
    assert not [f for f in payload["findings"] if f["rule"] in ("perf_bad_node", "perf_bad_link")]
    plan = bandwidth_of(payload)["figures"]["schedule"]
    assert plan["bad_rail_nics"] == [["gpu03", "mlx5_1"]]
    assert plan["bad_rail_nic"]["probability"] == 1.0
    # every host met gpu03 on mlx5_1: none is free of a low pair to confirm against, and none is needed
    assert plan["confirmation_pair_runs"] == 0
    attribution = json.loads((tmp_path / "bundle" / "perf" / "attribution.json").read_text())
    assert attribution["bad_nics"] == [["gpu03", "mlx5_1"]] and attribution["bad_nodes"] == []
    again = rdmatool("gate", "--replay", str(tmp_path / "bundle"), "--profile", str(tmp_path / "profile.yaml"),
                     "--json")
    assert again.returncode == 1, again.stderr
    replayed = json.loads(again.stdout)
    assert replayed["drain"] == ["gpu03"] and replayed["drain_reasons"] == payload["drain_reasons"]
    assert [f for f in replayed["findings"] if f["rule"] == "perf_bad_rail_nic"] == [finding]



def test_each_pair_names_the_device_and_port_of_both_ends_in_json_junit_and_the_table(clean, tmp_path: Path) -> None:
    result, payload = gate(clean, tmp_path, "--junit", str(tmp_path / "gate.xml"))
    stage = bandwidth_of(payload)
    assert stage["figures"]["nics"] == dict.fromkeys(HOSTS, ["mlx5_0/1", "mlx5_1/1"])
    assert stage["figures"]["untested_nics"] == {}
    assert "NICs mlx5_0/1 on 4 hosts, mlx5_1/1 on 4 hosts" in stage["detail"]
    results = json.loads((tmp_path / "bundle" / "perf" / "results.json").read_text())
    assert all(r["server_nic"] == r["client_nic"] == f"{r['rail']}/1" for r in results)
    junit = (tmp_path / "gate.xml").read_text()
    assert "tested on mlx5_0/1, mlx5_1/1" in junit
    table = rdmatool("gate", "--replay", str(tmp_path / "bundle"), "--profile", str(tmp_path / "profile.yaml"))
    assert "Traceback" not in table.stderr


def test_a_down_compute_rail_is_named_and_never_passes(clean, tmp_path: Path) -> None:
    clean.set_fault("port_down", "gpu02", nic="mlx5_1")
    result, payload = gate(clean, tmp_path, "--junit", str(tmp_path / "gate.xml"))
    assert result.returncode == 1, payload.get("stages")
    assert "gpu02" in payload["drain"]
    assert [f["entity"] for f in payload["findings"] if f["target"] == "gpu02" and f["rule"] == "port_not_active"] \
        == ["mlx5_1/1"]
    stage = bandwidth_of(payload)
    assert stage["status"] != "passed" or "gpu02" in stage["excluded"], stage
    # perf run has no stage 1 to condemn the host: its own discovery names the rail down and fails the run
    perf = rdmatool("perf", "run", "-i", str(clean.inventory_path), "--known-hosts", str(clean.known_hosts),
                    "-o", str(tmp_path / "perf"), "--duration", "1", "--rounds", "2", timeout=300)
    assert perf.returncode == 1, perf.stderr
    assert "rail down" in perf.stderr and "gpu02 mlx5_1" in perf.stderr and "Ethernet port 1 DOWN" in perf.stderr
    attribution = json.loads((tmp_path / "perf" / "attribution.json").read_text())
    assert ["gpu02", "mlx5_1"] in attribution["bad_nics"]
    assert attribution["evidence"]["_nics"]["gpu02/mlx5_1"]["verdict"] == "down"
    assert "all pairs at speed" not in perf.stderr
    results = json.loads((tmp_path / "perf" / "results.json").read_text())
    assert results and all(r["server_nic"] and r["client_nic"] for r in results if r["error"] is None)
    untested = json.loads((tmp_path / "perf" / "discovery.json").read_text())["_untested_nics"]
    assert "DOWN" in untested["gpu02"]["mlx5_1"].upper()
