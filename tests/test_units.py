"""Numbers as people read them (rdmatool.present.units)."""

from __future__ import annotations

import pytest

from rdmatool.present.units import human, unit_for


@pytest.mark.parametrize(("value", "unit", "shown"), [
    (0.9856, "ratio", "98.6 %"), (2e-05, "ratio", "0.002 %"), (0, "ratio", "0 %"), (1, "ratio", "100 %"),
    (1499136, "bytes", "1.43 MiB"), (3145728, "bytes", "3 MiB"), (35714, "bytes", "34.9 KiB"), (512, "bytes", "512 B"),
    (400, "Gb/s", "400 Gb/s"), (399.6, "Gb/s", "399.6 Gb/s"), (97.25, "Gb/s", "97.25 Gb/s"),
    (40, "us", "40 µs"), (1500, "us", "1.5 ms"), (0.5, "us", "500 ns"), (4.119, "s", "4.12 s"), (200, "ms", "200 ms"),
    (14824.3, "frames", "14,824"), (1.016, "", "1.016"), (77, "errors", "77"), (12.5, "%", "12.5 %"),
    ("Down", "", "Down"), (None, "bytes", "-"), (True, "bool", "True"),
])
def test_human(value, unit: str, shown: str) -> None:
    assert human(value, unit) == shown


def test_units_that_are_not_what_they_seem() -> None:
    assert unit_for("active_mtu", "bytes") == ""  # MTU 1024, never 1 KiB
    assert unit_for("incast_fairness", "ratio") == ""  # an index, not a share
    assert unit_for("tx_pause_fraction", "ratio") == "ratio"
