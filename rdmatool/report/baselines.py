"""The tables of `rdmatool baseline show` and `baseline diff`, fitted to the console (rdmatool.report.tables).

A group is named by its metric and the rest of its key (kind, role, priority, size): the metric is never cut. When a
column per key and per figure does not fit the console (eleven columns at 80 do not), the key is one column, the
metric over the rest of it, and the figures are paired (median and MAD, p10 and p90, n and nights) with four
significant digits (the JSON has them all). A baseline may come from another machine: every string in it is shown as
characters, never read as markup.
"""

from __future__ import annotations

import math

from rich.console import Console
from rich.table import Table

from rdmatool.baseline import RULE_KEYS, findings_text
from rdmatool.report import tables

STATS = ("median", "mad", "p10", "p90", "n", "nights")


NARROW_DIGITS = 4  # significant digits of a figure in the stacked layout: `1.68e+07`, never folded mid-number


def number(value, digits: int = 6) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)


def _rest_of_key(row: dict) -> str:
    """kind, role, priority and size of a group, as words (`host compute prio 3 size 65536`)."""
    words = [str(row[k]) for k in ("kind", "role") if row.get(k) is not None]
    words += [f"{label} {row[k]}" for k, label in (("priority", "prio"), ("size_bytes", "size"))
              if row.get(k) is not None]
    return " ".join(words)


def store_table(console: Console, store: str, entries: list[dict]) -> Table:
    """The baselines of a store (`baseline list`), one row each."""
    rows = [[number(e["name"]), str(len(e["nights"])), str(e["counted"]),
             *(number(e.get(c)) for c in ("keep", "first", "last", "groups"))] for e in entries]
    return tables.fitted(console, ("name", "nights", "in statistics", "keep", "first", "last", "groups"), rows,
                         keys=("name",), right=("nights", "in statistics", "keep", "groups"),
                         title=f"baselines in {store}")


def nights_table(console: Console, title: str, nights: list[dict]) -> Table:
    """One row per night: when, its verdict and findings, and whether the statistics hold it."""
    rows = [[number(n["created"]), str(n["verdict"]).upper() if n["verdict"] else "-", findings_text(n["counts"]),
             number(n["status"]), number(n["targets"]), number(n["bundle"])] for n in nights]
    return tables.fitted(console, ("created", "verdict", "findings", "in statistics", "targets", "bundle"), rows,
                         keys=("created", "verdict"), right=("targets",), optional=("findings",), title=title)


def groups_table(console: Console, stats: list[dict]) -> Table:
    """The per-group statistics of `baseline show`: a column per key and figure when they fit, else paired."""
    headers = (*RULE_KEYS, *STATS)
    rows = [[number(r.get(c)) for c in headers] for r in stats]
    title = f"{len(stats)} groups"
    if tables.fits(console, headers, rows):
        return tables.fitted(console, headers, rows, keys=("metric",), right=STATS, title=title)
    short = [[number(r.get(c), NARROW_DIGITS) for c in STATS] for r in stats]
    paired = [[tables.lines(number(r.get("metric")), _rest_of_key(r)), tables.lines(f[0], f[1]),
               tables.lines(f[2], f[3]), tables.lines(f[4], f[5])] for r, f in zip(stats, short)]
    return tables.fitted(console, ("metric / group", "median / mad", "p10 / p90", "n / nights"), paired,
                         keys=("metric / group",), right=("median / mad", "p10 / p90", "n / nights"), title=title,
                         show_lines=True)


def reference_table(console: Console, reference: dict) -> Table:
    rows = [[number(category), number(group), number(v.get("value")), f"{v.get('count')}/{v.get('total')}"]
            for category, groups in reference.items() for group, v in groups.items()]
    return tables.fitted(console, ("category", "group", "value", "share"), rows, keys=("category", "group"),
                         title="reference facts (majority)")


def relative(row: dict) -> str:
    return f"{row['relative']:+.1%}" if not math.isinf(row["relative"]) else "new"


def moved_table(console: Console, moved: list[dict]) -> Table:
    """The medians that moved most (`baseline diff`): the metric, the change and the relative change whole."""
    headers = (*RULE_KEYS, "A", "B", "change", "relative")
    rows = [[*(number(r.get(c)) for c in RULE_KEYS), number(r["median_a"]), number(r["median_b"]),
             number(r["change"]), relative(r)] for r in moved]
    title = "medians that moved most"
    if tables.fits(console, headers, rows):
        return tables.fitted(console, headers, rows, keys=("metric", "change", "relative"),
                             right=("A", "B", "change", "relative"), title=title)
    grouped = [[tables.lines(number(r.get("metric")), _rest_of_key(r)), number(r["median_a"], NARROW_DIGITS),
                number(r["median_b"], NARROW_DIGITS), number(r["change"], NARROW_DIGITS), relative(r)] for r in moved]
    return tables.fitted(console, ("metric / group", "A", "B", "change", "relative"), grouped,
                         keys=("metric / group", "change", "relative"), right=("A", "B", "change", "relative"),
                         title=title, show_lines=True)


def facts_table(console: Console, facts: list[dict]) -> Table:
    """The reference facts that changed, each pair of values cut around where they differ when too long."""
    rows = [[number(f["category"]), number(f["group"]), number(f["a"]), number(f["b"])] for f in facts]
    return tables.fitted(console, ("category", "group", "A", "B"), tables.changes(console, rows, 2),
                         keys=("category", "group"), title="reference facts that changed")
