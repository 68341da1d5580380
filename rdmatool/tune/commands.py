"""Render one desired setting as the exact commands for one platform. Printed for an engineer, never executed.

The suggesters' one door to the platforms' syntax: each switch OS writes its own commands in its module
(rdmatool/platforms/<nos>.py, with the sources its syntax follows), the host's are linux.host_*. Every value placed
in a command is validated first (rdmatool.platforms.syntax: names by strict patterns, numbers as ints in range), and
shell commands (Linux hosts, SONiC) quote every argument. A function returns [] when a platform has no rendering for
that setting; it raises ValueError when a value does not validate.
"""

from __future__ import annotations

from rdmatool import platforms
from rdmatool.platforms.linux import (  # noqa: F401 - the host's commands, rendered by its platform module
    host_cable_len,
    host_cnp,
    host_dcqcn,
    host_dscp2prio,
    host_pfc,
    host_roce_tos,
    host_trust_dscp,
)
from rdmatool.platforms.syntax import dscp, integer, pfc_vector, priority  # noqa: F401 - the suggesters' too

HOST = platforms.HOSTS[0].SUGGESTION_KEY  # a suggestion's commands for a host are filed under `host`
SWITCH_PLATFORMS = tuple(m.NAME for m in platforms.SWITCHES)
PLATFORMS = (HOST, *SWITCH_PLATFORMS)

# The platforms whose command syntax the project has checked against the vendor's own documentation, with the
# document (docs/tuning.md §9 keeps the same list with the full references): each module's VERIFIED_SYNTAX. Every
# other platform's commands are printed with syntax_note(): a suggestion never looks more certain than it is.
VERIFIED_SYNTAX: dict[str, str] = {m.SUGGESTION_KEY: m.VERIFIED_SYNTAX for m in platforms.MODULES if m.VERIFIED_SYNTAX}
VENDOR_DOCUMENTS: dict[str, str] = {m.SUGGESTION_KEY: m.VENDOR_DOCUMENT for m in platforms.MODULES
                                    if m.VENDOR_DOCUMENT}
# The site profile's names of the switches' own objects (the SONiC DSCP map, the NX-OS policies), with defaults.
SITE_DEFAULTS: dict[str, str] = {k: v for m in platforms.SWITCHES for k, v in m.SITE_DEFAULTS.items()}


def syntax_note(platform: str) -> str | None:
    """The warning printed with a platform's commands when their syntax is not verified; None when it is."""
    if platform in VERIFIED_SYNTAX:
        return None
    document = VENDOR_DOCUMENTS.get(platform, "the vendor's documentation")
    return (f"{platform} commands: syntax not verified against the vendor's documentation ({document}); check them "
            "there before use.")


def _switch(platform: str):
    module = platforms.switch(platform)
    if module is None:
        raise ValueError(f"unknown switch platform {platform!r}")
    return module


def switch_port(platform: str, name) -> str:
    """The port as the platform's config syntax wants it (Onyx `Eth1/1` → `1/1`); ValueError when it does not match."""
    return _switch(platform).config_port(name)


def is_port(platform: str, name) -> bool:
    try:
        switch_port(platform, name)
    except ValueError:
        return False
    return True


def target_key(kind, platform) -> str | None:
    """The key a target's commands are filed under, from its facts' kind and platform: HOST for a host, the switch
    platform for a switch, None for a platform no module declares."""
    if kind == "host":
        return HOST
    module = platforms.named(platform)
    return None if module is None else module.SUGGESTION_KEY


def is_host(key) -> bool:
    """Whether the commands filed under `key` (a Side's platform) are a host's."""
    return platforms.is_host_key(key)


def not_rendered(setting: str) -> tuple:
    """The switch platforms whose commands leave `setting` out (their modules' NOT_RENDERED), in registry order."""
    return tuple(m for m in platforms.SWITCHES if setting in m.NOT_RENDERED)


def dscp_map_notes(keys, d: int, q: int) -> str:
    """What each distinct switch platform among `keys` says of a DSCP map it does not render (Onyx: whether its
    default DSCP>>3 map already gives the class)."""
    return "".join(m.dscp_map_note(d, q) for key in dict.fromkeys(keys) if (m := platforms.switch(key)))


def apply_line(platform: str) -> str | None:
    """The line that ends a whole change on `platform` once (Cumulus `nv config apply`), None where there is none."""
    module = platforms.keyed(platform)
    return module.APPLY_LINE if module is not None and module.KIND == "switch" else None


# --- switches: each validates the numbers here, then its platform's module writes the lines --------------------------


def switch_trust_dscp(platform: str, port: str | None, options: dict | None = None) -> list[str]:
    return _switch(platform).trust_dscp(port, options)


def switch_pfc(platform: str, port: str | None, enable, disable=(), options: dict | None = None) -> list[str]:
    """PFC on the `enable` priorities and off on `disable` (those currently on that should not be)."""
    on = sorted({priority(p) for p in enable})
    off = sorted({priority(p) for p in disable} - set(on))
    return _switch(platform).pfc(port, on, off, options)


def switch_dscp_map(platform: str, port: str | None, dscp_value: int, prio: int,
                    options: dict | None = None) -> list[str]:
    """Classify a DSCP into a switch priority / traffic class (identity priority = TC = queue assumed)."""
    d, q = dscp(dscp_value), priority(prio)
    return _switch(platform).dscp_map(port, d, q, options)


def switch_ecn(platform: str, where: str | list[str] | None, tc: int, kmin: int, kmax: int, pmax_pct: int,
               options: dict | None = None) -> list[str]:
    """WRED/ECN thresholds of the lossless egress queue. `where` is what the platform's ECN_OBJECT names: the SONiC
    WRED profile, the port on Onyx / EOS, the port or ports an NX-OS queuing policy is bound to (unused on Cumulus,
    whose congestion-control profile is global)."""
    t = priority(tc)
    lo = integer(kmin, 1, 2**32 - 1, "Kmin (bytes)")
    hi = integer(kmax, 1, 2**32 - 1, "Kmax (bytes)")
    p = integer(pmax_pct, 0, 100, "Pmax (%)")
    if lo >= hi:
        raise ValueError(f"Kmin {lo} must be below Kmax {hi}")
    return _switch(platform).ecn(where, t, lo, hi, p, options)


def switch_cable_length(platform: str, port: str | None, meters: int) -> list[str]:
    """The cable length PFC headroom is sized from; [] where the platform sizes it from its own tables (and for a
    platform that is no switch's)."""
    m = integer(meters, 1, 10000, "cable length (m)")
    module = platforms.switch(platform)
    return module.cable_length(port, m) if module is not None else []


def switch_strict_priority(platform: str, port: str | None, tc: int, options: dict | None = None) -> list[str]:
    """Strict-priority scheduling for the CNP traffic class (docs/tuning.md §1.1: CNPs ride TC 6, strict); [] where
    the platform renders none (and for a platform that is no switch's)."""
    t = priority(tc)
    module = platforms.switch(platform)
    return module.strict_priority(port, t, options) if module is not None else []
