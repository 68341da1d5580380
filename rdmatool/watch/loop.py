"""The watch's loop: read every host each interval, record, judge, write; bounded in time, memory and disk.

One interval: every host is read at once (at most `forks` at a time, each over its own session kept open between
intervals), the readings are recorded in the History, the recent window is judged, new and cleared findings are
emitted (JSON lines), and the history (the interval journaled: rdmatool.watch.store), the open findings and the
textfiles are written, each file atomically or appended whole. A host that does not answer is a gap (named once on
stderr when it starts and when it ends), never an error for the others. `stop` (SIGTERM, Ctrl-C) ends the loop at
once: an interval cut short is dropped, so every completed one is on disk and none is half there.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from rdmatool.errors import RdmatoolError
from rdmatool.model import Severity, TargetKind
from rdmatool.watch import judge, store, textfile
from rdmatool.watch.history import History, Shape, Step
from rdmatool.watch.switches import SKIPPED
from rdmatool.watch.window import BUNDLE, Window


@dataclass(frozen=True)
class WatchOptions:
    interval_s: float = 10.0
    duration_s: float = 3600.0  # 0: until stopped
    forks: int = 64
    out: Path | None = None
    textfile: Path | None = None
    shape: Shape = Shape()


@dataclass
class Outcome:
    intervals: int = 0  # completed by this run
    resumed_from: int = 0  # intervals the store held when the run started
    read_ever: set[str] = field(default_factory=set)  # targets that answered at least once
    open_findings: list[dict] = field(default_factory=list)
    stopped: bool = False  # ended by `stop`, not by the duration

    @property
    def worst(self) -> Severity | None:
        order = [Severity.CRITICAL, Severity.ERROR, Severity.WARNING, Severity.INFO]
        seen = {Severity(f["severity"]) for f in self.open_findings}
        return next((s for s in order if s in seen), None)


class Watch:
    def __init__(self, readers: list, options: WatchOptions, rules: list, emit: Callable[[dict], None],
                 note: Callable[[str], None], history: History | None = None,
                 clock: Callable[[], float] = time.time, monotonic: Callable[[], float] = time.monotonic,
                 probe=None) -> None:
        self.readers = readers  # each with .target.name and .read(deadline, stop) -> (Reading | None, error)
        self.probe = probe  # rdmatool.watch.probe.LatencyProbe, or None: run after the counters, in the interval
        self.options = options
        self.rules = judge.watch_rules(rules)
        self.emit, self.note = emit, note
        self.history = history or History(options.shape)
        self.store = store.Store(options.out, options.interval_s) if options.out is not None else None
        self.clock, self.monotonic = clock, monotonic
        self.open: dict[tuple, dict] = {}
        self.gaps: dict[str, int] = {}  # target -> intervals missed so far
        self.unnamed: set[str] = set()  # targets whose names cannot name a textfile (said once)
        self.kept: list[str] = []  # this interval's targets not due whose last readings stand (textfile.write)
        self.textfiles = textfile.Textfiles()  # the rendered lines, kept from one interval to the next
        # the last window as a bundle, for diagnose and report (rdmatool.watch.window)
        self.window = Window(options.out, self.history.shape.recent, options.interval_s) if options.out else None
        self.textfiles.switches = {r.target.name for r in readers if getattr(r.target, "kind", None) is TargetKind.SWITCH}

    def run(self, stop: threading.Event) -> Outcome:
        outcome = Outcome(resumed_from=self.history.interval)
        started = self.monotonic()
        with ThreadPoolExecutor(max_workers=max(1, min(self.options.forks, len(self.readers))),
                                thread_name_prefix="rdmatool-watch") as pool:
            try:
                while not stop.is_set():
                    t0 = self.monotonic()
                    if not self._interval(t0, pool, stop, outcome):
                        outcome.stopped = True
                        break  # the interval is dropped whole: what is on disk is the last completed one
                    outcome.intervals += 1
                    duration = self.options.duration_s
                    if duration and self.monotonic() - started + self.options.interval_s > duration + 1e-9:
                        break
                    wait = t0 + self.options.interval_s - self.monotonic()
                    if wait > 0 and stop.wait(wait):
                        outcome.stopped = True
                        break
                else:  # stopped between two intervals with no time left to wait (an interval that overran)
                    outcome.stopped = True
                if self.store is not None:  # not after a failure: the history may be half an interval on
                    self.store.close(self.history)  # the journal becomes a checkpoint: a restart reads one file
            finally:
                for reader in self.readers:
                    reader.close()
                if self.window is not None:
                    self._bundle(self.window.write)
                if self.probe is not None:
                    self.probe.close()
        outcome.open_findings = list(self.open.values())
        return outcome

    def _interval(self, t0: float, pool: ThreadPoolExecutor, stop: threading.Event, outcome: Outcome) -> bool:
        """Read, record, judge and write one interval; False when `stop` cut it short (nothing recorded)."""
        # a host must answer within the interval (at least 2 s, so a short interval still reads a slow host)
        deadline = t0 + max(0.9 * self.options.interval_s, 2.0)
        answers = list(pool.map(lambda r: r.read(deadline, stop), self.readers))
        if stop.is_set():
            return False
        readings, self.kept = [], []
        for reader, (reading, error) in zip(self.readers, answers):
            if reading is SKIPPED:  # a switch read every few intervals: not its turn; its last reading stands
                if reader.target.name in outcome.read_ever and reader.target.name not in self.gaps:
                    self.kept.append(reader.target.name)
                continue
            self._gap(reader.target.name, reading is None, error)
            if reading is not None:
                readings.append(reading)
                if self.window is not None:
                    self.window.keep(reader.target, getattr(reader, "last_results", None))
                outcome.read_ever.add(reader.target.name)
        if self.probe is not None:
            figures, failed = self.probe.run(t0 + 0.9 * self.options.interval_s)
            readings += figures
            for line in failed[:3]:
                self.note(f"latency probe {line}")
            if stop.is_set():
                return False
        read = list(dict.fromkeys(r.target for r in readings))  # the probes' `fabric` too
        at = self.clock()
        step = self.history.prepare(at, readings)
        self.history.apply(step)
        events = self._judge(at)
        for event in events:
            self.emit(event)
        self._write(read, [r.target.name for r in self.readers], events, at, step)
        return True

    def _gap(self, target: str, missing: bool, error: str | None) -> None:
        if missing:
            if target not in self.gaps:
                self.note(f"{target}: not read ({error}); a gap until it answers, the others are watched on")
            self.gaps[target] = self.gaps.get(target, 0) + 1
        elif target in self.gaps:
            self.note(f"{target}: answering again after {self.gaps.pop(target)} interval(s) missed")

    def _judge(self, at: float) -> list[dict]:
        from rdmatool.rules.engine import evaluate

        found = judge.facts(self.history)
        findings = evaluate(judge.analysis_of(found), self.rules) if self.rules and not found.empty else []
        figures = _figures(found)
        stamp = datetime.fromtimestamp(at, timezone.utc).isoformat(timespec="seconds")
        now: dict[tuple, dict] = {}
        for f in findings:
            priority = f.evidence.get("priority")
            priority = int(priority) if isinstance(priority, (int, float)) and not pd.isna(priority) else None
            key = (f.rule, f.target, f.entity, priority)
            entity, _, counter = (f.entity or "").rpartition("/")
            now[key] = {"rule": f.rule, "severity": f.severity.value, "target": f.target, "entity": entity,
                        "counter": counter, "priority": priority, "symptom": f.symptom,
                        **figures.get((f.target, f.entity, priority), {})}
        events = [{"event": "finding", "time": stamp, **record} for key, record in now.items() if key not in self.open]
        events += [{"event": "cleared", "time": stamp, **record} for key, record in self.open.items()
                   if key not in now]
        self.open = {key: {**self.open.get(key, {"since": stamp}), **record} for key, record in now.items()}
        return events

    def _write(self, read: list[str], names: list[str], events: list[dict], at: float, step: Step) -> None:
        opened = list(self.open.values())
        if self.window is not None:
            self._bundle(self.window.interval)
        if self.store is not None:
            self.store.append(self.history, step)  # the interval's input journaled, a checkpoint now and then
            store.log_events(self.options.out, events)
            store.save_open(self.options.out, opened)
        if self.options.textfile is not None:
            for refused in textfile.write(self.options.textfile, self.history, read, names, opened, at,
                                          self.textfiles, self.kept):
                if refused not in self.unnamed:
                    self.unnamed.add(refused)
                    self.note(f"{refused!r}: a name that cannot name a textfile; its series are not written")


    def _bundle(self, write: Callable[[], Path | None]) -> None:
        """Write the window's bundle; a failure is said, never the end of the watch (the history is the record)."""
        try:
            write()
        except (OSError, RdmatoolError) as exc:
            self.note(f"{self.options.out}/{BUNDLE}: not written ({' '.join(str(exc).split())[:200]})")


def _figures(found: pd.DataFrame) -> dict[tuple, dict]:
    """(target, entity, priority) -> its watch figures by short name (period_s, strength, spikes, growth_rate,
    step_ratio)."""
    short = {"watch_spike_period_s": "period_s", "watch_spike_strength": "strength", "watch_spike_count": "spikes",
             "watch_growth_rate": "growth_rate", "watch_lat_spike_period_s": "period_s",
             "watch_lat_spike_strength": "strength", "watch_lat_spike_count": "spikes",
             "watch_lat_step_ratio": "step_ratio"}
    out: dict[tuple, dict] = {}
    for target, entity, priority, metric, value in zip(found["target"], found["entity"], found["priority"],
                                                       found["metric"], found["value"]):
        key = (target, entity, None if pd.isna(priority) else int(priority))
        out.setdefault(key, {})[short[metric]] = round(float(value), 4)
    return out
