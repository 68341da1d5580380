"""The site's values in a playbook: `{site.KEY}` templates, checked when the playbook loads, filled from the profile.

A rule names the site's RoCE / CNP class instead of writing a number: `where: {priority: "{site.roce_priority}"}`,
`raw_key: "dscp{site.roce_dscp}"`, `expected: {"{site.roce_priority}": 1, default: 0}`, a fix "mlnx_qos -i {entity}
--dscp2prio set,{site.roce_dscp},{site.roce_priority}". A string that is one template alone becomes the value itself
(the number 4, so a priority filter still compares numbers); inside a longer string it is written as text. Keys of
a mapping are filled as well as values. The keys are the site profile's (rdmatool.config.SITE_KEYS) and `roce_tos`,
the ToS byte derived from `roce_dscp`; any other name is an error at load, at the line that writes it, since a typo
would otherwise print `{site.roce_prio}` in every finding or never select anything.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rdmatool import config, yamlio

TEMPLATE = re.compile(r"\{site\.([^{}]*)\}")
KEYS = (*config.SITE_KEYS, "roce_tos")


def names(value: Any) -> list[str]:
    """Every `{site.KEY}` name written in a rule's value (its strings, the keys and values of its mappings)."""
    if isinstance(value, str):
        return TEMPLATE.findall(value)
    if isinstance(value, dict):
        return [name for k, v in value.items() for name in (*names(k), *names(v))]
    if isinstance(value, list):
        return [name for item in value for name in names(item)]
    return []


def unknown(value: Any) -> str | None:
    """The first template name that is no site key, None when every one is."""
    return next((name for name in names(value) if name not in KEYS), None)


def line_of(path: Path, name: str, from_line: int) -> int:
    """The line that writes `{site.NAME}`, searched from the rule's first line (its own line when not found)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return from_line
    needle = "{site." + name + "}"
    return next((i + 1 for i in range(max(from_line - 1, 0), len(lines)) if needle in lines[i]), from_line)


def fill(value: Any, site: dict[str, Any]) -> Any:
    """`value` with every template replaced by the site's value; mappings keep their line (yamlio.LineDict)."""
    if isinstance(value, str):
        whole = TEMPLATE.fullmatch(value)
        if whole:
            return site[whole.group(1)]
        return TEMPLATE.sub(lambda m: str(site[m.group(1)]), value)
    if isinstance(value, dict):
        out = yamlio.LineDict() if isinstance(value, yamlio.LineDict) else {}
        if isinstance(value, yamlio.LineDict):
            out.line = value.line
        for k, v in value.items():
            out[fill(k, site)] = fill(v, site)
        return out
    if isinstance(value, list):
        return [fill(item, site) for item in value]
    return value
