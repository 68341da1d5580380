"""`--limit`, `-x/--exclude` and `--shard`: which of the inventory's targets a run talks to.

An expression is what Slurm and pdsh users write (ClusterShell's syntax, read by `rdmatool.present.hostlist`): names and
host ranges (`gpu[001-064]`), `@group` (the inventory's groups), shell globs (`leaf*`), joined by `,` (union),
`!` (difference: `gpu[001-064]!gpu005`, or `gpu[001-064],!gpu005`), `&` (intersection) and `^` (symmetric
difference), left to right. A bare group name still selects its group when no target has that name.

Every name written must be a target: a typo in a scheduler's node list must not shrink the run without a word, so
names, globs and groups that match nothing are an error naming them, unless the caller asks to ignore them
(`--ignore-unknown`), and then they are returned to be reported.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

from rdmatool import yamlio
from rdmatool.errors import InventoryError
from rdmatool.model import Target
from rdmatool.present import hostlist


@dataclass(frozen=True)
class Selection:
    targets: list[Target]
    unknown: tuple[str, ...] = ()  # operands (names folded, globs and groups as written) that matched no target


def select(targets: list[Target], limit: str | None = None, shard: str | None = None, *,
           exclude: str | None = None, ignore_unknown: bool = False) -> list[Target]:
    """The targets a run talks to, in inventory order; InventoryError (one line) on a bad or unknown name."""
    return selection(targets, limit, shard, exclude=exclude, ignore_unknown=ignore_unknown).targets


def selection(targets: list[Target], limit: str | None = None, shard: str | None = None, *,
              exclude: str | None = None, ignore_unknown: bool = False) -> Selection:
    names = [t.name for t in targets]
    known = set(names)
    groups: dict[str, set[str]] = {}
    for t in targets:
        for group in t.groups:
            groups.setdefault(group, set()).add(t.name)
    unknown: list[str] = []
    chosen = known
    for option, expression in (("--limit", limit), ("--exclude", exclude)):
        if expression is None:
            continue
        missing: list[str] = []
        matched = _evaluate(option, expression, names, known, groups, missing)
        chosen = matched if option == "--limit" else chosen - matched
        if missing and not ignore_unknown:
            shown = yamlio.shorten(", ".join(missing))
            raise InventoryError(f"{option}: {shown}: no such target or group in the inventory "
                                 "(--ignore-unknown skips unknown names)")
        unknown += missing
    picked = [t for t in targets if t.name in chosen]
    return Selection(_shard(picked, shard) if shard else picked, tuple(unknown))


def _evaluate(option: str, expression: str, names: list[str], known: set[str], groups: dict[str, set[str]],
              unknown: list[str]) -> set[str]:
    try:
        parts = hostlist.terms(expression)
    except ValueError as exc:
        raise InventoryError(f"{option}: {exc}") from None
    _check_size(option, expression, parts)
    result: set[str] = set(known) if parts[0][0] == "!" else set()
    for operator, operand in parts:
        matched = _operand(option, operand, names, known, groups, unknown)
        if operator == ",":
            result |= matched
        elif operator == "!":
            result -= matched
        elif operator == "&":
            result &= matched
        else:
            result ^= matched
    return result


MAX_WILDCARDS = 100  # a job's node list has a few; each costs a pass over every target's name


def _check_size(option: str, expression: str, parts: list[tuple[str, str]]) -> None:
    """A whole expression within the bound one pattern has (hostlist.MAX_NAMES): each of 60 ranges of 99,999 names
    passes alone, and together they would take minutes to build and match. Sized from the bounds, before any of
    them is built; group names and wildcards stand for targets that exist, so they count one each."""
    total = wildcards = 0
    for _, operand in parts:
        if operand.startswith("@") or "*" in operand or "?" in operand:
            total += 1
            wildcards += "*" in operand or "?" in operand
            if wildcards > MAX_WILDCARDS:  # each is matched against every target's name
                raise InventoryError(f"{option}: {yamlio.shorten(expression)} has more than {MAX_WILDCARDS} "
                                     f"wildcard patterns (the limit)")
            continue
        try:
            total += hostlist.size_of(operand)
        except ValueError as exc:
            raise InventoryError(f"{option}: {exc}") from None
        if total > hostlist.MAX_NAMES:
            raise InventoryError(f"{option}: {yamlio.shorten(expression)} stands for more than {hostlist.MAX_NAMES} "
                                 f"names in all (the limit)")


def _operand(option: str, operand: str, names: list[str], known: set[str], groups: dict[str, set[str]],
             unknown: list[str]) -> set[str]:
    if operand.startswith("@"):
        members = groups.get(operand[1:])
        if not members:
            unknown.append(operand)
        return set(members or ())
    if "*" in operand or "?" in operand:
        matched = {n for n in names if fnmatch.fnmatchcase(n, operand)}
        if not matched:
            unknown.append(operand)
        return matched
    if operand in groups and operand not in known and not re.search(r"[\[\]]", operand):
        return set(groups[operand])  # a bare group name: the `@` is optional
    try:
        wanted = hostlist.nodeset(operand)
    except ValueError as exc:
        raise InventoryError(f"{option}: {exc}") from None
    matched = {n for n in wanted if n in known}
    if len(matched) < len(wanted):
        unknown.append(hostlist.fold(n for n in wanted if n not in known))
    return matched


def _shard(chosen: list[Target], shard: str) -> list[Target]:
    match = re.fullmatch(r"(\d+)/(\d+)", shard.strip())
    if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise InventoryError(f"--shard {yamlio.quote(shard)}: expected K/N with 1 <= K <= N")
    k, n = int(match.group(1)), int(match.group(2))
    # Round-robin by sorted name: stable across runs and every target in exactly one shard.
    ordered = sorted(chosen, key=lambda t: t.name)
    keep = {t.name for i, t in enumerate(ordered) if i % n == k - 1}
    return [t for t in chosen if t.name in keep]
