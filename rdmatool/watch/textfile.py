"""The watch's Prometheus textfiles, rewritten atomically every interval.

The families are the export's own (rdmatool.report.prometheus): the light counters' latest readings, their rates
(`<name>_per_second`, from the reading before each one: a switch's kept between its reads) and the port states,
named and labelled as `rdmatool export prometheus` names them (the glossary's names and units, EntityLabels'
labels), so one dashboard serves both; one file per node and the fleet file, each replaced atomically, named as the
export names them (rdmatool.report.prometheus.textfiles). Beside them the watch's own: when the interval was read, how many of the
targets answered, each node's open watch findings, and the latency probes' window figures per class
(`rdmatool_watch_probe_latency_seconds{class,quantile,test}`, in the fleet file).

Speed: a watch of 1,000 hosts rewrites some 100,000 series every interval. Each series' line up to its value (name
and labels, escaped by prometheus_client itself) is rendered once, when its target's series change, and kept
(`Textfiles`); an interval then only formats the values and joins each file's lines.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from prometheus_client import generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.utils import floatToGoString

from rdmatool.metrics import GLOSSARY
from rdmatool.model import MetricKind
from rdmatool.report.prometheus.families import _INFO_LABEL, INFO_STATES, label_value
from rdmatool.report.prometheus.labels import EntityLabels
from rdmatool.report.prometheus.names import PREFIX, base_name, help_text
from rdmatool.report.prometheus.textfiles import FLEET_FILE, target_file
from rdmatool.watch.history import History, is_gauge

PROBE_FAMILY = PREFIX + "watch_probe_latency_seconds"
_QUANTILES = {"watch_lat_p50_us": "0.5", "watch_lat_p99_us": "0.99", "watch_lat_p999_us": "0.999"}


@dataclass
class _Target:
    """One target's rendered series: per history row its value line and (a counter) its rate line."""

    rows: np.ndarray  # history rows with a value line
    value_family: list[int]
    value_prefix: list[str]
    scale: np.ndarray
    rate_rows: list[int]
    rate_family: list[int]
    rate_prefix: list[str]
    rate_scale: np.ndarray
    states: dict[tuple[str, str], tuple[int, str]]  # (entity\tmetric, text) -> (family, whole line)
    signature: tuple  # its series count and states when rendered
    # its file's series lines in file order (each family's together): where each value comes from in
    # [readings..., rates...], its line's prefix, and its family's header before the family's first line
    order: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    order_prefix: list[str] = field(default_factory=list)
    order_head: list[str] = field(default_factory=list)
    # each line's text before its value, with the line before's end in front ("\n" + header + prefix): the file is
    # then these and the values, interleaved, joined once
    order_lead: list[str] = field(default_factory=list)


