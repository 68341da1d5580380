"""The storage findings (rdmatool.perf.storage.facts / findings, playbooks/80-storage.yaml) from hand-made storage
results: a slow storage node named with its NIC and, where the inventory cables it, its switch port; the fleet below
the 3FS reference's efficiency, a threshold a site's own playbook overrides; the compute class paused during the
reads (rdmatool.perf.storage_pauses); a healthy fleet silent. TRIGGERS: one case per storage rule, for the
coverage guard of tests/rules/test_each_rule.py."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from rdmatool import metrics
from rdmatool.diagnose.pipeline import default_playbooks
from rdmatool.model import Severity
from rdmatool.perf import storage, storage_pauses
from rdmatool.perf.model import PairResult
from rdmatool.rules import playbook

RULES = playbook.load_dir(default_playbooks())
STORAGE_RULES = {r.id for r in RULES if r.id in ("storage_node_slow", "storage_fleet_below_reference",
                                                 "storage_pauses_compute")}
CLIENTS = [f"gpu{i:02d}" for i in range(1, 7)]
NODES = ["stor01", "stor02", "stor03", "stor04"]
NICS = dict.fromkeys(NODES, "mlx5_0")
CABLING = {"stor03": ("leaf02", "swp7")}


def figures(per_client: dict[str, float], line: float = 400.0) -> dict:
    """Each node read by three clients at once, each client at its node's rate (Gb/s)."""
    rounds = storage.plan(NODES, CLIENTS, 3)
    results = [PairResult(g.receiver, c, "ib_read_bw", 65536, per_client[g.receiver], per_client[g.receiver], None,
                          None, 0, "", "", 10.0) for r in rounds for g in r for c in g.senders]
    return storage.figures(rounds, results, dict.fromkeys(NODES, line), reference_efficiency=0.806)


def judged(fig: dict, rules=RULES, cabling=CABLING) -> list:
    return storage.findings(storage.facts(fig, NICS, cabling, dict.fromkeys(NODES, "storage")), rules)


HEALTHY = {"stor01": 120.0, "stor02": 118.0, "stor03": 121.0, "stor04": 119.0}  # 3 x 120 of 400: 90 %


@dataclass(frozen=True)
class Trigger:
    rule: str
    figures: Callable[[], dict]
    hits: list[tuple[str, str]]
    facts: Callable[[dict], list[dict]] | None = None  # the figures' facts, when not a storage run's own


def paused_reads(priority: int = 3) -> dict:
    """A storage read during which gpu01's NIC and the leaf port toward it were paused on `priority` (30 % and 12 %
    of the 10 s read), gpu02 only by the background's few microseconds."""
    from tests.perf.test_storage_pauses import pause_figures

    return pause_figures({("gpu01", "ens1f0np0", "rx_pause_duration_us"): 3.0e6,
                          ("leaf01", "Ethernet8", "tx_pause_duration_us"): 1.2e6,
                          ("gpu02", "ens1f0np0", "rx_pause_duration_us"): 60.0}, priority)


TRIGGERS = [
    # stor03 at 3 x 60 of 400 Gb/s while the others deliver 97.5 %: the fleet stays above the reference (84 %)
    Trigger("storage_node_slow", lambda: figures({**dict.fromkeys(NODES, 130.0), "stor03": 60.0}),
            [("stor03", "mlx5_0")]),
    # every node alike at 3 x 100 of 400 Gb/s: 75 % of line rate, no outlier
    Trigger("storage_fleet_below_reference", lambda: figures(dict.fromkeys(NODES, 100.0)), [("fabric", "storage")]),
    # the compute class (priority 3) paused on gpu01 and its leaf port while stor01 was read
    Trigger("storage_pauses_compute", paused_reads, [("fabric", "storage")], lambda fig: storage_pauses.facts(fig)),
]


def test_every_storage_rule_has_a_trigger() -> None:
    assert {t.rule for t in TRIGGERS} == STORAGE_RULES
    assert all(r.stage == "bandwidth" for r in RULES if r.id in STORAGE_RULES)


@pytest.mark.parametrize("trigger", TRIGGERS, ids=[t.rule for t in TRIGGERS])
def test_rule_fires_where_the_storage_run_shows_it(trigger: Trigger) -> None:
    fig = trigger.figures()
    found = storage.findings(trigger.facts(fig), RULES) if trigger.facts else judged(fig)
    assert [(f.target, f.entity) for f in found] == trigger.hits
    assert {f.rule for f in found} == {trigger.rule}
    rule = next(r for r in RULES if r.id == trigger.rule)
    assert {f.severity for f in found} == {rule.severity}
    assert all("{" not in f.symptom + f.check + f.fix for f in found), [f.symptom for f in found]


