"""The reference documents rdmatool ships, read back by name (`rdmatool docs NAME`): what the findings and the
suggestions cite (`rdmatool docs tuning §2.5, row 6`), so that a citation resolves on a machine that has the package
and nothing else. docs/tuning.md in the repository is a link to the file here.

A place in a document is a numbered section (`§2.5` or `2.5`: its heading down to the next heading of its level or
above) or a row of its numbered table (`row 6`, `rows 6/9`, `rows 1, 2 and 3`: a line `| 6 | ...` of the table).
`item N` and quoted phrases in a citation narrow the reading within a section and are passed over.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

_SUFFIX = ".md"
_HEADING = re.compile(r"^(#{1,6}) (\d+(?:\.\d+)?)\.? ")
_ROW = re.compile(r"^\| (\d+) \|")
# a section (`§2.5`, `2.5`), the rows of the numbered table, or an item of a section's list (not a place of its own)
_PLACE = re.compile(r"(?P<rows>\brows?\s+\d+(?:\s*(?:,\s*and|,|and|/)\s*\d+)*)|(?P<item>\bitem\s+\d+)"
                    r"|(?<![\w.§])§?(?P<section>\d+(?:\.\d+)?)(?![\w.]*\w)")


@dataclass(frozen=True)
class Document:
    name: str
    title: str
    lines: tuple[str, ...]
    sections: dict[str, tuple[int, int]]  # number → [first line, end) of its heading and text
    rows: dict[int, int]  # number → the line of its table row
    table: tuple[int, int] | None  # the numbered table's heading line and its header line


def names() -> list[str]:
    """Every shipped document, by name (`tuning`)."""
    return sorted(p.name[: -len(_SUFFIX)] for p in resources.files(__package__).iterdir() if p.name.endswith(_SUFFIX))


def path(name: str) -> str:
    """Where the document is installed (for a pager or an editor)."""
    return str(_file(name))


@cache
def load(name: str) -> Document:
    """A shipped document by name; KeyError names the choices."""
    lines = tuple(_file(name).read_text(encoding="utf-8").splitlines())
    title = next((line.lstrip("# ").strip() for line in lines if line.startswith("# ")), name)
    headings = [(i, len(m.group(1)), m.group(2)) for i, line in enumerate(lines) if (m := _HEADING.match(line))]
    sections = {}
    for k, (start, level, number) in enumerate(headings):
        end = next((i for i, lvl, _ in headings[k + 1:] if lvl <= level), len(lines))
        sections[number] = (start, end)
    rows = {int(m.group(1)): i for i, line in enumerate(lines) if (m := _ROW.match(line))}
    table = None
    if rows:
        first = min(rows.values())
        heading = max((i for i, _, _ in headings if i < first), default=0)
        table = (heading, first - 2)  # the header line, then the |---| line, then the rows
    return Document(name, title, lines, sections, rows, table)


def places(name: str, cited: str) -> tuple[list[str], list[int]]:
    """The sections and rows a citation's text names (`§2.5, row 6` → (["2.5"], [6])). A section given only to
    say where the rows are (`§7 row 4`) is dropped: the rows are the place. ValueError when the text names no place
    or one the document lacks (the message says which)."""
    doc = load(name)
    sections: list[str] = []
    rows: list[int] = []
    for m in _PLACE.finditer(cited):
        if m.group("rows"):
            rows += [int(n) for n in re.findall(r"\d+", m.group("rows")) if int(n) not in rows]
        elif m.group("section") and m.group("section") not in sections:
            sections.append(m.group("section"))
    if rows and doc.table:
        sections = [s for s in sections if doc.sections.get(s, (None,))[0] != doc.table[0]]
    if not sections and not rows:
        raise ValueError(f"{cited.strip()!r} names no section (§2.5) or row (row 6) of {name}")
    missing = [f"§{s}" for s in sections if s not in doc.sections] + [f"row {r}" for r in rows if r not in doc.rows]
    if missing:
        known = f"sections {', '.join(doc.sections)}" + (f"; rows {min(doc.rows)} to {max(doc.rows)}" if doc.rows
                                                         else "")
        raise ValueError(f"{name} has no {', '.join(missing)} ({known})")
    return sections, rows


def excerpt(name: str, cited: str) -> str:
    """The text of the places a citation names: each section whole, the rows under their table's heading and
    header. ValueError as `places`."""
    doc = load(name)
    sections, rows = places(name, cited)
    parts = ["\n".join(doc.lines[slice(*doc.sections[s])]).rstrip() for s in sections]
    if rows and doc.table:
        heading, header = doc.table
        parts.append("\n".join([doc.lines[heading], "", doc.lines[header], doc.lines[header + 1],
                                *(doc.lines[doc.rows[r]] for r in rows)]))
    return "\n\n".join(parts) + "\n"


def _file(name: str):  # noqa: ANN202 - an importlib.resources Traversable
    if name not in names():
        raise KeyError(f"no document {name!r}; the shipped ones: {', '.join(names())}")
    return resources.files(__package__).joinpath(f"{name}{_SUFFIX}")
