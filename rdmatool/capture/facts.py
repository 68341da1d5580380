"""A capture's figures as facts for the rules engine (playbook `50-capture.yaml`).

Facts have the analysis' columns (rdmatool.table.analysis.FACT_COLUMNS), kind `capture`, the target that was captured on
(`rdmatool pcap FILE`: the file's name) and the entity captured (`capture.<device>.pcap` in a bundle: the device or
netdev; a file given to `rdmatool pcap`: `capture`). Their metrics are the glossary's `capture_*` names; the burst
figures are per traffic class, with entity `<entity>/<class>` and the class in raw_key.

Kind `capture`, not `host`: a capture says nothing about the host's counters, so the host rules (and the monitoring
gap rules, which count the hosts) do not read it.

A bundle's captures are `snapshots/<i>/<target>/capture.<device>.pcap` (or `.pcapng`) beside a side file
`capture.<device>.json`; `with_captures(analysis, bundle)` adds their facts to a bundle's analysis. A capture that
cannot be read is left out with one line in the analysis' `skipped` (the rest of the bundle is diagnosed as usual).
The link rate for the pause time is the bundle's `link_rate_gbps` for that device (or the device of that netdev).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd

from rdmatool import files
from rdmatool.bundle import TARGET_NAME
from rdmatool.capture import CaptureError, Options, analyse_file
from rdmatool.config import site_profile
from rdmatool.model import Sample
from rdmatool.table.analysis import FACT_COLUMNS, Analysis, analyse_path, stacked

CAPTURE_FILE = re.compile(r"capture\.([A-Za-z0-9][A-Za-z0-9_.-]{0,63})\.(pcap|pcapng)")
KIND = "capture"
ENTITY = "capture"
# The classes whose periodic bursts may interfere (the pause and CNP series are what they are compared with).
_BURST_CLASSES = ("roce", "other_on_roce_class", "pfc", "cnp")


def samples_of(summary: dict, tally, entity: str) -> list[Sample]:
    """The capture's figures in the canonical vocabulary."""
    roce = summary["roce"]
    out = [Sample(entity, metric, value=value) for metric, value in (
        ("capture_packets", summary["packets"]),
        ("capture_duration_s", summary["duration_s"]),
        ("capture_roce_packets", roce["packets"]),
        ("capture_roce_bytes", roce["bytes"]),
        ("capture_roce_flows", roce["flows"]),
        ("capture_cnp_packets", roce["cnp"]),
        ("capture_ecn_ce_packets", roce["ecn"]["ce"]),
        ("capture_naks", roce["naks"]),
        ("capture_psn_gaps", roce["psn_gaps"]),
        ("capture_retransmissions", roce["retransmissions"]),
        ("capture_roce_off_dscp_packets", tally.off_dscp),
        ("capture_other_on_roce_class_packets", summary["other_on_roce_class"]["packets"]),
        ("capture_other_on_roce_class_bytes", summary["other_on_roce_class"]["bytes"]),
        ("capture_global_pause_frames", summary["global_pause"]["frames"]),
    )]
    out += [Sample(entity, "capture_roce_priority_packets", value=n, priority=prio)
            for prio, n in enumerate(tally.roce_by_priority)]
    for entry in summary["pfc"]:
        prio = entry["priority"]
        out.append(Sample(entity, "capture_pfc_frames", value=entry["frames"], priority=prio))
        out.append(Sample(entity, "capture_pfc_quanta", value=entry["quanta"], priority=prio))
        if entry["pause_time_s"] is not None:
            out.append(Sample(entity, "capture_pfc_pause_time_s", value=entry["pause_time_s"], priority=prio))
        if entry.get("paused_fraction") is not None:
            out.append(Sample(entity, "capture_pfc_paused_fraction", value=entry["paused_fraction"], priority=prio))
    if roce["packets"]:  # the share of the RoCE data packets marked CE: how congested the captured path was
        out.append(Sample(entity, "capture_ecn_ce_share", value=roce["ecn"]["ce"] / roce["packets"]))
    for name in _BURST_CLASSES:
        found = summary["periodic"][name]
        if found["period_s"] is None:
            continue
        where = f"{entity}/{name}"
        meets = [v for v in (found["coincides_with_pause"], found["coincides_with_ce"]) if v is not None]
        out.append(Sample(where, "capture_burst_period_s", value=found["period_s"], raw_key=name))
        out.append(Sample(where, "capture_burst_strength", value=found["strength"], raw_key=name))
        out.append(Sample(where, "capture_burst_coincidence", value=max(meets) if meets else 0.0, raw_key=name))
    return out


def fact_frame(target: str, samples: list[Sample], window_s: float | None, role: str | None = None) -> pd.DataFrame:
    rows = [{
        "target": target, "kind": KIND, "platform": None, "role": role, "entity": s.entity, "metric": s.metric,
        "priority": s.priority, "size_bytes": None, "value": s.value, "text": s.text, "raw_key": s.raw_key,
        "window_s": window_s if window_s else np.nan, "delta": np.nan, "flag": "",
    } for s in samples]
    frame = pd.DataFrame(rows, columns=FACT_COLUMNS)
    return frame.astype({"priority": "Int64", "size_bytes": "Int64", "value": float, "window_s": float,
                         "delta": float})


