"""Ansible inventories (YAML and INI) read as rdmatool entries: hosts with their group chain and the connection
variables rdmatool knows (`ansible_host`, `ansible_user`, `ansible_port`, `ansible_network_os`, ...). Group ancestry
is memoised, so nested child groups cost linear time. Host ranges are Ansible's (`gpu[01:04]`, `db-[a:c]`,
`n[1:9:2]`), sized before they are expanded, and the whole file may not stand for more than MAX_TARGETS hosts."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rdmatool import yamlio
from rdmatool.errors import InventoryError
from rdmatool.inventory.targets import (
    ANSIBLE_OS,
    MAX_GROUPS_PER_TARGET,
    MAX_TARGETS,
    SECRET_KEYS,
    check_group_name,
)

# `[start:end]` or `[start:end:step]`: numbers (zero padding kept from the start, as Ansible pads) or single letters.
_RANGE = re.compile(r"\[([^\[\]:]*):([^\[\]:]*)(?::([^\[\]:]*))?\]")
_MAX_DIGITS = 18


class _HostBudget:
    """Counts the hosts an inventory's ranges stand for, so that many lines each under the limit cannot add up to
    millions of entries before `resolve` counts them."""

    def __init__(self) -> None:
        self.total = 0

    def expand(self, pattern: str, where: str) -> list[str]:
        parts = _parts(pattern, where)
        size = 1
        for part in parts:
            size *= len(part)
            if size > MAX_TARGETS:
                break
        self.total += size
        if self.total > MAX_TARGETS:
            raise InventoryError(f"{where}: the inventory expands to more than {MAX_TARGETS} hosts (the limit)")
        if len(parts) == 1:
            return [pattern]
        return ["".join(choice) for choice in itertools.product(*(_texts(part) for part in parts))]


def _parts(pattern: str, where: str) -> list:
    """A host pattern as its parts: literal text as a one-element tuple, each range as a `range` of numbers with
    its zero-padded width, or the list of its letters; their lengths are known before anything is expanded."""
    pieces = _RANGE.split(pattern)
    parts: list = []
    for i in range(0, len(pieces), 4):
        literal = pieces[i]
        if len(pieces) > 1 and ("[" in literal or "]" in literal):
            raise InventoryError(f"{where}: host pattern {yamlio.quote(pattern)}: unbalanced brackets or a range "
                                 "that is not [start:end] or [start:end:step]")
        parts.append((literal,))
        if i + 1 < len(pieces):
            parts.append(_one_range(pieces[i + 1], pieces[i + 2], pieces[i + 3], pattern, where))
    return parts


def _one_range(start: str, end: str, step: str | None, pattern: str, where: str):
    bad = f"{where}: host pattern {yamlio.quote(pattern)}: bad range [{start}:{end}{':' + step if step else ''}]"
    if step is not None and not (step.isdigit() and len(step) <= _MAX_DIGITS and int(step) >= 1):
        raise InventoryError(bad)
    stride = int(step) if step else 1
    if start.isdigit() and end.isdigit() and len(start) <= _MAX_DIGITS and len(end) <= _MAX_DIGITS:
        if int(end) < int(start):
            raise InventoryError(bad)
        return _Numbers(range(int(start), int(end) + 1, stride), len(start) if start.startswith("0") else 0)
    if len(start) == 1 == len(end) and start.isascii() and end.isascii() and start.isalpha() and end.isalpha() \
            and start.islower() == end.islower() and start <= end:
        return [chr(c) for c in range(ord(start), ord(end) + 1, stride)]
    raise InventoryError(bad)


@dataclass(frozen=True)
class _Numbers:
    numbers: range
    width: int  # the start's width when it has a leading zero (`[01:10]`), else 0

    def __len__(self) -> int:
        return len(self.numbers)


def _texts(part) -> Iterable[str]:
    if isinstance(part, _Numbers):
        return (str(n).zfill(part.width) for n in part.numbers)
    return part


def _ansible_host_entry(name: str, hostvars: dict, group_chain: list[str], line: int) -> dict:
    entry: dict[str, Any] = {"name": name}
    entry_line = yamlio.LineDict()
    mapping = {
        "ansible_host": "address",
        "ansible_user": "user",
        "ansible_port": "port",
        "ansible_ssh_private_key_file": "identity_file",
    }
    for key, value in hostvars.items():
        if key in mapping:
            entry[mapping[key]] = value
        elif key == "ansible_network_os":
            os_name = str(value).lower() if isinstance(value, str) else None
            if os_name not in ANSIBLE_OS:
                raise InventoryError(f"unknown ansible_network_os {yamlio.quote(value)} for host {yamlio.quote(name)}")
            entry["platform"] = ANSIBLE_OS[os_name].value
        elif key in SECRET_KEYS:
            continue  # Ansible keeps vault-encrypted secrets here; we never read or carry them
        elif key in ("rdmatool_role", "role"):
            entry["role"] = value
        elif key in ("rdmatool_ports",):
            entry["ports"] = value
    entry_line.update(entry)
    entry_line.line = line
    entry_line["groups"] = [g for g in group_chain if g not in ("all", "ungrouped")]
    return entry_line


def yaml_entries(data: dict, path: Path) -> list[dict]:
    hosts: dict[str, dict] = {}
    budget = _HostBudget()

    def mapping_or_none(value: Any, what: str, line: int) -> dict:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise InventoryError(f"{path}:{line}: {what} must be a mapping, not {yamlio.quote(value)}")
        return value

    def visit(group_name: str, group: Any, inherited: dict, chain: list[str], line: int) -> list:
        """Record the group's hosts; return its children to visit next, in order."""
        if group is None:
            return []
        if not isinstance(group, dict):
            raise InventoryError(f"{path}:{line}: Ansible group {group_name!r} must be a mapping, not "
                                 f"{yamlio.quote(group)}")
        line = yamlio.line_of(group) or line
        group_vars = {**inherited, **mapping_or_none(group.get("vars"), f"`vars` of group {group_name!r}", line)}
        chain = [*chain, group_name]
        for pattern, hostvars in mapping_or_none(group.get("hosts"), f"`hosts` of group {group_name!r}",
                                                 line).items():
            if not isinstance(pattern, str) or not pattern:
                raise InventoryError(f"{path}:{line}: a host name must be a string, not {yamlio.quote(pattern)}")
            for host in budget.expand(pattern, f"{path}:{yamlio.line_of(hostvars) or line}"):
                record(host, hostvars, group_vars, chain, line)
        children = mapping_or_none(group.get("children"), f"`children` of group {group_name!r}", line)
        for child_name in children:
            check_group_name(child_name, f"{path}:{line}")
        return [(child_name, child, group_vars, chain, line) for child_name, child in children.items()]

    def record(host: str, hostvars: Any, group_vars: dict, chain: list[str], line: int) -> None:
        """One host of a group: its variables over the group's; a host met again keeps every group name."""
        merged = {**group_vars, **mapping_or_none(hostvars, f"the variables of host {yamlio.quote(host)}", line)}
        previous = hosts.get(host)
        host_line = yamlio.line_of(hostvars) or line
        try:
            entry = _ansible_host_entry(host, merged, chain, host_line)
        except InventoryError as exc:
            raise InventoryError(f"{path}:{host_line}: {exc}") from None
        if previous is not None:  # a host in several groups: merge, keeping every group name
            entry["groups"] = sorted(set(previous["groups"]) | set(entry["groups"]))
            merged_entry = {**previous, **entry}
            entry = yamlio.LineDict(merged_entry)
            entry.line = host_line
        hosts[host] = entry

    roots = data["all"] if "all" in data and isinstance(data["all"], dict) else {"children": data}
    # Depth first, children in file order, as a recursive walk would go; an explicit stack because nothing bounds
    # how deeply an inventory may nest its groups.
    stack = [("all", roots, {}, [], yamlio.line_of(data) or 1)]
    while stack:
        stack.extend(reversed(visit(*stack.pop())))
    return list(hosts.values())


