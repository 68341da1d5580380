"""One module per operating system rdmatool reaches: the switch NOSes and the Linux host.

Each module declares, in one place, everything the rest of rdmatool knows about its OS:
- its name (`NAME`, the inventory's `platform:` and `rdmatool.model.Platform`), `TITLE`, `KIND` (host or switch)
  and `ALIASES` (the ansible_network_os values that name it);
- how it is reached (switches): `NETMIKO_DEVICE_TYPE`, `ENTER_ENABLE`, `LOGIN_PROMPT_END` (rdmatool.transport);
- what it runs (switches): `SHOW_COMMANDS`, each with its parser's name. rdmatool/commands.py gathers them into
  SWITCH_COMMANDS and builds every command line from them: it stays the one audited place for what rdmatool runs;
- its port names: `PORT_NAME` (accepted into a show command), `CONFIG_PORT_NAME` (into a suggested configuration
  line; both matched whole, with ASCII digits `[0-9]`: `\\d` also takes other scripts' digits), `PORT_PREFIXES`
  (what the far end of a cable may spell before the port number: rdmatool.platforms.port_names), `port_argument` /
  `config_port` (the port as its command lines take it);
- how a suggestion is written as its commands (rdmatool.tune): `trust_dscp`, `pfc`, `dscp_map`, `ecn`,
  `cable_length`, `strict_priority` (switches; the host's are linux.host_*), with `COMMENT` (a comment line on its
  command line), `VERIFIED_SYNTAX` / `VENDOR_DOCUMENT`, `SITE_DEFAULTS`, `ECN_OBJECT`, `ECN_NOTE`, `APPLY_LINE`,
  `NOT_RENDERED` and `dscp_map_note`.

The modules hold data and small pure functions: they import nothing of rdmatool but this package, so every layer
may ask them. Nothing outside this package compares a platform's name or branches per platform
(tests/test_platforms.py greps for it): it asks the platform's module.

Adding a NOS is one module here (listed in MODULES below), plus its parsers (rdmatool/parsers/switch, one per show
command) and their fixtures; the simulated fabrics (tests/fabric, tests/generated) answer its commands when its
end-to-end behaviour is to be tested.
"""

from __future__ import annotations

from types import ModuleType

from rdmatool.platforms import cumulus, eos, linux, nxos, onyx, sonic

# The registry, in the order the Platform enum, the inventory's error messages and the notes list them.
MODULES: tuple[ModuleType, ...] = (linux, sonic, cumulus, onyx, eos, nxos)
SWITCHES: tuple[ModuleType, ...] = tuple(m for m in MODULES if m.KIND == "switch")
HOSTS: tuple[ModuleType, ...] = tuple(m for m in MODULES if m.KIND == "host")

# What every module declares; a switch's module declares the rest too.
COMMON = ("NAME", "TITLE", "KIND", "ALIASES", "SUGGESTION_KEY", "COMMENT", "VERIFIED_SYNTAX", "VENDOR_DOCUMENT")
SWITCH = ("NETMIKO_DEVICE_TYPE", "ENTER_ENABLE", "LOGIN_PROMPT_END", "SHOW_COMMANDS", "PORT_NAME", "CONFIG_PORT_NAME",
          "PORT_PREFIXES", "port_argument", "config_port", "SITE_DEFAULTS", "ECN_OBJECT", "ECN_NOTE", "APPLY_LINE",
          "NOT_RENDERED", "trust_dscp", "pfc", "dscp_map", "ecn", "cable_length", "strict_priority", "dscp_map_note")

_BY_NAME = {m.NAME: m for m in MODULES}
_BY_KEY = {m.SUGGESTION_KEY: m for m in MODULES}


def named(name) -> ModuleType | None:
    """The module of a platform name (`sonic`, or rdmatool.model.Platform.SONIC); None for another name."""
    return _BY_NAME.get(getattr(name, "value", name))


def switch(name) -> ModuleType | None:
    """The module of a switch platform name; None for a host's or an unknown name."""
    module = named(name)
    return module if module is not None and module.KIND == "switch" else None


def keyed(key) -> ModuleType | None:
    """The module whose commands a suggestion files under `key` (`host`, `sonic`); None for another key."""
    return _BY_KEY.get(key)


def is_host_key(key) -> bool:
    """Whether a suggestion's commands under `key` are a host's."""
    module = keyed(key)
    return module is not None and module.KIND == "host"


def comment_mark(key) -> str:
    """What starts a comment line on the command line of the commands filed under `key` (`#` when unknown)."""
    module = keyed(key)
    return module.COMMENT if module is not None else "#"