def standalone(target: str, summary: dict, tally) -> Analysis:
    """The analysis of one capture file on its own (`rdmatool pcap`)."""
    from rdmatool.table.frame import SampleTable

    facts = fact_frame(target, samples_of(summary, tally, ENTITY), summary["duration_s"])
    return Analysis(facts=facts, table=SampleTable(frame=pd.DataFrame()), window_s=summary["duration_s"] or None)


def bundle_captures(root: str | Path, other_files: list[tuple[int, str, str, str]] | None = None
                    ) -> list[tuple[int, str, str, str]]:
    """(snapshot, target, device, path) of every capture file of a bundle, directories read without following a
    symlink; a symlinked or odd entry is simply not a capture (the file reader checks the file itself again).
    `other_files`: the target folders' other regular files as the bundle's scan already listed them
    (frame.SampleTable.other_files), so that the folders are not read a second time."""
    if other_files is not None:
        return sorted((snapshot, target, match.group(1), path) for snapshot, target, name, path in other_files
                      if (match := CAPTURE_FILE.fullmatch(name)))
    found = []
    snapshots = os.path.join(root, "snapshots")
    for snap in _dirs(snapshots):
        if not (snap.name.isascii() and snap.name.isdigit()):
            continue
        for target in _dirs(snap.path):
            if not TARGET_NAME.fullmatch(target.name):
                continue
            try:
                with os.scandir(target.path) as it:
                    names = sorted(e.name for e in it if e.is_file(follow_symlinks=False))
            except OSError:
                continue
            for name in names:
                match = CAPTURE_FILE.fullmatch(name)
                if match:
                    found.append((int(snap.name), target.name, match.group(1), os.path.join(target.path, name)))
    return sorted(found)


def _dirs(path: str) -> list[os.DirEntry]:
    try:
        with os.scandir(path) as it:
            return [e for e in it if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def link_gbps_of(analysis: Analysis, target: str, device: str) -> float | None:
    """The bundle's link rate of the captured device: its RDMA port (`mlx5_0/1`), or the port of that netdev."""
    rates = analysis.query.rows(target=target, metric="link_rate_gbps")
    if rates is None or rates.empty:
        return None
    entities = {device}
    netdevs = analysis.query.rows(target=target, metric="netdev")
    if netdevs is not None and not netdevs.empty:
        entities |= set(netdevs.loc[netdevs["text"] == device, "entity"].astype(str))
    keep = rates["entity"].astype(str).map(lambda e: e in entities or e.split("/", 1)[0] in entities)
    values = pd.to_numeric(rates.loc[keep, "value"], errors="coerce").dropna()
    values = values[values > 0]
    return float(values.max()) if len(values) else None


def with_captures(analysis: Analysis, root: str | Path, options: Options | None = None,
                  other_files: list[tuple[int, str, str, str]] | None = None) -> Analysis:
    """The analysis with the facts of the bundle's captures added (the same analysis when it holds none).
    `options`: the RoCE class the packets are read against (site_options); `other_files`: see `bundle_captures`."""
    captures = bundle_captures(root, other_files)
    if not captures:
        return analysis
    latest = {(target, device): (snapshot, path) for snapshot, target, device, path in captures}
    roles = {t.get("name"): t.get("role") for t in analysis.targets if isinstance(t, dict)}
    parts = []
    for (target, device), (snapshot, path) in sorted(latest.items()):
        base = options or Options()
        opts = Options(base.roce_dscp, base.roce_priority, base.bin_s,
                       base.link_gbps or link_gbps_of(analysis, target, device))
        try:
            summary, tally = analyse_file(path, opts, max_bytes=files.max_output_bytes())
        except CaptureError as exc:
            analysis.table.skipped.append(f"snapshots/{snapshot}/{target}/{os.path.basename(path)}: {exc.reason} "
                                          f"(byte offset {exc.offset}); skipped")
            continue
        parts.append(fact_frame(target, samples_of(summary, tally, device), summary["duration_s"],
                                roles.get(target)))
    if not parts:
        return analysis
    facts = stacked(analysis.facts, *parts)
    return Analysis(facts=facts, table=analysis.table, window_s=analysis.window_s, links=analysis.links)


def site_options(site: dict | None) -> Options:
    """The capture reader's options for a site profile: its RoCE DSCP and priority (the defaults' when not given)."""
    profile = site_profile(site)
    return Options(roce_dscp=int(profile["roce_dscp"]), roce_priority=int(profile["roce_priority"]))


def analyse_with_captures(path: str | Path, site: dict | None = None) -> Analysis:
    """A bundle directory's analysis with its packet captures' facts, read against the site's RoCE class: what
    diagnose and the gate judge."""
    analysis = analyse_path(path)
    # The folders were read once already, for the outputs: the captures are among what that scan found.
    return with_captures(analysis, path, site_options(site), other_files=analysis.table.other_files)
