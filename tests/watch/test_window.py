"""The watch's last window as a bundle (rdmatool.watch.window): written once a window has passed, the latest
outputs starting the next window."""

from __future__ import annotations

from pathlib import Path

from rdmatool.bundle import reader
from rdmatool.model import CommandResult, Target
from rdmatool.watch.window import BUNDLE, Window

TEXT = "/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error:{n}\n"


def _results(n: int) -> list[CommandResult]:
    return [CommandResult("gpu01", "sysfs_counters", "grep", TEXT.format(n=n),
                          qualifier="mlx5_0")]


def test_a_window_becomes_a_bundle_of_its_first_and_last_outputs(tmp_path: Path) -> None:
    window, host = Window(tmp_path, every=3, interval_s=10.0), Target("gpu01", "127.0.0.1")
    written = []
    for n in range(7):
        window.keep(host, _results(n))
        written.append(window.interval())
    assert [w is not None for w in written] == [False, False, True, False, False, True, False]
    bundle = reader.read(tmp_path / BUNDLE)
    values = {e.snapshot: e.result.stdout for e in bundle.entries}
    assert values == {0: TEXT.format(n=2), 1: TEXT.format(n=5)}
    assert bundle.manifest["interval_s"] == 10.0 and [t["name"] for t in bundle.targets] == ["gpu01"]
