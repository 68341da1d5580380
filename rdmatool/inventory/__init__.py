"""Inventory loading: rdmatool's YAML form, or an Ansible inventory (YAML or INI) → a list of resolved Targets.

Group and default inheritance, host ranges (ClusterShell syntax, through `rdmatool.present.hostlist`) and the user's
~/.ssh/config are all resolved once, here; every later step sees plain Targets. Precedence, most specific first:
target entry > its group > `defaults` > ~/.ssh/config > built-in defaults. Every value that will reach a command
line or a file name is validated here.

The package: `targets` (the native format and the resolution into Targets), `ansible` (Ansible YAML and INI
inventories as entries), `links` (the native format's optional `links:` cabling list), `selection` (`--limit`,
`--exclude`, `--shard`); here, reading the file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from rdmatool import yamlio
from rdmatool.errors import InventoryError
from rdmatool.inventory.ansible import ini_entries, looks_like_ini, yaml_entries
from rdmatool.inventory.links import InventoryLink, read_links
from rdmatool.inventory.selection import Selection, select, selection
from rdmatool.inventory.targets import from_native, resolve
from rdmatool.model import Target
from rdmatool.transport.ssh_library import allow_match_exec, paramiko

__all__ = ["Inventory", "InventoryLink", "Selection", "load", "load_inventory", "select", "selection"]


@dataclass(frozen=True)
class Inventory:
    targets: list[Target]
    links: tuple[InventoryLink, ...] = ()  # the operator's cabling, when the inventory lists it


def load(path: str | Path, ssh_config: str | Path | None = "~/.ssh/config") -> list[Target]:
    """Read an inventory file; raises InventoryError with `FILE[:LINE]: message` on any problem."""
    return load_inventory(path, ssh_config).targets


def load_inventory(path: str | Path, ssh_config: str | Path | None = "~/.ssh/config") -> Inventory:
    """The targets and, for the native format, the `links:` list (validated against the targets)."""
    path = Path(path)
    config = _read_ssh_config(ssh_config)
    text = _read_text(path)
    if looks_like_ini(text):
        entries = ini_entries(text, path)
        return Inventory(resolve(entries, {}, None, path, config))
    try:
        data = yamlio.loads(text, str(path))
    except yamlio.YamlError as exc:
        raise InventoryError(str(exc)) from None
    if not isinstance(data, dict):
        raise InventoryError(f"{path}: an inventory is a mapping with `targets` (or an Ansible inventory)")
    if "targets" in data:
        targets = from_native(data, path, config)
        return Inventory(targets, read_links(data.get("links"), targets, path, yamlio.line_of(data) or 1))
    if "all" in data or any(isinstance(v, dict) and ("hosts" in v or "children" in v) for v in data.values()):
        return Inventory(resolve(yaml_entries(data, path), {}, None, path, config))
    raise InventoryError(f"{path}: no `targets` list (and not an Ansible inventory)")


def _read_text(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            data = handle.read(yamlio.MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise InventoryError(f"{path}: no such inventory file") from None
    except OSError as exc:
        raise InventoryError(f"{path}: cannot read inventory: {exc.strerror or exc}") from None
    if len(data) > yamlio.MAX_FILE_BYTES:
        raise InventoryError(f"{path}: larger than {yamlio.MAX_FILE_BYTES} bytes; not an inventory")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InventoryError(f"{path}: cannot read inventory: not UTF-8 text ({exc.reason} at byte {exc.start})") \
            from None


def _read_ssh_config(ssh_config: str | Path | None) -> paramiko.SSHConfig | None:
    if ssh_config is None:
        return None
    path = Path(os.path.expanduser(str(ssh_config)))
    if not path.is_file():
        return None
    try:
        text = path.read_text(encoding="utf-8")  # read once: for its `Match exec` lines, then by paramiko
        allow_match_exec(text)
        return paramiko.SSHConfig.from_text(text)
    except Exception as exc:  # paramiko raises assorted types for a malformed config
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InventoryError(f"{path}: cannot read ssh config: {yamlio.shorten(message)}") from None
