"""The verbs rules (playbooks/12-verbs.yaml) on the hand-made healthy pod (tests/pods/bundle.py) with a local
mode `verbs` output added to one host: the verbs/sysfs cross-check fires on the port where the two disagree, the
missing verbs view is named, and a verbs view that agrees is silent.

The documents are built by the reader's own mapping (rdmatool/transport/verbs.py) from values shaped like pyverbs
44.0's objects (tests/transport/fake_pyverbs.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from rdmatool import bundle as bundle_io
from rdmatool.diagnose.pipeline import default_playbooks
from rdmatool.model import CommandResult
from rdmatool.rules import engine, playbook
from rdmatool.table.analysis import analyse_bundle
from rdmatool.transport import verbs
from tests.pods import bundle as _pod
from tests.transport import fake_pyverbs as fake

RULES = {r.id: r for r in playbook.load_dir(default_playbooks())}
VERBS_RULES = sorted(r.id for r in RULES.values() if Path(str(r.source)).name.startswith("12-verbs"))


def verbs_document(ib_sysfs_state: str = "4: ACTIVE", ib_sysfs_rate: str = "400 Gb/sec (4X NDR)") -> dict:
    """gpu01's two ports as the verbs read sees them: mlx5_0 InfiniBand NDR 4X, mlx5_1 RoCE 200GbE (4X HDR)."""
    devices = []
    for name, attr, sysfs in (
        ("mlx5_0", fake.PortAttr(active_speed=128, lid=12, sm_lid=1),
         {"state": ib_sysfs_state, "phys_state": "5: LinkUp", "rate": ib_sysfs_rate, "link_layer": "InfiniBand",
          "lid": "0xc", "sm_lid": "0x1", "gids": {}}),
        ("mlx5_1", fake.PortAttr(active_speed=64, link_layer=2, lid=0, sm_lid=0),
         {"state": "4: ACTIVE", "phys_state": "5: LinkUp", "rate": "200 Gb/sec (4X HDR)", "link_layer": "Ethernet",
          "lid": "0x0", "sm_lid": "0x0", "gids": {}}),
    ):
        device = verbs.device_record(name, fake.DeviceAttr())
        port = verbs.port_record(1, attr)
        port.update(gids=[], gids_unreadable=0, sysfs=sysfs)
        device["ports"] = [port]
        devices.append(device)
    return {"format": 1, "status": "ok", "reason": None, "python": "/usr/bin/python3", "pyverbs": None,
            "devices": devices}


UNAVAILABLE = {"format": 1, "status": "unavailable", "python": "/opt/venv/bin/python", "pyverbs": None,
               "devices": [], "reason": "pyverbs is not importable by /opt/venv/bin/python (No module named 'pyverbs')"}


@dataclass(frozen=True)
class Trigger:
    rule: str
    document: Callable[[], dict]
    hits: tuple[tuple[str, str | None], ...]
    words: tuple[str, ...]


TRIGGERS = [
    Trigger("verbs_sysfs_disagree", lambda: verbs_document("1: DOWN", "100 Gb/sec (4X EDR)"), (("gpu01", "mlx5_0/1"),),
            ("port_state: verbs Active, sysfs Down", "link_rate_gbps: verbs 400, sysfs 100")),
    Trigger("verbs_unavailable", lambda: UNAVAILABLE, (("gpu01", "host"),), ("No module named 'pyverbs'",)),
]


def _analysis(document: dict | None, path: Path, monkeypatch):
    """The healthy pod, gpu01 with a `verbs` output in snapshot 0 (as `collect --local` writes it there)."""

    class WithVerbs(bundle_io.BundleWriter):
        def commit(self, *args, **kwargs):
            if document is not None:
                self.add(0, CommandResult("gpu01", "verbs", "python3 -I rdmatool/transport/verbs.py",
                                          json.dumps(document), started=_pod.T0.isoformat(), duration_s=0.1))
            return super().commit(*args, **kwargs)

    monkeypatch.setattr(_pod, "BundleWriter", WithVerbs)
    analysis = analyse_bundle(bundle_io.read(_pod.write(_pod.healthy_pod(), path)))
    assert analysis.table.parse_failures == [], [f.message for f in analysis.table.parse_failures]
    return analysis


@pytest.mark.parametrize("trigger", TRIGGERS, ids=lambda t: t.rule)
def test_the_trigger_fires_its_rule_there_only(trigger: Trigger, tmp_path: Path, monkeypatch) -> None:
    rule = RULES[trigger.rule]
    found = engine.evaluate(_analysis(trigger.document(), tmp_path / "bundle", monkeypatch), [rule])
    assert sorted((f.target, f.entity) for f in found) == sorted(trigger.hits), [f.symptom for f in found]
    for f in found:
        assert f.rule == rule.id and f.severity is rule.severity
        assert "{" not in f.symptom + f.cause + f.check + f.fix, f.symptom
        for word in trigger.words:
            assert word in f.symptom, (word, f.symptom)


def test_every_verbs_rule_has_a_trigger() -> None:
    assert sorted(t.rule for t in TRIGGERS) == VERBS_RULES


@pytest.mark.parametrize("document", [None, verbs_document()], ids=["no verbs output", "verbs agrees with sysfs"])
def test_silent_on_the_healthy_pod(document, tmp_path: Path, monkeypatch) -> None:
    analysis = _analysis(document, tmp_path / "bundle", monkeypatch)
    assert engine.evaluate(analysis, [RULES[r] for r in VERBS_RULES]) == []


def test_the_verbs_view_speaks_the_glossary_of_the_other_tools(tmp_path: Path, monkeypatch) -> None:
    """The canonical metrics: verbs' port state and rate sit beside sysfs' under the same names, so the rules that
    judge a port judge it whichever tool read it."""
    facts = _analysis(verbs_document(), tmp_path / "bundle", monkeypatch).facts
    port = facts[(facts["target"] == "gpu01") & (facts["entity"] == "mlx5_0/1")]
    rates = port[port["metric"] == "link_rate_gbps"]
    assert set(rates["raw_key"]) >= {"rate", "rate_gbps"}  # sysfs `rate` and verbs' width x speed
    assert set(rates["value"]) == {400.0}
