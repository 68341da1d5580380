"""`rdmatool parse NAME [FILE]`: run one parser over a saved output and print its samples."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from rdmatool import files, parsers
from rdmatool.cli._format import JSON, TABLE, chosen, format_param, json_param
from rdmatool.cli._output import EXIT_FAIL, EXIT_USAGE, die, print_json
from rdmatool.cli.exit_codes import epilog
from rdmatool.errors import EmptyOutput, ParseError, RdmatoolError
from rdmatool.model import Sample

FORMATS = ("table", "json")


def register(app: typer.Typer) -> None:
    app.command("parse", epilog=epilog("parse"))(parse_command)


def parse_command(
    name: Annotated[str, typer.Argument(help="Parser name (see --list).")] = None,
    file: Annotated[str, typer.Argument(help="Output file to parse; stdin when omitted or '-'.")] = None,
    fmt: Annotated[str, format_param(FORMATS, "json: the samples")] = TABLE,
    as_json: Annotated[bool, json_param()] = False,
    list_parsers: Annotated[bool, typer.Option("--list", help="List the parsers and exit.")] = False,
) -> None:
    """Parse a saved tool output (ibstat, perfquery, ethtool -S, show pfc counters ...) into canonical samples."""
    as_json = chosen("parse", fmt, as_json, FORMATS) == JSON
    if list_parsers:
        _print_list()
        return
    if not name:
        die("rdmatool parse: missing parser NAME (see `rdmatool parse --list`)", EXIT_USAGE)
    if name not in parsers.names():
        die(f"rdmatool parse: unknown parser {name!r} (see `rdmatool parse --list`)", EXIT_USAGE)
    text, label = _read_input(file)
    try:
        samples = parsers.parse(name, text)
    except EmptyOutput as exc:  # nothing to parse: bad input, not a line the parser does not know
        die(exc.located(label), EXIT_USAGE)
    except ParseError as exc:
        die(exc.located(label), EXIT_FAIL)
    if as_json:
        from rdmatool.schemas import tag

        print_json({"schema": tag("parse"), "parser": name, "source": label,
                    "samples": [s.as_dict() for s in samples]})
    else:
        _print_table(name, samples)


def _read_input(file: str | None) -> tuple[str, str]:
    """The text to parse and its label; at most the output cap is read (a saved output is megabytes, and a
    runaway pipe or a wrong file must be refused, not held in memory)."""
    try:
        limit = files.max_output_bytes()
    except RdmatoolError as exc:
        die(f"rdmatool parse: {exc}", EXIT_USAGE)
    if file in (None, "-"):
        stream = getattr(sys.stdin, "buffer", None)
        data = stream.read(limit + 1) if stream is not None else sys.stdin.read(limit + 1).encode("utf-8")
        label = "<stdin>"
    else:
        label = file
        try:  # a FIFO or a device would block or never end: pipe it to stdin instead (`ssh host ibstat | ...`)
            data = files.read_regular_bytes(file, limit)
        except FileNotFoundError:
            die(f"rdmatool parse: {file}: no such file", EXIT_USAGE)
        except files.UnsafeFileError as exc:
            die(f"rdmatool parse: {exc}", EXIT_USAGE)
    if len(data) > limit:
        die(f"rdmatool parse: {label}: larger than {limit} bytes ({files.ENV_MAX_BYTES})", EXIT_USAGE)
    # Captures from Windows paste buffers and switch consoles carry stray bytes and CR line ends; never die on
    # decoding, and read line ends as a text file would.
    text = data.decode("utf-8", errors="replace")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text, label


def _print_list() -> None:
    for info in parsers.registry().values():
        typer.echo(f"{info.name:28} {info.summary}")


PARSE_COLUMNS = ("entity", "metric", "priority", "size_bytes", "value", "text", "raw_key")


def _print_table(name: str, samples: list[Sample]) -> None:
    """A row per sample; the metric, the entity and the value whole (in that order when not all fit: an entity of
    several words then wraps between them). Columns no sample fills are left out; when the rest does not fit the
    console, the priority and size become one `at` column and a text value the value's."""
    from rdmatool.cli._output import data_console
    from rdmatool.report import tables

    def value(s: Sample) -> str:
        return "" if s.value is None else f"{s.value:g}" if isinstance(s.value, float) else str(s.value)

    # what an output said is data: its controls shown, never sent, and never read as markup (report.tables)
    rows = [[s.entity, s.metric, "" if s.priority is None else str(s.priority),
             "" if s.size_bytes is None else str(s.size_bytes), value(s), s.text or "", s.raw_key or ""]
            for s in samples]
    out = data_console()
    headers: tuple[str, ...] = PARSE_COLUMNS
    used = [i for i, _ in enumerate(headers) if i < 2 or any(row[i] for row in rows)]
    if not tables.fits(out, [headers[i] for i in used], [[row[i] for i in used] for row in rows]):
        headers = ("entity", "metric", "at", "value", "raw_key")
        rows = [[row[0], row[1], " ".join(f"{label} {v}" for label, v in (("prio", row[2]), ("size", row[3])) if v),
                 row[4] or row[5], row[6]] for row in rows]
    out.print(tables.fitted(out, headers, rows, keys=("metric", "entity", "value"), right=("value",),
                            optional=headers[2:], title=f"{name}: {len(samples)} samples"))
