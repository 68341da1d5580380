"""`rdmatool bundle diff` as a table (rich) or Markdown, from the diff's JSON shape (rdmatool.bundle_diff).

Every value a device reported (settings, neighbours, errors, names) is shown as text (rdmatool.report.shown): its
control characters visible in the table, its Markdown and HTML escaped in the Markdown."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

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
    diff = cleaned(diff)
    head = f"{diff['changes']} changes from {diff['a']} ({diff['created_a']}) to {diff['b']} ({diff['created_b']})"
    console.print(f"[bold]{escape(head)}[/bold]")
    for line in target_lines(diff):
        console.print(f"  {escape(line)}", highlight=False)
    if diff["config"]:
        table = Table(title=f"configuration ({len(diff['config'])})")
        for column in ("where", "setting", "before", "after"):
            table.add_column(column)
        for row in diff["config"]:
            table.add_row(escape(_where(row)), escape(str(row["setting"])), escape(_cell(row["before"])),
                          escape(_cell(row["after"])))
        console.print(table)
    if diff["cabling"]:
        table = Table(title=f"cabling ({len(diff['cabling'])})")
        for column in ("port", "before", "after"):
            table.add_column(column)
        for row in diff["cabling"]:
            table.add_row(escape(_where(row, "port")), escape(_cell(row["before"])), escape(_cell(row["after"])))
        console.print(table)
    if diff["rates"]:
        shown = diff["rates"][:RATES_SHOWN]
        more = len(diff["rates"]) - len(shown)
        title = f"rates moved beyond {diff['tolerance']:.0%} ({len(diff['rates'])}" + (
            f", the {len(shown)} largest shown" if more else "") + ")"
        table = Table(title=title)
        for column in ("where", "metric", "before", "after", "change"):
            table.add_column(column)
        for row in shown:
            table.add_row(escape(_where(row)), escape(row["metric"] + (f" ({row['unit']})" if row["unit"] else "")),
                          _cell(row["before"]), _cell(row["after"]), _relative(row))
        console.print(table)
    if not diff["changes"]:
        console.print("no change")


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
