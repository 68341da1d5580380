"""`rdmatool bundle diff` as a table (rich) or Markdown, from the diff's JSON shape (rdmatool.bundle_ops.diff).

Every value a device reported (settings, neighbours, errors, names) is shown as text (rdmatool.report.shown): its
control characters visible in the table, its Markdown and HTML escaped in the Markdown."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from rdmatool.report import tables
from rdmatool.report.shown import cleaned, code_span, markdown

RATES_SHOWN = 30  # the largest moves; --format json lists every one


def _cell(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _where(row: dict, port_key: str = "entity") -> str:
    where = str(row["target"]) + (f" {row[port_key]}" if row.get(port_key) else "")
    if row.get("priority") is not None:
        where += f" prio {row['priority']}"
    if row.get("size_bytes") is not None:
        where += f" size {row['size_bytes']}"
    return where


def _relative(row: dict) -> str:
    return "new" if row["relative"] is None else f"{row['relative']:+.0%}"


def target_lines(diff: dict) -> list[str]:
    t = diff["targets"]
    lines = []
    for label, names in (("added", t["added"]), ("removed", t["removed"]), ("recovered", t["recovered"])):
        if names:
            lines.append(f"{label}: {', '.join(names)}")
    for row in t["unreachable"]:
        lines.append(f"unreachable: {row['target']} ({row['error']})")
    if t["still_unreachable"]:
        lines.append(f"unreachable in both (no change): {', '.join(t['still_unreachable'])}")
    return lines


def render_text(diff: dict, console: Console) -> None:
    """The diff as tables fitted to the console (rdmatool.report.tables): where a change is, whole. When a column
    each does not fit, the place is stacked over what changed there, and the value before over the value after, so
    that the two line up; a value too long for its column is cut around what changed, never at its end."""
    diff = cleaned(diff)
    console.print(Text(f"{diff['changes']} changes from {diff['a']} ({diff['created_a']}) to {diff['b']} "
                       f"({diff['created_b']})", style="bold"))
    for line in target_lines(diff):
        console.print(Text(f"  {line}"))
    if diff["config"]:
        rows = [[_where(row), str(row["setting"]), _cell(row["before"]), _cell(row["after"])] for row in diff["config"]]
        console.print(_changes(console, ("where", "setting"), rows, f"configuration ({len(diff['config'])})"))
    if diff["cabling"]:
        rows = [[_where(row, "port"), _cell(row["before"]), _cell(row["after"])] for row in diff["cabling"]]
        console.print(_changes(console, ("port",), rows, f"cabling ({len(diff['cabling'])})"))
    if diff["rates"]:
        shown = diff["rates"][:RATES_SHOWN]
        more = len(diff["rates"]) - len(shown)
        title = f"rates moved beyond {diff['tolerance']:.0%} ({len(diff['rates'])}" + (
            f", the {len(shown)} largest shown" if more else "") + ")"
        headers = ("where", "metric", "before", "after", "change")
        rows = [[_where(row), row["metric"] + (f" ({row['unit']})" if row["unit"] else ""), _cell(row["before"]),
                 _cell(row["after"]), _relative(row)] for row in shown]
        if tables.fits(console, headers, rows):
            console.print(tables.fitted(console, headers, rows, keys=("where", "metric", "change"),
                                        right=("before", "after", "change"), title=title))
        else:
            stacked = [[tables.lines(r[0], r[1]), tables.lines(r[2], r[3]), r[4]] for r in rows]
            console.print(tables.fitted(console, ("where / metric", "before / after", "change"), stacked,
                                        keys=("where / metric", "change"), right=("before / after", "change"),
                                        title=title, show_lines=True))
    if not diff["changes"]:
        console.print("no change")


def _changes(console: Console, keys: tuple[str, ...], rows: list[list[str]], title: str):
    """Rows of the `keys` cells then a value before and after: a column each when they fit the console, else the
    keys stacked in one column and the two values in another, one over the other (cut around their difference
    when longer than the room left)."""
    headers = (*keys, "before", "after")
    if tables.fits(console, headers, rows):
        return tables.fitted(console, headers, rows, keys=keys, title=title)
    key = " / ".join(keys)
    taken = max(len(part) for row in rows for part in row[:len(keys)])  # the key column, as fitted() will give it
    room = max(16, console.width - tables.table_extra(2, Table()) - min(taken, console.width - 16))
    stacked = [[tables.lines(*row[:len(keys)]), tables.lines(*tables.around_change(row[-2], row[-1], room))]
               for row in rows]
    return tables.fitted(console, (key, "before / after"), stacked, keys=(key,), title=title, show_lines=True)


def render_markdown(diff: dict) -> str:
    def cells(values: list[str]) -> str:
        return "| " + " | ".join(markdown(v) for v in values) + " |"

    lines = [f"# rdmatool bundle diff: {diff['changes']} changes", "",
             f"From {code_span(diff['a'])} ({markdown(diff['created_a'])}) to {code_span(diff['b'])} "
             f"({markdown(diff['created_b'])}).", ""]
    targets = target_lines(diff)
    if targets:
        lines += ["## Targets", "", *(f"- {markdown(line)}" for line in targets), ""]
    if diff["config"]:
        lines += ["## Configuration", "", "| where | setting | before | after |", "|---|---|---|---|"]
        lines += [cells([_where(r), r["setting"], _cell(r["before"]), _cell(r["after"])]) for r in diff["config"]]
        lines.append("")
    if diff["cabling"]:
        lines += ["## Cabling", "", "| port | before | after |", "|---|---|---|"]
        lines += [cells([_where(r, "port"), _cell(r["before"]), _cell(r["after"])]) for r in diff["cabling"]]
        lines.append("")
    if diff["rates"]:
        lines += [f"## Rates moved beyond {diff['tolerance']:.0%}", "",
                  "| where | metric | before | after | change |", "|---|---|---|---|---|"]
        lines += [cells([_where(r), r["metric"], _cell(r["before"]), _cell(r["after"]), _relative(r)])
                  for r in diff["rates"]]
        lines.append("")
    if not diff["changes"]:
        lines += ["No change.", ""]
    return "\n".join(lines)
