"""The RoCE configuration that `nv show qos roce` (global) and `nv show interface <if> qos roce status` (per port)
share: the operational/applied tree (mode, PFC, congestion control, trust, LLDP app TLV) and the mapping, ETS and
pool tables that follow it as `====` sections. No I/O here.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rdmatool.model import Sample
from rdmatool.parsers._samples import text
from rdmatool.parsers.switch import _cumulus as nv
from rdmatool.parsers.switch import _cumulus_views as views

PRIORITIES = range(8)

# Tree leaves read verbatim into one sample each: path -> (metric, reader).
_SIMPLE: dict[str, tuple[str, Callable]] = {
    "enable": ("roce_enabled", nv.flag),
    "mode": ("roce_mode", text),
    "pfc.rx-enabled": ("pfc_rx_enabled", nv.flag),
    "pfc.tx-enabled": ("pfc_tx_enabled", nv.flag),
    "pfc.cable-length": ("cable_length_m", nv.amount),
    "congestion-control.congestion-mode": ("congestion_mode", text),
    "trust.trust-mode": ("trust_mode", text),
    "lldp-app-tlv.priority": ("lldp_app_priority", nv.amount),
}
# ECN settings apply to every ECN-enabled traffic class: emitted once per class (priority = the TC).
_ECN: dict[str, tuple[str, Callable]] = {
    "congestion-control.min-threshold": ("ecn_min_threshold_bytes", nv.byte_size),
    "congestion-control.max-threshold": ("ecn_max_threshold_bytes", nv.byte_size),
    "congestion-control.probability": ("ecn_max_probability_pct", nv.amount),
}
_PFC_PRIORITIES = "pfc.pfc-priority"
_ECN_CLASSES = "congestion-control.enabled-tc"
# Read and checked, but not emitted: the RoCE app TLV is always UDP 4791.
_IGNORED = {"lldp-app-tlv.protocol-id", "lldp-app-tlv.selector"}
LEAF_PATHS = {*_SIMPLE, *_ECN, _PFC_PRIORITIES, _ECN_CLASSES, *_IGNORED}
GROUPS = views.groups_of(LEAF_PATHS)


def tree_samples(name: str, entity: str, leaves: list[views.Leaf]) -> list[Sample]:
    """Samples of the tree in input order; PFC and ECN class lists expand to one sample per priority / TC."""
    unknown = [leaf for leaf in leaves if leaf[0] not in LEAF_PATHS]
    if unknown:
        raise nv.fail(name, unknown[0][2], f"unknown setting {unknown[0][0]!r}")
    ecn_classes: list[int | None] = [None]
    for path, raw, where in leaves:
        if path == _ECN_CLASSES:
            ecn_classes = list(nv.int_list(name, *where, raw)) or [None]
    samples: list[Sample] = []
    for path, raw, where in leaves:
        if path in _SIMPLE:
            metric, read = _SIMPLE[path]
            value = read(name, *where, raw)
            is_text = read is text
            samples.append(Sample(entity, metric, None if is_text else value, text=value if is_text else None, raw_key=path))
        elif path in (_PFC_PRIORITIES, _ECN_CLASSES):
            enabled = set(nv.int_list(name, *where, raw))
            metric = "pfc_enabled" if path == _PFC_PRIORITIES else "ecn_enabled"
            samples.extend(Sample(entity, metric, int(p in enabled), priority=p, raw_key=path) for p in PRIORITIES)
        elif path in _ECN:
            metric, read = _ECN[path]
            value = read(name, *where, raw)
            samples.extend(Sample(entity, metric, value, priority=tc, raw_key=path) for tc in ecn_classes)
    return samples


# --- the `====` sections -------------------------------------------------------------------------------------


def _prefixed(label: str, key: str) -> str:
    return key if label.isdigit() else f"{label}.{key}"


def mapping_samples(name: str, entity: str, body: list[nv.Line]) -> list[Sample]:
    """`RoCE PCP/DSCP->SP mapping configurations`: PCP and DSCP values -> switch priority."""
    table = _table(name, body, ["", "pcp", "dscp", "switch-prio"])
    samples: list[Sample] = []
    for where, cells in table.rows:
        label, pcp, dscps, prio = cells
        priority = _priority(name, where, prio)
        for value in nv.int_list(name, *where, pcp):
            samples.append(Sample(entity, "pcp_to_priority", priority, text=str(value),
                                  raw_key=_prefixed(label, f"pcp{value}")))
        # The DSCP is in the raw_key too (`dscp26`, as mlnx_qos names it): it is what tells one mapping from another.
        for value in _dscp_list(name, where, dscps):
            samples.append(Sample(entity, "dscp_to_priority", priority, text=str(value),
                                  raw_key=_prefixed(label, f"dscp{value}")))
    return samples


def ets_samples(name: str, entity: str, body: list[nv.Line]) -> list[Sample]:
    """`RoCE SP->TC mapping and ETS configurations`: priority -> TC, and the scheduler of each TC (once per TC)."""
    table = _table(name, body, ["", "switch-prio", "traffic-class", "scheduler-weight"])
    samples: list[Sample] = []
    seen_classes: set[int] = set()
    for where, cells in table.rows:
        label, prio, tc_raw, weight = cells
        priority, tc = _priority(name, where, prio), _priority(name, where, tc_raw)
        samples.append(Sample(entity, "priority_to_tc", tc, priority=priority, raw_key=_prefixed(label, "traffic-class")))
        if tc in seen_classes:
            continue
        seen_classes.add(tc)
        tsa, share = _scheduler(name, where, weight)
        key = _prefixed(label, "scheduler-weight")
        samples.append(Sample(entity, "tc_tsa", None, text=tsa, priority=tc, raw_key=key))
        if share is not None:
            samples.append(Sample(entity, "tc_bandwidth_pct", share, priority=tc, raw_key=key))
    return samples


def pool_config_samples(name: str, body: list[nv.Line]) -> list[Sample]:
    """`RoCE pool config` (global view): the configured size of each pool, entity = the pool name."""
    table = _table(name, body, ["", "name", "mode", "size", "switch-priorities", "traffic-class"])
    samples: list[Sample] = []
    for where, cells in table.rows:
        _, pool, _, size, prios, classes = cells
        nv.int_list(name, *where, prios), nv.int_list(name, *where, classes)  # validated, not emitted
        if size.lower() == "inf":
            samples.append(Sample(pool, "buffer_pool_size_pct", None, text="inf", raw_key="size"))
        else:
            samples.append(Sample(pool, "buffer_pool_size_pct", nv.amount(name, *where, size), raw_key="size"))
    return samples


def pool_status_samples(name: str, body: list[nv.Line]) -> list[Sample]:
    """`RoCE Pool Status` (per-port view): size, current and peak occupancy of each pool, entity = the pool name."""
    header = ["", "name", "mode", "pool-id", "switch-priorities", "traffic-class", "size", "current-usage", "max-usage"]
    table = _table(name, body, header)
    samples: list[Sample] = []
    for where, cells in table.rows:
        pool, size = cells[1], cells[6]
        nv.int_list(name, *where, cells[4]), nv.int_list(name, *where, cells[5])  # validated, not emitted
        if size.lower() == "inf":
            samples.append(Sample(pool, "buffer_pool_size_bytes", None, text="inf", raw_key="size"))
        else:
            samples.append(Sample(pool, "buffer_pool_size_bytes", nv.byte_size(name, *where, size), raw_key="size"))
        for column, metric in ((7, "buffer_pool_usage_bytes"), (8, "buffer_pool_max_usage_bytes")):
            value = nv.byte_size(name, *where, cells[column])
            if value is not None:
                samples.append(Sample(pool, metric, value, raw_key=header[column]))
    return samples


def no_data(name: str, body: list[nv.Line]) -> list[Sample]:
    """`Exception List`: only `No Data` is understood (an exception's format has no public sample)."""
    for where in body:
        if where[1].strip() != "No Data":
            raise nv.fail(name, where, "exception list entries are not understood")
    return []


def _table(name: str, body: list[nv.Line], header: list[str]) -> nv.Table:
    if not body:
        raise nv.fail(name, (0, ""), "section without a table")
    return nv.only_table(name, body, header, "unexpected line after the table")


def _priority(name: str, where: nv.Line, raw: str) -> int:
    if not re.fullmatch(r"\d{1,2}", raw):
        raise nv.fail(name, where, f"expected a priority or traffic class, got {raw!r}")
    return int(raw)


def _dscp_list(name: str, where: nv.Line, raw: str) -> list[int]:
    if not re.fullmatch(r"\d{1,2}(?:-\d{1,2})?(?:,\s*\d{1,2}(?:-\d{1,2})?)*", raw.strip()):
        raise nv.fail(name, where, f"expected a DSCP list, got {raw!r}")
    values = []
    for part in raw.split(","):
        low, _, high = part.strip().partition("-")
        values.extend(range(int(low), int(high or low) + 1))
    if any(value > 63 for value in values):
        raise nv.fail(name, where, f"DSCP out of range in {raw!r}")
    return values


def _scheduler(name: str, where: nv.Line, raw: str) -> tuple[str, int | None]:
    """`DWRR-50%` -> ("ets", 50); `strict-priority` / `strict priority` -> ("strict", None)."""
    dwrr = re.fullmatch(r"(?i)dwrr-(\d{1,3})%", raw.strip())
    if dwrr:
        return "ets", int(dwrr.group(1))
    if re.fullmatch(r"(?i)strict[- ]priority", raw.strip()):
        return "strict", None
    raise nv.fail(name, where, f"unknown scheduler {raw!r}")


def parse_view(name: str, entity: str, sections: dict, text: str) -> list[Sample]:
    """`nv show qos roce` and `nv show interface <if> qos roce status` share one layout: an operational/applied
    tree, then titled sections read by `sections[title]`; or the same tree as `-o json`."""
    output = nv.read_output(text)
    if not output.lines:
        samples: list[Sample] = []
    elif nv.is_json(output):
        samples = tree_samples(name, entity, views.json_leaves(name, *nv.load_json(name, output)))
    else:
        samples = []
        for section in nv.split_sections(output.lines):
            if section.title is None:
                samples.extend(tree_samples(name, entity, views.tree_leaves(name, section.body, GROUPS)))
                continue
            reader = sections.get(section.title.lower())
            if reader is None or section.title_line is None:
                raise nv.fail(name, section.title_line or (0, ""), "unknown section")
            samples.extend(reader(name, section.body))
    return nv.with_tool_error(samples, output, entity)
