"""Pure gate decisions: which stage a rule belongs to, a stage's status, and which nodes to drain. The verdict is
rdmatool.verdict's, as for a diagnosis: a stage that did not finish (UNFINISHED), or targets that could not be read,
are never a pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rdmatool.model import Finding, Severity
from rdmatool.rules.playbook import Rule
from rdmatool.verdict import HARD

UNFINISHED = ("timeout", "inconclusive")  # stage statuses that leave the gate's verdict inconclusive
_COUNTER_METRICS = {"rx_pause_fraction", "tx_pause_fraction", "ecn_mark_ratio", "cnp_handled_ratio"}
_BANDWIDTH_METRICS = {"bw_efficiency", "bw_avg_gbps", "bw_peak_gbps", "msg_rate_mpps", "busbw_gbps"}


def stage_of(rule: Rule) -> str:
    """state (one snapshot), counters (needs two), bandwidth or latency (needs perftest)."""
    metric = rule.params.get("metric") or rule.params.get("numerator") or ""
    if metric in _BANDWIDTH_METRICS:
        return "bandwidth"
    if metric.startswith("lat_"):
        return "latency"
    if rule.kind == "verdict" and str(rule.params.get("verdict", "")).startswith("perf_"):
        return "bandwidth"  # a perftest attribution verdict on what no perftest metric measures (a pair's tool_error)
    if rule.kind in ("rate", "ratio") or rule.params.get("field") in ("rate", "delta") or metric in _COUNTER_METRICS:
        return "counters"
    if any(c.get("field") in ("rate", "delta") for c in rule.params.get("also") or []):
        return "counters"
    return "state"


@dataclass
class StageResult:
    name: str
    status: str  # passed | failed | warned | skipped | timeout | inconclusive
    duration_s: float = 0.0
    findings: list[Finding] = field(default_factory=list)
    detail: str = ""

    def as_json(self) -> dict:
        return {"name": self.name, "status": self.status, "duration_s": round(self.duration_s, 3),
                "findings": len(self.findings), "detail": self.detail}


def stage_status(findings: list[Finding]) -> str:
    if any(f.severity in HARD for f in findings):
        return "failed"
    if any(f.severity is Severity.WARNING for f in findings):
        return "warned"
    return "passed"


def drain_list(findings: list[Finding], host_names: set[str], bad_nodes: tuple[str, ...] = ()) -> list[str]:
    """Hosts with an error or critical finding of their own, plus perftest's bad nodes; never a switch, never the
    two ends of a bad link (a link is the fabric's problem, not a node's)."""
    drain = {f.target for f in findings if f.severity in HARD and f.target in host_names}
    drain |= set(bad_nodes)
    return sorted(drain)
