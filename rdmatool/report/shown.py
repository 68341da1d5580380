"""Everything a device said is data when shown: the one output-encoding layer of every human view.

A host's or a switch's output (an LLDP name, an `mlnx_qos` line, a manifest's error) reaches the operator through
the table, the on-call text, `bundle show`, `bundle diff`, `--format commands`, the Markdown, the HTML, the plots and
the JUnit. Whatever it holds, it must reach them as text to read, never as something their terminal, shell, ticket
renderer or matplotlib acts on:

* `terminal`: C0 and C1 control characters, DEL and the Unicode controls that reorder or hide text are written
  visibly (`\\x15`, `\\e]52;…`, `\\u202e`); lone surrogates (undecodable bytes kept by `surrogateescape`) become U+FFFD.
  Line breaks are kept only where the caller asks (prose); a one-line field shows them as `\\n`.
* `markdown`: `terminal`, then every Markdown and HTML special character escaped, so a device's `<img onerror=…>`
  or `[x](javascript:…)` renders as the characters it is; `code_span` and `fence` for literal text.
* `plot_text`: `terminal`, then `$` escaped, so matplotlib never reads a device's text as TeX.
* `cleaned`: a copy of any result (dataclasses, dicts, lists) with every string passed through `terminal`.
"""

from __future__ import annotations

import dataclasses
import re

from rdmatool.present.visible import terminal  # the one encoding every view starts from


def comment(text) -> str:
    """The text of a shell or switch CLI comment: printable characters only, on one line."""
    return terminal(text, newlines=False)


# The ASCII punctuation that opens or closes inline markup (emphasis, code, links, images, tables, strikethrough)
# is backslash-escaped; `<`, `>` and `&` become entities so that no HTML tag or entity of a device's survives a
# renderer that allows raw HTML; a line that would open a block (list, heading, quote, rule) has its mark escaped.
# An underscore between two letters or digits opens no emphasis (`mlx5_0` stays as people read it).
_MARKDOWN_SPECIAL = re.compile(r"([\\`*\[\]|~!#]|(?<![^\W_])_|_(?![^\W_]))")
_BLOCK_START = re.compile(r"^(\s*)([-+=]|\d+(?=[.)]))")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def markdown(text) -> str:
    """`text` as Markdown that renders as exactly these characters (one line: a line break is shown as `\\n`)."""
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", terminal(text))
    text = re.sub("[&<>]", lambda m: _HTML[m.group(0)], text)
    return _BLOCK_START.sub(lambda m: m.group(1) + (m.group(2) + "\\" if m.group(2)[0].isdigit() else "\\" + m.group(2)),
                            text)


def code_span(text) -> str:
    """`text` as a Markdown code span: literal (no markup, no HTML), fenced by more backticks than it holds."""
    text = terminal(text)
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def fence(lines: list[str]) -> list[str]:
    """Lines as a fenced Markdown code block no line of theirs can close (each line one line, made visible)."""
    body = [terminal(line) for line in lines]
    longest = max((len(run) for line in body for run in re.findall("`+", line)), default=0)
    marker = "`" * max(3, longest + 1)
    return [marker, *body, marker]


def plot_text(text) -> str:
    """`text` for a matplotlib label or title: made visible as for a terminal, with `$` escaped so that mathtext
    never parses it (an unbalanced `$x` or `$\\foo$` would raise while the figure is drawn)."""
    return terminal(text).replace("$", r"\$")


def cleaned(value):
    """A copy of `value` with every string in it (dataclass fields, dict keys and values, list and tuple items)
    passed through `terminal` (line breaks kept: the views lay out prose themselves). Enums and numbers are kept."""
    if isinstance(value, str):
        return value if type(value) is not str else terminal(value, newlines=True)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: cleaned(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
        return dataclasses.replace(value, **changes)
    if isinstance(value, dict):
        return {cleaned(k): cleaned(v) for k, v in value.items()}
    if isinstance(value, list):
        return [cleaned(v) for v in value]
    if isinstance(value, tuple):
        items = [cleaned(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return value