def looks_like_ini(text: str) -> bool:
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        return line.startswith("[") and line.endswith("]")
    return False


def ini_entries(text: str, path: Path) -> list[dict]:
    hosts: dict[str, dict] = {}
    budget = _HostBudget()
    group_vars: dict[str, dict] = {}
    children: dict[str, list[str]] = {}
    section = "ungrouped"
    kind = "hosts"
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        header = re.fullmatch(r"\[([^\]:]+)(?::(vars|children))?\]", line)
        if header:
            section, kind = header.group(1), header.group(2) or "hosts"
            check_group_name(section, f"{path}:{number}")
            continue
        if kind == "vars":
            key, _, value = line.partition("=")
            group_vars.setdefault(section, {})[key.strip()] = value.strip()
        elif kind == "children":
            children.setdefault(section, []).append(line.split()[0])
        else:
            tokens = line.split()
            host_vars = {}
            for token in tokens[1:]:
                if "=" not in token:
                    raise InventoryError(f"{path}:{number}: expected key=value, got {yamlio.quote(token)}")
                key, _, value = token.partition("=")
                host_vars[key] = value
            for host in budget.expand(tokens[0], f"{path}:{number}"):
                entry = hosts.setdefault(host, {"vars": {}, "groups": [], "line": number})
                entry["vars"].update(host_vars)
                entry["groups"].append(section)
    parents: dict[str, list[str]] = {}
    for parent, kids in children.items():
        for kid in kids:
            parents.setdefault(kid, []).append(parent)

    entries = []
    merged_for: dict[tuple, tuple[list[str], dict]] = {}  # hosts of the same groups share one chain and its vars
    for host, info in hosts.items():
        key = tuple(info["groups"])
        if key not in merged_for:
            chain = _group_chain(info["groups"], parents, f"{path}:{info['line']}")
            group_merged: dict = {}
            for g in ["all", *chain]:
                group_merged.update(group_vars.get(g, {}))
            merged_for[key] = (chain, group_merged)
        chain, group_merged = merged_for[key]
        merged = {**group_merged, **info["vars"]}
        try:
            entries.append(_ansible_host_entry(host, merged, chain, info["line"]))
        except InventoryError as exc:
            raise InventoryError(f"{path}:{info['line']}: {exc}") from None
    return entries


