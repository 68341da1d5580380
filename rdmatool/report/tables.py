"""Tables that fit the terminal without cutting what names a row.

A rich table wider than the terminal is shrunk by cutting its cells with "…": at 80 columns an address became
`10.0.…`, a flow lost its destination and a metric name its second half. Every table view is built here instead:

* the *key* columns (what names a row: a target, an address, a flow, a metric) get the width of their longest
  value, as far as the terminal allows once every other column keeps a few characters; a key wider than that
  still wraps between its words and folds inside a word, never cut;
* every other column folds (wraps inside its cell) instead of being cut;
* a cell is text, never markup (a `[/x]` in a name is shown as it is), with its control characters shown visibly
  (rdmatool.report.shown).

The width is the console's: `COLUMNS` when set, else the terminal's (rdmatool.cli._output.data_console).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from rdmatool.report.shown import terminal

MIN_CELL = 4  # the narrowest a folded column is squeezed to: a figure of four characters stays on one line
COMFORT = 10  # what a folded column keeps beside the keys while they fit without it: `rail down`, `2026-12-02`
PADDING = 2  # a cell's padding, one space either side (rich's default)

Cell = str | Text | None


def cell(value: Cell) -> Text:
    """A value as a cell: text shown as characters, None as nothing."""
    if value is None:
        return Text("")
    if isinstance(value, Text):
        return value
    return Text(terminal(value))


def lines(*values: str) -> Text:
    """One cell of several lines (an address under its name), each shown as characters."""
    return Text("\n").join(cell(value) for value in values)


def fitted(console: Console, headers: Sequence[str], rows: Iterable[Sequence[Cell]], *, keys: Sequence[str] = (),
           right: Sequence[str] = (), optional: Sequence[str] = (), title: str | None = None, **options) -> Table:
    """A table of `headers` and `rows` for `console`: the `keys` columns whole where the width allows, the others
    folded; `right`: the columns aligned right (figures); `optional`: the columns left out when empty in every row
    (their room goes to the others). `options` go to rich's Table (show_lines, ...)."""
    body = [[cell(value) for value in row] for row in rows]
    empty = {i for i, header in enumerate(headers) if header in optional and not any(row[i].plain for row in body)}
    if empty:
        headers = [header for i, header in enumerate(headers) if i not in empty]
        body = [[value for i, value in enumerate(row) if i not in empty] for row in body]
    table = Table(title=Text(terminal(title)) if title else None, **options)
    widths = key_widths(console.width, headers, body, keys, table_extra(len(headers), table))
    for index, header in enumerate(headers):
        justify = "right" if header in right else "left"
        if index in widths:  # a fixed width: never squeezed below it by rich, wrapped between words beyond it
            table.add_column(header, width=widths[index], overflow="fold", justify=justify)
        else:
            table.add_column(header, overflow="fold", justify=justify)
    for row in body:
        table.add_row(*row)
    return table


def fits(console: Console, headers: Sequence[str], rows: Iterable[Sequence[Cell]]) -> bool:
    """Whether a table of these rows fits the console without wrapping a cell: a view with a narrower layout (fewer,
    merged columns) chooses it when this one does not."""
    body = [[cell(value) for value in row] for row in rows]
    natural = sum(max([len(header), *(line_width(row[i]) for row in body)]) for i, header in enumerate(headers))
    return natural + table_extra(len(headers), Table()) <= console.width


def table_extra(columns: int, table: Table) -> int:
    """The characters a table takes besides its cells' text: its borders and its cells' padding."""
    borders = (columns + 1) if table.box and table.show_edge else max(columns - 1, 0) if table.box else 0
    return borders + PADDING * columns


def key_widths(width: int, headers: Sequence[str], body: list[list[Text]], keys: Sequence[str],
               extra: int) -> dict[int, int]:
    """The width of each key column (by index): its longest line when all fit beside the other columns at
    MIN_CELL each. Else the keys wrap, the others keep COMFORT each when the keys' longest words fit beside, and
    the keys are served in the order `keys` names them: each takes its longest line if that leaves every later key
    its longest word, else what is left after those words (a value of several words then wraps between them); when
    even the words do not fit, the room is shared in proportion to them."""
    index = [headers.index(key) for key in keys if key in headers]
    if not index:
        return {}
    others = [i for i in range(len(headers)) if i not in index]
    longest = {i: max([len(headers[i]), *(line_width(row[i]) for row in body)]) for i in index}
    words = {i: min(longest[i], max([1, *(word_width(row[i]) for row in body)])) for i in index}
    # Keys whole come first, even if the other columns are squeezed to MIN_CELL for it. Keys that must wrap anyway
    # leave the others a readable COMFORT each (or what they hold), as long as their longest words fit beside.
    squeezed = max(len(index), width - extra - MIN_CELL * len(others))
    if sum(longest.values()) <= squeezed:
        return longest
    comfort = sum(min(COMFORT, max([len(headers[i]), *(line_width(row[i]) for row in body)])) for i in others)
    room = width - extra - comfort if sum(words.values()) <= width - extra - comfort else squeezed
    if sum(words.values()) >= room:
        total = sum(words.values())
        return {i: max(1, room * words[i] // total) for i in index}
    out: dict[int, int] = {}
    for n, i in enumerate(index):
        later = sum(words[j] for j in index[n + 1:])
        out[i] = min(longest[i], max(words[i], room - later))
        room -= out[i]
    return out


def line_width(text: Text) -> int:
    return max((Text(line).cell_len for line in text.plain.split("\n")), default=0)


def word_width(text: Text) -> int:
    return max((Text(word).cell_len for word in text.plain.split()), default=0)


def around_change(before: str, after: str, width: int, context: int = 6) -> tuple[str, str]:
    """Two values too long for `width` cut to the part where they differ: from the start of the word the first
    difference is in (or `context` characters before it, in a long word), as far as `width` allows, with "…" where text was left out (`…e 28.39.1002 (MT_00…` against
    `…e 28.40.1000 (MT_00…`), not two equal beginnings whose tails (where the change is) were cut. Both start at the
    same character, so that stacked one over the other they line up. Values that fit are left whole."""
    if len(before) <= width and len(after) <= width:
        return before, after
    prefix = 0
    while prefix < min(len(before), len(after)) and before[prefix] == after[prefix]:
        prefix += 1
    # from the word the change is in (a port name, a `key=value`) when it starts near, else `context` before it
    word = max(before.rfind(mark, 0, prefix) for mark in " ,;=(/") + 1
    start = word if prefix - word <= 3 * context else max(0, prefix - context)
    lead = "…" if start else ""

    def cut(value: str) -> str:
        if len(lead) + len(value) - start <= width:
            return lead + value[start:]
        return lead + value[start:start + max(1, width - len(lead) - 1)] + "…"

    return cut(before), cut(after)


def changes(console: Console, rows: list[list[str]], keys: int) -> list[list[str]]:
    """Rows of `keys` key cells then a value before and after: the two values cut around where they differ
    (`around_change`) when they are wider than what the console leaves each beside the longest keys."""
    if not rows:
        return rows
    taken = sum(max(len(row[i]) for row in rows) for i in range(keys))
    room = max(16, (console.width - table_extra(keys + 2, Table()) - taken) // 2)
    return [[*row[:keys], *around_change(row[keys], row[keys + 1], room)] for row in rows]
