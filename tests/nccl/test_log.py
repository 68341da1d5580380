"""What NCCL really did, from the golden logs (tests/fixtures/parsers/nccl_debug): each case read into processes and,
against a recipe, the findings it calls for: socket fallback, a missing rail, an HCA off the rails, a GID index or
traffic class other than the recipe's, GPU Direct RDMA off; a net plugin using RDMA with NCCL_IB_DISABLE=1 and
RCCL's own NIC order are no findings."""

from __future__ import annotations

import pytest

from rdmatool.nccl import findings, log
from rdmatool.nccl.recipe import HostRecipe, Port, Recipe, Setting
from tests.helpers import PARSER_FIXTURES

LOGS = PARSER_FIXTURES / "nccl_debug"


def processes(case: str) -> list[log.Process]:
    return log.read(log.parse((LOGS / f"{case}.txt").read_text()), case)


def recipe_for(host: str, rails: list[str], link_layer: str = "Ethernet", gid: str | None = "3",
               tc: str | None = "104") -> Recipe:
    ports = [Port(*name.split(":")[0:1], int(name.split(":")[1]), link_layer=link_layer, active=True) for name in rails]
    settings = {"NCCL_IB_HCA": Setting("=" + ",".join(rails), "rails")}
    if gid is not None:
        settings["NCCL_IB_GID_INDEX"] = Setting(gid, "gid")
    if tc is not None:
        settings["NCCL_IB_TC"] = Setting(tc, "tc")
    return Recipe([HostRecipe(host, "compute", ports, [], settings)], {}, {}, [], [], {})


def rules(case: str, recipe: Recipe | None, site: dict | None = None) -> list[tuple[str, str, str]]:
    found = findings.judged(None, log.check(processes(case), recipe, site), "nccl_log_verdict", site=site)
    return [(f.rule, f.target, f.evidence["observed"]) for f in found]


def test_every_version_reads_its_devices_network_and_ranks() -> None:
    nccl218 = processes("nccl-2.18-roce-mpirun-tag-output")
    assert [(p.entity, p.devices, p.net) for p in nccl218] == [
        ("gpu01:2104", ["mlx5_0:1/RoCE", "mlx5_3:1/RoCE"], "IB"), ("gpu02:3310", ["mlx5_0:1/RoCE", "mlx5_3:1/RoCE"], "IB")]
    assert nccl218[0].env == {"NCCL_IB_GID_INDEX": "3", "NCCL_IB_TC": "104"} and nccl218[0].version.startswith("NCCL 2.18")
    assert nccl218[0].connections == {"NET/IB/0/GDRDMA": 1, "NET/IB/1/GDRDMA": 1, "P2P/IPC": 1}
    assert nccl218[0].ranks == [0] and nccl218[0].nranks == 16 and nccl218[0].connected == ["rings", "trees"]
    old = processes("nccl-2.7-ib-srun-label-glued")
    assert old[0].devices == ["mlx5_0:1/IB", "mlx5_1:1/IB"] and old[0].gdr == {"HCA 0 mlx5_0": 0}
    assert old[0].connections == {"NET/IB/0": 3}  # the glued `Ring 00` record split from its neighbour
    assert old[1].warnings and "vendor err 129" in old[1].warnings[0]
    merged = processes("nccl-2.21-merged-torchrun-pods")
    assert merged[0].host == "trainer-worker-0.trainer.default.svc"
    assert merged[0].ports == ["mlx5_2:1", "mlx5_3:1", "mlx5_4:1", "mlx5_5:1"] and merged[0].gid_indexes == {3}
    rccl = processes("rccl-2.18-roce-nic-order")
    assert rccl[0].version.startswith("RCCL 2.18") and rccl[0].ports == ["mlx5_4:1", "mlx5_5:1", "mlx5_0:1", "mlx5_1:1"]


def test_a_matching_log_gives_no_finding_whatever_the_nic_order() -> None:
    recipe = recipe_for("mi300-a", ["mlx5_0:1", "mlx5_1:1", "mlx5_4:1", "mlx5_5:1"])
    assert rules("rccl-2.18-roce-nic-order", recipe) == []
    assert rules("nccl-2.18-roce-mpirun-tag-output", recipe_for("gpu01", ["mlx5_0:1", "mlx5_3:1"])) == []


def test_socket_fallback_is_named_with_or_without_a_recipe() -> None:
    assert rules("socket-fallback", None) == [("nccl_socket_fallback", "gpu05", "NET/Socket (eno1, ens1f0np0)")]


def test_a_plugin_using_rdma_with_ib_disabled_is_no_fallback() -> None:
    p = processes("plugin-rdma-with-ib-disabled")[0]
    assert p.env["NCCL_IB_DISABLE"] == "1" and p.net == "gIB" and p.transport == "NET/gIB"
    assert rules("plugin-rdma-with-ib-disabled", recipe_for("a3-node-0", [f"mlx5_{i}:1" for i in range(4)])) == [
        ("nccl_traffic_class_not_the_recipe", "a3-node-0", "0 (NCCL_IB_TC unset)")]


def test_a_missing_rail_and_a_roce_nic_among_ib_hcas() -> None:
    ib = recipe_for("dgx07", ["mlx5_0:1", "mlx5_1:1", "mlx5_3:1", "mlx5_4:1"], link_layer="InfiniBand", gid=None,
                    tc=None)
    assert sorted(rules("ib-list-with-roce-nic", ib)) == [
        ("nccl_hca_not_on_compute_rails", "dgx07", "mlx5_2:1 (dgx07:5021)"),
        ("nccl_rank_missing_rail", "dgx07", "mlx5_0:1, mlx5_1:1, mlx5_2:1, mlx5_3:1")]


@pytest.mark.parametrize(("gid", "tc", "expected"), [
    ("5", "104", ("nccl_gid_index_not_the_recipe", "3")),
    ("3", "136", ("nccl_traffic_class_not_the_recipe", "104")),
])
def test_a_gid_index_or_traffic_class_other_than_the_recipes(gid: str, tc: str, expected: tuple) -> None:
    recipe = recipe_for("gpu01", ["mlx5_0:1", "mlx5_3:1"], gid=gid, tc=tc)
    found = rules("nccl-2.18-roce-mpirun-tag-output", recipe, {"roce_dscp": 34, "roce_priority": 4})
    assert [(r, o) for r, _, o in found] == [expected]


def test_gdr_off_is_a_warning_and_a_short_name_finds_the_recipe() -> None:
    found = findings.judged(None, log.check(processes("nccl-2.7-ib-srun-label-glued"), None), "nccl_log_verdict")
    assert [(f.rule, f.severity.value) for f in found] == [("nccl_gdr_disabled", "warning")]
    merged = recipe_for("trainer-worker-0", ["mlx5_2:1", "mlx5_3:1", "mlx5_4:1", "mlx5_5:1"], tc=None)
    assert rules("nccl-2.21-merged-torchrun-pods", merged) == []  # pod FQDN matched by its short name
