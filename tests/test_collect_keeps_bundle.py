"""A collection in which no target is usable never replaces an existing bundle (without `force`), whatever the
reason: unreachable, framing broken after a few good sections, cut by the deadline. Bundles on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from rdmatool import bundle, collect
from rdmatool.errors import NothingCollected
from rdmatool.model import CommandResult, Target

HOSTS = ("gpu01", "gpu02")
BROKEN = "host output breaks the collection script's framing at line 9 (malformed marker); the rest ignored"


def _targets() -> list[Target]:
    return [Target(name=h, address=f"10.0.0.{i}") for i, h in enumerate(HOSTS, start=1)]


def _loadavg(host: str, text: str) -> CommandResult:
    return CommandResult(target=host, parser="loadavg", command="cat /proc/loadavg", stdout=text,
                         started="2024-05-01T02:00:00+00:00")


def _fake_collect(monkeypatch: pytest.MonkeyPatch, how: dict[str, tuple[str, str | None]]) -> None:
    """collect_all as the service calls it, each host giving `(loadavg text, its failure)`."""

    def collect_all(targets, options, progress=None, finished=None):
        outcomes = []
        for target in targets:
            text, error = how[target.name]
            outcome = collect.TargetOutcome(target, {0: [_loadavg(target.name, text)]}, error)
            if finished is not None:
                finished(outcome)
            outcomes.append(outcome)
        return outcomes

    monkeypatch.setattr(collect, "collect_all", collect_all)


def _run(path: Path, force: bool = False) -> None:
    collect.collect_to_bundle(_targets(), collect.CollectOptions(interval_s=0), str(path), force=force)


def _good_bundle(path: Path, monkeypatch: pytest.MonkeyPatch) -> bytes:
    _fake_collect(monkeypatch, {h: ("0.10 0.40 0.30 2/400 12345\n", None) for h in HOSTS})
    _run(path)
    return (path / "manifest.json").read_bytes()


@pytest.mark.parametrize("failure", [BROKEN, "deadline exceeded; output so far kept", "no RDMA device"])
def test_every_target_failed_after_some_output_keeps_the_bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               failure: str) -> None:
    night = tmp_path / "night"
    before = _good_bundle(night, monkeypatch)
    # Each host printed a section before failing: output, but no target to judge by.
    _fake_collect(monkeypatch, {h: ("9.99 9.99 9.99 1/1 1\n", f"{h}: {failure}") for h in HOSTS})
    with pytest.raises(NothingCollected) as refused:
        _run(night)
    message = str(refused.value)
    assert "no target was collected; the existing bundle is kept" in message
    assert f"gpu01: {failure}" in message and "1 more failures" in message
    assert (night / "manifest.json").read_bytes() == before
    kept = [entry.result.stdout for entry in bundle.read(night).entries]
    assert kept == ["0.10 0.40 0.30 2/400 12345\n"] * 2
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".night")], "no partial bundle left behind"


def test_force_replaces_it_and_a_new_name_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    night = tmp_path / "night"
    before = _good_bundle(night, monkeypatch)
    _fake_collect(monkeypatch, {h: ("9.99 9.99 9.99 1/1 1\n", f"{h}: {BROKEN}") for h in HOSTS})
    _run(night, force=True)
    assert (night / "manifest.json").read_bytes() != before
    _run(tmp_path / "fresh")  # nothing to lose under a new name
    assert (tmp_path / "fresh" / "manifest.json").is_file()


def test_one_usable_target_replaces_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    night = tmp_path / "night"
    before = _good_bundle(night, monkeypatch)
    _fake_collect(monkeypatch, {"gpu01": ("0.20 0.40 0.30 2/400 12345\n", None),
                                "gpu02": ("9.99 9.99 9.99 1/1 1\n", f"gpu02: {BROKEN}")})
    _run(night)
    assert (night / "manifest.json").read_bytes() != before
