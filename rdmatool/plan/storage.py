"""The storage plane's read rate (`rdmatool plan storage`): the line rate of the storage nodes' NICs, the aggregate at
an efficiency, and the published 3FS figure beside it; pure arithmetic apart from `measured_efficiency`.

line rate = nodes × NICs per node × rate per NIC. Every figure is given in decimal bytes (TB/s, 10^12) and binary
ones (TiB/s, 2^40) with the unit named: the 3FS reference is quoted in TiB/s, and dividing its 6.6 TiB/s by the
9.0 TB/s line rate (rather than by 8.19 TiB/s) makes its 81 % look like 73 %.

The reference: the Fire-Flyer File System's README (https://github.com/deepseek-ai/3FS, "Performance: 1. Peak
throughput"): 180 storage nodes, each with 2 × 200 Gb/s InfiniBand NICs, read at about 6.6 TiB/s in a stress test
with 500+ clients of one 200 Gb/s NIC each, with the training jobs' traffic in the background (published); its
share of the line rate, 6.6 × 2^40 / (180 × 2 × 200 × 10^9 / 8) = 80.6 %, is derived.
"""

from __future__ import annotations

import re

SCHEMA = "rdmatool-plan-storage/1"
FORMULA = "line rate = nodes × NICs per node × rate per NIC; aggregate = line rate × efficiency"
TB, TIB = 1e12, float(2**40)
REFERENCE = {
    "name": "3FS",
    "source": "Fire-Flyer File System README, Performance: peak throughput (https://github.com/deepseek-ai/3FS)",
    "nodes": 180, "nics_per_node": 2, "nic_gbps": 200.0, "read_tib_per_s": 6.6,
    "note": "500+ clients of one 200 Gb/s NIC each, with training traffic in the background",
}

_NICS = re.compile(r"^\s*(?:(\d+)\s*[x×*]\s*)?([0-9]*\.?[0-9]+)\s*(g|t)?(?:b|bit)?(?:/s|ps)?\s*$", re.I)
_RATE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]+)(?:/s|ps)?\s*$")
# B is a byte and b a bit, as the units are written: 6TB/s, 6TiB/s, 48Tb/s (or 48Tbit/s)
_PREFIX = {"g": 1e9, "t": TB, "p": 1e15, "gi": 2.0**30, "ti": TIB, "pi": 2.0**50}


def parse_nics(text: str) -> tuple[int, float]:
    """`2x200G` (or `2×200Gb/s`, `200G` for one NIC, `4x0.4T`): NICs per node and Gb/s per NIC."""
    m = _NICS.match(text or "")
    if not m:
        raise ValueError(f"--nics {text!r}: expected COUNTxRATE, e.g. 2x200G (Gb/s per NIC) or 4x400G")
    count = int(m.group(1) or 1)
    gbps = float(m.group(2)) * (1000.0 if (m.group(3) or "g").lower() == "t" else 1.0)
    if count < 1 or gbps <= 0:
        raise ValueError(f"--nics {text!r}: the count and the rate must be more than zero")
    return count, gbps


def parse_efficiency(text: str) -> float:
    """`0.81` or `81%`: a share of the line rate, more than 0 and at most 1."""
    raw = (text or "").strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise ValueError(f"--efficiency {text!r}: expected a share of the line rate, 0.81 or 81%") from None
    if not 0 < value <= 1:
        raise ValueError(f"--efficiency {text!r}: must be more than 0 and at most 1 (81% or 0.81)")
    return value


def parse_rate(text: str) -> float:
    """A read rate with its unit named, in bytes per second: `6TiB/s`, `7.2TB/s`, `500GB/s`; bits as `48Tb/s` or
    `48Tbit/s` (B a byte, b a bit; a bare `6T` is refused: bytes or bits, decimal or binary, must be said)."""
    m = _RATE.match(text or "")
    unit = m.group(2) if m else ""
    scale = None
    if unit.endswith("B"):
        scale = _PREFIX.get(unit[:-1].lower())
    elif unit.endswith(("b", "bit")) and unit.removesuffix("it")[:-1].lower() in ("g", "t", "p"):
        scale = _PREFIX[unit.removesuffix("it")[:-1].lower()] / 8
    if not m or scale is None:
        raise ValueError(f"--need {text!r}: expected a rate with its unit named: TB/s, TiB/s, GB/s, GiB/s "
                         f"(bytes) or Tb/s, Gb/s (bits)")
    value = float(m.group(1)) * scale
    if value <= 0:
        raise ValueError(f"--need {text!r}: must be more than zero")
    return value


def rate(bytes_per_s: float) -> dict:
    """One rate in every unit the plan names."""
    return {"bytes_per_s": bytes_per_s, "gbps": bytes_per_s * 8 / 1e9, "tb_per_s": bytes_per_s / TB,
            "tib_per_s": bytes_per_s / TIB}


def line_rate(nodes: int, nics_per_node: int, nic_gbps: float) -> dict:
    return rate(nodes * nics_per_node * nic_gbps * 1e9 / 8)


