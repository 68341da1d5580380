"""The incast stage's figures as an input of the ECN thresholds (rdmatool.tune.suggest.incast, declared in
ecn.INPUT_HOOKS): a note in the rationale, and pauses before marks below the current Kmin lowering T_xoff to it."""

from __future__ import annotations

from rdmatool.tune.suggest import ecn
from rdmatool.tune.suggest.incast import incast_inputs
from tests.pods.facts import analysis, row
from tests.tune.test_ecn_objects import suggest, two_nic_host


def leaf(kmin: int, paused: float | None, marked: float | None, xoff: int | None = None) -> object:
    """gpu01's 100G RoCE NIC on leaf3 Ethernet1/1 (EOS), Kmin `kmin`; the incast figures of that port, if given;
    the XOFF threshold of its lossless PG, if given (else T_xoff is not known)."""
    rows = [*two_nic_host("gpu01", 100), row("leaf3", "eos", "Ethernet1/1", "ecn_min_threshold_bytes", kmin, priority=3)]
    if xoff is not None:
        rows.append(row("leaf3", "eos", "Ethernet1/1", "pfc_xoff_bytes", xoff, priority=3))
    if paused is not None:
        rows += [row("leaf3", "eos", "Ethernet1/1", "incast_fan_in", 4),
                 row("leaf3", "eos", "Ethernet1/1", "incast_pause_fraction", paused),
                 row("leaf3", "eos", "Ethernet1/1", "incast_ecn_mark_ratio", marked)]
    return analysis(rows, [("gpu01", "ens1f0np0", "leaf3", "Ethernet1/1")])


def test_the_hooks_are_declared_not_filled_by_an_import() -> None:
    # ecn.py names its hooks itself (a tuple): nothing appends to it when another module is imported
    assert isinstance(ecn.INPUT_HOOKS, tuple) and ecn.INPUT_HOOKS.count(incast_inputs) == 1


def test_without_incast_figures_nothing_changes() -> None:
    (s,) = suggest(leaf(20_000, None, None), "leaf3", "Ethernet1/1", 3)
    assert "Incast" not in s.rationale


def test_a_healthy_incast_is_noted_and_changes_nothing() -> None:
    (plain,) = suggest(leaf(20_000, None, None), "leaf3", "Ethernet1/1", 3)
    (s,) = suggest(leaf(20_000, 0.002, 0.02), "leaf3", "Ethernet1/1", 3)
    assert "Incast stage on Ethernet1/1 (fan-in 4): senders held by PFC 0.2 % of the load, 2 % of the packets" in \
        s.rationale
    assert s.proposed == plain.proposed


def test_pauses_before_marks_below_the_current_kmin_lower_t_xoff_to_it() -> None:
    (plain,) = suggest(leaf(20_000, None, None), "leaf3", "Ethernet1/1", 3)
    (s,) = suggest(leaf(20_000, 0.75, 0.0), "leaf3", "Ethernet1/1", 3)
    assert "PFC fired below Kmin, so T_xoff is taken as 20000 B" in s.rationale
    assert "T_xoff 20000 B (the incast stage on Ethernet1/1" in s.rationale
    assert s.proposed != plain.proposed
    kmax = int(s.proposed.split("Kmax ")[1].split(" B")[0])
    assert kmax < int(plain.proposed.split("Kmax ")[1].split(" B")[0])


def test_pauses_before_marks_above_t_xoff_keep_the_switchs_trigger() -> None:
    (plain,) = suggest(leaf(4_000_000, None, None, xoff=200_000), "leaf3", "Ethernet1/1", 3)
    (s,) = suggest(leaf(4_000_000, 0.75, 0.0, xoff=200_000), "leaf3", "Ethernet1/1", 3)
    assert "Pauses came before marks, as thresholds at or above T_xoff predict." in s.rationale
    assert "T_xoff 200000 B (switch pfc_xoff_bytes)" in s.rationale
    assert s.proposed == plain.proposed


def test_pauses_before_marks_with_the_trigger_unknown_take_the_current_kmin_as_its_bound() -> None:
    (s,) = suggest(leaf(20_000, 0.75, 0.0), "leaf3", "Ethernet1/1", 3)
    assert "with the current Kmin 20000 B and T_xoff not known" in s.rationale