@dataclass
class Textfiles:
    """What the textfiles keep from one interval to the next: each target's rendered lines (module docstring)."""

    headers: list[str] = field(default_factory=list)  # `# HELP ...\n# TYPE ...\n` per family
    families: dict[str, int] = field(default_factory=dict)
    targets: dict[str, _Target] = field(default_factory=dict)
    _rows: dict[str, list[int]] = field(default_factory=dict)  # target -> its history rows
    _known: int = 0  # history rows sorted into _rows
    switches: set[str] = field(default_factory=set)  # the targets that are switches (their entities are ports)

    def refresh(self, history: History) -> None:
        """Render again the targets whose series or states changed (a target's labels depend on its other series:
        an RDMA device is one with ports)."""
        for row in range(self._known, len(history)):
            self._rows.setdefault(history.keys[row][0], []).append(row)
        self._known = len(history)
        names = list(dict.fromkeys([*self._rows, *history.states]))
        changed = [t for t in names if t not in self.targets or self.targets[t].signature != _signature(history, t, self)]
        if changed:
            self._render(history, changed)

    def _render(self, history: History, targets: list[str]) -> None:
        entities = EntityLabels(_label_facts(history, targets, self._rows, self.switches))
        per_family: dict[str, list[tuple[str, int, tuple]]] = {}  # family -> (kind, ident, labels)
        specs: dict[str, tuple[str, str, float]] = {}  # family -> (help, type, scale)
        for target in targets:
            for row in self._rows.get(target, []):
                _, entity, metric, priority = history.keys[row]
                known = GLOSSARY.get(metric)
                if known is None or known.kind is MetricKind.STATE:
                    continue
                labels = (("target", label_value(target)), *entities.of(target, entity, metric))
                if priority >= 0:
                    labels += (("priority", label_value(priority)),)
                name, scale = base_name(known)
                counter = known.kind is MetricKind.COUNTER and not is_gauge(metric)
                specs.setdefault(PREFIX + name, (help_text(known), "counter" if counter else "gauge", scale))
                per_family.setdefault(PREFIX + name, []).append(("value", row, labels))
                if counter:
                    rate = PREFIX + name + "_per_second"
                    specs.setdefault(rate, (help_text(known, rate=True), "gauge", scale))
                    per_family.setdefault(rate, []).append(("rate", row, labels))
            for joined, text in history.states.get(target, {}).items():
                entity, _, metric = joined.partition("\t")
                if metric not in INFO_STATES or not text:
                    continue
                known = GLOSSARY[metric]
                name = f"{PREFIX}{base_name(known)[0]}_info"
                specs.setdefault(name, (help_text(known), "gauge", 1.0))
                labels = (("target", label_value(target)), *entities.of(target, entity, metric),
                          (_INFO_LABEL.get(metric, "value"), label_value(text)))
                per_family.setdefault(name, []).append(("state", (target, joined, text), labels))
        built = {t: _Target(np.zeros(0, dtype=np.int64), [], [], np.zeros(0), [], [], [], np.zeros(0), {},
                            _signature(history, t, self)) for t in targets}
        rate_scales: dict[str, list[float]] = {t: [] for t in targets}
        values: dict[str, list[tuple[int, int, str, float]]] = {t: [] for t in targets}
        for name in sorted(per_family):
            help_, type_, scale = specs[name]
            header, prefixes = _prefixes(name, help_, type_, [labels for _, _, labels in per_family[name]])
            index = self.families.setdefault(name, len(self.families))
            if index == len(self.headers):
                self.headers.append(header)
            for (kind, ident, _), prefix in zip(per_family[name], prefixes, strict=True):
                if kind == "value":
                    values[history.keys[ident][0]].append((ident, index, prefix, scale))
                elif kind == "rate":
                    mine = built[history.keys[ident][0]]
                    mine.rate_rows.append(ident)
                    mine.rate_family.append(index)
                    mine.rate_prefix.append(prefix)
                    rate_scales[history.keys[ident][0]].append(scale)
                else:
                    built[ident[0]].states[(ident[1], ident[2])] = (index, prefix + "1.0\n")
        for target, mine in built.items():
            got = values[target]
            mine.rows = np.array([g[0] for g in got], dtype=np.int64)
            mine.value_family = [g[1] for g in got]
            mine.value_prefix = [g[2] for g in got]
            mine.scale = np.array([g[3] for g in got], dtype=float)
            mine.rate_scale = np.array(rate_scales[target], dtype=float)
            self._order(mine)
            self.targets[target] = mine

    def _order(self, mine: _Target) -> None:
        """The file order of the target's series lines (see _Target), computed once."""
        lines = [(f, i, p) for i, (f, p) in enumerate(zip(mine.value_family, mine.value_prefix))]
        lines += [(f, len(mine.value_family) + i, p) for i, (f, p) in enumerate(zip(mine.rate_family,
                                                                                     mine.rate_prefix))]
        lines.sort(key=lambda x: x[0])  # stable: each family's samples in their order
        mine.order = np.array([i for _, i, _ in lines], dtype=np.int64)
        mine.order_prefix = [p for _, _, p in lines]
        mine.order_head = [self.headers[f] if n == 0 or lines[n - 1][0] != f else "" for n, (f, _, _) in
                           enumerate(lines)]
        mine.order_lead = [("\n" if n else "") + head + prefix
                           for n, (head, prefix) in enumerate(zip(mine.order_head, mine.order_prefix))]

    def node_text(self, history: History, target: str, extra: str = "") -> str:
        """A node's file: its series (each family's header before its lines), its states, then `extra`."""
        mine = self.targets.get(target)
        if mine is None:
            return extra
        readings, rates = _values(history, mine)
        values = np.concatenate([readings, rates])[mine.order]
        if not len(values):
            series = ""
        elif np.isnan(values).any():
            # a series never read (NaN) has no line; its family's header stays (a family without samples is valid)
            series = "".join([f"{head}{prefix}{text}\n" if value == value else head for head, prefix, value, text
                              in zip(mine.order_head, mine.order_prefix, values.tolist(), go_strings(values))])
        else:  # every series read (the steady state): the leads and the values interleaved, one join
            parts = [""] * (2 * len(values))
            parts[0::2] = mine.order_lead
            parts[1::2] = go_strings(values)
            series = "".join(parts) + "\n"
        current = history.states.get(target, {})
        states = sorted((family, line) for (joined, text), (family, line) in mine.states.items()
                        if current.get(joined) == text)
        return series + self.text(states) + extra

    def lines(self, history: History, target: str) -> list[tuple[int, str]]:
        """(family, line) of each of the target's series with a reading, its rates at their last readings and its
        states."""
        mine = self.targets.get(target)
        if mine is None:
            return []
        readings, rates = _values(history, mine)
        out = [(family, f"{prefix}{text}\n") for family, prefix, value, text in
               zip(mine.value_family, mine.value_prefix, readings.tolist(), go_strings(readings))
               if value == value]  # NaN: never read
        out += [(family, f"{prefix}{text}\n") for family, prefix, rate, text in
                zip(mine.rate_family, mine.rate_prefix, rates.tolist(), go_strings(rates)) if rate == rate]
        current = history.states.get(target, {})
        out += [(family, line) for (joined, text), (family, line) in mine.states.items() if current.get(joined) == text]
        return out

    def text(self, lines: list[tuple[int, str]], extra: str = "") -> str:
        lines.sort(key=lambda x: x[0])  # stable: each family's samples in their order
        parts, last = [], -1
        for family, line in lines:
            if family != last:
                parts.append(self.headers[family])
                last = family
            parts.append(line)
        return "".join(parts) + extra


