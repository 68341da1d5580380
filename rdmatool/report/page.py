"""What the HTML report shows, gathered as plain values: the diagnosis, one row per port, the pause and ECN figures
per priority, the key counter rates, the cabling with its physically faulty cables and the faults of its ports, the
perftest pairs and the baseline's nights.

Nothing here judges: a port's worst severity and a cable's fault are the findings' (the rules decided them), the
figures are the analysis' facts as they are. The plots (rdmatool.report.plots) and the page (rdmatool.report.html)
draw these values and nothing else.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from rdmatool.model import Severity
from rdmatool.outcome.result import DiagnoseResult
from rdmatool.topology import Link

# Counters whose growth in the window is an error on the link or a drop: the fleet table's "errors" column. Two
# tools can count the same thing (sysfs and perfquery both read symbol errors), so a port's figure per metric is the
# largest delta any of its rows saw, and the column is the sum of those.
ERROR_COUNTERS = (
    "symbol_errors", "link_error_recovery", "link_downed", "port_rcv_errors", "port_rcv_remote_physical_errors",
    "port_xmit_discards", "local_link_integrity_errors", "excessive_buffer_overrun_errors", "rx_crc_errors",
    "rx_symbol_errors", "rx_discards", "tx_discards", "rx_out_of_buffer", "fec_uncorrectable_blocks", "rx_errors",
    "tx_errors", "effective_physical_errors", "link_down_events", "queue_drops", "wred_drops",
)
# The counter rates plotted per port, as (label, the `<metric>_per_s` facts summed into it).
RATE_FAMILIES = (
    ("PFC pause frames/s", ("rx_pause_frames_per_s", "tx_pause_frames_per_s")),
    ("ECN-marked packets/s", ("ecn_marked_packets_per_s",)),
    ("CNPs sent/s", ("cnp_sent_per_s",)),
    ("CNPs handled/s", ("cnp_handled_per_s",)),
    ("errors and drops/s", tuple(f"{m}_per_s" for m in ERROR_COUNTERS)),
)
# The figures of a baseline's nights drawn as a trend: (metric, kind, label).
TREND_FIGURES = (
    ("rx_pause_fraction", "host", "host pause fraction (rx)"),
    ("tx_pause_fraction", "host", "host pause fraction (tx)"),
    ("ecn_mark_ratio", "host", "host ECN mark ratio"),
    ("cnp_sent_per_s", "host", "CNPs sent/s per port"),
    ("symbol_errors_per_s", "host", "symbol errors/s per port"),
    ("link_rate_gbps", "host", "host link rate (Gb/s)"),
    ("bw_efficiency", "host", "perftest bandwidth / line rate"),
)
_SEVERITY_ORDER = {s: i for i, s in enumerate((Severity.INFO, Severity.WARNING, Severity.ERROR, Severity.CRITICAL))}
BAD = (Severity.ERROR, Severity.CRITICAL)  # the severities that colour a cable red and fail a diagnosis
# The rules whose findings say the cable itself is at fault (or its optic, its port's physical layer): link errors,
# flaps, a link down, a degraded width or speed. Their error and critical findings draw the cable red. Every other
# finding on a port (a PFC priority, a DCQCN or ECN setting, the trust mode, the MTU, a storm, drops) is a fault of
# the port, shown on it: a wrong setting is not fixed by replacing the cable. The one place that decides it; a
# site's own rules are faults of their port unless named here.
CABLE_RULES = frozenset({
    # down
    "port_not_active", "port_phys_not_linkup", "port_disabled_while_peers_active", "perf_rail_down",
    # flapping
    "ib_link_flapping", "eth_link_flapping",
    # link errors (playbooks/10-links.yaml), per counter and per cable
    "ib_symbol_errors_growing", "ib_link_error_recovery_growing", "ib_rcv_errors_growing", "eth_crc_errors_growing",
    "fec_uncorrectable_growing", "cable_errors_both_ends", "cable_errors_host_end", "switch_port_errors_growing",
    # degraded width or speed
    "port_width_degraded", "port_speed_below_fleet", "link_speed_mismatch",
    # the InfiniBand subnet's own links, spines included (playbooks/17-ib-fabric.yaml)
    "ib_switch_port_errors", "ib_switch_link_downed", "ib_switch_link_below_fabric", "ib_cable_gone",
})
PORT_FAULT_SEVERITIES = (Severity.WARNING, Severity.ERROR, Severity.CRITICAL)  # marked on their port; info is not


@dataclass
class PortRow:
    """One port of the fleet table. Host ports are named by their RDMA port (`mlx5_1/1`), with the netdev the
    Ethernet counters use (`ens1f0np0`); None is a figure the bundle does not hold."""

    target: str
    kind: str
    port: str
    netdev: str | None = None
    state: str | None = None
    rate_gbps: float | None = None
    pause_fraction: float | None = None  # the largest of rx and tx over the priorities
    pause_priority: int | None = None
    ecn_mark_ratio: float | None = None  # the largest over the priorities
    cnp_sent_per_s: float | None = None
    cnp_handled_per_s: float | None = None
    errors: float | None = None  # errors and drops counted in the window (ERROR_COUNTERS)
    severity: Severity | None = None  # the worst finding on this port
    findings: int = 0

    @property
    def names(self) -> set[str]:
        """The names findings and cables give this port: a host's RDMA port, its device and its netdev; a switch
        port by its own name alone (`Ethernet1/1` is not `Ethernet1`)."""
        names = {self.port, *((self.netdev,) if self.netdev else ())}
        if self.kind == "host":
            names.add(self.port.split("/")[0])
        return names


FAR_END_UNSEEN = "far end not seen"  # the name of the end of a cable the bundle did not see


@dataclass(frozen=True)
class Cable:
    """One cable of the topology map and the physical-fault findings on either end (CABLE_RULES; empty: none).
    A physically faulty port whose cable the bundle did not see (a link down sends no LLDP) is a cable too, its far
    end unknown: `switch` "" (a host port), or `host` "" (a switch port)."""

    link: Link
    faults: tuple[str, ...] = ()

    @property
    def bad(self) -> bool:
        return bool(self.faults)

    @property
    def name(self) -> str:
        host = f"{self.link.host} {self.link.nic}".strip() or FAR_END_UNSEEN
        switch = f"{self.link.switch} {self.link.switch_port}".strip() or FAR_END_UNSEEN
        return f"{host} ↔ {switch}"


@dataclass(frozen=True)
class PortFault:
    """The findings on one port that are not its cable's (settings, traffic), at warning or worse; `cable`: the
    cable of the map it is an end of, if any."""

    target: str
    port: str  # as the fleet table names it, with its netdev: `mlx5_1/1 (ens1f0np0)`
    rules: tuple[str, ...]
    severity: Severity
    cable: Cable | None = None


@dataclass
class PriorityFigure:
    target: str
    port: str
    priority: int
    pause_fraction: float | None
    ecn_mark_ratio: float | None


@dataclass
class Page:
    result: DiagnoseResult
    ports: list[PortRow]
    priorities: list[PriorityFigure]
    rates: dict[str, dict[str, float]]  # "target port" → family label → rate
    links: list[Cable]  # each cable once, with its physical faults; then the faulty ports of unseen cables
    port_faults: list[PortFault] = field(default_factory=list)  # the other faults, each on its port
    pairs: list = field(default_factory=list)  # PairResult of the bundle's perftest runs
    attribution: object = None  # their Attribution
    trend: list[dict] = field(default_factory=list)  # {"night", "label", "median", "p90", "max"}, oldest first
    baseline: str | None = None  # the baseline file the trend and the deviation rules read
    skipped: list[str] = field(default_factory=list)  # files of the bundle that were not read


def build(bundle: str | Path, baseline: str | Path | None = None, playbooks_dir: str | Path | None = None,
          topology: str | Path | None = None, on_skipped: Callable[[str], None] | None = None,
          profile: dict | None = None, keep: Callable | None = None) -> Page:
    """Diagnose a bundle (as `rdmatool diagnose` does, with the baseline's statistics when one is given) and gather
    what the report shows (`profile`: the site profile of the suggested settings; `keep`: the findings judged, as
    diagnose_analysis takes it). Errors are the diagnosis' own (BundleError, BaselineError, PlaybookError...)."""
    from rdmatool import baseline as baselines
    from rdmatool.capture.facts import analyse_with_captures
    from rdmatool.diagnose.pipeline import diagnose_analysis
    from rdmatool.table.facts import plain
    from rdmatool.topology.ib_fabric import switch_cables, with_ib_fabric
    from rdmatool.topology.observed import links_from_analysis
    from rdmatool.topology.paths import bundle_pairs

    doc = baselines.load(baseline) if baseline else None  # one read: the nights for the trend, a bad file named
    stats = baselines.stats_for_rules(baseline) if baseline else None
    analysis = analyse_with_captures(bundle, profile)  # packet captures read on the site's RoCE class
    analysis = with_ib_fabric(analysis)  # the subnet sweep's switch ports on their switches, for the map too
    for line in analysis.table.skipped:
        if on_skipped is not None:
            on_skipped(line)
    records = bundle_pairs(bundle)
    result = diagnose_analysis(analysis, playbooks_dir=playbooks_dir, baseline=stats, source=str(bundle),
                               topology=topology, pairs=records, profile=profile, keep=keep)
    facts = plain(analysis.facts)  # (plain texts: None where missing)
    ports = port_rows(facts, result)
    pairs, attribution = perf_pairs(analysis, records)
    cables, port_faults = judged_links(links_from_analysis(analysis) + switch_cables(analysis), ports, result)
    return Page(result=result, ports=ports, priorities=priority_figures(facts, ports), rates=counter_rates(facts, ports),
                links=cables, port_faults=port_faults, pairs=pairs, attribution=attribution,
                trend=trend(doc, facts) if doc else [], baseline=str(baseline) if baseline else None,
                skipped=list(analysis.table.skipped))


def _number(value) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _netdevs(facts) -> dict[tuple[str, str], str]:
    """(host, RDMA port) → its netdev, from the netdev facts (show_gids, sysfs)."""
    rows = facts[facts["metric"] == "netdev"]
    out: dict[tuple[str, str], str] = {}
    for target, entity, text in zip(rows["target"], rows["entity"], rows["text"]):
        if isinstance(entity, str) and isinstance(text, str) and text:
            out.setdefault((target, entity), text)
    return out


def port_rows(facts, result: DiagnoseResult) -> list[PortRow]:
    """One row per port that has a state, a rate, a pause, ECN or CNP figure or an error counter."""
    netdevs = _netdevs(facts)
    by_netdev = {(t, n): port for (t, port), n in netdevs.items()}
    wanted = {"port_state", "oper_state", "phys_state", "link_rate_gbps", "rx_pause_fraction", "tx_pause_fraction",
              "ecn_mark_ratio", "cnp_sent_per_s", "cnp_handled_per_s", *(f"{m}_per_s" for m in ERROR_COUNTERS)}
    rows = facts[facts["metric"].isin(wanted) & facts["kind"].isin(["host", "switch"])]
    ports: dict[tuple[str, str], PortRow] = {}
    error_deltas: dict[tuple[str, str], dict[str, float]] = {}
    for target, kind, entity, metric, priority, value, text, delta in zip(
            rows["target"], rows["kind"], rows["entity"], rows["metric"], rows["priority"], rows["value"],
            rows["text"], rows["delta"]):
        if not isinstance(entity, str) or not entity:
            continue
        port = by_netdev.get((target, entity), entity)
        key = (target, port)
        row = ports.get(key)
        if row is None:
            row = ports[key] = PortRow(target, kind, port, netdevs.get(key))
        number = _number(value)
        if metric in ("port_state", "oper_state", "phys_state"):
            # the logical state first: "Active" says more than "LinkUp"; a switch's oper state when it has no other
            if isinstance(text, str) and (row.state is None or metric == "port_state"):
                row.state = text
        elif metric == "link_rate_gbps":
            row.rate_gbps = number if row.rate_gbps is None else max(row.rate_gbps, number or 0.0)
        elif metric in ("rx_pause_fraction", "tx_pause_fraction"):
            if number is not None and (row.pause_fraction is None or number > row.pause_fraction):
                row.pause_fraction = number
                row.pause_priority = None if pd.isna(priority) else int(priority)
        elif metric == "ecn_mark_ratio":
            if number is not None and (row.ecn_mark_ratio is None or number > row.ecn_mark_ratio):
                row.ecn_mark_ratio = number
        elif metric in ("cnp_sent_per_s", "cnp_handled_per_s"):
            current = getattr(row, metric)
            setattr(row, metric, number if current is None else max(current, number or 0.0))
        else:
            counted = _number(delta)
            if counted is not None:
                seen = error_deltas.setdefault(key, {})
                seen[metric] = max(seen.get(metric, 0.0), counted)
    for key, seen in error_deltas.items():
        ports[key].errors = sum(seen.values())
    _attach_findings(list(ports.values()), result)
    return sorted(ports.values(), key=lambda r: (r.kind != "host", r.target, r.port))


def _attach_findings(ports: list[PortRow], result: DiagnoseResult) -> None:
    by_target: dict[str, list[PortRow]] = {}
    for row in ports:
        by_target.setdefault(row.target, []).append(row)
    for finding in result.findings:
        if not finding.entity:
            continue
        for row in by_target.get(finding.target, []):
            if finding.entity in row.names:
                row.findings += 1
                if row.severity is None or _SEVERITY_ORDER[finding.severity] > _SEVERITY_ORDER[row.severity]:
                    row.severity = finding.severity


def priority_figures(facts, ports: list[PortRow]) -> list[PriorityFigure]:
    """Pause fraction (the larger of rx and tx) and ECN mark ratio per port and priority."""
    by_name = {(r.target, name): r.port for r in ports for name in r.names}
    rows = facts[facts["metric"].isin(["rx_pause_fraction", "tx_pause_fraction", "ecn_mark_ratio"])
                 & facts["priority"].notna()]
    figures: dict[tuple[str, str, int], dict[str, float]] = {}
    for target, entity, metric, priority, value in zip(rows["target"], rows["entity"], rows["metric"],
                                                       rows["priority"], rows["value"]):
        number = _number(value)
        if number is None or not isinstance(entity, str):
            continue
        port = by_name.get((target, entity), entity)
        name = "ecn" if metric == "ecn_mark_ratio" else "pause"
        cell = figures.setdefault((target, port, int(priority)), {})
        cell[name] = max(cell.get(name, 0.0), number)
    return [PriorityFigure(t, p, prio, cell.get("pause"), cell.get("ecn"))
            for (t, p, prio), cell in sorted(figures.items())]


def counter_rates(facts, ports: list[PortRow]) -> dict[str, dict[str, float]]:
    """Per port, each RATE_FAMILIES label → the rate over the window between the bundle's two snapshots (the
    largest row of each metric, as for the errors, then summed over the family's metrics)."""
    by_name = {(r.target, name): r.port for r in ports for name in r.names}
    family_of = {metric: label for label, metrics in RATE_FAMILIES for metric in metrics}
    rows = facts[facts["metric"].isin(list(family_of))]
    largest: dict[tuple[str, str, str], float] = {}
    for target, entity, metric, value in zip(rows["target"], rows["entity"], rows["metric"], rows["value"]):
        number = _number(value)
        if number is None or not isinstance(entity, str):
            continue
        key = (f"{target} {by_name.get((target, entity), entity)}", family_of[metric], metric)
        largest[key] = max(largest.get(key, 0.0), number)
    out: dict[str, dict[str, float]] = {}
    for (port, label, _metric), rate in largest.items():
        families = out.setdefault(port, {})
        families[label] = families.get(label, 0.0) + rate
    return out


def judged_links(links: list[Link], ports: list[PortRow],
                 result: DiagnoseResult) -> tuple[list[Cable], list[PortFault]]:
    """Each cable with the physical faults of its ends (CABLE_RULES, error or critical), then one cable of unknown far
    end per physically faulty port no cable reaches; and the other faults (warning or worse) of each port, on the
    cable it is an end of. A finding names a port by any of its names (`mlx5_1/1`, `mlx5_1`, `ens1f0np0`)."""
    rows = {(r.target, name): r for r in ports for name in r.names}

    def port_of(target: str, name: str) -> tuple[str, str]:
        row = rows.get((target, name))
        return (target, row.port) if row else (target, name)

    physical: dict[tuple[str, str], dict[str, None]] = {}
    other: dict[tuple[str, str], dict[str, None]] = {}
    worst: dict[tuple[str, str], Severity] = {}
    for finding in result.findings:
        if not finding.entity:
            continue  # a whole host or switch: the findings table has it, no port or cable does
        key = port_of(finding.target, finding.entity)
        if finding.rule in CABLE_RULES:
            if finding.severity in BAD:
                physical.setdefault(key, {})[finding.rule] = None
        elif finding.severity in PORT_FAULT_SEVERITIES:
            other.setdefault(key, {})[finding.rule] = None
            if key not in worst or _SEVERITY_ORDER[finding.severity] > _SEVERITY_ORDER[worst[key]]:
                worst[key] = finding.severity

    cables, at_port = [], {}
    for link in links:
        ends = (port_of(link.host, link.nic), port_of(link.switch, link.switch_port))
        cable = Cable(link, tuple(dict.fromkeys(r for end in ends for r in physical.get(end, {}))))
        cables.append(cable)
        for end in ends:
            at_port.setdefault(end, cable)
    switches = {r.target for r in ports if r.kind == "switch"} | {link.switch for link in links}
    for key in sorted(physical):
        if key not in at_port:
            target, port = key
            row = rows.get(key)
            if target in switches:
                link = Link("", "", target, port)
            else:  # named as the cables name a host port: its RDMA device (`mlx5_0`), else its netdev
                link = Link(target, port.split("/")[0] if row and row.kind == "host" else port, "")
            cable = at_port[key] = Cable(link, tuple(physical[key]))
            cables.append(cable)
    faults = []
    for key in sorted(other):
        target, port = key
        row = rows.get(key)
        shown = f"{port} ({row.netdev})" if row and row.netdev and row.netdev != port else port
        faults.append(PortFault(target, shown, tuple(other[key]), worst[key], at_port.get(key)))
    return cables, faults


def perf_pairs(analysis, records: list[dict]) -> tuple[list, object]:
    """The bundle's perftest pairs: those a gate or `perf run` stored, else its per-peer perftest outputs; with
    their attribution (the gate's), for the pass line of the heatmap."""
    from rdmatool.pairs.attribution import attribute
    from rdmatool.pairs.bundle_results import pair_results
    from rdmatool.pairs.model import PairResult

    pairs = []
    for record in records:
        try:
            pairs.append(PairResult.from_record(record))
        except TypeError:
            continue  # a record of another shape: the diagnosis' replay names it, the heatmap leaves it out
    pairs = pairs or pair_results(analysis)
    if not pairs:
        return [], None
    rates = analysis.facts[analysis.facts["metric"] == "link_rate_gbps"].groupby("target")["value"].max()
    expected = {str(t): float(v) for t, v in rates.items() if _number(v)}
    return pairs, attribute(pairs, expected or None)


def trend(doc: dict, facts) -> list[dict]:
    """Median, p90 and largest value of each TREND_FIGURES figure per night of the baseline, then of this bundle
    ("this bundle"), pooled as the baseline pools a night's groups. The largest is there because one storming port
    among hundreds moves neither the median nor the p90."""
    from rdmatool.baseline import figures_of, pooled

    nights = [(str(n.get("created") or f"night {i + 1}"), n) for i, n in enumerate(doc.get("nights", []))]
    nights.append(("this bundle", {"values": figures_of(facts)}))
    labels = {(metric, kind): label for metric, kind, label in TREND_FIGURES}
    out = []
    for name, night in nights:
        largest: dict[tuple, float] = {}
        for group in night.get("values", []):
            key = (group.get("metric"), group.get("kind"))
            points = [p for p in (group.get("values") or group.get("quantiles") or []) if _number(p) is not None]
            if key in labels and points:  # a sketch keeps its maximum as its last quantile
                largest[key] = max(largest.get(key, -math.inf), *map(float, points))
        for group in pooled([night], ["metric", "kind"]):
            key = (group["metric"], group["kind"])
            if key in labels:
                out.append({"night": name, "label": labels[key], "median": group["median"], "p90": group["p90"],
                            "max": largest.get(key, group["p90"])})
    return out