def _group_chain(groups: list[str], parents: dict[str, list[str]], where: str) -> list[str]:
    """A host's groups with all their `:children` ancestors, each once, most distant first, so that a nearer
    group's variables win; of two parents, the later-listed one's line comes first.

    That order is a depth-first walk that visits a group's parents last-listed first and emits each group when its
    own parents are done; a group met again is skipped, its line being emitted already. Each group and each
    parent link is therefore seen once per host-group set, where following every path would take exponential time
    on nested diamonds. Iterative, so a long chain needs no recursion; a group that is its own ancestor is refused,
    as Ansible does, and so is a host in more than MAX_GROUPS_PER_TARGET groups.
    """
    chain: dict[str, None] = {}  # ordered set, in emission order
    for start in groups:
        if start in chain:
            continue
        stack = [(start, iter(reversed(parents.get(start, ()))))]
        on_stack = {start}
        while stack:
            group, pending = stack[-1]
            parent = next(pending, None)
            if parent is None:
                stack.pop()
                on_stack.discard(group)
                chain[group] = None
                if len(chain) > MAX_GROUPS_PER_TARGET:
                    raise InventoryError(f"{where}: a host in more than {MAX_GROUPS_PER_TARGET} groups (the limit)")
            elif parent in on_stack:
                raise InventoryError(f"{where}: group {yamlio.quote(parent)} is its own ancestor through "
                                     "`:children` sections (a cycle)")
            elif parent not in chain:
                stack.append((parent, iter(reversed(parents.get(parent, ())))))
                on_stack.add(parent)
    return list(chain)
