"""A `--limit` / `--exclude` expression is bounded as a whole, not only pattern by pattern: refused in one line,
before anything is built, when it stands for more names in all than one pattern may (rdmatool.inventory.selection)."""

from __future__ import annotations

import time

import pytest

from rdmatool.inventory import InventoryError, selection
from rdmatool.model import Target, TargetKind
from rdmatool.present import hostlist

TARGETS = [Target(name=f"gpu{i:03d}", address=f"10.0.0.{i}", kind=TargetKind.HOST) for i in range(1, 65)]


def test_sixty_ranges_each_under_the_bound_are_refused_together_at_once() -> None:
    expression = ",".join(f"n{k}x[00001-99999]" for k in range(60))
    t0 = time.monotonic()
    with pytest.raises(InventoryError) as raised:
        selection(TARGETS, expression)
    assert time.monotonic() - t0 < 1.0  # sized from the bounds: nothing built (it took minutes when built)
    message = str(raised.value)
    assert message.startswith("--limit: n0x[00001-99999],n1x[00001-99999]")
    assert message.endswith(f"stands for more than {hostlist.MAX_NAMES} names in all (the limit)")
    assert "\n" not in message


def test_an_exclusion_is_bounded_too_and_a_real_selection_still_works() -> None:
    with pytest.raises(InventoryError, match=r"^--exclude: .* names in all"):
        selection(TARGETS, "gpu[001-064]", exclude="a[1-60000],b[1-60000]")
    chosen = selection(TARGETS, "gpu[001-010],gpu0[2-3]*,!gpu005", exclude="gpu001")
    assert [t.name for t in chosen.targets] == ["gpu002", "gpu003", "gpu004", "gpu006", "gpu007", "gpu008",
                                                 "gpu009", "gpu010", *[f"gpu{i:03d}" for i in range(20, 40)]]


def test_too_many_wildcards_are_refused() -> None:
    expression = ",".join(f"gpu{i:03d}*" for i in range(101))
    with pytest.raises(InventoryError, match=r"more than 100 wildcard patterns \(the limit\)$"):
        selection(TARGETS, expression)
