"""A switch whose deadline cut its commands is a target not read in full, as a host is: its outcome says so (exit 3
from `collect`, counted unread by the gate), with what it did give kept. A unit test: a stand-in switch session
answers the plan (the real transport's deadline is exercised in tests/e2e)."""

from __future__ import annotations

from rdmatool import collect
from rdmatool.model import CommandResult, Platform, Target, TargetKind
from rdmatool.outcome.failures import DEADLINE_EXCEEDED


class _Switch:
    def __init__(self, cut_after: int | None) -> None:
        self.cut_after = cut_after

    def run(self, plan, command_timeout, deadline):
        out = []
        for i, step in enumerate(plan):
            cut = self.cut_after is not None and i >= self.cut_after
            out.append(CommandResult(target="leaf01", parser=step.parser, command=step.command,
                                     stdout="" if cut else "output\n", exit_code=1 if cut else 0,
                                     qualifier=step.qualifier, error=DEADLINE_EXCEEDED if cut else None))
        return out

    def close(self) -> None:
        pass


def _collect(monkeypatch, session: _Switch) -> collect.TargetOutcome:
    monkeypatch.setattr(collect, "_open", lambda *args, **kwargs: session)
    target = Target(name="leaf01", address="192.0.2.1", kind=TargetKind.SWITCH, platform=Platform.SONIC,
                    ports=("Ethernet0", "Ethernet4"))
    (outcome,) = collect.collect_all([target], collect.CollectOptions(interval_s=0, local=True))
    return outcome


def test_a_switch_cut_short_by_its_deadline_is_not_read_in_full(monkeypatch) -> None:
    outcome = _collect(monkeypatch, _Switch(cut_after=2))
    results = outcome.snapshots[0]
    assert [r.ok for r in results[:2]] == [True, True] and len(results) > 2  # what it gave is kept
    cut = len(results) - 2
    assert outcome.error == f"leaf01: {DEADLINE_EXCEEDED}; {cut} of {len(results)} commands not run, output so far kept"


def test_a_switch_read_in_full_is_ok(monkeypatch) -> None:
    outcome = _collect(monkeypatch, _Switch(cut_after=None))
    assert outcome.ok and all(r.ok for r in outcome.snapshots[0])
