"""A trigger for each rule of playbooks/60-nccl.yaml (tests/rules/test_each_rule.py keeps the list and the playbook in
step): the problem rdmatool.nccl states, judged alone, gives exactly that rule's finding with every placeholder of its
text filled. The recipe and log tests show each problem arising from a bundle or a log."""

from __future__ import annotations

from typing import NamedTuple

import pytest

from rdmatool.nccl import findings
from rdmatool.nccl.recipe import Problem


class Trigger(NamedTuple):
    rule: str
    verdict_metric: str
    problem: Problem | None  # None: the rule judges the gate's nccl-tests figures (tests/nccl/test_bench.py)


SEEN = {"nccl_log_seen": "mlx5_2:1", "nccl_log_wanted": "mlx5_0:1, mlx5_1:1"}
PROBLEM_TRIGGERS = [
    Trigger("nccl_gid_index_split", "nccl_recipe_verdict", Problem(
        "gpu01", "mlx5_1/1", "gid_index_split", {"nccl_gid_index": 7, "nccl_gid_indexes": "mlx5_0:1 3, mlx5_1:1 7"})),
    Trigger("nccl_gid_index_differs_across_hosts", "nccl_recipe_verdict", Problem(
        "gpu02", None, "gid_index_differs_across_hosts", {"nccl_gid_index": 5, "nccl_fleet_gid_index": 3})),
    Trigger("nccl_no_roce_v2_ipv4_gid", "nccl_recipe_verdict", Problem(
        "gpu03", "mlx5_0/1", "no_roce_v2_ipv4_gid", {"nccl_gids": "[0] RoCE v1, [1] RoCE v2"})),
    Trigger("nccl_rail_link_layer_differs", "nccl_recipe_verdict", Problem(
        "gpu04", "mlx5_2/1", "link_layer_differs", {"link_layer": "Ethernet", "nccl_rail_link_layer": "InfiniBand"})),
    Trigger("nccl_dscp_not_lossless", "nccl_recipe_verdict", Problem(
        "gpu05", "mlx5_0/1", "dscp_not_lossless", {"trust_mode": "pcp", "nccl_dscp_priority": 0})),
    Trigger("nccl_storage_nic_in_default_hca", "nccl_recipe_verdict", Problem(
        "gpu06", "mlx5_1/1", "storage_nic", {"nccl_hca": "=mlx5_0:1"})),
    Trigger("nccl_no_compute_rail", "nccl_recipe_verdict", Problem("gpu07", None, "no_rail", {"nccl_ports": 2})),
    Trigger("nccl_socket_fallback", "nccl_log_verdict", Problem("gpu08", "gpu08:12", "socket_fallback", SEEN)),
    Trigger("nccl_rank_missing_rail", "nccl_log_verdict", Problem("gpu09", "mlx5_1/1", "missing_rail", SEEN)),
    Trigger("nccl_hca_not_on_compute_rails", "nccl_log_verdict", Problem("gpu10", "mlx5_2/1", "foreign_hca", SEEN)),
    Trigger("nccl_gid_index_not_the_recipe", "nccl_log_verdict", Problem("gpu11", "gpu11:9", "gid_index", SEEN)),
    Trigger("nccl_traffic_class_not_the_recipe", "nccl_log_verdict", Problem("gpu12", "gpu12:9", "traffic_class",
                                                                              SEEN)),
    Trigger("nccl_gdr_disabled", "nccl_log_verdict", Problem("gpu13", "gpu13:9 HCA 0", "gdr_off", SEEN)),
]
TRIGGERS = [*PROBLEM_TRIGGERS, Trigger("nccl_allreduce_below_line_rate", "nccl_busbw_efficiency", None)]


@pytest.mark.parametrize("trigger", PROBLEM_TRIGGERS, ids=[t.rule for t in PROBLEM_TRIGGERS])
def test_the_problem_gives_its_rules_finding(trigger: Trigger) -> None:
    found = findings.judged(None, [trigger.problem], trigger.verdict_metric, site={"roce_dscp": 34, "roce_priority": 4})
    assert [(f.rule, f.target, f.entity) for f in found] == [
        (trigger.rule, trigger.problem.target, trigger.problem.entity)]
    text = found[0].symptom + found[0].cause + found[0].check + found[0].fix
    assert "{" not in text, text
    if trigger.rule == "nccl_dscp_not_lossless":  # the site's class, never a number written in the playbook
        assert "--dscp2prio set,34,4" in found[0].fix and "lossless priority 4" in found[0].symptom
