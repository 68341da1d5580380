"""A switch port's error counter that reaches its maximum between two sweeps grew (by at least the difference): it is
named as growing errors; one pinned at its maximum in both sweeps still reads as no growth."""

from __future__ import annotations

from rdmatool.diagnose.pipeline import diagnose_bundle
from tests.topology.ib_fat_tree import Faults, fat_tree, write_bundle


def test_an_error_counter_that_saturates_within_the_window_is_named_as_growing(tmp_path) -> None:
    tree = fat_tree(8, 4, 2, 2, seed=3)
    grew, pinned = (tree.leaves[0], 5), (tree.leaves[1], 5)
    before = Faults(counters={grew: {"SymbolErrorCounter": 65400}, pinned: {"SymbolErrorCounter": 65535}})
    after = Faults(counters={grew: {"SymbolErrorCounter": 65535}, pinned: {"SymbolErrorCounter": 65535}})
    result = diagnose_bundle(write_bundle(tmp_path / "b", tree, [before, after]))
    named = {(f.target, f.entity) for f in result.findings if f.rule == "ib_switch_port_errors"}
    assert (grew[0], "5") in named
    assert (pinned[0], "5") not in named
