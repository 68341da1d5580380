"""Suggesters: `(rule, evidence, analysis, profile=None) -> list[Suggestion]`, registered by name in SUGGESTERS.

A playbook rule names its calculators in `suggest:`; the rules engine hands each one the evidence of every hit. Each
calculator reads the facts around the finding (the evidence's target and entity, and the other end of the cable from
`analysis.links`) through a SuggestionContext (context.py), computes the wanted setting, and renders it for the
platform of the target in question plus, for a host-side finding, the switch port it is cabled to (and the host
behind a switch port for a switch-side finding). Missing facts never raise: the suggestion then carries
`current=None`, or there is no suggestion at all when nothing can be computed. Values that do not validate for a
command (a strange port name from LLDP, say) leave that platform's commands out and say so in the rationale.

One module per family of settings: pfc.py (the lossless priority and the classification into it), ecn.py (marking
thresholds), dcqcn.py (the NIC's notification and reaction points, CNP marking), headroom.py (PFC headroom from the
cable length). The site profile (defaults in DEFAULT_PROFILE) comes from the `profile` argument or an
`analysis.profile` attribute.
"""

from __future__ import annotations

from collections.abc import Callable

from rdmatool.model import Suggestion
from rdmatool.tune.suggest.context import DEFAULT_PROFILE
from rdmatool.tune.suggest.dcqcn import suggest_cnp_priority, suggest_dcqcn_np, suggest_dcqcn_rp
from rdmatool.tune.suggest.ecn import suggest_ecn_thresholds
from rdmatool.tune.suggest.headroom import suggest_headroom
from rdmatool.tune.suggest.pfc import (
    suggest_dscp_map,
    suggest_pfc_priority,
    suggest_roce_tos,
    suggest_trust_dscp,
)

SUGGESTERS: dict[str, Callable[..., list[Suggestion]]] = {
    "ecn_thresholds": suggest_ecn_thresholds,
    "pfc_priority": suggest_pfc_priority,
    "trust_dscp": suggest_trust_dscp,
    "dscp_map": suggest_dscp_map,
    "dcqcn_np": suggest_dcqcn_np,
    "dcqcn_rp": suggest_dcqcn_rp,
    "headroom": suggest_headroom,
    "cnp_priority": suggest_cnp_priority,
    "roce_tos": suggest_roce_tos,
}

__all__ = ["DEFAULT_PROFILE", "SUGGESTERS"]
