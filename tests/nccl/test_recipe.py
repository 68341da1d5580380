"""`rdmatool nccl env`'s recipe on the demo, a generated RoCE fleet of two rails (site 4/34), a generated InfiniBand
fleet (3/26), the RoCE fleet with one host's RoCE v2 IPv4 GID at another index (on one rail, then on a whole host),
and a host whose RoCE DSCP is not on the lossless priority; the site profile decides the traffic class."""

from __future__ import annotations

from pathlib import Path

import pytest

from rdmatool.nccl import findings, recipe
from rdmatool.table.analysis import analyse_path
from tests.helpers import REPO
from tests.nccl.fleets import IB_SEED, ROCE_SEED, with_gid_moved, with_trust_pcp, written

DEMO = REPO / "examples" / "demo-bundle"


def built(bundle: Path, site: dict | None = None):
    analysis = analyse_path(bundle)
    result = recipe.build(analysis.facts, analysis.targets, analysis.links, site=site)
    return result, findings.judged(analysis, result.problems, "nccl_recipe_verdict", site=site)


@pytest.fixture(scope="module")
def roce(tmp_path_factory):
    return written(ROCE_SEED, "Ethernet", tmp_path_factory.mktemp("roce"))


def test_the_demo_takes_the_infiniband_rail_and_leaves_the_storage_network_out() -> None:
    result, found = built(DEMO)
    assert result.fits_all
    assert result.fleet_env() == {"NCCL_IB_HCA": "=mlx5_0:1", "NCCL_IB_SL": "0", "UCX_NET_DEVICES": "mlx5_0:1",
                                  "UCX_IB_SL": "0"}
    gpu01 = next(h for h in result.hosts if h.name == "gpu01")
    assert [p.name for p in gpu01.left_out] == ["mlx5_1:1"]
    assert "storage hosts' network" in gpu01.left_out[0].storage
    assert "NCCL_IB_TC" not in gpu01.settings  # no RoCE rail: no traffic class to set
    assert result.skipped["gpu06"] == "no active RDMA port on the compute fabric"  # the demo's port down
    assert result.skipped["stor01"].startswith("role storage")
    rules = {(f.rule, f.target) for f in found}
    assert ("nccl_no_compute_rail", "gpu06") in rules and ("nccl_storage_nic_in_default_hca", "gpu01") in rules
    assert not {r for r, _ in rules} - {"nccl_no_compute_rail", "nccl_storage_nic_in_default_hca"}


def test_a_roce_fleet_gets_its_gid_index_and_the_sites_traffic_class(roce) -> None:
    fabric, bundle = roce
    site = fabric.site.config()
    assert (site["roce_priority"], site["roce_dscp"]) == (4, 34)
    result, found = built(bundle, site)
    assert result.fits_all and found == []
    env = result.fleet_env()
    assert env["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_1:1" and env["UCX_NET_DEVICES"] == "mlx5_0:1,mlx5_1:1"
    assert env["NCCL_IB_GID_INDEX"] == env["UCX_IB_GID_INDEX"] == "3"
    assert env["NCCL_IB_TC"] == env["UCX_IB_TRAFFIC_CLASS"] == "136"  # DSCP 34 × 4, from the site profile
    assert "NCCL_IB_SL" not in env
    why = result.hosts[0].settings["NCCL_IB_TC"].why
    assert "DSCP 34 × 4 = 136" in why and "priority 4" in why and "dscp" in why
    assert "GID[3] RoCE v2" in result.hosts[0].settings["NCCL_IB_GID_INDEX"].why


def test_the_default_site_gives_26_and_a_host_trusting_pcp_is_named(roce, tmp_path: Path) -> None:
    fabric, bundle = roce
    host = fabric.hosts[2].name
    result, found = built(with_trust_pcp(bundle, tmp_path, host))
    assert result.fleet_env()["NCCL_IB_TC"] == "104"  # SITE_DEFAULTS: DSCP 26 × 4
    assert {(f.rule, f.target) for f in found} == {("nccl_dscp_not_lossless", host)}
    assert len(found) == 2  # each RoCE rail
    assert "trusts pcp" in found[0].symptom and "--trust dscp --dscp2prio set,26,3" in found[0].fix


def test_one_rail_with_its_gid_elsewhere_leaves_the_index_to_nccl(roce, tmp_path: Path) -> None:
    fabric, bundle = roce
    host = fabric.hosts[0].name
    result, found = built(with_gid_moved(bundle, tmp_path, host, "mlx5_1", 7), fabric.site.config())
    own = next(h for h in result.hosts if h.name == host)
    assert own.settings["NCCL_IB_GID_INDEX"].value is None
    assert own.env()["NCCL_IB_ROCE_VERSION_NUM"] == "2" and own.env()["NCCL_IB_ADDR_FAMILY"] == "AF_INET"
    assert "mlx5_1:1 GID[7]" in own.settings["NCCL_IB_GID_INDEX"].why
    assert not result.fits_all and "NCCL_IB_GID_INDEX" in result.differ
    split = [f for f in found if f.rule == "nccl_gid_index_split"]
    assert {(f.target, f.entity, f.evidence["observed"]) for f in split} == {(host, "mlx5_0/1", 3),
                                                                             (host, "mlx5_1/1", 7)}


def test_a_host_with_its_gids_elsewhere_gets_its_own_index(roce, tmp_path: Path) -> None:
    fabric, bundle = roce
    host = fabric.hosts[1].name
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    moved = with_gid_moved(with_gid_moved(bundle, tmp_path / "a", host, "mlx5_0", 5), tmp_path / "b", host,
                           "mlx5_1", 5)
    result, found = built(moved, fabric.site.config())
    assert next(h for h in result.hosts if h.name == host).env()["NCCL_IB_GID_INDEX"] == "5"
    assert result.differ == ["NCCL_IB_GID_INDEX", "UCX_IB_GID_INDEX"]
    assert [(f.rule, f.target, f.evidence["observed"]) for f in found] == [
        ("nccl_gid_index_differs_across_hosts", host, 5)]


def test_an_infiniband_fleet_gets_its_rails_and_service_level(tmp_path: Path) -> None:
    fabric, bundle = written(IB_SEED, "InfiniBand", tmp_path)
    result, found = built(bundle, fabric.site.config())
    assert result.fits_all and found == []
    env = result.fleet_env()
    assert env["NCCL_IB_HCA"].startswith("=mlx5_0:1") and env["NCCL_IB_SL"] == "0"
    assert "NCCL_IB_GID_INDEX" not in env and "NCCL_IB_TC" not in env
