"""End to end on one simulated pod: `rdmatool nccl env -i` gives each kind of host its recipe (RoCE rails, an
InfiniBand rail, mixed rails, a RoCE host whose v2 IPv4 GID sits at another index), and the gate's nccl stage runs
`all_reduce_perf` under mpirun with that recipe on two nodes (the fabric's nccl-tests shim): a healthy run passes
naming the recipe, a site environment that leaves NCCL on sockets fails naming the hosts and the recipe, and the
saved bundle replays to the same. A slow run's finding and a node without nccl-tests: tests/nccl/test_bench.py (the
shim slows a run by the faults slow_nic and slow_node too)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.helpers import rdmatool
from tests.fabric import scenario as scenario_mod
from tests.fabric.fixtures import sim_fabric

pytestmark = pytest.mark.e2e

ROCE = {"link_layer": "Ethernet", "rate_gbps": 200, "width": "4X", "mtu": 4096, "firmware": "22.39.1002",
        "board_id": "MT_0000000359", "hca_type": "MT4125"}
IB = {"device": "mlx5_0", "link_layer": "InfiniBand", "netdev": "ibp24s0", "rate_gbps": 400, "width": "4X",
      "mtu": 4096, "firmware": "28.39.1002", "board_id": "MT_0000000838", "hca_type": "MT4129"}
TWO_ROCE = [{"device": "mlx5_0", "netdev": "ens1f0np0", **ROCE}, {"device": "mlx5_1", "netdev": "ens1f1np1", **ROCE}]
GATE = ("counters_window_s: 1\nbandwidth: {enabled: false}\n"
        "nccl: {nodes: 2, size_bytes: 1073741824, iterations: 5, warmup: 1%s}\n")


def nccl_pod() -> scenario_mod.Scenario:
    return scenario_mod.from_dict({
        "name": "nccl-pod",
        "hosts": [
            {"name": "gpu[01-02]", "address": "127.0.1.[1-2]", "nics": TWO_ROCE},
            {"name": "gpu03", "address": "127.0.1.3", "nics": [IB]},
            {"name": "gpu04", "address": "127.0.1.4", "nics": [IB, {"device": "mlx5_1", "netdev": "ens1f0np0", **ROCE}]},
            {"name": "gpu05", "address": "127.0.1.5",
             "nics": [{**n, "ipv6": f"fd00::5:{i}"} for i, n in enumerate(TWO_ROCE)]},
        ],
    })


@pytest.fixture(scope="module")
def pod():
    with sim_fabric(nccl_pod()) as fab:
        yield fab


def test_nccl_env_live_refuses_unknown_host_keys(pod, tmp_path: Path) -> None:
    result = rdmatool("nccl", "env", "-i", str(pod.inventory_path), "--limit", "gpu01", "--json",
                      env={"HOME": str(tmp_path)})  # no known_hosts anywhere, no --accept-new-host-keys
    assert result.returncode == 3 and result.stdout == "", result.stderr
    assert "host key" in result.stderr and "Traceback" not in result.stderr


def test_nccl_env_gives_each_kind_of_host_its_recipe_live(pod, tmp_path: Path) -> None:
    # HOME without a known_hosts of its own: the fabric's keys are verified through --known-hosts alone
    result = rdmatool("nccl", "env", "-i", str(pod.inventory_path), "--known-hosts", str(pod.known_hosts), "--json",
                      env={"HOME": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    env = {h["host"]: {k: s["value"] for k, s in h["env"].items()} for h in payload["hosts"]}
    assert env["gpu01"]["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_1:1" and env["gpu01"]["NCCL_IB_GID_INDEX"] == "3"
    assert env["gpu01"]["NCCL_IB_TC"] == "104" and env["gpu01"]["NCCL_SOCKET_IFNAME"] == "ens1f0np0"
    assert env["gpu01"].get("NCCL_IB_SL") is None
    # InfiniBand alone: no GID index nor traffic class, service level 0
    assert env["gpu03"]["NCCL_IB_HCA"] == "=mlx5_0:1" and env["gpu03"]["NCCL_IB_SL"] == "0"
    assert env["gpu03"].get("NCCL_IB_GID_INDEX") is None and env["gpu03"].get("NCCL_IB_TC") is None
    # mixed rails: both in the HCA list, the RoCE one's GID and class, the InfiniBand one's level; warned
    assert env["gpu04"]["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_1:1" and env["gpu04"]["NCCL_IB_GID_INDEX"] == "3"
    assert env["gpu04"]["NCCL_IB_SL"] == "0" and env["gpu04"]["NCCL_IB_TC"] == "104"
    # the IPv6 GIDs came first on gpu05: its RoCE v2 IPv4 GID is at 5, which one fleet-wide index cannot fit
    assert env["gpu05"]["NCCL_IB_GID_INDEX"] == "5" and env["gpu05"]["UCX_IB_GID_INDEX"] == "5"
    assert "NCCL_IB_GID_INDEX" in payload["fleet"]["differ"] and not payload["fits_all"]
    rules = {(f["rule"], f["target"]) for f in payload["findings"]}
    assert ("nccl_rail_link_layer_differs", "gpu04") in rules
    assert ("nccl_gid_index_differs_across_hosts", "gpu05") in rules


def gate(fab, tmp_path: Path, extra: str = ""):
    (tmp_path / "profile.yaml").write_text(GATE % extra)
    result = rdmatool("gate", "-i", str(fab.inventory_path), "--known-hosts", str(fab.known_hosts), "--profile",
                      str(tmp_path / "profile.yaml"), "--limit", "gpu01,gpu02", "--json", "--save",
                      str(tmp_path / "bundle"), timeout=120)
    assert "Traceback" not in result.stderr, result.stderr
    payload = json.loads(result.stdout)
    (stage,) = [s for s in payload["stages"] if s["name"] == "nccl"]
    return result, payload, stage


def test_the_gate_runs_all_reduce_with_the_recipe_and_passes_a_healthy_pair(pod, tmp_path: Path) -> None:
    pod.clear_faults()
    result, payload, stage = gate(pod, tmp_path)
    assert result.returncode == 0 and stage["status"] == "passed", stage
    figures = stage["figures"]
    assert figures["run"] == "all_reduce_perf gpu01,gpu02" and figures["line_gbps"] == 400.0
    assert "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1" in figures["recipe"] and "NCCL_IB_GID_INDEX=3" in figures["recipe"]
    assert figures["efficiency"] > 0.9 and all(p["network"] == "IB" for p in figures["processes"])
    assert "NCCL_IB_TC=104" in stage["detail"] and "% of 400 Gb/s" in stage["detail"]
    assert "Avg bus bandwidth" in (tmp_path / "bundle" / "nccl" / "all_reduce_perf.txt").read_text()


def gate_here(fab, tmp_path: Path, extra: str = ""):
    """The same gate in-process (the CLI's start-up is the costly part, and the healthy run above covers it): the same
    SSH, shims and stages, its bundle saved."""
    from rdmatool.collect import CollectOptions
    from rdmatool.gate import profile as gate_profile
    from rdmatool.gate.run import run_gate
    from rdmatool.inventory import load

    (tmp_path / "profile.yaml").write_text(GATE % extra)
    targets = [t for t in load(fab.inventory_path, ssh_config=None) if t.name in ("gpu01", "gpu02")]
    result = run_gate(targets, gate_profile.load(tmp_path / "profile.yaml"),
                      CollectOptions(known_hosts=str(fab.known_hosts)), budget_s=120, save=str(tmp_path / "bundle"))
    (stage,) = [s for s in result.stages if s.name == "nccl"]
    return result, stage


def test_a_site_environment_on_sockets_fails_naming_the_hosts(pod, tmp_path: Path) -> None:
    pod.clear_faults()
    result, stage = gate_here(pod, tmp_path, ", env: {NCCL_IB_HCA: mlx5_9}")
    assert stage.status == "failed" and result.drain == ["gpu01", "gpu02"], stage
    assert {f.target for f in stage.findings if f.rule == "nccl_socket_fallback"} == {"gpu01", "gpu02"}
    assert {p["network"] for p in stage.figures["processes"]} == {"Socket"}
    assert stage.figures["overrides"] == {"NCCL_IB_HCA": "mlx5_9"}
    (slow,) = [f for f in stage.findings if f.rule == "nccl_allreduce_below_line_rate"]
    assert "NCCL_IB_HCA=mlx5_9" in slow.symptom, slow.symptom
    # `gate --replay` of the saved bundle judges the recorded run again, to the same conclusion
    from rdmatool.gate import profile as gate_profile
    from rdmatool.gate.run import replay_gate

    replayed = replay_gate(str(tmp_path / "bundle"), gate_profile.load(tmp_path / "profile.yaml"))
    (again,) = [s for s in replayed.stages if s.name == "nccl"]
    assert [(f.rule, f.target) for f in again.findings] == [(f.rule, f.target) for f in stage.findings]
    assert again.detail.endswith("(recorded)") and replayed.drain == ["gpu01", "gpu02"]


def test_the_shims_bus_bandwidth_follows_the_rails_and_the_environment() -> None:
    # no fabric: the shim's model over the pod's specs, a degraded rail (fault slow_nic) and a GID index that
    # does not route (gpu05's index 3 is its IPv6 RoCE v2 GID)
    from tests.fabric.shims import nccl_tests as shim

    sc = nccl_pod()
    sc.faults = [scenario_mod.Fault("slow_nic", "gpu02", nic="mlx5_1", value=0.2)]
    spec = {s["name"]: s for s in sc.effective()["targets"].values()}
    hca = {"NCCL_IB_HCA": "=mlx5_0:1,mlx5_1:1"}
    assert shim._node(spec["gpu01"], hca)["gbps"] == pytest.approx(400 * shim.EFFICIENCY)
    assert shim._node(spec["gpu02"], hca)["gbps"] == pytest.approx(240 * shim.EFFICIENCY)
    assert shim._node(spec["gpu01"], {"NCCL_IB_HCA": "=mlx5_0"})["gbps"] == pytest.approx(200 * shim.EFFICIENCY)
    assert shim._node(spec["gpu01"], {"NCCL_IB_HCA": "mlx5_9"})["socket"]
    assert shim._node(spec["gpu05"], {})["gids"] == {"mlx5_0": 5, "mlx5_1": 5}
    assert shim._node(spec["gpu05"], {"NCCL_IB_GID_INDEX": "3"})["broken"]
    assert not shim._node(spec["gpu01"], {"NCCL_IB_GID_INDEX": "3"})["broken"]
