"""A rule as loaded from a playbook (rdmatool.rules.playbook): what the kinds, the engine and the gate read."""

from __future__ import annotations

from dataclasses import dataclass, field

from rdmatool.model import Severity


@dataclass(frozen=True)
class Rule:
    id: str
    kind: str
    severity: Severity
    symptom: str
    cause: str
    check: str
    fix: str
    params: dict = field(default_factory=dict, hash=False, compare=False)
    where: dict = field(default_factory=dict, hash=False, compare=False)
    suggest: tuple[str, ...] = ()
    # Rules whose findings this rule's finding says already, on the same target and port (rdmatool.rules.engine)
    replaces: tuple[str, ...] = ()
    # Rules whose findings on the same target and port are consequences of this rule's (one physical story): kept,
    # marked `explained_by`, and folded under it by the table view (rdmatool.report.view)
    explains: tuple[str, ...] = ()
    # The same across a cable: rules whose findings on the port at the other end of this finding's cable are its
    # consequences (a host's PFC storm pauses the switch port it is cabled to, which then drops and marks late)
    explains_far_end: tuple[str, ...] = ()
    source: str = ""  # FILE:LINE, for messages about the rule itself
    # The gate's stage that judges it (playbook key `stage`, one of playbook.STAGES): what the rule needs collected
    stage: str = "state"
    # The site profile the rule's `{site.KEY}` templates were filled from (rdmatool.config.site_profile), and the
    # rule as written when it has any (None otherwise), to fill them again for another site (for_site)
    site: dict = field(default_factory=dict, hash=False, compare=False, repr=False)
    template: dict | None = field(default=None, hash=False, compare=False, repr=False)
