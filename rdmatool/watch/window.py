"""The watch's last window as a bundle, for `rdmatool diagnose` and `rdmatool report`.

With `--out DIR`, `DIR/last-window` is a bundle (docs/bundle-format.md) of two snapshots: each target's raw outputs
as the watch read them at the start of the window (snapshot 0) and at its last interval (snapshot 1), so that
`rdmatool diagnose DIR/last-window` judges the window's rates with every snapshot rule and `rdmatool report` shows
it. It is written when a window of the history's recent intervals has passed since the last one, and when the watch
ends; the writer replaces the previous bundle only once the new one is complete (rdmatool.bundle.writer).
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from rdmatool.bundle.writer import BundleWriter
from rdmatool.model import CommandResult, Target

BUNDLE = "last-window"


class Window:
    def __init__(self, directory: Path, every: int, interval_s: float) -> None:
        self.directory = directory
        self.interval_s = interval_s
        self.every = max(1, every)  # intervals between two bundles: the recent window
        self.start: dict[str, tuple[str, list[CommandResult]]] = {}  # target -> (when read, outputs)
        self.latest: dict[str, tuple[str, list[CommandResult]]] = {}
        self.targets: dict[str, Target] = {}
        self.since = 0  # intervals recorded since the last bundle

    def keep(self, target: Target, results: list[CommandResult] | None) -> None:
        """A target's outputs of this interval (None: not read)."""
        if not results:
            return
        self.targets[target.name] = target
        read = (datetime.now(timezone.utc).isoformat(timespec="seconds"), list(results))
        self.start.setdefault(target.name, read)
        self.latest[target.name] = read

    def interval(self) -> Path | None:
        """Count one interval; the bundle's path when a window has passed and it was written."""
        self.since += 1
        return self.write() if self.since >= self.every else None

    def write(self) -> Path | None:
        """Write the bundle of the window so far (None when nothing was read twice); the latest outputs start the
        next window."""
        names = sorted(name for name in self.latest if name in self.start and self.latest[name] is not self.start[name])
        if not names:
            return None
        writer = BundleWriter(self.directory / BUNDLE)
        try:
            for name in names:
                for index, (_, results) in enumerate((self.start[name], self.latest[name])):
                    for result in results:
                        writer.add(index, result)
            times = [[self.start[n][0] for n in names], [self.latest[n][0] for n in names]]
            snapshots = [{"index": i, "started": min(t), "finished": max(t)} for i, t in enumerate(times)]
            path = writer.commit([self.targets[n] for n in names], snapshots, [], self.interval_s)
        except BaseException:
            writer.abort()
            raise
        self.start = dict(self.latest)
        self.since = 0
        return path
