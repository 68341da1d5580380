"""`missing` with `peers_have`: a node lacking a metric is named only when another node of its role reports it — the
shipped rdma_device_missing_vs_peers rule, over several roles (one node alone in its role, one role where nobody
reports it)."""

from __future__ import annotations

from rdmatool.diagnose.pipeline import default_playbooks
from rdmatool.gate.judge import analysis_of
from rdmatool.rules import engine, playbook

RULE = next(r for r in playbook.load_dir(default_playbooks()) if r.id == "rdma_device_missing_vs_peers")


def fact(target: str, role: str | None, metric: str) -> dict:
    return {"target": target, "kind": "host", "platform": "linux", "role": role, "entity": "mlx5_0/1",
            "metric": metric, "priority": None, "size_bytes": None, "value": None, "text": "Active",
            "raw_key": "state", "window_s": None, "delta": None, "flag": ""}


def fired(rows: list[dict]) -> set[str]:
    return {f.target for f in engine.evaluate(analysis_of(rows), [RULE])}


def test_only_nodes_whose_role_has_a_reporting_peer_are_named() -> None:
    rows = [
        fact("gpu01", "compute", "port_state"), fact("gpu02", "compute", "port_state"),
        fact("gpu03", "compute", "loadavg_1m"),  # lost what its compute peers have
        fact("stor01", "storage", "loadavg_1m"), fact("stor02", "storage", "loadavg_1m"),  # nobody of the role has it
        fact("login01", "login", "loadavg_1m"),  # alone in its role
    ]
    assert fired(rows) == {"gpu03"}


def test_a_role_of_one_reporting_node_is_no_peer_of_itself() -> None:
    assert fired([fact("gpu01", "compute", "port_state"), fact("stor01", "storage", "loadavg_1m")]) == set()
