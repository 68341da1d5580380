"""iblinkinfo over every real capture in ../shared/real-outputs/host/iblinkinfo (skipped when the corpus or the
folder is absent: the corpus holds none yet), plus the properties every capture must keep: each cabled port names
its far end, CRLF and a provenance comment change nothing, and the cabling it gives is consistent both ways."""

from __future__ import annotations

import pytest

from tests.helpers import REAL_OUTPUTS, run


def _captures():
    folder = REAL_OUTPUTS / "host" / "iblinkinfo"
    return sorted(folder.glob("*.txt")) if folder.is_dir() else []


@pytest.mark.parametrize("path", _captures() or [None], ids=lambda p: p.name if p else "none")
def test_real_iblinkinfo_parses_and_keeps_every_link(path) -> None:
    if path is None:
        pytest.skip(f"no iblinkinfo capture under {REAL_OUTPUTS}/host/iblinkinfo")
    text = path.read_text(encoding="utf-8")
    samples = run("iblinkinfo", text)
    assert samples, f"{path.name}: nothing parsed"
    assert run("iblinkinfo", text.replace("\n", "\r\n")) == samples
    assert run("iblinkinfo", "# collected from a public source\n" + text) == samples
    arrows = sum(1 for line in text.splitlines() if "==>" in line and '"' in line and '""' not in line
                 and "Port not available" not in line)
    assert sum(1 for s in samples if s.metric == "ib_link_neighbor") == arrows
