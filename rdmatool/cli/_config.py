"""The configuration file's defaults at the command line (rdmatool.config): an option given wins, else the file's
value, else the built-in default. A file that cannot be used stops the command: one line naming FILE:LINE, exit 2.
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING

from rdmatool.cli._output import EXIT_USAGE, die

if TYPE_CHECKING:
    from rdmatool.config import Config

DEFAULT_STORE = "baselines"  # rdmatool.baseline.DEFAULT_STORE (tests/test_cli_startup.py keeps the two in step)


def current() -> Config:
    """The configuration in effect for this process's environment (read once per environment); its `limits` become
    the run's bounds (rdmatool.limits: what a host, a switch or a capture may cost)."""
    from rdmatool import limits

    config = _cached(os.environ.get("RDMATOOL_CONFIG"), os.environ.get("XDG_CONFIG_HOME"), os.environ.get("HOME"))
    limits.configure(config.limits)
    return config


@functools.lru_cache(maxsize=4)
def _cached(env_file: str | None, xdg: str | None, home: str | None) -> Config:  # noqa: ARG001 - the cache key
    from rdmatool.config import ConfigError, load  # PyYAML: read when a command asks, not when the CLI starts

    try:
        return load()
    except ConfigError as exc:
        die(f"rdmatool: {exc}", EXIT_USAGE)


def inventory(given: str | None) -> str | None:
    """-i, else the file's `inventory`."""
    return given or current().inventory


def store(given: str | None) -> str:
    """--store, else the file's `store`, else ./baselines."""
    return given or current().store or DEFAULT_STORE


def playbooks(given: str | None) -> str | None:
    """--playbooks, else the file's `playbooks` (None: the shipped ones)."""
    return given or current().playbooks


def gate_profile(given: str | None) -> str | None:
    """gate --profile, else the file's `gate_profile` (None: the built-in policy)."""
    return given or current().gate_profile


def site(given: list[str] | None = None) -> dict:
    """The site profile (RTT, RoCE / CNP priority and DSCP ...): the file's `site`, each key `--site KEY=VALUE` gives
    overriding it; the configuration's defaults (rdmatool.config.SITE_DEFAULTS) fill the rest where it is used. A
    bad `--site` is one line, exit 2."""
    from rdmatool.config import ConfigError, parse_site_option

    try:
        return {**current().site, **parse_site_option(given)}
    except ConfigError as exc:
        die(f"rdmatool: {exc}", EXIT_USAGE)


def site_param():
    """`--site KEY=VALUE`, repeatable (or comma-separated): the site profile of this run, over the file's. In a
    command's signature: `site_values: Annotated[list[str], _config.site_param()] = None`."""
    import typer

    return typer.Option("--site", metavar="KEY=VALUE", help=SITE_HELP)


STORE_HELP = "Baseline store directory (default: the config file's `store`, else ./baselines)."
PLAYBOOKS_HELP = "Playbook directory (default: the config file's `playbooks`, else the shipped ones)."
SITE_HELP = ("The site profile, over the config file's `site`: roce_priority=4,roce_dscp=34 (also cnp_priority, "
             "cnp_dscp, rtt_us, mtu, roce_mtu, cable_length_m); repeatable. `rdmatool config show` lists the defaults.")
INVENTORY_HELP = "Inventory YAML or Ansible inventory (default: the config file's `inventory`)."