def _values(history: History, mine: _Target) -> tuple[np.ndarray, np.ndarray]:
    """The target's series values as written: its readings, then its counters' rates at their last readings (each
    scaled to the family's unit)."""
    readings = history.last_value[mine.rows] * mine.scale
    rates = history.latest_rates[np.array(mine.rate_rows, dtype=np.int64)] * mine.rate_scale
    return readings, rates


def _signature(history: History, target: str, cache: Textfiles) -> tuple:
    """What a target's lines are made of: its number of series, its states' texts (a port going down)."""
    return len(cache._rows.get(target, ())), tuple(sorted(history.states.get(target, {}).items()))


def _prefixes(name: str, help_: str, type_: str, labelled: list[tuple]) -> tuple[str, list[str]]:
    """The family's HELP/TYPE header and each sample's line up to its value, as prometheus_client writes them:
    rendered with the value 1 and the value cut off."""
    metric = Metric(name, help_, type_)
    sample = name + ("_total" if type_ == "counter" else "")
    for labels in labelled:
        metric.add_sample(sample, dict(labels), 1.0)
    lines = generate_latest(_Collector([metric])).decode().splitlines()
    one = floatToGoString(1.0)
    return lines[0] + "\n" + lines[1] + "\n", [line[: -len(one)] for line in lines[2:]]


class _Collector:
    def __init__(self, metrics: list[Metric]) -> None:
        self.metrics = metrics

    def collect(self):
        return iter(self.metrics)


def _label_facts(history: History, targets: list[str], rows_of: dict[str, list[int]],
                 switches: set[str]) -> pd.DataFrame:
    """The facts EntityLabels reads to tell a target's entities apart (ports, devices, netdevs, tests)."""
    out = []
    for target in targets:
        kind = "switch" if target in switches else "host"
        for row in rows_of.get(target, []):
            _, entity, metric, _ = history.keys[row]
            out.append((target, kind, entity, metric, np.nan))
        for joined in history.states.get(target, {}):
            entity, _, metric = joined.partition("\t")
            out.append((target, kind, entity, metric, np.nan))
    return pd.DataFrame(out, columns=["target", "kind", "entity", "metric", "size_bytes"])