def test_the_slow_node_finding_names_its_nic_switch_port_and_readers() -> None:
    [slow] = judged(TRIGGERS[0].figures())
    assert slow.severity is Severity.ERROR
    assert "stor03" in slow.symptom and "NIC mlx5_0" in slow.symptom and "leaf02 swp7" in slow.symptom
    assert "45 % of its line rate (180 of 400 Gb/s)" in slow.symptom and "to gpu04, gpu05, gpu06," in slow.symptom
    assert slow.evidence["details"]["median_share"] == pytest.approx(0.975)
    [uncabled] = judged(TRIGGERS[0].figures(), cabling={})
    assert "switch port: not known" in uncabled.symptom


def test_a_healthy_fleet_is_silent_and_unmeasured_figures_state_nothing() -> None:
    assert judged(figures(HEALTHY)) == []
    rows = storage.facts({"nodes": [], "median_share": None,
                          "fleet": {"nodes_measured": 0, "efficiency": None, "aggregate_gbps": None,
                                    "line_gbps": None}}, NICS)
    assert [r["metric"] for r in rows] == ["storage_fleet_nodes"]
    assert {r["metric"] for r in storage.facts(figures(HEALTHY), NICS)} <= {m for m in (r["metric"] for r in storage.facts(figures(HEALTHY), NICS)) if metrics.is_known(m)}


def test_the_reference_is_a_playbook_value_a_site_overrides(tmp_path: Path) -> None:
    fleet_at_75 = TRIGGERS[1].figures()
    shipped = (default_playbooks() / "80-storage.yaml").read_text()
    assert "value: 0.806" in shipped
    (tmp_path / "80-storage.yaml").write_text(shipped.replace("value: 0.806", "value: 0.7"))
    assert judged(fleet_at_75, rules=playbook.load_dir(tmp_path)) == []
    assert [f.rule for f in judged(fleet_at_75)] == ["storage_fleet_below_reference"]


# --- `rdmatool perf run --mode storage` exits by its findings (rdmatool.cli._perf_storage, no fabric) ---------------


def cli_run(monkeypatch, tmp_path: Path, per_client: dict[str, float], playbooks: str | None = None) -> int:
    from types import SimpleNamespace

    import typer

    from rdmatool.cli import _config, _perf_storage
    from rdmatool.model import Target

    monkeypatch.setattr(_config, "playbooks", lambda given: playbooks)
    monkeypatch.setattr(storage, "run", lambda session, rounds, deadline=None: [
        PairResult(g.receiver, c, "ib_read_bw", 65536, per_client[g.receiver], per_client[g.receiver], None, None, 0,
                   "", "", 10.0) for r in rounds for g in r for c in g.senders])
    hosts = [Target(n, n, role="storage" if n in NODES else "compute") for n in NODES + CLIENTS]
    session = SimpleNamespace(reachable=NODES + CLIENTS, hosts={}, devices=NICS, rails={},
                              expected_gbps=lambda: dict.fromkeys(NODES, 400.0))
    try:
        return _perf_storage.run(session, hosts, 3, tmp_path / "out")
    except typer.Exit as done:
        return done.exit_code


def test_perf_run_storage_prints_its_findings_and_exits_by_them(monkeypatch, tmp_path: Path, capsys) -> None:
    assert cli_run(monkeypatch, tmp_path, dict.fromkeys(NODES, 100.0)) == 0  # a warning passes
    out = capsys.readouterr().out
    assert "WARNING storage_fleet_below_reference: The storage fleet delivered 75 %" in out and "ERROR" not in out
    assert cli_run(monkeypatch, tmp_path, {**dict.fromkeys(NODES, 130.0), "stor03": 60.0}) == 1
    out = capsys.readouterr().out
    assert "stor03: 180.0 Gb/s (45% of 400 Gb/s) read by gpu04, gpu05, gpu06  SLOW" in out  # the output as it was
    assert "ERROR storage_node_slow: Storage node stor03 delivered 45 %" in out and "\n  check: " in out


def test_playbooks_that_do_not_load_are_one_line_and_exit_2(monkeypatch, tmp_path: Path, capsys) -> None:
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "80-storage.yaml").write_text("rules:\n  - id: storage_node_slow\n    kind: verdict\n")
    assert cli_run(monkeypatch, tmp_path, dict.fromkeys(NODES, 130.0), str(tmp_path / "site")) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("rdmatool: ") and "80-storage.yaml:2" in err and "\n" not in err
