"""The collect service hands each finished target to one writing thread of its own, so a collecting thread goes on
to its next target at once; what the writing raises still ends the collection. `_collect_target` is replaced by a
fake (no SSH here): the end-to-end tests collect over the real sshd."""

from __future__ import annotations

import threading
import time

import pytest

from rdmatool import collect
from rdmatool.model import Target


def _targets(n: int) -> list[Target]:
    return [Target(name=f"gpu{i:02d}", address="127.0.0.1") for i in range(n)]


def _fake_collect(outcome, options, known, stop, snapshot_count, deadline, subnets) -> None:  # noqa: ANN001
    time.sleep(0.01)
    outcome.snapshots[0] = []


def test_every_outcome_is_written_once_in_the_writing_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(collect, "_collect_target", _fake_collect)
    seen: list[tuple[str, str]] = []
    events: list[tuple[str, str]] = []
    outcomes = collect.collect_all(_targets(20), collect.CollectOptions(forks=4, local=True),
                                   progress=lambda name, event: events.append((name, event)),
                                   finished=lambda o: seen.append((o.target.name, threading.current_thread().name)))
    assert sorted(name for name, _ in seen) == [t.target.name for t in outcomes]  # each exactly once
    assert {thread.split("_")[0] for _, thread in seen} == {"rdmatool-write"}
    # progress says "done" only once the target is written
    assert [name for name, _ in events] == [name for name, _ in seen] and {e for _, e in events} == {"done"}


def test_a_failure_of_the_writing_ends_the_collection_with_it(monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[str] = []

    def slow_collect(outcome, options, known, stop, snapshot_count, deadline, subnets) -> None:  # noqa: ANN001
        if stop.is_set():
            return
        started.append(outcome.target.name)
        time.sleep(0.05)

    monkeypatch.setattr(collect, "_collect_target", slow_collect)
    written: list[str] = []

    def finished(outcome) -> None:  # noqa: ANN001
        if len(written) == 2:
            raise OSError(28, "No space left on device")
        written.append(outcome.target.name)

    with pytest.raises(OSError, match="No space left"):
        collect.collect_all(_targets(40), collect.CollectOptions(forks=2, local=True), finished=finished)
    assert len(written) == 2
    assert len(started) < 40  # the others stopped at their next step instead of being collected for nothing


def test_without_a_writer_progress_is_reported_by_the_collecting_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(collect, "_collect_target", _fake_collect)
    threads: list[str] = []
    collect.collect_all(_targets(3), collect.CollectOptions(forks=2, local=True),
                        progress=lambda name, event: threads.append(threading.current_thread().name))
    assert len(threads) == 3 and all(t.startswith("rdmatool_") for t in threads)
