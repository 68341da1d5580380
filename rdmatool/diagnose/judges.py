"""The judges whose verdicts are facts the playbooks' rules read, in the order they run: one declared list for
`rdmatool diagnose` (rdmatool.diagnose.pipeline) and the gate's state and counter stages (rdmatool.gate.run).

Each judge takes the analysis and gives it back with its facts added (a new Analysis). A judge the gate leaves out
says why: its stages judge the perftest pairs themselves, and it compares no cabling file. The packet captures and
the compute-or-communication triage are facts of the analysis itself (rdmatool.capture.facts, rdmatool.table.triage),
added when the bundle is read, for both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rdmatool.pairs.bundle_results import with_pair_attribution
from rdmatool.rules.command_failures import with_command_failures
from rdmatool.table.analysis import Analysis
from rdmatool.topology import placement
from rdmatool.topology.cabling import with_cabling
from rdmatool.topology.expected import ExpectedTopology
from rdmatool.topology.far_end import with_far_end
from rdmatool.topology.ib_fabric import with_ib_fabric
from rdmatool.topology.link_errors import with_link_errors
from rdmatool.topology.observed import links_from_analysis


@dataclass(frozen=True)
class Given:
    """What a judge may read besides the analysis: the expected-topology file, the perftest pair results."""

    expected_topology: ExpectedTopology | None = None
    pairs: list | None = None


@dataclass(frozen=True)
class Judge:
    name: str
    adds: Callable[[Analysis, Given], Analysis]
    in_gate: bool  # run by the gate's state and counter stages too


def pair_placement(analysis: Analysis, expected_topology: ExpectedTopology | None = None) -> dict[str, dict[str, str]]:
    """host -> NIC -> switch for the pair attribution's leaves: the expected-topology file's cabling where it has the
    host, else what the bundle saw (LLDP from either end, the InfiniBand subnet)."""
    where = placement(links_from_analysis(analysis))
    if expected_topology is not None:
        for host in {str(t.get("name")) for t in analysis.table.targets}:
            cabled = {nic: found[0] for nic in expected_topology.nics_of(host)
                      if (found := expected_topology.expected(host, nic)) is not None}
            if cabled:
                where[host] = cabled
    return where


JUDGES: tuple[Judge, ...] = (
    # The InfiniBand subnet's sweep from one host: its switch ports moved from that host to their switches, and the
    # fabric's verdicts (17-ib-fabric.yaml). First: the judges after it read the switch ports where they belong.
    Judge("ib fabric", lambda a, given: with_ib_fabric(a), in_gate=True),
    # The cabling against the expected-topology file and LLDP, and the perftest pairs by path class
    # (playbooks/15-topology.yaml).
    Judge("cabling", lambda a, given: with_cabling(a, given.expected_topology, given.pairs), in_gate=False),
    # Physical errors per cable, both ends paired: one finding per cable (10-links.yaml).
    Judge("link errors", lambda a, given: with_link_errors(a), in_gate=True),
    # A switch port's pause share and packets where only its cabled host counts them.
    Judge("far end", lambda a, given: with_far_end(a), in_gate=True),
    # Per-peer perftest results judged as a matrix, by the gate's attribution (a slow node is blamed, never its
    # healthy partners; a slow pair of good nodes is a bad link naming both ends); slow pairs grouped by the leaves
    # of their ends: a slow inter-leaf path is one finding, not a bad link per pair crossing it. The gate's own
    # bandwidth stage attributes its matrix itself.
    Judge("pair attribution",
          lambda a, given: with_pair_attribution(a, placement=pair_placement(a, given.expected_topology)),
          in_gate=False),
    # A command the collection recorded as failed says why its metrics are missing: a tool not installed, a command
    # that hung (30-fleet-and-pitfalls.yaml).
    Judge("command failures", lambda a, given: with_command_failures(a), in_gate=True),
)


def with_judges(analysis: Analysis, given: Given | None = None, gate: bool = False) -> Analysis:
    """The analysis with every judge's facts (only the gate's judges when `gate`), in the declared order."""
    given = given or Given()
    for judge in JUDGES:
        if judge.in_gate or not gate:
            analysis = judge.adds(analysis, given)
    return analysis