def reference() -> dict:
    """The 3FS figure with its line rate and its share of it (and the share the TiB/TB slip would give)."""
    line = line_rate(REFERENCE["nodes"], REFERENCE["nics_per_node"], REFERENCE["nic_gbps"])
    read = rate(REFERENCE["read_tib_per_s"] * TIB)
    return {**REFERENCE, "line_rate": line, "read": read,
            "efficiency": read["bytes_per_s"] / line["bytes_per_s"],
            "tib_over_tb_slip": REFERENCE["read_tib_per_s"] / line["tb_per_s"]}


def storage_plan(nodes: int, nics_per_node: int, nic_gbps: float, efficiency: float | None = None,
                 measured: dict | None = None, need_bytes_per_s: float | None = None) -> dict:
    """The line rate, the aggregate at `efficiency` (else the fleet's measured one, else the reference's), the
    reference beside it, and, with `need_bytes_per_s`, the verdict: feasible when the aggregate reaches it.
    `measured` is `measured_efficiency`'s answer; its efficiency None leaves the plan unjudged (exit 3)."""
    if nodes < 1:
        raise ValueError(f"--nodes must be at least 1, not {nodes}")
    ref = reference()
    line = line_rate(nodes, nics_per_node, nic_gbps)
    if efficiency is not None:
        eff, basis = efficiency, "as given"
    elif measured is not None and measured.get("efficiency") is not None:
        eff, basis = measured["efficiency"], f"measured ({measured['basis']})"
    else:
        eff, basis = ref["efficiency"], "the 3FS reference's"
    plan = {
        "schema": SCHEMA,
        "formula": FORMULA,
        "inputs": {"nodes": nodes, "nics_per_node": nics_per_node, "nic_gbps": nic_gbps, "efficiency": efficiency,
                   "need_bytes_per_s": need_bytes_per_s},
        "line_rate": line,
        "aggregate": {"efficiency": eff, "basis": basis, **rate(line["bytes_per_s"] * eff)},
        "reference": ref,
        "measured": measured,
    }
    plan["verdict"] = _verdict(plan)
    return plan


def _verdict(plan: dict) -> dict:
    need = plan["inputs"]["need_bytes_per_s"]
    measured = plan["measured"]
    if measured is not None and measured.get("efficiency") is None and plan["inputs"]["efficiency"] is None:
        return {"feasible": None, "reason": f"nothing measured: {measured['reason']}"}
    if need is None:
        return {"feasible": None, "reason": "no --need to judge the aggregate against"}
    agg = plan["aggregate"]
    said = (f"{fmt_tb(agg['bytes_per_s'])} = {fmt_tib(agg['bytes_per_s'])} at {agg['efficiency']:.1%} of line rate "
            f"against the {fmt_tb(need)} = {fmt_tib(need)} needed")
    if agg["bytes_per_s"] >= need:
        return {"feasible": True, "reason": said}
    line_needed = need / agg["efficiency"]
    return {"feasible": False, "reason": f"{said}; a line rate of {fmt_tb(line_needed)} ({line_needed * 8 / 1e12:,.3g} "
                                         f"Tb/s) would be needed at that efficiency"}


def _digits(value: float) -> str:
    """Three significant digits, and always a decimal (9.0, not 9), so that TB and TiB figures read alike."""
    text = f"{value:.3g}" if value < 1000 else f"{value:,.0f}"
    return text if "." in text or "e" in text or value >= 1000 else f"{text}.0"


def fmt_tb(bytes_per_s: float) -> str:
    return f"{_digits(bytes_per_s / TB)} TB/s"


def fmt_tib(bytes_per_s: float) -> str:
    return f"{_digits(bytes_per_s / TIB)} TiB/s"


def measured_efficiency(analysis, source: str = "") -> dict:  # noqa: ANN001 - rdmatool.table.analysis.Analysis
    """The fleet's read efficiency from a bundle: the median of the perftest efficiencies (bandwidth / line rate,
    large messages) of the storage hosts' results when the bundle has hosts of role `storage`, else of every
    result (rdmatool.plan.measured). `efficiency` None (with `reason`) when it holds none."""
    import numpy as np

    from rdmatool.plan.measured import perftest_efficiencies

    facts = analysis.facts
    values: list[float] = []
    basis = "perftest median of every host"
    if not facts.empty and (facts["role"] == "storage").any():
        rows = facts[(facts["role"] == "storage") & (facts["metric"] == "bw_efficiency")]
        values = [float(v) for v in rows["value"].dropna()]
        basis = "perftest median of the storage hosts"
    if not values:
        values = perftest_efficiencies(analysis)
        basis = "perftest median of every host"
    out = {"source": "bundle", "path": source, "n": len(values)}
    if not values:
        return {**out, "efficiency": None, "basis": None, "reason": "the bundle holds no perftest result"}
    return {**out, "efficiency": float(np.median(values)), "basis": basis}
