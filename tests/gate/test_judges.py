"""One declared list of judges (rdmatool.diagnose.judges) for a diagnosis and the gate: the order they run in, and which the
gate's state and counter stages run."""

from __future__ import annotations

import pytest

from rdmatool.diagnose import judges


def test_the_judges_run_in_the_declared_order() -> None:
    # the subnet sweep first: the judges after it read its switch ports on their switches
    assert [j.name for j in judges.JUDGES] == ["ib fabric", "cabling", "link errors", "far end", "pair attribution",
                                               "command failures"]


def test_the_gate_runs_the_judges_that_need_no_cabling_file_nor_pairs() -> None:
    assert [j.name for j in judges.JUDGES if j.in_gate] == ["ib fabric", "link errors", "far end", "command failures"]


@pytest.mark.parametrize(("gate", "ran"), [(False, ["a", "b", "c"]), (True, ["a", "c"])])
def test_with_judges_chains_each_judges_analysis_into_the_next(monkeypatch: pytest.MonkeyPatch, gate: bool,
                                                               ran: list[str]) -> None:
    def judge(name: str, in_gate: bool) -> judges.Judge:
        return judges.Judge(name, lambda analysis, given: [*analysis, (name, given.pairs)], in_gate)

    monkeypatch.setattr(judges, "JUDGES", (judge("a", True), judge("b", False), judge("c", True)))
    given = judges.Given(pairs=["p"])
    assert judges.with_judges([], given, gate=gate) == [(name, ["p"]) for name in ran]