def write(directory: Path, history: History, read: list[str], all_targets: list[str], open_findings: list[dict],
          at: float, cache: Textfiles | None = None, kept: list[str] = ()) -> list[str]:
    """Rewrite every node's textfile and the fleet file; the targets whose names cannot name a file are returned.
    `read`: the targets that answered this interval; `kept`: targets not due this interval whose last readings
    stand (a switch read every few intervals), written as read then. `cache` keeps the rendered lines from one
    interval to the next (a fresh one renders everything)."""
    cache = cache if cache is not None else Textfiles()
    cache.refresh(history)
    answered, shown, nodes = set(read), set(read) | set(kept), set(all_targets)
    findings: dict[str, list[str]] = {}
    counts: dict[tuple[str, str, str], int] = {}
    for f in open_findings:
        counts[(f["target"], f["rule"], f["severity"])] = counts.get((f["target"], f["rule"], f["severity"]), 0) + 1
    head = _header(PREFIX + "watch_findings", "watch findings open on the node, by rule and severity", "gauge")
    for (target, rule, severity), n in sorted(counts.items()):
        findings.setdefault(target, []).append(
            _line(PREFIX + "watch_findings", {"rule": rule, "severity": severity, "target": label_value(target)}, n))
    refused = []
    try:
        folder = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)  # each file named relative to it: no path walks
    except OSError as exc:
        exc.filename = str(directory)
        raise
    try:
        for target in all_targets:
            name = target_file(target)
            if name is None:
                refused.append(target)
                continue
            extra = head + "".join(findings[target]) if target in findings else ""
            _write(folder, directory, name, cache.node_text(history, target, extra) if target in shown else extra)
        fleet = []
        for target in cache.targets:
            if target not in nodes and target in shown:
                fleet += cache.lines(history, target)
        extra = "".join(findings[t] for t in findings if t not in nodes)
        extra = (head + extra if extra else "") + _singles(at, len(all_targets), len(answered & nodes)) + \
            _probe_family(history)
        _write(folder, directory, FLEET_FILE, cache.text(fleet, extra))
    finally:
        os.close(folder)
    return refused


def _singles(at: float, targets: int, read: int) -> str:
    return "".join(_header(PREFIX + name, help_, "gauge") + _line(PREFIX + name, {}, value) for name, help_, value in (
        ("watch_last_interval_timestamp_seconds", "when the watch's last interval was read", at),
        ("watch_targets", "targets the watch reads", targets),
        ("watch_targets_read", "targets that answered in the watch's last interval", read)))


def _probe_family(history: History) -> str:
    """The probes' window figures per class (rdmatool.watch.probe: target `fabric`, metrics watch_lat_p*_us)."""
    lines = []
    for row in np.flatnonzero(history.gauge_rows()).tolist():  # the figures are gauges: not every series looked at
        target, entity, metric, _ = history.keys[row]
        if metric in _QUANTILES and np.isfinite(history.last_value[row]):
            test, _, class_ = entity.partition("@")
            lines.append(_line(PROBE_FAMILY, {"class": class_, "quantile": _QUANTILES[metric], "target": target,
                                              "test": test}, float(history.last_value[row]) * 1e-6))
    if not lines:
        return ""
    return _header(PROBE_FAMILY, "the latency probes' tests of a pair class over the watch's window: the median of "
                   "their typical latency (quantile 0.5), the 99th and 99.9th percentiles of their p99 and p99.9",
                   "gauge") + "".join(sorted(lines))


def _header(name: str, help_: str, type_: str) -> str:
    return f"# HELP {name} {help_}\n# TYPE {name} {type_}\n"


def _line(name: str, labels: dict, value: float) -> str:
    metric = Metric(name, "", "gauge")
    metric.add_sample(name, labels, float(value))
    return generate_latest(_Collector([metric])).decode().split("\n", 2)[2]


def go_strings(values: np.ndarray) -> list[str]:
    """Each value as prometheus_client writes it (floatToGoString), a file's values at once: repr, mapped in C,
    except where Go writes an exponent sooner (1e6 <= value < 1e16, which repr writes in full: the mantissa of
    repr's digits, as floatToGoString makes it) and NaN and the infinities."""
    texts = list(map(repr, values.tolist()))
    for i in np.flatnonzero((values >= 1e6) & (values < 1e16)).tolist():
        text = texts[i]
        dot = text.find(".")
        texts[i] = f"{text[0]}.{text[1:dot]}{text[dot + 1:]}".rstrip("0.") + f"e+{dot - 1:02d}"
    for i in np.flatnonzero(~np.isfinite(values)).tolist():
        texts[i] = floatToGoString(values[i])
    return texts


def _write(folder: int, directory: Path, name: str, text: str) -> None:
    """Replace the file `name` in the open directory `folder` atomically (a reader sees the old file or the new one),
    without write_atomic's fsyncs: a textfile is rewritten every interval, and a crash that loses the last one loses
    nothing the next interval does not write again; 1,000 fsyncs an interval would be most of the textfiles' cost."""
    tmp = f".{name}.{os.getpid()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, dir_fd=folder)
        try:
            data = memoryview(text.encode())
            while data:
                data = data[os.write(fd, data):]
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=folder)
        exc.filename = str(directory / (tmp if exc.filename == tmp else name))
        raise
